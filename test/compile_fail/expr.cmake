# Compile tests of expressions and assignment: an operation a dtype does not have, an undefined promotion
# under a stricter policy, two policies or two layouts of rank 2 or more in one expression, and assignments the lattice does
# not allow, each stop compilation with mixt's own message AND name the operation and dtypes (as template
# arguments of mixt's error templates). One representative per message and kind of operation; the full
# 22 x 18 x 18 table of which cells are defined is test/expr/result_table_*. The valid twins (each case with
# the one change that makes it legal) compile together in expr.valid_twins, so a case cannot pass because of
# an unrelated error in the shared prelude.

set(_mixt_expr_prelude [=[
#include <complex>
#include <cstdint>
#include <mixt/mixt.hpp>
template <class T, int N = 1, int L = Eigen::ColMajor>
Eigen::Tensor<T, N, L> t;
using c64 = std::complex<float>;
using strict = mixt::policy::jax_strict;
using array_api = mixt::policy::array_api;
using torch = mixt::policy::torch;
]=])

# _mixt_expr_case(<name> <code> <message regex> [<regex of the names in the instantiation context>]):
# both regexes must match, in either order (GCC prints the instantiation first, Clang the message first).
function(_mixt_expr_case name code message)
  if(ARGC GREATER 3)
    set(regex "(${message}).*(${ARGV3})|(${ARGV3}).*(${message})")
  else()
    set(regex "${message}")
  endif()
  mixt_expect_compile_fail(${name} CODE "${_mixt_expr_prelude}\n${code}\n" REGEX "${regex}")
endfunction()

set(_not_defined "mixt: this operation is not defined for this dtype")
set(_no_path "mixt: input dtypes have no available implicit dtype promotion path under this policy")

