// mixt/eval/lower.hpp: `mixt::to_eigen(e)` is an ordinary Eigen tensor expression of `value_t<E>` that the
// rest of Eigen can reduce, slice, reshape, broadcast and evaluate on its own; the conversions sit where the
// lattice puts them (per node), literals are checked when it is made, and its values are the fused loop's,
// bit for bit.

#include <mixt/eval/assign.hpp>
#include <mixt/eval/lower.hpp>
#include <mixt/expr/operators.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

namespace {

struct data {
    Eigen::Tensor<std::int8_t, 2> i8{3, 7};
    Eigen::Tensor<std::uint8_t, 2> u8{3, 7};
    Eigen::Tensor<Eigen::half, 2> f16{3, 7};
    Eigen::Tensor<float, 2> f32{3, 7};
    data() {
        for (Eigen::Index i = 0; i < i8.size(); ++i) {
            i8.data()[i] = static_cast<std::int8_t>(120 - 11 * i);
            u8.data()[i] = static_cast<std::uint8_t>(250 - 3 * i);
            f16.data()[i] = Eigen::half(0.25f * static_cast<float>(i) - 2.0f);
            f32.data()[i] = 1.5f * static_cast<float>(i % 5) - 3.0f;
        }
    }
};

template <class T, int N>
bool same_bits(const Eigen::Tensor<T, N>& a, const Eigen::Tensor<T, N>& b) {
    return a.dimensions() == b.dimensions() && std::memcmp(a.data(), b.data(), sizeof(T) * static_cast<std::size_t>(a.size())) == 0;
}

TEST(lower, is_an_eigen_expression_of_the_result_type) {
    data d;
    const auto e = (mixt::lazy(d.i8) + d.u8) * d.f16 + 0.5;
    const auto lowered = mixt::to_eigen(e);
    using L = std::remove_const_t<decltype(lowered)>;
    static_assert(mixt::eigen_tensor<L>);
    static_assert(!mixt::mixt_expression<L>);
    static_assert(std::is_same_v<Eigen::internal::traits<L>::Scalar, Eigen::half>);
    static_assert(Eigen::internal::traits<L>::NumDimensions == 2);
    // Eigen evaluates it by itself, to the same bits as mixt's own loop.
    const Eigen::Tensor<Eigen::half, 2> by_eigen = lowered;
    EXPECT_TRUE(same_bits(by_eigen, mixt::eval(e)));
    Eigen::Tensor<Eigen::half, 2> on_device(3, 7);
    on_device.device(Eigen::DefaultDevice{}) = mixt::to_eigen(e);
    EXPECT_TRUE(same_bits(on_device, by_eigen));
}

TEST(lower, conversions_sit_where_the_lattice_puts_them) {
    data d;
    // (i8 + u8) is summed in i16 (no 8-bit wrap), then converted to f16 for the product.
    const Eigen::Tensor<Eigen::half, 2> r = mixt::to_eigen((mixt::lazy(d.i8) + d.u8) * d.f16);
    for (Eigen::Index i = 0; i < r.size(); ++i) {
        const int sum = d.i8.data()[i] + d.u8.data()[i];
        const float want = static_cast<float>(Eigen::half(static_cast<float>(sum))) * static_cast<float>(d.f16.data()[i]);
        ASSERT_EQ(r.data()[i], Eigen::half(want)) << i;
    }
    // A literal takes the type it joins: 2 * i8 wraps in i8.
    const Eigen::Tensor<std::int8_t, 2> w = mixt::to_eigen(mixt::lazy(d.i8) * 2);
    EXPECT_EQ(w(0, 0), static_cast<std::int8_t>(240));
    // Weak results are stored at the policy's width: u64 + i64 is f*, f64 under jax.
    Eigen::Tensor<std::uint64_t, 1> u(3);
    Eigen::Tensor<std::int64_t, 1> s(3);
    u.setConstant(std::uint64_t{1} << 63);
    s.setConstant(-1);
    const Eigen::Tensor<double, 1> f = mixt::to_eigen(mixt::lazy(u) + s);
    EXPECT_EQ(f(0), 9223372036854775808.0 - 1.0);
}

TEST(lower, reductions_slices_and_reshapes) {
    data d;
    const auto e = mixt::lazy(d.f32) * d.i8 - 1;
    const Eigen::Tensor<float, 2> full = mixt::eval(e);
    // Reductions over the whole tensor and along a dimension.
    const Eigen::Tensor<float, 0> total = mixt::to_eigen(e).sum();
    const Eigen::Tensor<float, 0> biggest = mixt::to_eigen(e).maximum();
    const Eigen::Tensor<float, 1> rows = mixt::to_eigen(e).sum(Eigen::array<int, 1>{1});
    float want_total = 0, want_max = -INFINITY;
    for (Eigen::Index i = 0; i < full.size(); ++i) {
        want_total += full.data()[i];
        want_max = std::max(want_max, full.data()[i]);
    }
    EXPECT_FLOAT_EQ(total(), want_total);
    EXPECT_EQ(biggest(), want_max);
    for (Eigen::Index r = 0; r < 3; ++r) {
        float row = 0;
        for (Eigen::Index c = 0; c < 7; ++c) row += full(r, c);
        EXPECT_FLOAT_EQ(rows(r), row);
    }
    // A slice, a reshape and a broadcast of the lowered expression.
    const Eigen::Tensor<float, 2> slice = mixt::to_eigen(e).slice(Eigen::array<Eigen::Index, 2>{1, 2},
                                                                  Eigen::array<Eigen::Index, 2>{2, 3});
    for (Eigen::Index r = 0; r < 2; ++r)
        for (Eigen::Index c = 0; c < 3; ++c) EXPECT_EQ(slice(r, c), full(r + 1, c + 2));
    const Eigen::Tensor<float, 1> flat = mixt::to_eigen(e).reshape(Eigen::array<Eigen::Index, 1>{21});
    for (Eigen::Index i = 0; i < 21; ++i) EXPECT_EQ(flat(i), full.data()[i]);
    const Eigen::Tensor<float, 2> twice = mixt::to_eigen(e).broadcast(Eigen::array<Eigen::Index, 2>{2, 1});
    EXPECT_EQ(twice(4, 6), full(1, 6));
    // And back into mixt as a leaf (an Eigen expression), joined with another dtype.
    const auto back = mixt::eval(mixt::lazy(mixt::to_eigen(e)) + d.f16);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(mixt::to_eigen(e)) + d.f16)>, float>);
    EXPECT_EQ(back(2, 3), full(2, 3) + static_cast<float>(d.f16(2, 3)));
}

