# Rewrites the hooked CUTLASS sm90 mainloop (runtime/include/cusync/cutlass/tile_sync_mainloop.hpp) with the options
# examples/gemm/CMakeLists.txt builds the "+Rw" GEMMs with, and checks that every load moved (--werror) and that the
# TMA copy of B now precedes the wait for A:
#   cmake -DTOOL=<rewriter> -DSOURCE=<mainloop .hpp> -DRUNTIME_INCLUDE=<runtime/include>
#         -DCUTLASS_INCLUDE=<cutlass include> -DOUTPUT=<file> -P check_mainloop_rewrite.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE "${OUTPUT}")
execute_process(
  COMMAND "${TOOL}" "${SOURCE}" -o "${OUTPUT}" --wait-function=waitForA --args-only-function=copy
          --pure-function=with --pure-function=tAgA --pure-function=tAsA --pure-function=tBgB --pure-function=tBsB
          --cuda-gpu-arch=sm_90a --werror --ignore-errors-in-headers
          -- "-I${CUTLASS_INCLUDE}" "-I${RUNTIME_INCLUDE}"
  RESULT_VARIABLE status
  ERROR_VARIABLE diagnostics)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the rewriter failed on the mainloop (exit ${status}):\n${diagnostics}")
endif()
file(READ "${OUTPUT}" rewritten)
string(FIND "${rewritten}" "copy(tma_copy_b" load_of_b)
string(FIND "${rewritten}" "waitForA(*k_tile_iter);" wait_for_a)
if(load_of_b EQUAL -1 OR wait_for_a EQUAL -1 OR NOT load_of_b LESS wait_for_a)
  message(FATAL_ERROR "in ${OUTPUT} the TMA copy of B does not precede the wait for A")
endif()
message(STATUS "mainloop rewritten: the copy of B precedes the wait for A")
