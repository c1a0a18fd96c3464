// mixt/expr/rules.hpp: what each operation's rule says beyond the result dtype of a binary operation (which
// result_table_* check cell by cell): the operand dtypes the children are converted to, the unary and
// ternary rules, to_inexact and the real part, the rules under the other built-in policies, which operand
// dtypes an operation is defined for (`op::defined_v`, `op::verdict_v`), and what each operation is called in
// error messages. Checked at run time (EXPECT_TRUE(is_same_v)) so that one run reports every wrong fact.

#include <mixt/expr/rules.hpp>

#include <string_view>
#include <type_traits>

#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace {

using namespace mixt::dtypes;
using mixt::op::pow; // not std::pow
using jax = mixt::policy::jax;
using x32 = mixt::policy::jax_x32;
using strict = mixt::policy::jax_strict;
using array_api = mixt::policy::array_api;
template <class... Ts>
using list = boost::mp11::mp_list<Ts...>;

#define EXPECT_SAME(...) EXPECT_TRUE((std::is_same_v<__VA_ARGS__>)) << #__VA_ARGS__

template <class Op, class Policy, class... Nodes>
using result = typename Op::template rule<Policy, Nodes...>::result;
template <class Op, class Policy, class... Nodes>
using operands = typename Op::template rule<Policy, Nodes...>::operands;

TEST(rules, join_operations_convert_both_operands_to_the_join) {
    EXPECT_SAME(operands<mixt::op::add, jax, i8, u8>, list<i16, i16>);
    EXPECT_SAME(operands<mixt::op::multiply, jax, f16, bf16>, list<f32, f32>);
    EXPECT_SAME(operands<mixt::op::shift_left, jax, u8, weak_int>, list<u8, u8>);
    EXPECT_SAME(operands<mixt::op::modulo, jax, u64, i64>, list<weak_float, weak_float>);
    EXPECT_SAME(result<mixt::op::modulo, jax, u64, i64>, weak_float);
    EXPECT_SAME(operands<mixt::op::minimum, jax, c64, f64>, list<c128, c128>);
    EXPECT_SAME(result<mixt::op::bit_xor, jax, bool_, bool_>, bool_);
    EXPECT_SAME(result<mixt::op::logical_or, jax, bool_, bool_>, bool_);
}

TEST(rules, comparisons_compare_in_the_join_and_give_bool) {
    EXPECT_SAME(result<mixt::op::less, jax, u8, i8>, bool_);
    EXPECT_SAME(operands<mixt::op::less, jax, u8, i8>, list<i16, i16>);
    EXPECT_SAME(operands<mixt::op::equal, jax, c64, weak_float>, list<c64, c64>);
    EXPECT_SAME(operands<mixt::op::greater_equal, jax, u8, weak_int>, list<u8, u8>);
    EXPECT_SAME(result<mixt::op::not_equal, jax, c128, c64>, bool_);
}

TEST(rules, true_division_and_float_functions_go_to_inexact) {
    EXPECT_SAME(mixt::to_inexact_t<bool_>, f32);
    EXPECT_SAME(mixt::to_inexact_t<u8>, f32);
    EXPECT_SAME(mixt::to_inexact_t<i32>, f32);
    EXPECT_SAME(mixt::to_inexact_t<u32>, f32);
    EXPECT_SAME(mixt::to_inexact_t<i64>, f64);
    EXPECT_SAME(mixt::to_inexact_t<u64>, f64);
    EXPECT_SAME(mixt::to_inexact_t<weak_int>, weak_float);
    EXPECT_SAME(mixt::to_inexact_t<weak_float>, weak_float);
    EXPECT_SAME(mixt::to_inexact_t<bf16>, bf16);
    EXPECT_SAME(mixt::to_inexact_t<c64>, c64);
    EXPECT_SAME(result<mixt::op::divide, jax, i8, u8>, f32); // join i16, then f32
    EXPECT_SAME(operands<mixt::op::divide, jax, i8, u8>, list<f32, f32>);
    EXPECT_SAME(result<mixt::op::divide, jax, u32, i8>, f64); // join i64
    EXPECT_SAME(result<mixt::op::divide, jax, bool_, bool_>, f32);
    EXPECT_SAME(result<mixt::op::divide, jax, f16, weak_int>, f16);
    EXPECT_SAME(result<mixt::op::sqrt, jax, i16>, f32);
    EXPECT_SAME(result<mixt::op::exp, jax, i64>, f64);
    EXPECT_SAME(result<mixt::op::log, jax, weak_int>, weak_float);
    EXPECT_SAME(result<mixt::op::sin, jax, bf16>, bf16);
    EXPECT_SAME(result<mixt::op::cos, jax, bool_>, f32);
    EXPECT_SAME(result<mixt::op::tanh, jax, c64>, c64);
    EXPECT_SAME(operands<mixt::op::sqrt, jax, u8>, list<f32>);
}

