# The result-type table tests (included by test/CMakeLists.txt, before its glob).
#
# gen_result_table.py derives, at build time, the expected result dtype of 22 binary operations over every
# pair of the 18 classic dtypes from test/data/promotion_jax_numpy.csv and the spec's per-operation rules,
# as the header mixt_test/result_table.hpp. Two consumers:
#   expr.result_table                  (result_table_test.cpp) reports every wrong cell at run time;
#   mixt_expr_result_table_static      (result_table_static.cpp, part of ALL) static_asserts every cell.

find_package(Python3 3.8 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "mixt: no Python 3 interpreter found: the result-type table tests (expr.result_table) "
                 "are not built")
  # Keeps the glob from building the test without its generated header.
  set_property(GLOBAL APPEND PROPERTY MIXT_TEST_SOURCES "${CMAKE_CURRENT_LIST_DIR}/result_table_test.cpp")
  return()
endif()

set(_mixt_rt_dir "${CMAKE_CURRENT_BINARY_DIR}/expr_generated")
set(_mixt_rt_header "${_mixt_rt_dir}/mixt_test/result_table.hpp")
set(_mixt_rt_csv "${PROJECT_SOURCE_DIR}/test/data/promotion_jax_numpy.csv")
add_custom_command(
  OUTPUT "${_mixt_rt_header}"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_mixt_rt_dir}/mixt_test"
  COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/gen_result_table.py" "${_mixt_rt_csv}"
          "${_mixt_rt_header}"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/gen_result_table.py" "${_mixt_rt_csv}"
  COMMENT "mixt: expected result dtypes from promotion_jax_numpy.csv and the per-operation rules"
  VERBATIM)

# The run-time twin of result_table_static.cpp (where MIXT_TEST_SCOPE has facts: a table of compile-time facts).
if(NOT "expr/result_table_test.cpp" IN_LIST _mixt_skipped_tests)
  mixt_add_test(expr.result_table
    SOURCES "${CMAKE_CURRENT_LIST_DIR}/result_table_test.cpp" "${_mixt_rt_header}"
    LABELS expr)
  target_include_directories(test_expr_result_table PRIVATE "${_mixt_rt_dir}")
endif()

if(MIXT_TEST_COMPILE_CHECKS)
  add_library(mixt_expr_result_table_static OBJECT
    "${CMAKE_CURRENT_LIST_DIR}/result_table_static.cpp" "${_mixt_rt_header}")
  target_link_libraries(mixt_expr_result_table_static PRIVATE mixt::mixt)
  target_include_directories(mixt_expr_result_table_static PRIVATE "${_mixt_rt_dir}")
  mixt_setup_target(mixt_expr_result_table_static)
endif()
