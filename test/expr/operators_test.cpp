// mixt/expr/operators.hpp: which operator calls become mixt expressions, and that each builds the node of
// its operation. A mixt operand on either side (with an Eigen tensor or a C++ literal on the other);
// `using namespace mixt::operators;` for two plain Eigen tensors of different scalar types, while same-type
// Eigen code keeps Eigen's own operators; the functions (pow, minimum, maximum, floor_divide, where, clip,
// cast, the unary functions) and the unary operators; per-node promotion, visible in the values.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/operators.hpp>

#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <gtest/gtest.h>

namespace {

namespace dt = mixt::dtypes;

template <class E>
struct node_op;
template <class Op, class... Cs>
struct node_op<mixt::node<Op, Cs...>> {
    using type = Op;
};
template <class E>
using node_op_t = typename node_op<std::remove_cvref_t<E>>::type;

struct tensors {
    Eigen::Tensor<std::int8_t, 1> i8{9};
    Eigen::Tensor<std::uint8_t, 1> u8{9};
    Eigen::Tensor<Eigen::half, 1> f16{9};
    Eigen::Tensor<float, 1> f32{9};
    Eigen::Tensor<std::int32_t, 1> i32{9};
    Eigen::Tensor<bool, 1> b{9};
    tensors() {
        for (int i = 0; i < 9; ++i) {
            i8(i) = static_cast<std::int8_t>(100 + i);   // 100..108
            u8(i) = static_cast<std::uint8_t>(200 + i);  // 200..208
            f16(i) = Eigen::half(static_cast<float>(i) - 4.0f);
            f32(i) = static_cast<float>(i) * 0.5f - 2.0f;
            i32(i) = i - 4;
            b(i) = i % 2 == 0;
        }
    }
};

TEST(operators, every_binary_operator_builds_its_node) {
    tensors t;
    const auto a = mixt::lazy(t.i32);
    static_assert(std::is_same_v<node_op_t<decltype(a + t.i32)>, mixt::op::add>);
    static_assert(std::is_same_v<node_op_t<decltype(a - t.i32)>, mixt::op::subtract>);
    static_assert(std::is_same_v<node_op_t<decltype(a * t.i32)>, mixt::op::multiply>);
    static_assert(std::is_same_v<node_op_t<decltype(a / t.i32)>, mixt::op::divide>);
    static_assert(std::is_same_v<node_op_t<decltype(a % t.i32)>, mixt::op::modulo>);
    static_assert(std::is_same_v<node_op_t<decltype(a == t.i32)>, mixt::op::equal>);
    static_assert(std::is_same_v<node_op_t<decltype(a != t.i32)>, mixt::op::not_equal>);
    static_assert(std::is_same_v<node_op_t<decltype(a < t.i32)>, mixt::op::less>);
    static_assert(std::is_same_v<node_op_t<decltype(a <= t.i32)>, mixt::op::less_equal>);
    static_assert(std::is_same_v<node_op_t<decltype(a > t.i32)>, mixt::op::greater>);
    static_assert(std::is_same_v<node_op_t<decltype(a >= t.i32)>, mixt::op::greater_equal>);
    static_assert(std::is_same_v<node_op_t<decltype(a & t.i32)>, mixt::op::bit_and>);
    static_assert(std::is_same_v<node_op_t<decltype(a | t.i32)>, mixt::op::bit_or>);
    static_assert(std::is_same_v<node_op_t<decltype(a ^ t.i32)>, mixt::op::bit_xor>);
    static_assert(std::is_same_v<node_op_t<decltype(a << t.i32)>, mixt::op::shift_left>);
    static_assert(std::is_same_v<node_op_t<decltype(a >> t.i32)>, mixt::op::shift_right>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::lazy(t.b) && t.b)>, mixt::op::logical_and>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::lazy(t.b) || t.b)>, mixt::op::logical_or>);
    static_assert(std::is_same_v<node_op_t<decltype(-a)>, mixt::op::negate>);
    static_assert(std::is_same_v<node_op_t<decltype(~a)>, mixt::op::bit_not>);
    static_assert(std::is_same_v<node_op_t<decltype(!mixt::lazy(t.b))>, mixt::op::logical_not>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::pow(a, 2))>, mixt::op::pow>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::minimum(a, t.i32))>, mixt::op::minimum>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::maximum(t.i32, a))>, mixt::op::maximum>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::floor_divide(a, 3))>, mixt::op::floor_divide>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::where(t.b, a, 0))>, mixt::op::where>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::clip(a, 0, 1))>, mixt::op::clip>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::cast<float>(a))>, mixt::op::cast<dt::f32>>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::cast<dt::f16>(a))>, mixt::op::cast<dt::f16>>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::abs(t.i32))>, mixt::op::abs>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::sqrt(a))>, mixt::op::sqrt>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::exp(a))>, mixt::op::exp>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::log(a))>, mixt::op::log>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::sin(a))>, mixt::op::sin>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::cos(a))>, mixt::op::cos>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::tanh(a))>, mixt::op::tanh>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::real(a))>, mixt::op::real>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::imag(a))>, mixt::op::imag>);
    static_assert(std::is_same_v<node_op_t<decltype(mixt::conj(a))>, mixt::op::conj>);
}

