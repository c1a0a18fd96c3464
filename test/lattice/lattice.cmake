# Build rules for the lattice tests that need more than the test/**/*_test.cpp glob gives:
#
#   - promote_table_static.cpp (compile-only) static_asserts every cell of test/data/promotion_jax_numpy.csv
#     against mixt. The CSV is the source of the expected values: it is read here at configure time and
#     written as a raw string literal into <build>/generated/mixt_test/promotion_jax_numpy.hpp, which a
#     constexpr parser reads. Editing the CSV re-runs the configure step (CMAKE_CONFIGURE_DEPENDS).
#   - torch_table_static.cpp (compile-only) does the same for test/data/promotion_torch.csv under policy::torch
#     (PyTorch's result_type and the dtypes of + * / for rank-1 and rank-0 tensors and literals).
#   - promote_all_pairs.cpp (compile-only) instantiates promote_t for all 4 x 33 x 33 pairs; it is also what
#     bench/compile_time/measure.sh times.
# Both are OBJECT libraries in ALL: a wrong cell fails the build, naming the cell.
#
# Included once (include_guard) from test/CMakeLists.txt; the runtime tests in this folder (*_test.cpp) are
# registered by the glob there.

include_guard(GLOBAL)

set(_mixt_lattice_test_dir "${CMAKE_CURRENT_LIST_DIR}")
set(_mixt_lattice_generated "${CMAKE_BINARY_DIR}/test/generated")

# mixt_embed_table(<target> <csv file> <name>)
#   Writes <generated>/mixt_test/<name>.hpp defining mixt_test::<name>_csv (the file's text) and
#   mixt_test::<name>_source (its file name), and an INTERFACE target <target> that puts it on the include path.
function(mixt_embed_table target csv name)
  if(NOT EXISTS "${csv}")
    message(FATAL_ERROR "mixt: the promotion table ${csv} does not exist")
  endif()
  file(READ "${csv}" MIXT_TABLE_TEXT)
  string(FIND "${MIXT_TABLE_TEXT}" ")mixt_csv\"" _terminator)
  if(NOT _terminator EQUAL -1)
    message(FATAL_ERROR "mixt: ${csv} contains the raw string terminator )mixt_csv\"")
  endif()
  set(MIXT_TABLE_NAME "${name}")
  set(MIXT_TABLE_SOURCE "${csv}")
  get_filename_component(MIXT_TABLE_FILE_NAME "${csv}" NAME)
  string(TOUPPER "${name}_HPP" MIXT_TABLE_GUARD)
  configure_file("${_mixt_lattice_test_dir}/promotion_table.hpp.in"
    "${_mixt_lattice_generated}/mixt_test/${name}.hpp" @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${csv}")
  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE "${_mixt_lattice_generated}")
endfunction()

mixt_embed_table(mixt_test_promotion_jax_numpy
  "${PROJECT_SOURCE_DIR}/test/data/promotion_jax_numpy.csv" promotion_jax_numpy)

add_library(mixt_test_lattice_promote_table_static OBJECT "${_mixt_lattice_test_dir}/promote_table_static.cpp")
target_link_libraries(mixt_test_lattice_promote_table_static PRIVATE mixt::mixt mixt_test_promotion_jax_numpy)
mixt_setup_target(mixt_test_lattice_promote_table_static)

mixt_embed_table(mixt_test_promotion_torch
  "${PROJECT_SOURCE_DIR}/test/data/promotion_torch.csv" promotion_torch)

add_library(mixt_test_lattice_torch_table_static OBJECT "${_mixt_lattice_test_dir}/torch_table_static.cpp")
target_link_libraries(mixt_test_lattice_torch_table_static PRIVATE mixt::mixt mixt_test_promotion_torch)
mixt_setup_target(mixt_test_lattice_torch_table_static)
# Parsing the 784 rows at compile time takes more evaluation steps than Clang's default limit (1048576, GCC has
# none by default), and the fold over every operand pair nests deeper than Clang's default 256.
target_compile_options(mixt_test_lattice_torch_table_static PRIVATE
  $<$<CXX_COMPILER_ID:Clang>:-fconstexpr-steps=100000000 -fbracket-depth=1024>)

add_library(mixt_test_lattice_promote_all_pairs OBJECT "${_mixt_lattice_test_dir}/promote_all_pairs.cpp")
target_link_libraries(mixt_test_lattice_promote_all_pairs PRIVATE mixt::mixt)
mixt_setup_target(mixt_test_lattice_promote_all_pairs)

# The `compile_time` target (bench/compile_time/measure.sh times promote_all_pairs.cpp): bench/CMakeLists.txt
# adds it when the benchmarks are built; a test-only build gets it here.
if(NOT TARGET compile_time AND PROJECT_IS_TOP_LEVEL)
  add_subdirectory("${PROJECT_SOURCE_DIR}/bench/compile_time" "${PROJECT_BINARY_DIR}/bench/compile_time")
endif()
