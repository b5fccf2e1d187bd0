# cusync_write_generated(SOURCE CONTENT): writes CONTENT to SOURCE unless the file already holds it, so that a
# reconfigure rewrites no unchanged generated translation unit and nothing rebuilds needlessly. The examples
# generate one translation unit per kernel instantiation with it.
function(cusync_write_generated source content)
  set(previous "")
  if(EXISTS "${source}")
    file(READ "${source}" previous)
  endif()
  if(NOT previous STREQUAL content)
    file(WRITE "${source}" "${content}")
  endif()
endfunction()