TEST(lower, checks_literals_when_made) {
    data d;
    EXPECT_THROW((void)mixt::to_eigen(mixt::lazy(d.u8) + 300), mixt::overflow_error);
    EXPECT_THROW((void)mixt::to_eigen(mixt::lazy(d.i8) * mixt::lazy(d.f32) + (mixt::lazy(d.i8) & 128)), mixt::overflow_error);
    EXPECT_NO_THROW((void)mixt::to_eigen(mixt::lazy(d.u8) < 300));
    const Eigen::Tensor<bool, 2> lt = mixt::to_eigen(mixt::lazy(d.u8) < 300);
    for (Eigen::Index i = 0; i < lt.size(); ++i) EXPECT_TRUE(lt.data()[i]);
}

TEST(lower, matches_the_fused_loop_bit_for_bit) {
    data d;
    const auto check = [](const auto& e) {
        using T = mixt::value_t<decltype(e)>;
        const Eigen::Tensor<T, 2> lowered = mixt::to_eigen(e);
        EXPECT_TRUE(same_bits(lowered, mixt::eval(e)));
    };
    check(mixt::lazy(d.i8) + d.u8);
    check(mixt::lazy(d.i8) / d.u8);
    check(mixt::floor_divide(mixt::lazy(d.f16), d.i8) + mixt::lazy(d.u8) % 7);
    check(mixt::where(mixt::lazy(d.f32) > 0, d.f16, mixt::lazy(d.i8) * 0.5));
    check(mixt::clip(mixt::lazy(d.f32) * d.f16, -1, 1.5));
    check(mixt::pow(d.f16, mixt::lazy(d.i8) % 4));
    check(mixt::cast<std::int16_t>(mixt::lazy(d.f32) * 1000) >> (mixt::lazy(d.u8) % 9));
    check(mixt::minimum(mixt::lazy(d.u8), d.i8) == mixt::maximum(d.i8, mixt::lazy(d.u8)));
    check(-(mixt::lazy(d.f16) - d.f32) * std::complex<float>(0, 1));
}

// The message of the mixt::shape_error that f throws, or "no exception".
template <class F>
std::string shape_error_of(F f) {
    try {
        f();
    } catch (const mixt::shape_error& e) {
        return e.what();
    }
    return "no exception";
}

// Shapes are checked when the Eigen expression is made, as eval checks them: Eigen's own evaluator would read
// past the end of the shorter operand (with NDEBUG, nothing stops it).
TEST(lower, checks_shapes_when_made) {
    Eigen::Tensor<float, 1> x8(8), y5(5), z8(8);
    x8.setConstant(1.0f);
    y5.setConstant(2.0f);
    z8.setConstant(3.0f);
    EXPECT_EQ(shape_error_of([&] { (void)mixt::to_eigen(mixt::lazy(x8) + y5); }),
              "mixt: to_eigen: shape mismatch: operands of shapes [8] and [5] do not broadcast (aligned at the last "
              "dimension, sizes must be equal or 1)");
    // The mismatch deep in the tree, and in the same message form as assign's and eval's.
    EXPECT_THROW((void)mixt::to_eigen(mixt::lazy(x8) * 2 + mixt::lazy(z8) * y5), mixt::shape_error);
    EXPECT_EQ(shape_error_of([&] { (void)mixt::eval(mixt::lazy(x8) + y5); }),
              "mixt: eval: shape mismatch: operands of shapes [8] and [5] do not broadcast (aligned at the last "
              "dimension, sizes must be equal or 1)");
    Eigen::Tensor<float, 1> dst(5);
    EXPECT_EQ(shape_error_of([&] { mixt::assign(dst, mixt::lazy(x8) + z8); }),
              "mixt: assign: shape mismatch: the destination has shape [5] but the expression has shape [8], which does not "
              "broadcast to it (the destination never stretches)");
    // Rank 2, same number of elements.
    Eigen::Tensor<float, 2> a(2, 3), b(3, 2);
    a.setZero();
    b.setZero();
    EXPECT_THROW((void)mixt::to_eigen(mixt::lazy(a) - b), mixt::shape_error);
    // Matching shapes do not throw, and a literal or scalar has no shape.
    EXPECT_NO_THROW((void)mixt::to_eigen(mixt::lazy(x8) + mixt::lazy(z8) * 2));
    const Eigen::Tensor<float, 0> total = mixt::to_eigen(mixt::lazy(x8) + z8).sum();
    EXPECT_EQ(total(), 32.0f);
}

} // namespace
