# cusync_add_tile_rewrite: runs cusync-tile-rewriter (tools/tile_rewriter) on a kernel source at build time, so one
# source builds both the plain variant and the reordered ("+R") variant, whose `#pragma tile` loads without a wait
# are issued before the loads that wait on a producer.
#
#   cusync_add_tile_rewrite(<out-var>
#     SOURCE <file>                 # .cu source, or a header (.h .hpp .cuh .hh .inl) with annotated loads
#     [TARGET <target>]             # parse with <target>'s include directories and definitions, and build the
#                                   # result into it: a source is added to its sources; for a header, the output
#                                   # directory goes first on its include path
#     [BASE_DIRECTORY <dir>]        # the output keeps SOURCE's path relative to <dir> (default: SOURCE's directory);
#                                   # for a header included as "cusync/x/mainloop.h", pass the include root
#     [OUTPUT <file>]               # explicit output path instead
#     [WAIT_FUNCTIONS <name>...]    # callees that make a statement a waiting load (default: wait and
#                                   # the runtime's blockWait, waitThread, waitThreadCached, spinUntilReached)
#     [PURE_FUNCTIONS <name>...]    # callees that only read their argument values
#     [ARGS_ONLY_FUNCTIONS <name>...]  # callees that access memory only through their arguments
#     [CUDA_GPU_ARCH <sm_XX>]       # device architecture to parse for (default: from CUSYNC_CUDA_ARCHITECTURES)
#     [CLANG_ARGS <arg>...]         # more Clang arguments (-I, -D, -std=...)
#     [WERROR]                      # fail the build when a load cannot be moved (default: warn)
#     [IGNORE_HEADER_ERRORS]        # go on when Clang rejects something in an included header that nvcc accepts
#     [NO_LINE_DIRECTIVES])         # omit the #line directives
#
# <out-var> receives the output path: ${CMAKE_CURRENT_BINARY_DIR}/tile_rewrite/<target or "sources">/<relative path>.
# The output carries #line directives naming the original, so compiler errors and debuggers point at the original
# source (and nvcc resolves its "quoted" includes from the original's directory). It is regenerated when the source,
# any header it includes (through a depfile), or the tool changes. The tool is the target cusync::cusync-tile-rewriter:
# in cusync's own build the rewriter it builds, in a project that found the installed package (find_package(cusync))
# the installed one. Call the function only when the tool exists:
#   if(TARGET cusync::cusync-tile-rewriter) ... endif()
include_guard(GLOBAL)

function(cusync_add_tile_rewrite out_var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "WERROR;NO_LINE_DIRECTIVES;IGNORE_HEADER_ERRORS"
                        "SOURCE;TARGET;BASE_DIRECTORY;OUTPUT;CUDA_GPU_ARCH"
                        "WAIT_FUNCTIONS;PURE_FUNCTIONS;ARGS_ONLY_FUNCTIONS;CLANG_ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cusync_add_tile_rewrite: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET cusync::cusync-tile-rewriter)
    message(FATAL_ERROR "cusync_add_tile_rewrite: the #pragma tile rewriter is not built (CUSYNC_BUILD_REWRITER=OFF "
                        "or Clang 19 not found); guard the call with if(TARGET cusync::cusync-tile-rewriter)")
  endif()
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "cusync_add_tile_rewrite: SOURCE is required")
  endif()
  if(arg_TARGET AND NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "cusync_add_tile_rewrite: TARGET ${arg_TARGET} does not exist (create it first)")
  endif()

  get_filename_component(source "${arg_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(source_dir "${source}" DIRECTORY)
  if(arg_OUTPUT)
    get_filename_component(output "${arg_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    get_filename_component(output_root "${output}" DIRECTORY)
  else()
    set(base "${source_dir}")
    if(arg_BASE_DIRECTORY)
      get_filename_component(base "${arg_BASE_DIRECTORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    file(RELATIVE_PATH relative "${base}" "${source}")
    if(relative MATCHES "^\\.\\./")
      message(FATAL_ERROR "cusync_add_tile_rewrite: SOURCE ${source} is not under BASE_DIRECTORY ${base}")
    endif()
    set(variant sources)
    if(arg_TARGET)
      set(variant ${arg_TARGET})
    endif()
    set(output_root "${CMAKE_CURRENT_BINARY_DIR}/tile_rewrite/${variant}")
    set(output "${output_root}/${relative}")
  endif()

  set(arch "${arg_CUDA_GPU_ARCH}")
  if(NOT arch)
    # cusync's own build sets CUSYNC_CUDA_ARCHITECTURES; a user's project may set either, or neither (Hopper).
    set(architectures ${CUSYNC_CUDA_ARCHITECTURES})
    if(NOT architectures)
      set(architectures ${CMAKE_CUDA_ARCHITECTURES})
    endif()
    if(NOT architectures)
      set(architectures 90a)
    endif()
    list(GET architectures 0 first_arch)
    string(REGEX REPLACE "-(real|virtual)$" "" first_arch "${first_arch}")
    set(arch "sm_${first_arch}")
  endif()

  set(command $<TARGET_FILE:cusync::cusync-tile-rewriter> "${source}" -o "${output}" --depfile "${output}.d"
              --cuda-gpu-arch=${arch})
  if(NOT arg_NO_LINE_DIRECTIVES)
    list(APPEND command --line-directives)
  endif()
  if(arg_WERROR)
    list(APPEND command --werror)
  endif()
  if(arg_IGNORE_HEADER_ERRORS)
    list(APPEND command --ignore-errors-in-headers)
  endif()
  if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND command --cuda-path=${CUDAToolkit_LIBRARY_ROOT})
  endif()
  foreach(name IN LISTS arg_WAIT_FUNCTIONS)
    list(APPEND command --wait-function=${name})
  endforeach()
  foreach(name IN LISTS arg_PURE_FUNCTIONS)
    list(APPEND command --pure-function=${name})
  endforeach()
  foreach(name IN LISTS arg_ARGS_ONLY_FUNCTIONS)
    list(APPEND command --args-only-function=${name})
  endforeach()
  list(APPEND command --)
  if(arg_TARGET)
    # The target's include directories and definitions, its link dependencies' usage requirements included.
    set(includes "$<TARGET_PROPERTY:${arg_TARGET},INCLUDE_DIRECTORIES>")
    set(definitions "$<TARGET_PROPERTY:${arg_TARGET},COMPILE_DEFINITIONS>")
    list(APPEND command "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>"
                        "$<$<BOOL:${definitions}>:-D$<JOIN:${definitions},$<SEMICOLON>-D>>")
  endif()
  list(APPEND command ${arg_CLANG_ARGS})

  file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${source}")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${command}
    DEPENDS "${source}" cusync::cusync-tile-rewriter
    DEPFILE "${output}.d"
    COMMENT "Reordering #pragma tile loads of ${shown}"
    COMMAND_EXPAND_LISTS
    VERBATIM)

  if(arg_TARGET)
    target_sources(${arg_TARGET} PRIVATE "${output}")
    if(source MATCHES "\\.(h|hpp|cuh|hh|inl)$")
      set_source_files_properties("${output}" PROPERTIES HEADER_FILE_ONLY ON)
      target_include_directories(${arg_TARGET} BEFORE PRIVATE "${output_root}")
    else()
      # Without #line directives the copy's "quoted" includes are resolved from the original's directory here.
      set_source_files_properties("${output}" PROPERTIES INCLUDE_DIRECTORIES "${source_dir}")
    endif()
  endif()
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
