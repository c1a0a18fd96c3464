# cmake -D MIXT_PARAMS=<file> -D MIXT_SOURCE=<project> -D MIXT_BINARY=<build dir> -P run_consumer.cmake
#
# Configures a consumer project in a fresh build directory, builds it and runs
# its program `consumer`; any failing step fails the test.
include("${MIXT_PARAMS}")

function(mixt_step)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mixt: consumer step failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${MIXT_BINARY}")
set(args -S "${MIXT_SOURCE}" -B "${MIXT_BINARY}" -G "${CMAKE_GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")
if(CMAKE_MAKE_PROGRAM)
  list(APPEND args "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}")
endif()
if(CMAKE_BUILD_TYPE)
  list(APPEND args "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}")
endif()
mixt_step("${CMAKE_COMMAND}" ${args} ${MIXT_CONSUMER_ARGS})
mixt_step("${CMAKE_COMMAND}" --build "${MIXT_BINARY}")
mixt_step("${MIXT_BINARY}/consumer")
