# Test helpers. Included by test/CMakeLists.txt after find_package(GTest).
#
#   mixt_add_test(<name> SOURCES <file>... [LIBRARIES <lib>...] [LABELS <label>...] [ALL_PASS_VARIANTS])
#       One GoogleTest executable, one ctest test called <name>. Its passes neither stream nor prefetch
#       (MIXT_STREAMING_THRESHOLD_BYTES=0, MIXT_SOFTWARE_PREFETCH=0), so that the fused loop is compiled once
#       per expression instead of five times (streamed or not; prefetching nothing, the stores, or the inputs
#       and the stores): the tests' arrays are mostly below the thresholds, so those variants were compiled
#       and never run. ALL_PASS_VARIANTS keeps the defaults, for the tests of those variants
#       (eval/streaming_test.cpp, eval/fused_test.cpp).
#   mixt_add_header_check(<target> <include_dir> [LIBRARIES <lib>...])
#       An OBJECT library (part of ALL) compiling each header on its own, twice.
#   mixt_expect_compile_fail(<name> CODE <code> | FILE <file> REGEX <regex> [MAX_ERRORS <n>] [MAX_LINES <n>]
#                            [LIBRARIES ...])
#       ctest test compile_fail.<name>: passes only if the snippet fails to
#       compile AND the compiler output matches <regex> (mixt's own message).
#   mixt_expect_compiles(<name> CODE <code> | FILE <file> [LIBRARIES ...])
#       ctest test compiles.<name>: passes only if the snippet compiles.
#   mixt_add_build_test(<name> <object_target> <case_file> [LABELS <label>...])
#       The ctest test behind both: compiles the target, checks the outcome (scripts/expect_build.cmake).
#   mixt_cap_optimization(<target>)
#       Compiles <target> at -O1 where the configuration optimizes more (-O2, -O3, -Ofast): for the tests whose
#       cost is instantiating many expressions, and whose results the optimizer does not change (the
#       differential trees, the tests of the evaluation routes). A configuration at -O0 keeps -O0.

include_guard(GLOBAL)

set(_mixt_testing_dir "${CMAKE_CURRENT_LIST_DIR}")

# Writes <path> only when its content changes, so rebuilds stay incremental.
function(_mixt_write_if_different path content)
  set(tmp "${path}.tmp")
  file(WRITE "${tmp}" "${content}")
  file(COPY_FILE "${tmp}" "${path}" ONLY_IF_DIFFERENT)
  file(REMOVE "${tmp}")
endfunction()

# Precompiled headers. A test, and a compile-fail case, spends a few seconds of its compile parsing
# <mixt/mixt.hpp> (Eigen's Tensor module, Hana, the lattices' tables) before its own code: the headers are
# compiled once per configuration into the PCH of a target that has nothing else (mixt_test_pch,
# mixt_compile_case_pch), with the flags of the targets that reuse it, which must be the same. The check that
# each header compiles on its own (mixt_add_header_check) does not use them. CMAKE_DISABLE_PRECOMPILE_HEADERS=ON
# turns them off.
function(_mixt_pch_target name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "HEADERS;LIBRARIES;DEFINITIONS")
  set(source "${CMAKE_BINARY_DIR}/mixt_pch/${name}.cpp")
  _mixt_write_if_different("${source}" "// Generated: the target that compiles the precompiled headers of mixt's tests.\n")
  add_library(${name} OBJECT "${source}")
  target_link_libraries(${name} PRIVATE mixt::mixt ${arg_LIBRARIES})
  target_compile_definitions(${name} PRIVATE ${arg_DEFINITIONS})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/test")
  target_precompile_headers(${name} PRIVATE ${arg_HEADERS})
  mixt_setup_target(${name})
endfunction()

