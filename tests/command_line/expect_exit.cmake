# Runs a program and checks how it ends: its exit status and a piece of what it printed (stdout and stderr together).
#
#   cmake -DEXPECTED_EXIT=<code>[|<code>...] -DEXPECTED_OUTPUT=<text> -P expect_exit.cmake -- <program> [<argument>...]
#
# The arguments come after `--` (CMAKE_ARGV<n>), so that a test can pass any text, commas and semicolons included.
# EXPECTED_OUTPUT is a literal piece of text, not a regular expression.
set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(index RANGE 1 ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${index}}")
  elseif(CMAKE_ARGV${index} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "expect_exit.cmake: no program given after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
# EXPECTED_EXIT may list alternatives separated by '|', e.g. 0|77 for a run that exits 77 without a GPU.
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
string(REPLACE "|" ";" expected_exits "${EXPECTED_EXIT}")
if(NOT result IN_LIST expected_exits)
  message(FATAL_ERROR "exit status ${result}, expected ${EXPECTED_EXIT}")
endif()
string(FIND "${output}" "${EXPECTED_OUTPUT}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "the output does not contain '${EXPECTED_OUTPUT}'")
endif()