TEST(rules, abs_real_imag_give_the_real_type) {
    EXPECT_SAME(mixt::real_part_t<c64>, f32);
    EXPECT_SAME(mixt::real_part_t<c128>, f64);
    EXPECT_SAME(mixt::real_part_t<weak_complex>, weak_float);
    EXPECT_SAME(mixt::real_part_t<i8>, i8);
    EXPECT_SAME(result<mixt::op::abs, jax, c64>, f32);
    EXPECT_SAME(result<mixt::op::abs, jax, c128>, f64);
    EXPECT_SAME(result<mixt::op::abs, jax, i8>, i8);
    EXPECT_SAME(result<mixt::op::abs, jax, bool_>, bool_);
    EXPECT_SAME(operands<mixt::op::abs, jax, c64>, list<c64>);
    EXPECT_SAME(result<mixt::op::real, jax, c128>, f64);
    EXPECT_SAME(result<mixt::op::imag, jax, c64>, f32);
    EXPECT_SAME(result<mixt::op::imag, jax, f16>, f16);
}

TEST(rules, unary_operations_keep_their_dtype) {
    EXPECT_SAME(result<mixt::op::negate, jax, i8>, i8);
    EXPECT_SAME(result<mixt::op::negate, jax, weak_int>, weak_int);
    EXPECT_SAME(result<mixt::op::negate, jax, bf16>, bf16);
    EXPECT_SAME(result<mixt::op::bit_not, jax, u16>, u16);
    EXPECT_SAME(result<mixt::op::bit_not, jax, bool_>, bool_);
    EXPECT_SAME(result<mixt::op::logical_not, jax, bool_>, bool_);
    EXPECT_SAME(result<mixt::op::conj, jax, c64>, c64);
    EXPECT_SAME(result<mixt::op::conj, jax, f32>, f32);
}

TEST(rules, pow_keeps_a_float_base_with_an_integer_exponent) {
    // The exponent is not converted: f16 ** i64 computes with the i64 value.
    EXPECT_SAME(operands<pow, jax, f16, i64>, list<f16, i64>);
    EXPECT_SAME(result<pow, jax, f16, i64>, f16);
    EXPECT_SAME(operands<pow, jax, bf16, bool_>, list<bf16, bool_>);
    EXPECT_SAME(operands<pow, jax, c64, u8>, list<c64, u8>);
    EXPECT_SAME(operands<pow, jax, weak_float, i8>, list<weak_float, i8>);
    // Otherwise the join.
    EXPECT_SAME(operands<pow, jax, i8, f16>, list<f16, f16>);
    EXPECT_SAME(operands<pow, jax, f16, f32>, list<f32, f32>);
    EXPECT_SAME(operands<pow, jax, i8, u8>, list<i16, i16>);
    EXPECT_SAME(result<pow, jax, bool_, bool_>, bool_);
}

TEST(rules, where_clip_and_cast) {
    EXPECT_SAME(result<mixt::op::where, jax, i32, i8, u8>, i16);
    EXPECT_SAME(operands<mixt::op::where, jax, i32, i8, u8>, list<bool_, i16, i16>);
    EXPECT_SAME(result<mixt::op::where, jax, bool_, u64, i64>, weak_float);
    EXPECT_SAME(result<mixt::op::where, jax, f32, weak_int, weak_int>, weak_int); // the condition does not join
    EXPECT_SAME(result<mixt::op::clip, jax, u8, i8, f16>, f16);
    EXPECT_SAME(result<mixt::op::clip, jax, i8, weak_int, weak_int>, i8);
    EXPECT_SAME(operands<mixt::op::clip, jax, i8, weak_int, weak_float>, list<weak_float, weak_float, weak_float>);
    EXPECT_SAME(result<mixt::op::cast<f16>, jax, i64>, f16);
    EXPECT_SAME(operands<mixt::op::cast<u8>, jax, f64>, list<u8>);
    EXPECT_SAME(result<mixt::op::cast<i8>, strict, c128>, i8); // a cast needs no promotion path
}

