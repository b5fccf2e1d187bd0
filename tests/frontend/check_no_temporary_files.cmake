# Runs a test program with TMPDIR pointing at an empty folder of its own and fails if the program leaves anything
# there (tests clean up what they write; the suite used to leave a cusync-frontend-tests-<pid> folder per process).
#
#   cmake -DTEST_PROGRAM=<path> -DTEST_ARGUMENTS=<list> -DWORK_DIRECTORY=<dir> -P check_no_temporary_files.cmake
set(folder "${WORK_DIRECTORY}/tmpdir")
file(REMOVE_RECURSE "${folder}")
file(MAKE_DIRECTORY "${folder}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "TMPDIR=${folder}" "${TEST_PROGRAM}" ${TEST_ARGUMENTS}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
file(GLOB left_behind RELATIVE "${folder}" "${folder}/*")
file(REMOVE_RECURSE "${folder}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_PROGRAM} failed (${result}):\n${output}")
endif()
if(left_behind)
  message(FATAL_ERROR "${TEST_PROGRAM} left in the temporary directory: ${left_behind}")
endif()
message(STATUS "nothing left in the temporary directory")