TEST(operators, literal_and_eigen_operands_on_either_side) {
    tensors t;
    // mixt expression on the left or on the right, an Eigen tensor or a literal on the other side.
    const Eigen::Tensor<std::int8_t, 1> r1 = mixt::eval(2 * mixt::lazy(t.i8) - 1);
    const Eigen::Tensor<std::int8_t, 1> r2 = mixt::eval(1 - mixt::lazy(t.i8));
    const Eigen::Tensor<Eigen::half, 1> r3 = mixt::eval(t.f16 * mixt::lazy(t.i8));
    const Eigen::Tensor<float, 1> r4 = mixt::eval(mixt::lazy(t.f16) + t.f32);
    for (int i = 0; i < 9; ++i) {
        EXPECT_EQ(r1(i), static_cast<std::int8_t>(2 * t.i8(i) - 1)); // wraps in i8: 2 * 100 - 1 = 199 -> -57
        EXPECT_EQ(r2(i), static_cast<std::int8_t>(1 - t.i8(i)));
        EXPECT_EQ(r3(i), Eigen::half(static_cast<float>(t.f16(i)) * static_cast<float>(t.i8(i))));
        EXPECT_EQ(r4(i), static_cast<float>(t.f16(i)) + t.f32(i));
    }
    // Eigen's own operators are untouched when no mixt expression is involved.
    static_assert(!mixt::mixt_expression<decltype(t.f32 + t.f32)>);
    static_assert(!mixt::mixt_expression<decltype(t.f32 * 2.0f)>);
}

TEST(operators, operators_namespace_for_mixed_eigen_tensors) {
    using namespace mixt::operators;
    tensors t;
    // Two plain Eigen tensors of different scalars: a mixt expression, with JAX's result type.
    auto mixed = t.i8 + t.f32;
    static_assert(mixt::mixt_expression<decltype(mixed)>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixed)>, float>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(t.i8 + t.u8)>, dt::i16>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(t.i8 < t.f16)>, dt::bool_>);
    // The same scalar on both sides stays Eigen's own expression type.
    auto same = t.f32 + t.f32;
    static_assert(std::is_same_v<decltype(same),
                                 Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_sum_op<float, float>,
                                                            const Eigen::Tensor<float, 1>, const Eigen::Tensor<float, 1>>>);
    static_assert(!mixt::mixt_expression<decltype(t.i8 * t.i8)>);
    const Eigen::Tensor<float, 1> r = mixt::eval(mixed);
    const Eigen::Tensor<std::int16_t, 1> s = mixt::eval(t.i8 + t.u8); // i16: no wrap at 8 bits
    for (int i = 0; i < 9; ++i) {
        EXPECT_EQ(r(i), static_cast<float>(t.i8(i)) + t.f32(i));
        EXPECT_EQ(s(i), 300 + 2 * i);
    }
}

TEST(operators, promotion_is_per_node) {
    tensors t;
    // (i8 + u8) + f16: the inner sum is i16 (100 + 200 = 300, no 8-bit wrap), then f16.
    const auto left = (mixt::lazy(t.i8) + t.u8) + t.f16;
    const auto right = mixt::lazy(t.i8) + (mixt::lazy(t.u8) + t.f16);
    static_assert(std::is_same_v<mixt::value_t<decltype(left)>, Eigen::half>);
    static_assert(std::is_same_v<mixt::value_t<decltype(right)>, Eigen::half>);
    const auto l = mixt::eval(left);
    for (int i = 0; i < 9; ++i)
        EXPECT_EQ(l(i), Eigen::half(static_cast<float>(300 + 2 * i) + static_cast<float>(t.f16(i))));
    // i8 * i8 wraps in i8 before joining a wider type.
    const auto w = mixt::eval(mixt::lazy(t.i8) * t.i8 + t.i32);
    static_assert(std::is_same_v<std::remove_const_t<decltype(w)>, Eigen::Tensor<std::int32_t, 1>>);
    EXPECT_EQ(w(0), static_cast<std::int8_t>(100 * 100) + t.i32(0));
}