TEST(rules, other_policies) {
    // jax_x32: u32 -> i32, so u32 with a signed int gives i32; weak results stay weak in the rule.
    EXPECT_SAME(result<mixt::op::add, x32, u32, i8>, i32);
    EXPECT_SAME(result<mixt::op::add, x32, u32, i64>, i64);
    EXPECT_SAME(result<mixt::op::add, x32, u64, i64>, weak_float);
    EXPECT_SAME(result<mixt::op::divide, x32, u32, i32>, f32);
    EXPECT_SAME(result<mixt::op::less, x32, u32, i16>, bool_);
    // jax_strict: only a literal of the same or a lower kind joins.
    EXPECT_SAME(result<mixt::op::add, strict, i8, weak_int>, i8);
    EXPECT_SAME(result<mixt::op::multiply, strict, f16, weak_float>, f16);
    EXPECT_SAME(result<mixt::op::multiply, strict, f16, weak_int>, f16);
    EXPECT_SAME(result<mixt::op::add, strict, weak_int, weak_float>, weak_float);
    EXPECT_SAME(result<mixt::op::add, strict, c64, weak_complex>, c64);
    EXPECT_SAME(result<mixt::op::subtract, strict, i8, i8>, i8);
    // array_api: ints join within their lattice, int literals join floats, kinds do not mix.
    EXPECT_SAME(result<mixt::op::add, array_api, u8, i8>, i16);
    EXPECT_SAME(result<mixt::op::add, array_api, u32, i32>, i64);
    EXPECT_SAME(result<mixt::op::add, array_api, f32, weak_int>, f32);
    EXPECT_SAME(result<mixt::op::add, array_api, weak_float, c64>, c64);
    EXPECT_SAME(result<mixt::op::add, array_api, f32, c64>, c64);
    EXPECT_SAME(result<mixt::op::divide, array_api, i16, i16>, f32);
    // Which pairs have a join at all (the rest are compile errors at the operators; see compile_fail).
    EXPECT_FALSE((mixt::has_promotion_v<i8, i16, strict>));
    EXPECT_FALSE((mixt::has_promotion_v<f32, f64, strict>));
    EXPECT_FALSE((mixt::has_promotion_v<u64, i8, array_api>));
    EXPECT_FALSE((mixt::has_promotion_v<i8, f32, array_api>));
    EXPECT_FALSE((mixt::has_promotion_v<weak_float, i8, array_api>));
    EXPECT_FALSE((mixt::has_promotion_v<bool_, i8, array_api>));
    EXPECT_FALSE((mixt::has_promotion_v<f16, f32, array_api>)); // f16 is not a node of array_api
    EXPECT_TRUE((mixt::has_promotion_v<i8, weak_int, strict>));
}

// The result types that differ from JAX's on purpose (README, "Expressions"), and the literal spellings of
// image code that the README warns about.
TEST(rules, choices_that_differ_from_jax) {
    using mixt::op::defined_v;
    // Bool has no integer arithmetic: // % << >> are not defined on two bools (JAX: int32, NumPy: int8).
    EXPECT_FALSE((defined_v<mixt::op::floor_divide, jax, bool_, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::modulo, jax, bool_, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::shift_left, jax, bool_, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::shift_right, jax, bool_, bool_>));
    // pow keeps a float or complex base with an integer or bool exponent, a weak base too (JAX: f64 / c128).
    EXPECT_SAME(result<pow, jax, bool_, bool_>, bool_); // JAX: int32
    EXPECT_SAME(result<pow, jax, weak_float, u8>, weak_float);
    EXPECT_SAME(result<pow, jax, weak_complex, i32>, weak_complex);
    EXPECT_SAME(result<mixt::op::multiply, jax, result<pow, jax, weak_float, u8>, f32>, f32); // JAX: f64
    // u8 / 255 is f32; u8 / 255.0 is f64 under jax (a weak float joins u8 as f*, stored at the default width).
    EXPECT_SAME(mixt::to_inexact_t<result<mixt::op::divide, jax, u8, weak_int>>, f32);
    EXPECT_SAME(result<mixt::op::divide, jax, u8, weak_int>, f32);
    EXPECT_SAME(result<mixt::op::divide, jax, u8, weak_float>, weak_float);
    EXPECT_SAME(mixt::materialize_t<weak_float, jax>, f64);
    EXPECT_SAME(mixt::materialize_t<result<mixt::op::divide, x32, u8, weak_float>, x32>, f32);
}