_mixt_expr_case(expr.bool_subtract
  "auto e = mixt::lazy(t<bool>) - mixt::lazy(t<bool>);"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::subtract, mixt::dtype_tag<mixt::dtype::bool_>")
_mixt_expr_case(expr.complex_ordered_comparison
  "auto e = mixt::lazy(t<c64>) < mixt::lazy(t<c64>);"
  "${_not_defined}"
  "not_defined_for_dtype<mixt::op::compare_op<mixt::detail::less_fn, true>, mixt::dtype_tag<mixt::dtype::complex64>")
_mixt_expr_case(expr.float_bitwise_and
  "auto e = mixt::lazy(t<float>) & mixt::lazy(t<float>);"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::bit_and, mixt::dtype_tag<mixt::dtype::float32>")
_mixt_expr_case(expr.float_shift_by_literal
  "auto e = mixt::lazy(t<float>) << 1;"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::shift_left, mixt::dtype_tag<mixt::dtype::float32>")
_mixt_expr_case(expr.int_logical_and
  "auto e = mixt::lazy(t<std::int8_t>) && mixt::lazy(t<std::int8_t>);"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::logical_and, mixt::dtype_tag<mixt::dtype::int8>")
_mixt_expr_case(expr.complex_floor_divide
  "auto e = mixt::floor_divide(mixt::lazy(t<c64>), mixt::lazy(t<c64>));"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::floor_divide, mixt::dtype_tag<mixt::dtype::complex64>")
_mixt_expr_case(expr.jax_strict_i8_plus_i16
  "auto e = mixt::lazy<strict>(t<std::int8_t>) + mixt::lazy<strict>(t<std::int16_t>);"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::add, mixt::dtype_tag<mixt::dtype::int8>, mixt::dtype_tag<mixt::dtype::int16>, mixt::policy::jax_strict")
# torch: an f16 array with a complex literal would be PyTorch's complex32, which mixt has not (lattice/slots.hpp).
_mixt_expr_case(expr.torch_f16_plus_complex_literal
  "auto e = mixt::lazy<torch>(t<Eigen::half>) + std::complex<double>(1, 2);"
  "mixt: a float array with a complex operand of rank 0 or a literal gives the complex dtype of the float's precision"
  "no_complex_of_float<mixt::op::add, mixt::dtype_tag<mixt::dtype::float16>, mixt::dtype_tag<mixt::dtype::complex64>, mixt::policy::torch")
_mixt_expr_case(expr.array_api_int_plus_float
  "auto e = mixt::lazy<array_api>(t<std::int8_t>) + mixt::lazy<array_api>(t<float>);"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::add, mixt::dtype_tag<mixt::dtype::int8>, mixt::dtype_tag<mixt::dtype::float32>, mixt::policy::array_api")
_mixt_expr_case(expr.array_api_has_no_f16
  "auto e = mixt::lazy<array_api>(t<Eigen::half>) * mixt::lazy<array_api>(t<Eigen::half>);"
  "mixt: this dtype is not a node of the policy"
  "not_a_node<mixt::op::multiply, mixt::dtype_tag<mixt::dtype::float16>, mixt::policy::array_api")
_mixt_expr_case(expr.two_policies
  "auto e = mixt::lazy<mixt::policy::jax_x32>(t<float>) + mixt::lazy<mixt::policy::jax>(t<float>);"
  "mixt: an expression mixes two promotion policies"
  "two_policies_in_one_expression<mixt::policy::jax_x32, mixt::policy::jax")
_mixt_expr_case(expr.whole_expression_policy_over_another
  "auto e = mixt::lazy<mixt::policy::jax_x32>(mixt::lazy<mixt::policy::jax>(t<float>) + mixt::lazy(t<float>));"
  "mixt: an expression mixes two promotion policies"
  "conflicting_policies<mixt::policy::jax_x32, mixt::policy::jax")
_mixt_expr_case(expr.subexpression_not_defined_under_the_policy
  "auto e = mixt::lazy<strict>(t<float>) + (mixt::lazy(t<float>) + mixt::lazy(t<Eigen::bfloat16>));"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::add, [^>]*>, [^>]*>, mixt::policy::jax_strict")
_mixt_expr_case(expr.whole_expression_policy_without_tensor
  "auto e = mixt::lazy<mixt::policy::jax_x32>(mixt::strong(1.0f) * 2);"
  "mixt: mixt::lazy<Policy>\\(e\\) needs a tensor leaf"
  "no_tensor_leaf<mixt::policy::jax_x32")
_mixt_expr_case(expr.subexpression_typed_under_default_policy
  "auto e = mixt::lazy<mixt::policy::jax_x32>(t<float>) + (mixt::lazy(t<std::uint32_t>) + mixt::lazy(t<std::int32_t>));"
  "mixt: a sub-expression without a policy of its own was typed under the default policy"
  "subexpression_typed_under_default_policy<mixt::policy::jax_x32, mixt::op::add, mixt::dtype_tag<mixt::dtype::uint32>, mixt::dtype_tag<mixt::dtype::int32>")
_mixt_expr_case(expr.scalar_subexpression_typed_under_default_policy
  "auto e = mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(t<float>) + (mixt::strong(std::uint32_t{1}) + mixt::strong(std::int32_t{2})));"
  "mixt: a sub-expression without a policy of its own was typed under the default policy"
  "subexpression_typed_under_default_policy<mixt::policy::jax_x32, mixt::op::add, mixt::dtype_tag<mixt::dtype::uint32>, mixt::dtype_tag<mixt::dtype::int32>")
_mixt_expr_case(expr.layout_mismatch
  "auto e = mixt::lazy(t<float, 2>) + mixt::lazy(t<float, 2, Eigen::RowMajor>);"
  "mixt: the operands of an expression mix row-major and column-major arrays of rank 2 or more")
# Evaluating an expression whose building failed adds no error of its own (well_formed_v): mixt's message
# stays the only one, with g++ and clang++ alike.
_mixt_expr_case(eval.eval_of_a_layout_mismatch
  "void f() { auto r = mixt::eval(mixt::lazy(t<float, 2>) + t<Eigen::half, 2, Eigen::RowMajor>); (void)r; }"
  "mixt: the operands of an expression mix row-major and column-major arrays of rank 2 or more")
_mixt_expr_case(eval.assign_of_a_layout_mismatch
  "void f() { mixt::assign(t<float, 2>, mixt::lazy(t<float, 2>) + t<Eigen::half, 2, Eigen::RowMajor>); }"
  "mixt: the operands of an expression mix row-major and column-major arrays of rank 2 or more")
_mixt_expr_case(eval.to_eigen_of_a_layout_mismatch
  "void f() { auto e = mixt::to_eigen(mixt::lazy(t<float, 2>) + t<Eigen::half, 2, Eigen::RowMajor>); (void)e; }"
  "mixt: the operands of an expression mix row-major and column-major arrays of rank 2 or more")
_mixt_expr_case(eval.eval_of_float_bitwise_and
  "void f() { auto r = mixt::eval(mixt::lazy(t<float>) & t<float>); (void)r; }"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::bit_and, mixt::dtype_tag<mixt::dtype::float32>")
_mixt_expr_case(expr.leaf_scalar_not_a_dtype
  "auto e = mixt::lazy(t<long double>);"
  "mixt: a leaf's scalar type must be the storage type of one of mixt's 30 concrete dtypes")
_mixt_expr_case(eval.eval_of_two_float8_formats
  "void f() { auto r = mixt::eval(mixt::lazy(t<mixt::float8_e4m3fn>) + t<mixt::float8_e5m2>); (void)r; }"
  "8-bit and smaller floats do not support implicit promotion.*mixt::cast<T>\\(x\\)"
  "small_float_promotion<mixt::op::add, mixt::dtype_tag<mixt::dtype::float8_e4m3fn>, mixt::dtype_tag<mixt::dtype::float8_e5m2>")
_mixt_expr_case(eval.eval_of_float8_and_f32
  "void f() { auto r = mixt::eval(mixt::lazy(t<mixt::float8_e4m3fn>) * t<float>); (void)r; }"
  "8-bit and smaller floats do not support implicit promotion.*mixt::cast<T>\\(x\\)")
_mixt_expr_case(eval.packed_destination_of_an_eigen_expression
  "void f(std::uint8_t* b) { auto p = mixt::packed<mixt::int4>(b, 4); mixt::assign(p, mixt::cast<mixt::int4>(mixt::lazy(t<float>.reverse(Eigen::array<bool, 1>{true})))); }"
  "mixt: assign: a packed destination is written by mixt's CPU passes")
_mixt_expr_case(eval.packed_type_not_sub_byte
  "void f(std::uint8_t* b) { auto p = mixt::packed_map<std::int8_t, 1>(b, 4); (void)p; }"
  "mixt: packed_map<T, ...>: T must be mixt::int4, uint4, float4_e2m1fn, int2 or uint2")
_mixt_expr_case(eval.assign_float_into_int
  "void f() { mixt::assign(t<std::int32_t>, mixt::lazy(t<float>) + 1); }"
  "does not promote implicitly to the destination.*mixt::cast<T>\\(e\\)"
  "not_implicitly_convertible<mixt::dtype_tag<mixt::dtype::float32>, mixt::dtype_tag<mixt::dtype::int32>, mixt::policy::jax")
_mixt_expr_case(eval.eval_float_as_int
  "void f() { auto r = mixt::eval<std::int32_t>(mixt::lazy(t<float>) + 1); (void)r; }"
  "mixt: eval<T>: the expression's dtype does not promote implicitly to T.*mixt::eval<T>\\(mixt::cast<T>\\(e\\)\\)"
  "not_implicitly_evaluable<mixt::dtype_tag<mixt::dtype::float32>, mixt::dtype_tag<mixt::dtype::int32>, mixt::policy::jax")
_mixt_expr_case(eval.assign_into_lower_rank
  "void f() { mixt::assign(t<float, 1>, mixt::lazy(t<float, 2>) + 1); }"
  "mixt: assign: the expression's rank is higher than the destination's")
_mixt_expr_case(eval.assign_into_other_layout
  "void f() { mixt::assign(t<float, 2, Eigen::RowMajor>, mixt::lazy(t<float, 2>) + 1); }"
  "mixt: assign: the destination's layout \\(row- or column-major\\) differs")
_mixt_expr_case(eval.to_eigen_of_dense
  "void f() { Eigen::ArrayXf x(3); auto e = mixt::to_eigen(mixt::lazy(x) + 1); (void)e; }"
  "mixt: to_eigen, and evaluation on devices other than DefaultDevice and ThreadPoolDevice, take Eigen tensors"
  "dense_operand<Eigen::Array<float, -1, 1")
_mixt_expr_case(eval.assign_into_const_array
  "void f(const Eigen::ArrayXf& a) { mixt::assign(a, mixt::lazy(t<float>) + 1); }"
  "mixt: assign: the destination is read-only")
_mixt_expr_case(eval.assign_into_const_map
  "void f() { float b[3] = {}; Eigen::TensorMap<Eigen::Tensor<const float, 1>> m(b, 3); mixt::assign(m, mixt::lazy(t<float>) + 1); }"
  "mixt: assign: the destination is read-only")

mixt_expect_compiles(expr.valid_twins CODE "${_mixt_expr_prelude}
void twins() {
    auto bool_add = mixt::lazy(t<bool>) + mixt::lazy(t<bool>);
    auto complex_equal = mixt::lazy(t<c64>) == mixt::lazy(t<c64>);
    auto int_bitwise_and = mixt::lazy(t<std::int32_t>) & mixt::lazy(t<std::int32_t>);
    auto int_shift = mixt::lazy(t<std::int32_t>) << 1;
    auto bool_logical_and = mixt::lazy(t<bool>) && mixt::lazy(t<bool>);
    auto float_floor_divide = mixt::floor_divide(mixt::lazy(t<float>), mixt::lazy(t<float>));
    auto strict_cast = mixt::lazy<strict>(t<std::int16_t>) + mixt::cast<std::int16_t>(mixt::lazy<strict>(t<std::int8_t>));
    auto strict_literal = mixt::lazy<strict>(t<std::int8_t>) + 1;
    auto array_api_ints = mixt::lazy<array_api>(t<std::int8_t>) + mixt::lazy<array_api>(t<std::int16_t>);
    auto array_api_f32 = mixt::lazy<array_api>(t<float>) * mixt::lazy<array_api>(t<float>);
    auto torch_f32_complex = mixt::lazy<torch>(t<float>) + std::complex<double>(1, 2);
    auto one_policy = mixt::lazy<mixt::policy::jax_x32>(t<float>) + mixt::lazy(t<float>);
    auto whole_policy = mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(t<float>) + mixt::lazy(t<float>));
    auto whole_policy_with_tensor = mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(t<float>) + mixt::strong(1.0f) * 2);
    auto sub_policy = mixt::lazy<mixt::policy::jax_x32>(t<float>) +
                      mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(t<std::uint32_t>) + mixt::lazy(t<std::int32_t>));
    auto scalar_sub = mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(t<float>) +
                                                         (mixt::strong(std::int32_t{1}) + mixt::strong(std::int32_t{2})));
    auto strict_sub = mixt::lazy<strict>(t<float>) + (mixt::lazy(t<float>) + mixt::lazy(t<float>));
    auto same_rank = mixt::lazy(t<float, 2>) + mixt::lazy(t<float, 2>);
    auto broadcast_rank = mixt::lazy(t<float, 1, Eigen::RowMajor>) + mixt::lazy(t<float, 2>);
    auto same_layout = mixt::lazy(t<float, 2, Eigen::RowMajor>) + mixt::lazy(t<float, 2, Eigen::RowMajor>);
    auto double_leaf = mixt::lazy(t<double>);
    mixt::assign(t<float>, mixt::lazy(t<std::int32_t>) + 1);
    mixt::assign(t<std::int32_t>, mixt::cast<std::int32_t>(mixt::lazy(t<float>) + 1));
    (void)mixt::eval<std::int32_t>(mixt::cast<std::int32_t>(mixt::lazy(t<float>) + 1));
    mixt::assign(t<float, 2>, mixt::lazy(t<float, 2>) + 1);
    mixt::assign(t<float, 2, Eigen::RowMajor>, mixt::lazy(t<float, 2, Eigen::RowMajor>) + 1);
    Eigen::ArrayXf x(3);
    Eigen::TensorMap<Eigen::Tensor<const float, 1>> read_only(x.data(), 3);
    auto dense_eval = mixt::eval(mixt::lazy(x) + 1);
    auto tensor_lowered = mixt::to_eigen(mixt::lazy(read_only) + 1);
    float b[3] = {};
    Eigen::TensorMap<Eigen::Tensor<float, 1>> writable(b, 3);
    mixt::assign(writable, mixt::lazy(t<float>) + 1);
    std::uint8_t packed_bytes[2] = {};
    auto packed_int4 = mixt::packed<mixt::int4>(packed_bytes, 4);
    mixt::assign(packed_int4, mixt::cast<mixt::int4>(mixt::lazy(t<float>)));
    auto packed_int4_map = mixt::packed_map<mixt::int4, 1>(packed_bytes, 4);
    (void)packed_int4_map;
    (void)dense_eval; (void)tensor_lowered;
    (void)bool_add; (void)complex_equal; (void)int_bitwise_and; (void)int_shift; (void)bool_logical_and;
    (void)float_floor_divide; (void)strict_cast; (void)strict_literal; (void)array_api_ints; (void)array_api_f32;
    (void)torch_f32_complex;
    (void)one_policy; (void)whole_policy; (void)whole_policy_with_tensor; (void)sub_policy; (void)scalar_sub;
    (void)same_rank; (void)broadcast_rank; (void)same_layout; (void)double_leaf; (void)strict_sub;
}")
