# cmake -D MIXT_BUILD_DIR=... -D MIXT_CONFIG=... -D MIXT_CASE=<params> [-D MIXT_NINJA=<ninja> -D MIXT_OBJECT=<o>]
#       -P expect_build.cmake
#
# Compiles one compile-test target (its object's command under Ninja, else a build of the target) and checks
# the outcome. For MIXT_EXPECT=fail
# the build must fail AND its output must match MIXT_REGEX; for
# MIXT_EXPECT=success the build must succeed.
include("${MIXT_CASE}")

set(config_args "")
if(MIXT_CONFIG)
  set(config_args --config "${MIXT_CONFIG}")
endif()
if(DEFINED MIXT_NINJA)
  # The object's own compile command, run here: no build of the tree, so cases run in parallel. The command
  # is the one ninja would run (`-t commands -s` reads the build files and writes nothing).
  file(RELATIVE_PATH object "${MIXT_BUILD_DIR}" "${MIXT_OBJECT}")
  execute_process(
    COMMAND "${MIXT_NINJA}" -C "${MIXT_BUILD_DIR}" -t commands -s "${object}"
    RESULT_VARIABLE query_rc
    OUTPUT_VARIABLE command
    ERROR_VARIABLE query_error
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT query_rc EQUAL 0 OR command STREQUAL "" OR command MATCHES "\n")
    message(FATAL_ERROR "mixt_expect: no single compile command for ${object} (${query_rc}): ${command}${query_error}")
  endif()
  # The precompiled header the command uses must be built from the headers as they are (a build of the tree
  # makes it, as it makes every other test): GCC takes a stale one without a word.
  if(command MATCHES "-include ([^ ]+/cmake_pch\\.hxx)" AND DEFINED MIXT_INCLUDE_DIR)
    set(pch_header "${CMAKE_MATCH_1}")
    file(GLOB_RECURSE headers "${MIXT_INCLUDE_DIR}/*.hpp")
    foreach(pch IN ITEMS "${pch_header}.gch" "${pch_header}.pch")
      if(NOT IS_ABSOLUTE "${pch}")
        set(pch "${MIXT_BUILD_DIR}/${pch}")
      endif()
      if(EXISTS "${pch}")
        foreach(header IN LISTS headers)
          if("${header}" IS_NEWER_THAN "${pch}")
            message(FATAL_ERROR "mixt_expect: ${header} is newer than the precompiled header ${pch}: build first "
                                "(cmake --build ${MIXT_BUILD_DIR})")
          endif()
        endforeach()
      endif()
    endforeach()
  endif()
  get_filename_component(object_dir "${MIXT_OBJECT}" DIRECTORY)
  file(MAKE_DIRECTORY "${object_dir}")
  execute_process(
    COMMAND sh -c "${command}"
    WORKING_DIRECTORY "${MIXT_BUILD_DIR}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
else()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${MIXT_BUILD_DIR}" --target "${MIXT_TARGET}" ${config_args}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
endif()

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
set(matched "${CMAKE_MATCH_0}")

# No cascade: one error, and it is mixt's; and a bounded number of lines. Only the compiler's lines count
# (not the build tool's progress, the failed command, or its summary).
string(REPLACE ";" "," text "${output}")
string(REPLACE "\n" ";" lines "${text}")
set(errors 0)
set(first_error "")
set(diagnostic_lines 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^\\[[0-9]+/[0-9]+\\]|^FAILED:|^ninja:|^make|^gmake|^Scanning|^Consolidate|^Building|^\\[ *[0-9]+%\\]|^/usr/bin/|^ccache|^$")
    continue()
  endif()
  math(EXPR diagnostic_lines "${diagnostic_lines} + 1")
  if(line MATCHES ": error: |: fatal error: ")
    math(EXPR errors "${errors} + 1")
    if(first_error STREQUAL "")
      set(first_error "${line}")
    endif()
  endif()
endforeach()
if(NOT DEFINED MIXT_MAX_ERRORS)
  set(MIXT_MAX_ERRORS 1)
endif()
if(NOT DEFINED MIXT_MAX_LINES)
  set(MIXT_MAX_LINES 40)
endif()
if(errors GREATER MIXT_MAX_ERRORS)
  message("${output}")
  message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE}: ${errors} errors, at most ${MIXT_MAX_ERRORS} expected (a cascade after mixt's message)")
endif()
if(NOT first_error MATCHES "mixt: ")
  message("${output}")
  message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE}: the first error is not mixt's: ${first_error}")
endif()
if(diagnostic_lines GREATER MIXT_MAX_LINES)
  message("${output}")
  message(FATAL_ERROR "mixt_expect: ${MIXT_SOURCE}: ${diagnostic_lines} lines of diagnostics, at most ${MIXT_MAX_LINES} expected")
endif()
message(STATUS "mixt_expect: failed to compile as expected (${errors} error, ${diagnostic_lines} lines); matched: ${matched}")
