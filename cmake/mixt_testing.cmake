# Test helpers. Included by test/CMakeLists.txt after find_package(GTest).
#
#   mixt_add_test(<name> SOURCES <file>... [LIBRARIES <lib>...] [LABELS <label>...])
#       One GoogleTest executable, one ctest test called <name>.
#   mixt_add_header_check(<target> <include_dir> [LIBRARIES <lib>...])
#       An OBJECT library (part of ALL) compiling each header on its own, twice.
#   mixt_expect_compile_fail(<name> CODE <code> | FILE <file> REGEX <regex> [LIBRARIES ...])
#       ctest test compile_fail.<name>: passes only if the snippet fails to
#       compile AND the compiler output matches <regex> (mixt's own message).
#   mixt_expect_compiles(<name> CODE <code> | FILE <file> [LIBRARIES ...])
#       ctest test compiles.<name>: passes only if the snippet compiles.

include_guard(GLOBAL)

set(_mixt_testing_dir "${CMAKE_CURRENT_LIST_DIR}")

# Writes <path> only when its content changes, so rebuilds stay incremental.
function(_mixt_write_if_different path content)
  set(tmp "${path}.tmp")
  file(WRITE "${tmp}" "${content}")
  file(COPY_FILE "${tmp}" "${path}" ONLY_IF_DIFFERENT)
  file(REMOVE "${tmp}")
endfunction()

function(mixt_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES;LABELS")
  if(NOT arg_SOURCES OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mixt_add_test(${name} SOURCES ...): unexpected or missing arguments")
  endif()
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" target "test_${name}")
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE mixt::mixt GTest::gtest_main ${arg_LIBRARIES})
  target_compile_definitions(${target} PRIVATE MIXT_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/test/data")
  mixt_setup_target(${target})
  # One ctest entry per executable: GoogleTest reports every failing case itself.
  add_test(NAME ${name} COMMAND ${target} --gtest_color=no)
  set_tests_properties(${name} PROPERTIES LABELS "unit;${arg_LABELS}" TIMEOUT 600)
  foreach(src IN LISTS arg_SOURCES)
    get_filename_component(src "${src}" ABSOLUTE)
    set_property(GLOBAL APPEND PROPERTY MIXT_TEST_SOURCES "${src}")
  endforeach()
endfunction()

function(mixt_add_header_check target include_dir)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "LIBRARIES")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${include_dir}" "${include_dir}/*.hpp")
  list(SORT headers)
  set(sources "")
  foreach(header IN LISTS headers)
    set(tu "${CMAKE_CURRENT_BINARY_DIR}/${target}/${header}.cpp")
    _mixt_write_if_different("${tu}"
      "// Generated: <${header}> compiles on its own, and its include guard works.\n#include <${header}>\n#include <${header}>\n")
    list(APPEND sources "${tu}")
  endforeach()
  add_library(${target} OBJECT ${sources})
  target_link_libraries(${target} PRIVATE mixt::mixt ${arg_LIBRARIES})
  mixt_setup_target(${target})
endfunction()

# Shared by mixt_expect_compile_fail and mixt_expect_compiles. Reads the
# caller's arg_* variables: forwarding ${ARGN} would split the code at ';'.
function(_mixt_compile_case kind name)
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mixt: ${kind} case '${name}': unexpected arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(DEFINED arg_CODE AND DEFINED arg_FILE OR NOT DEFINED arg_CODE AND NOT DEFINED arg_FILE)
    message(FATAL_ERROR "mixt: ${kind} case '${name}' needs exactly one of CODE and FILE")
  endif()
  if(kind STREQUAL "compile_fail" AND "${arg_REGEX}" STREQUAL "")
    message(FATAL_ERROR "mixt: compile_fail case '${name}' needs a REGEX (mixt's own message)")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_.]+$")
    message(FATAL_ERROR "mixt: ${kind} case name '${name}' may use letters, digits, '_' and '.' only")
  endif()
  if(TEST ${kind}.${name})
    message(FATAL_ERROR "mixt: ${kind} case '${name}' is defined twice")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${kind}")
  if(DEFINED arg_FILE)
    get_filename_component(source "${arg_FILE}" ABSOLUTE)
  else()
    set(source "${dir}/${name}.cpp")
    _mixt_write_if_different("${source}" "${arg_CODE}\n")
  endif()
  string(REPLACE "." "_" target "mixt_${kind}_${name}")
  add_library(${target} OBJECT EXCLUDE_FROM_ALL "${source}")
  target_link_libraries(${target} PRIVATE mixt::mixt ${arg_LIBRARIES})
  mixt_setup_target(${target})

  # The regex goes through a file: no quoting trouble on the command line.
  set(params "${dir}/${name}.cmake")
  if(kind STREQUAL "compile_fail")
    set(expect fail)
  else()
    set(expect success)
  endif()
  _mixt_write_if_different("${params}"
    "set(MIXT_EXPECT ${expect})\nset(MIXT_TARGET ${target})\nset(MIXT_SOURCE [==[${source}]==])\nset(MIXT_REGEX [==[${arg_REGEX}]==])\n")

  add_test(NAME ${kind}.${name}
    COMMAND ${CMAKE_COMMAND}
      -D MIXT_BUILD_DIR=${CMAKE_BINARY_DIR}
      -D MIXT_CONFIG=$<CONFIG>
      -D MIXT_CASE=${params}
      -P "${_mixt_testing_dir}/scripts/expect_build.cmake")
  # The cases build targets of this build tree; two builds of one tree must
  # not run at once.
  set_tests_properties(${kind}.${name} PROPERTIES
    LABELS compile_fail
    RESOURCE_LOCK mixt_build_tree
    TIMEOUT 600)
endfunction()

function(mixt_expect_compile_fail name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CODE;FILE;REGEX" "LIBRARIES")
  _mixt_compile_case(compile_fail ${name})
endfunction()

function(mixt_expect_compiles name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CODE;FILE" "LIBRARIES")
  _mixt_compile_case(compiles ${name})
endfunction()
