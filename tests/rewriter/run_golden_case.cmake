# Runs cusync-tile-rewriter on one golden case and checks it (MODE=check), or rewrites its expected file
# (MODE=regenerate). Invoked by ctest and by the cusync_rewriter_regenerate_golden target:
#   cmake -DTOOL=<rewriter> -DCASE=<cases/x.cu> -DWORK_DIR=<dir> [-DMODE=regenerate] -P run_golden_case.cmake
#
# A case states its expectations in comment lines of the input:
#   // REWRITER-ARGS: <arguments>        extra rewriter arguments (split like a shell, no quoting)
#   // REWRITER-EXIT: <status>           expected exit status (default 0)
#   // REWRITER-DIAG: <text>             a diagnostic line containing <text> must appear (repeatable); every
#                                        warning or error line must contain one of them
#   // REWRITER-EXPECT: unchanged        the output must be the input, byte for byte (no expected file)
# Otherwise the output must equal <x>.expected.cu byte for byte. A case that rewrites without --line-directives must
# also be a fixed point: rewriting the expected file gives it back.
cmake_minimum_required(VERSION 3.25)
foreach(required TOOL CASE WORK_DIR)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "run_golden_case: -D${required}=... is required")
  endif()
endforeach()
if(NOT DEFINED MODE)
  set(MODE check)
endif()

get_filename_component(case_dir "${CASE}" DIRECTORY)
get_filename_component(case_file "${CASE}" NAME)
get_filename_component(name "${CASE}" NAME_WE)
set(expected_file "${case_dir}/${name}.expected.cu")
set(output "${WORK_DIR}/${name}.cu")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(REMOVE "${output}")

file(STRINGS "${CASE}" directive_lines REGEX "// REWRITER-")
set(arguments "")
set(expected_exit 0)
set(expected_diagnostics "")
set(unchanged FALSE)
foreach(line IN LISTS directive_lines)
  if(line MATCHES "// REWRITER-ARGS: (.*)$")
    separate_arguments(more UNIX_COMMAND "${CMAKE_MATCH_1}")
    list(APPEND arguments ${more})
  elseif(line MATCHES "// REWRITER-EXIT: ([0-9]+)")
    set(expected_exit ${CMAKE_MATCH_1})
  elseif(line MATCHES "// REWRITER-DIAG: (.*)$")
    list(APPEND expected_diagnostics "${CMAKE_MATCH_1}")
  elseif(line MATCHES "// REWRITER-EXPECT: unchanged")
    set(unchanged TRUE)
  endif()
endforeach()

# Relative input path: diagnostics and #line directives then name the case as "x.cu", independent of checkout.
execute_process(
  COMMAND "${TOOL}" "${case_file}" -o "${output}" ${arguments}
  WORKING_DIRECTORY "${case_dir}"
  RESULT_VARIABLE status
  ERROR_VARIABLE diagnostics)

set(failures "")
if(NOT status STREQUAL expected_exit)
  string(APPEND failures "exit status ${status}, expected ${expected_exit}\n")
endif()

# Diagnostics: every expected one appears, and nothing else is a warning or an error.
string(REPLACE "\n" ";" diagnostic_lines "${diagnostics}")
foreach(wanted IN LISTS expected_diagnostics)
  string(FIND "${diagnostics}" "${wanted}" found)
  if(found EQUAL -1)
    string(APPEND failures "missing diagnostic: ${wanted}\n")
  endif()
endforeach()
foreach(line IN LISTS diagnostic_lines)
  if(NOT line MATCHES "(warning|error): ")
    continue()
  endif()
  set(accounted FALSE)
  foreach(wanted IN LISTS expected_diagnostics)
    string(FIND "${line}" "${wanted}" found)
    if(NOT found EQUAL -1)
      set(accounted TRUE)
    endif()
  endforeach()
  if(NOT accounted)
    string(APPEND failures "unexpected diagnostic: ${line}\n")
  endif()
endforeach()

if(MODE STREQUAL "regenerate")
  if(failures)
    message(FATAL_ERROR "${case_file}: not regenerated, the run does not meet the case's own expectations:\n"
                        "${failures}--- diagnostics ---\n${diagnostics}")
  endif()
  if(NOT unchanged AND expected_exit EQUAL 0)
    file(COPY_FILE "${output}" "${expected_file}")
    message(STATUS "regenerated ${expected_file}")
  endif()
  return()
endif()

if(NOT expected_exit EQUAL 0)
  if(EXISTS "${output}")
    string(APPEND failures "a failing run wrote ${output}\n")
  endif()
elseif(NOT EXISTS "${output}")
  string(APPEND failures "no output was written\n")
else()
  set(golden "${expected_file}")
  if(unchanged)
    set(golden "${CASE}")
  endif()
  file(READ "${output}" actual_text HEX)
  file(READ "${golden}" golden_text HEX)
  if(NOT actual_text STREQUAL golden_text)
    execute_process(COMMAND diff -u "${golden}" "${output}" OUTPUT_VARIABLE difference)
    string(APPEND failures "output differs from ${golden}:\n${difference}")
  elseif(NOT unchanged AND NOT "--line-directives" IN_LIST arguments)
    # The rewritten file is already in order: rewriting it again changes nothing.
    set(second "${WORK_DIR}/${name}.again.cu")
    execute_process(
      COMMAND "${TOOL}" "${golden}" -o "${second}" ${arguments}
      WORKING_DIRECTORY "${case_dir}"
      RESULT_VARIABLE second_status
      ERROR_QUIET)
    file(READ "${second}" second_text HEX)
    if(NOT second_status EQUAL 0 OR NOT second_text STREQUAL golden_text)
      string(APPEND failures "rewriting the expected output again changed it (not a fixed point)\n")
    endif()
  endif()
endif()

if(failures)
  message(FATAL_ERROR "${case_file}:\n${failures}--- diagnostics ---\n${diagnostics}")
endif()
message(STATUS "${case_file}: ok")