TEST(operators, functions_compute_their_operation) {
    tensors t;
    const auto p = mixt::eval(mixt::pow(t.f32, 2));        // float base, integer exponent: f32
    const auto q = mixt::eval(mixt::pow(mixt::lazy(t.i32), 3)); // i32
    const auto mn = mixt::eval(mixt::minimum(t.i8, mixt::lazy(t.u8)));
    const auto mx = mixt::eval(mixt::maximum(mixt::lazy(t.f16), 0.5)); // f16
    const auto fd = mixt::eval(mixt::floor_divide(mixt::lazy(t.i32), 3));
    const auto md = mixt::eval(mixt::lazy(t.i32) % -3);
    const auto wh = mixt::eval(mixt::where(t.b, mixt::lazy(t.i8), t.u8)); // join of the branches: i16
    const auto cl = mixt::eval(mixt::clip(t.f32, -1, 1));
    const auto ab = mixt::eval(mixt::abs(t.i32));
    const auto ng = mixt::eval(-mixt::lazy(t.f16));
    const auto nt = mixt::eval(~mixt::lazy(t.i8));
    const auto ln = mixt::eval(!mixt::lazy(t.b));
    const auto ct = mixt::eval(mixt::cast<std::uint8_t>(mixt::lazy(t.f32) * 100)); // saturates below 0
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::pow(t.f32, 2))>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::maximum(mixt::lazy(t.f16), 0.5))>, Eigen::half>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::where(t.b, mixt::lazy(t.i8), t.u8))>, std::int16_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::clip(t.f32, -1, 1))>, float>);
    for (int i = 0; i < 9; ++i) {
        const int v = t.i32(i);
        EXPECT_EQ(p(i), t.f32(i) * t.f32(i));
        EXPECT_EQ(q(i), v * v * v);
        EXPECT_EQ(mn(i), t.i8(i));
        EXPECT_EQ(mx(i), Eigen::half(std::max(static_cast<float>(t.f16(i)), 0.5f)));
        EXPECT_EQ(fd(i), v >= 0 ? v / 3 : -((-v + 2) / 3));
        EXPECT_EQ(md(i), v - -3 * (v >= 0 ? -((v + 2) / 3) : (-v) / 3)) << v;
        EXPECT_EQ(wh(i), t.b(i) ? t.i8(i) : t.u8(i));
        EXPECT_EQ(cl(i), std::clamp(t.f32(i), -1.0f, 1.0f));
        EXPECT_EQ(ab(i), std::abs(v));
        EXPECT_EQ(ng(i), Eigen::half(-static_cast<float>(t.f16(i))));
        EXPECT_EQ(nt(i), static_cast<std::int8_t>(~t.i8(i)));
        EXPECT_EQ(ln(i), !t.b(i));
        EXPECT_EQ(ct(i), t.f32(i) < 0 ? 0 : static_cast<std::uint8_t>(t.f32(i) * 100));
    }
}

TEST(operators, float_functions_and_complex_parts) {
    tensors t;
    Eigen::Tensor<std::complex<float>, 1> c(9);
    for (int i = 0; i < 9; ++i) c(i) = {static_cast<float>(i), -1.0f};
    const auto s = mixt::eval(mixt::sqrt(mixt::lazy(t.i32) * t.i32)); // i32 -> to inexact: f32
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sqrt(mixt::lazy(t.i32)))>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::exp(mixt::lazy(t.f16)))>, Eigen::half>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::abs(c))>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::real(c))>, float>);
    const auto ab = mixt::eval(mixt::abs(c));
    const auto re = mixt::eval(mixt::real(c));
    const auto im = mixt::eval(mixt::imag(c));
    const auto cj = mixt::eval(mixt::conj(c));
    for (int i = 0; i < 9; ++i) {
        EXPECT_EQ(s(i), static_cast<float>(std::abs(t.i32(i))));
        EXPECT_FLOAT_EQ(ab(i), std::abs(c(i)));
        EXPECT_EQ(re(i), c(i).real());
        EXPECT_EQ(im(i), -1.0f);
        EXPECT_EQ(cj(i), std::conj(c(i)));
    }
}

[[maybe_unused]] auto mixed_plain_sum(const Eigen::Tensor<std::int8_t, 1>& a, const Eigen::Tensor<float, 1>& b) {
    using namespace mixt::operators;
    return a + b;
}

TEST(operators, policies_of_leaves_reach_the_whole_expression) {
    tensors t;
    using x32 = mixt::policy::jax_x32;
    Eigen::Tensor<std::uint32_t, 1> u32(9);
    u32.setConstant(7);
    // jax_x32: u32 + i32 is i32 (no 64-bit type from narrower inputs), weak results are 32-bit.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<x32>(u32) + t.i32)>, std::int32_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(u32) + t.i32)>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<x32>(t.i8) + 0.5)>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(t.i8) + 0.5)>, double>);
    // A plain Eigen operand and a literal take the policy of the expression they join.
    static_assert(std::is_same_v<decltype(mixt::lazy<x32>(u32) + t.i32)::policy, x32>);
    static_assert(std::is_same_v<decltype((mixt::lazy<x32>(u32) + 1) * 2)::policy, x32>);
    using operators_expr = decltype(mixed_plain_sum(t.i8, t.f32));
    static_assert(std::is_void_v<operators_expr::policy>); // no leaf chose one: the default applies
    static_assert(std::is_same_v<mixt::value_t<operators_expr>, float>);
    const auto r = mixt::eval(mixt::lazy<x32>(u32) + t.i32);
    EXPECT_EQ(r(0), 3);
}

} // namespace