TEST(rules, defined_v_says_where_a_rule_is_defined_without_stopping_compilation) {
    using mixt::op::defined_v;
    using mixt::op::verdict;
    using mixt::op::verdict_v;
    // Defined: the rule has a result.
    EXPECT_TRUE((defined_v<mixt::op::add, jax, i8, u8>));
    EXPECT_TRUE((defined_v<mixt::op::subtract, jax, bool_, i8>)); // the join i8 has `-`
    EXPECT_TRUE((defined_v<mixt::op::bit_and, jax, bool_, bool_>));
    EXPECT_TRUE((defined_v<mixt::op::equal, jax, c64, c128>));
    EXPECT_TRUE((defined_v<mixt::op::divide, jax, bool_, bool_>));
    EXPECT_TRUE((defined_v<pow, jax, f16, i64>));
    EXPECT_TRUE((defined_v<mixt::op::where, jax, f32, i8, u8>)); // the condition need not join
    EXPECT_TRUE((defined_v<mixt::op::negate, jax, i8>));
    EXPECT_TRUE((defined_v<mixt::op::abs, jax, c64>));
    EXPECT_TRUE((defined_v<mixt::op::cast<i8>, strict, c128>));
    EXPECT_TRUE((defined_v<mixt::op::add, strict, i8, weak_int>));
    // Not defined for the join's kind (rule 7).
    EXPECT_FALSE((defined_v<mixt::op::subtract, jax, bool_, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::bit_and, jax, f32, i8>)); // the join f32 has no `&`
    EXPECT_FALSE((defined_v<mixt::op::less, jax, c64, f32>));
    EXPECT_FALSE((defined_v<mixt::op::logical_and, jax, i8, i8>));
    EXPECT_FALSE((defined_v<mixt::op::shift_left, jax, bool_, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::modulo, jax, c64, c64>));
    EXPECT_FALSE((defined_v<mixt::op::negate, jax, bool_>));
    EXPECT_FALSE((defined_v<mixt::op::logical_not, jax, i32>));
    EXPECT_EQ((verdict_v<mixt::op::floor_divide, jax, c64, i8>), verdict::not_for_kind);
    // No join under the policy, for every rule that joins: the same cells stop compilation with
    // promotion_error::no_implicit_promotion or not_a_node.
    EXPECT_FALSE((defined_v<mixt::op::add, strict, i8, i16>));
    EXPECT_FALSE((defined_v<mixt::op::divide, strict, f32, f64>));
    EXPECT_FALSE((defined_v<mixt::op::less, array_api, i8, f32>));
    EXPECT_FALSE((defined_v<pow, strict, f32, i32>)); // pow needs the join even where it keeps the base
    EXPECT_FALSE((defined_v<mixt::op::where, array_api, bool_, i8, f32>));
    EXPECT_FALSE((defined_v<mixt::op::multiply, array_api, f16, f16>)); // f16 is not a node of array_api
    EXPECT_EQ((verdict_v<mixt::op::bit_and, strict, f32, f64>), verdict::no_join); // no join comes first
    EXPECT_EQ((verdict_v<mixt::op::add, jax, i8, u8>), verdict::defined);
    // The same answer under another policy where the join exists.
    EXPECT_TRUE((defined_v<mixt::op::shift_right, x32, u32, i8>));
    EXPECT_FALSE((defined_v<mixt::op::shift_right, x32, f32, i8>));
}

TEST(rules, operations_are_named_for_error_messages) {
    EXPECT_EQ(std::string_view(mixt::op::add::name), "operator+");
    EXPECT_EQ(std::string_view(mixt::op::floor_divide::name), "floor_divide");
    EXPECT_EQ(std::string_view(mixt::op::shift_right::name), "operator>>");
    EXPECT_EQ(std::string_view(mixt::op::divide::name), "operator/");
    EXPECT_EQ(std::string_view(mixt::op::less::name), "ordered comparison");
    EXPECT_EQ(std::string_view(mixt::op::equal::name), "equality comparison");
    EXPECT_EQ(std::string_view(mixt::op::abs::name), "abs");
    EXPECT_EQ(std::string_view(pow::name), "pow");
    EXPECT_EQ(std::string_view(mixt::op::cast<f16>::name), "cast");
    EXPECT_SAME(mixt::op::add::fn, mixt::detail::add_fn);
    EXPECT_SAME(mixt::op::less::fn, mixt::detail::less_fn);
    EXPECT_SAME(mixt::op::cast<f16>::fn, mixt::detail::identity_fn);
}

} // namespace
