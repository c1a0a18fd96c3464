# cmake -D MIXT_BUILD_DIR=... -D MIXT_CONFIG=... -D MIXT_CASE=<params> -P expect_build.cmake
#
# Builds one compile-test target and checks the outcome. For MIXT_EXPECT=fail
# the build must fail AND its output must match MIXT_REGEX; for
# MIXT_EXPECT=success the build must succeed.
include("${MIXT_CASE}")

set(config_args "")
if(MIXT_CONFIG)
  set(config_args --config "${MIXT_CONFIG}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${MIXT_BUILD_DIR}" --target "${MIXT_TARGET}" ${config_args}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

if(MIXT_EXPECT STREQUAL "success")
  if(NOT rc EQUAL 0)
    message("${output}")
    message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE} failed to compile, but it should compile")
  endif()
  message(STATUS "mixt_expect: compiles, as expected")
  return()
endif()

if(rc EQUAL 0)
  message("${output}")
  message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE} compiled, but a compile error was expected")
endif()
if(NOT output MATCHES "${MIXT_REGEX}")
  message("${output}")
  message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE} failed to compile, but the output does not match '${MIXT_REGEX}'")
endif()
message(STATUS "mixt_expect: failed to compile as expected; matched: ${CMAKE_MATCH_0}")
