# The differential test of expressions: gen.py writes random expression trees as C++ test cases at configure
# time; harness.cpp runs the reference evaluator (test/expr/reference.hpp) against mixt's results.
#
#   ctest -R expr.differential        (target test_expr_differential)
#
# Included by test/CMakeLists.txt before the other tests rather than added as a subdirectory: Ninja starts the
# ready compiles in the order they are defined, and these are among the longest, so that they start first and
# the short tests fill the cores while they run (as the last ones, they ran alone at the end of the build).
#
# MIXT_DIFF_SEED, MIXT_DIFF_FIRST and MIXT_DIFF_TREES choose the trees: trees number FIRST to FIRST + TREES - 1
# of the seed (gen.py balances the operations over the trees of a run, so another FIRST gives other trees);
# MIXT_DIFF_TAKE, where set, keeps that many of them, chosen to cover every operation, dtype, rank, height and
# shape the run covers. A plain build takes trees 0 to 511. The CI configurations each take 56 of their own 160
# (CMakePresets.json: gcc from 0, clang from 160, asan from 480, native from 640, v3 from 800), so that no tree
# is compiled twice: the trees were a third of each configuration's build time. (Fewer is not much cheaper: the
# 40 that cover gcc's 160 took 163 s of CPU to compile against the 56's 182, docs/performance-notes.md.) The sanitizer configuration
# (asan), whose compiles of a tree are the slowest (-O0 with ASan and UBSan), takes 32: still every operation, dtype, rank, height and shape of
# its run (gen.py's coverage check), each under ASan and UBSan; the other configurations check the values of
# more trees. gen.py fails a run that misses
# an operation, dtype (the narrow ones included, as leaves and as cast targets), rank or height; the run of 160
# from 320 misses `||`. The trees are split over MIXT_DIFF_TUS translation units.

find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(MIXT_DIFF_TREES 512 CACHE STRING "mixt: number of random expression trees in the differential test")
set(MIXT_DIFF_SEED 20240601 CACHE STRING "mixt: seed of the differential test's trees")
set(MIXT_DIFF_FIRST 0 CACHE STRING "mixt: number of the first tree of the differential test")
set(MIXT_DIFF_TAKE 0 CACHE STRING "mixt: how many of the trees to keep, covering what they cover (0: all)")
set(MIXT_DIFF_TUS 8 CACHE STRING "mixt: translation units the differential test's trees are split over")

set(_diff_dir "${CMAKE_CURRENT_LIST_DIR}")
set(_gen_dir "${CMAKE_CURRENT_BINARY_DIR}/expr/differential/generated")
set(_gen_sources "")
math(EXPR _last "${MIXT_DIFF_TUS} - 1")
foreach(_k RANGE ${_last})
  if(_k LESS 10)
    set(_k "0${_k}")
  endif()
  list(APPEND _gen_sources "${_gen_dir}/trees_${_k}.cpp")
endforeach()

# The trees are written at configure time (gen.py takes under a second and rewrites only the files that change),
# so that their compiles are ordinary sources that Ninja can start first: a custom command's edge comes last in
# build.ninja, and the trees' compiles waited for it until the end of the build. Editing gen.py or the CSV
# reconfigures.
execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${_diff_dir}/gen.py"
    --csv "${PROJECT_SOURCE_DIR}/test/data/promotion_jax_numpy.csv"
    --out "${_gen_dir}"
    --trees ${MIXT_DIFF_TREES} --first ${MIXT_DIFF_FIRST} --take ${MIXT_DIFF_TAKE} --tus ${MIXT_DIFF_TUS} --seed ${MIXT_DIFF_SEED}
  RESULT_VARIABLE _gen_result
  OUTPUT_VARIABLE _gen_output
  ERROR_VARIABLE _gen_output)
if(NOT _gen_result EQUAL 0)
  message(FATAL_ERROR "mixt: gen.py could not write the differential test's trees ${MIXT_DIFF_FIRST} to "
                      "${MIXT_DIFF_FIRST} + ${MIXT_DIFF_TREES} - 1:\n${_gen_output}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${_diff_dir}/gen.py" "${PROJECT_SOURCE_DIR}/test/data/promotion_jax_numpy.csv")

mixt_add_test(expr.differential
  SOURCES "${_diff_dir}/harness.cpp" ${_gen_sources}
  LABELS expr
  NO_PCH)
target_include_directories(test_expr_differential PRIVATE
  "${_diff_dir}" "${PROJECT_SOURCE_DIR}/test")
# The cost of this test is instantiating ~500 expressions two or three times each. It is compiled without debug
# info (it would add half) and at -O1 at most (mixt_cap_optimization: GCC takes as long at -O0, Clang longer at
# -O1 than at -O0, so configurations at -O0 keep it); the test runs in well under a second either way. The
# options are the whole target's, so that its own precompiled headers (mixt.hpp, GoogleTest) are built with them.
if(CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
  target_compile_options(test_expr_differential PRIVATE -g0)
endif()
mixt_cap_optimization(test_expr_differential)
target_precompile_headers(test_expr_differential PRIVATE <mixt/mixt.hpp> <gtest/gtest.h>)
