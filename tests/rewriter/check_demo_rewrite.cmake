# Rewrites examples/rewriter_demo/tiled_gemm_consumer.cu against the real cusync runtime headers, as its CMake
# build does (with no --wait-function: the runtime's cusync::blockWait is a wait by default), and checks that the load
# of B now comes before the wait on A and that nothing was left in place:
#   cmake -DTOOL=<rewriter> -DSOURCE=<demo .cu> -DRUNTIME_INCLUDE=<runtime/include> -DOUTPUT=<file>
#         -P check_demo_rewrite.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE "${OUTPUT}")
execute_process(
  COMMAND "${TOOL}" "${SOURCE}" -o "${OUTPUT}" --line-directives
          -- "-I${RUNTIME_INCLUDE}"
  RESULT_VARIABLE status
  ERROR_VARIABLE diagnostics)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the rewriter failed on the demo (exit ${status}):\n${diagnostics}")
endif()
if(diagnostics MATCHES "warning: #pragma tile")
  message(FATAL_ERROR "the rewriter left a demo load in place:\n${diagnostics}")
endif()
file(READ "${SOURCE}" original)
file(READ "${OUTPUT}" rewritten)
if(original STREQUAL rewritten)
  message(FATAL_ERROR "the rewriter did not change the demo")
endif()
string(FIND "${rewritten}" "loadTile(Bs" load_of_b)
string(FIND "${rewritten}" "cusync::blockWait(" wait_on_a)
if(load_of_b EQUAL -1 OR wait_on_a EQUAL -1 OR NOT load_of_b LESS wait_on_a)
  message(FATAL_ERROR "in ${OUTPUT} the load of B does not precede the wait on A")
endif()
message(STATUS "demo rewritten: the load of B precedes the wait on A")