# The compile definitions of every test target (mixt_add_test), as one list for the PCH target too. The tests take
# the AVX2 loop on 16-bit words in every AVX2 build without AVX-512 (MIXT_SIMD_AVX2_WORDS, simd/arch.hpp), not only in
# builds for the CPU family that chooses it, so that every CI machine runs it.
set(_mixt_test_definitions MIXT_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/test/data" MIXT_SIMD_AVX2_WORDS=1)
# (MIXT_ONE_PASS_VARIANT: the top-level CMakeLists.txt, for the test build's benchmark suite too.)

function(mixt_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "ALL_PASS_VARIANTS;NO_PCH" "" "SOURCES;LIBRARIES;LABELS")
  if(NOT arg_SOURCES OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mixt_add_test(${name} SOURCES ...): unexpected or missing arguments")
  endif()
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" target "test_${name}")
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE mixt::mixt GTest::gtest_main ${arg_LIBRARIES})
  target_compile_definitions(${target} PRIVATE ${_mixt_test_definitions})
  # The tests' shared helpers: #include <support/nan_contract.hpp>.
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/test")
  if(NOT arg_ALL_PASS_VARIANTS)
    target_compile_definitions(${target} PRIVATE ${MIXT_ONE_PASS_VARIANT})
  endif()
  # A test that defines a macro before its first include (EIGEN_USE_THREADS, a mixt threshold) or compiles
  # with other definitions cannot take the shared PCH: it was built without them.
  if(NOT arg_NO_PCH AND NOT arg_ALL_PASS_VARIANTS)
    if(NOT TARGET mixt_test_pch)
      _mixt_pch_target(mixt_test_pch
        HEADERS <mixt/mixt.hpp> <gtest/gtest.h>
        LIBRARIES GTest::gtest_main
        DEFINITIONS ${_mixt_test_definitions} ${MIXT_ONE_PASS_VARIANT})
    endif()
    target_precompile_headers(${target} REUSE_FROM mixt_test_pch)
  endif()
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
  if(NOT TARGET mixt_compile_case_pch)
    _mixt_pch_target(mixt_compile_case_pch HEADERS <mixt/mixt.hpp>)
  endif()
  target_precompile_headers(${target} REUSE_FROM mixt_compile_case_pch)

  # A failing case allows one error (mixt's, the first) and MAX_LINES lines of diagnostics (default 40), unless
  # it says otherwise (expect_build.cmake).
  set(bounds "")
  if(DEFINED arg_MAX_ERRORS)
    string(APPEND bounds "set(MIXT_MAX_ERRORS ${arg_MAX_ERRORS})\n")
  endif()
  if(DEFINED arg_MAX_LINES)
    string(APPEND bounds "set(MIXT_MAX_LINES ${arg_MAX_LINES})\n")
  endif()
  # The regex goes through a file: no quoting trouble on the command line.
  set(params "${dir}/${name}.cmake")
  if(kind STREQUAL "compile_fail")
    set(expect fail)
  else()
    set(expect success)
  endif()
  _mixt_write_if_different("${params}"
    "set(MIXT_EXPECT ${expect})\nset(MIXT_TARGET ${target})\nset(MIXT_SOURCE [==[${source}]==])\nset(MIXT_REGEX [==[${arg_REGEX}]==])\n${bounds}")

  mixt_add_build_test(${kind}.${name} ${target} "${params}" LABELS compile_fail)
endfunction()

# A test that compiles <target> (an OBJECT library) and checks the outcome as the case file <params> says
# (expect_build.cmake). Under the Ninja generator the test runs the object's compile command itself (`ninja -t
# commands`, which reads the build files and writes nothing), so cases run in parallel; otherwise it builds the
# target through `cmake --build`, and two builds of one tree must not run at once (a resource lock).
function(mixt_add_build_test name target params)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "LABELS")
  set(direct "")
  if(CMAKE_GENERATOR STREQUAL "Ninja" AND CMAKE_MAKE_PROGRAM)
    set(direct -D "MIXT_NINJA=${CMAKE_MAKE_PROGRAM}" -D "MIXT_OBJECT=$<TARGET_OBJECTS:${target}>"
               -D "MIXT_INCLUDE_DIR=${PROJECT_SOURCE_DIR}/include")
  endif()
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
      -D MIXT_BUILD_DIR=${CMAKE_BINARY_DIR}
      -D MIXT_CONFIG=$<CONFIG>
      -D MIXT_CASE=${params}
      ${direct}
      -P "${_mixt_testing_dir}/scripts/expect_build.cmake")
  set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}" TIMEOUT 600)
  if(NOT direct)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK mixt_build_tree)
  endif()
endfunction()

function(mixt_expect_compile_fail name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CODE;FILE;REGEX;MAX_ERRORS;MAX_LINES" "LIBRARIES")
  _mixt_compile_case(compile_fail ${name})
endfunction()

function(mixt_expect_compiles name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CODE;FILE" "LIBRARIES")
  _mixt_compile_case(compiles ${name})
endfunction()

# mixt_cap_optimization(<target>): see the header. GCC's -O1 compiled the evaluation tests in three quarters of
# -O2's time and took as long at -O0 (mixt's loops are inlined whole at every level); Clang 14's -O1 costs what
# its -O2 does, its -O0 a third (docs/performance-notes.md, "CI time").
function(mixt_cap_optimization target)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    return()
  endif()
  get_property(_multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(_multi)
    target_compile_options(${target} PRIVATE "$<$<CONFIG:Release,RelWithDebInfo>:-O1>")
    return()
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _type)
  string(REGEX MATCHALL "(^| )-O[^ ]*" _levels "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_type}}")
  if(_levels)
    list(GET _levels -1 _last)
    string(STRIP "${_last}" _last)
    if(_last MATCHES "^-O([2-9]|fast)$")
      target_compile_options(${target} PRIVATE -O1)
    endif()
  endif()
endfunction()
