// mixt/eval/assign.hpp: `eval(e)` makes a tensor of value_t<E> with the shape and layout of the
// expression; `assign(dst, e [, device])` writes into a Tensor or TensorMap, possibly of a wider dtype the
// result promotes to implicitly, also when dst is itself an operand. Edge sizes: rank 0, empty tensors,
// sizes around the vector width.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/operators.hpp>
#include <mixt/expr/reduce.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace {

TEST(assign, eval_makes_a_tensor_of_the_result_type) {
    Eigen::Tensor<std::int8_t, 3, Eigen::RowMajor> a(2, 3, 4);
    Eigen::Tensor<Eigen::bfloat16, 3, Eigen::RowMajor> b(2, 3, 4);
    a.setConstant(3);
    b.setConstant(Eigen::bfloat16(0.5f));
    const auto r = mixt::eval(mixt::lazy(a) * b);
    static_assert(std::is_same_v<std::remove_const_t<decltype(r)>, Eigen::Tensor<Eigen::bfloat16, 3, Eigen::RowMajor>>);
    EXPECT_EQ(r.dimension(0), 2);
    EXPECT_EQ(r.dimension(1), 3);
    EXPECT_EQ(r.dimension(2), 4);
    EXPECT_EQ(r(1, 2, 3), Eigen::bfloat16(1.5f));
    // The shape comes from the first operand with a shape, wherever it is.
    const auto s = mixt::eval(2 * mixt::lazy(b) + 1);
    EXPECT_EQ(s.dimension(2), 4);
}

TEST(assign, eval_into_a_dtype_the_result_promotes_to) {
    Eigen::Tensor<std::int8_t, 2> a(3, 5);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = static_cast<std::int8_t>(i * 9 - 60);
    const auto r = mixt::eval<float>(mixt::lazy(a) * 3); // i8 * 3 is i8 (wraps), then converted to f32
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>, Eigen::Tensor<float, 2>>);
    ASSERT_EQ(r.dimension(0), 3);
    ASSERT_EQ(r.dimension(1), 5);
    for (Eigen::Index i = 0; i < a.size(); ++i)
        EXPECT_EQ(r.data()[i], static_cast<float>(static_cast<std::int8_t>(a.data()[i] * 3))) << i;
    const auto d = mixt::eval<double>(mixt::lazy(a) / 4); // i8 / 4 is f32, exact in f64
    for (Eigen::Index i = 0; i < a.size(); ++i) EXPECT_EQ(d.data()[i], a.data()[i] / 4.0) << i;
}

TEST(assign, into_tensors_maps_and_wider_dtypes) {
    Eigen::Tensor<std::int8_t, 1> a(11);
    Eigen::Tensor<std::uint8_t, 1> b(11);
    for (int i = 0; i < 11; ++i) {
        a(i) = static_cast<std::int8_t>(-5 * i);
        b(i) = static_cast<std::uint8_t>(20 * i);
    }
    // i16 result into an i16 tensor, a f32 tensor, a TensorMap of i64.
    Eigen::Tensor<std::int16_t, 1> same(11);
    mixt::assign(same, mixt::lazy(a) + b);
    Eigen::Tensor<float, 1> wider(11);
    mixt::assign(wider, mixt::lazy(a) + b, Eigen::DefaultDevice{});
    std::vector<std::int64_t> storage(11, -1);
    mixt::assign(Eigen::TensorMap<Eigen::Tensor<std::int64_t, 1>>(storage.data(), 11), mixt::lazy(a) + b);
    for (int i = 0; i < 11; ++i) {
        EXPECT_EQ(same(i), 15 * i);
        EXPECT_EQ(wider(i), static_cast<float>(15 * i));
        EXPECT_EQ(storage[static_cast<std::size_t>(i)], 15 * i);
    }
    // A weak result (u64 + i64 -> f*) into f16 and f32: f* promotes implicitly to every float.
    Eigen::Tensor<std::uint64_t, 1> u(11);
    Eigen::Tensor<std::int64_t, 1> s(11);
    u.setConstant(3);
    s.setConstant(-1);
    Eigen::Tensor<Eigen::half, 1> h(11);
    mixt::assign(h, mixt::lazy(u) + s);
    EXPECT_EQ(h(10), Eigen::half(2.0f));
    // bool into every wider dtype.
    Eigen::Tensor<std::complex<double>, 1> c(11);
    mixt::assign(c, mixt::lazy(a) < b);
    EXPECT_EQ(c(0), std::complex<double>(0, 0));
    EXPECT_EQ(c(1), std::complex<double>(1, 0));
}

TEST(assign, destination_that_is_also_an_operand) {
    Eigen::Tensor<float, 2> a(5, 7);
    a.setConstant(2.0f);
    Eigen::Tensor<std::int8_t, 2> b(5, 7);
    b.setConstant(3);
    mixt::assign(a, mixt::lazy(a) * b + a);
    EXPECT_EQ(a(4, 6), 8.0f);
    Eigen::TensorMap<Eigen::Tensor<float, 2>> view(a.data(), 5, 7);
    mixt::assign(view, -mixt::lazy(view));
    EXPECT_EQ(a(0, 0), -8.0f);
}

// assign(dst, reduction) writes the result straight into dst where dst is contiguous memory of the result's
// dtype and overlaps no operand, and through a tensor of its own otherwise (a strided view, a wider dtype, a
// destination inside the operand): the values eval gives, bit for bit, on either path, and no write before
// every check has passed.
template <class T, class U>
bool same_bits(const T& a, const U& b, Eigen::Index n) {
    return std::memcmp(a.data(), b.data(), static_cast<std::size_t>(n) * sizeof(*a.data())) == 0;
}

TEST(assign, a_reduction_into_each_kind_of_destination) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(37, 5);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 7919) % 211) * 0.37f - 31.f;
    const auto sum_rows = [&] { return mixt::sum(mixt::lazy(x) * 3, 1); };
    const Eigen::Tensor<float, 1> want = mixt::eval(sum_rows()); // rank 1: Eigen's default layout

    Eigen::Tensor<float, 1, Eigen::RowMajor> t(37);
    t.setConstant(-1.f);
    mixt::assign(t, sum_rows());
    EXPECT_TRUE(same_bits(t, want, 37));

    std::vector<float> memory(40, -1.f);
    Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> m(memory.data() + 1, 37);
    mixt::assign(m, sum_rows());
    EXPECT_TRUE(same_bits(m, want, 37));
    EXPECT_EQ(memory[0], -1.f);
    EXPECT_EQ(memory[38], -1.f);

    Eigen::Tensor<float, 2, Eigen::RowMajor> rows(3, 37); // a row: contiguous
    rows.setConstant(-1.f);
    mixt::assign(rows.chip(1, 0), sum_rows());
    for (Eigen::Index j = 0; j < 37; ++j) {
        EXPECT_EQ(rows(1, j), want(j));
        EXPECT_EQ(rows(0, j), -1.f);
        EXPECT_EQ(rows(2, j), -1.f);
    }
    Eigen::Tensor<float, 2, Eigen::RowMajor> columns(37, 3); // a column: strided
    columns.setConstant(-1.f);
    mixt::assign(columns.chip(2, 1), sum_rows());
    for (Eigen::Index j = 0; j < 37; ++j) {
        EXPECT_EQ(columns(j, 2), want(j));
        EXPECT_EQ(columns(j, 0), -1.f);
    }
    Eigen::ArrayXf dense(37);
    mixt::assign(dense, sum_rows());
    EXPECT_TRUE(same_bits(dense, want, 37));
    Eigen::Tensor<double, 1, Eigen::RowMajor> wider(37);
    mixt::assign(wider, sum_rows());
    for (Eigen::Index j = 0; j < 37; ++j) EXPECT_EQ(wider(j), static_cast<double>(want(j)));
    Eigen::Tensor<float, 2, Eigen::RowMajor> kept(37, 1);
    mixt::assign(kept, mixt::sum(mixt::lazy(x) * 3, 1, mixt::keepdims));
    EXPECT_TRUE(same_bits(kept, want, 37));
    Eigen::Tensor<float, 0, Eigen::RowMajor> all;
    mixt::assign(all, mixt::max(x));
    EXPECT_EQ(all(), mixt::eval(mixt::max(x))());

    // The destination is a column of the operand: the result as if the operand were read whole first.
    Eigen::Tensor<float, 2> y(6, 4); // column-major: chip(0, 1) is contiguous and inside y
    for (Eigen::Index i = 0; i < y.size(); ++i) y.data()[i] = static_cast<float>(i % 5) + 0.25f;
    const Eigen::Tensor<float, 1> y_sums = mixt::eval(mixt::sum(y, 1));
    mixt::assign(y.chip(0, 1), mixt::sum(y, 1));
    for (Eigen::Index i = 0; i < 6; ++i) EXPECT_EQ(y(i, 0), y_sums(i));

    // The destination is the last quarter of the operand: rows the reduction has not read yet.
    constexpr Eigen::Index N = 8192;
    Eigen::Tensor<float, 2, Eigen::RowMajor> z(N, 4);
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = static_cast<float>(i % 13);
    const Eigen::Tensor<float, 1> z_sums = mixt::eval(mixt::sum(z, 1));
    Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> last_quarter(z.data() + 3 * N, N);
    mixt::assign(last_quarter, mixt::sum(z, 1));
    EXPECT_TRUE(same_bits(last_quarter, z_sums, N));

    // A destination of another shape: the error, and nothing written.
    Eigen::Tensor<float, 1, Eigen::RowMajor> wrong(36);
    wrong.setConstant(7.f);
    EXPECT_THROW(mixt::assign(wrong, sum_rows()), mixt::shape_error);
    for (Eigen::Index j = 0; j < 36; ++j) EXPECT_EQ(wrong(j), 7.f);
    Eigen::Tensor<float, 1, Eigen::RowMajor> some(5);
    some.setConstant(7.f);
    Eigen::Tensor<float, 2, Eigen::RowMajor> none(0, 5);
    EXPECT_THROW(mixt::assign(some, mixt::max(none, 0)), mixt::shape_error); // max of nothing
    for (Eigen::Index j = 0; j < 5; ++j) EXPECT_EQ(some(j), 7.f);
}

TEST(assign, rank_zero_and_empty) {
    Eigen::Tensor<std::int32_t, 0> x;
    x() = 41;
    Eigen::Tensor<double, 0> y;
    y() = 0.5;
    const auto r = mixt::eval(mixt::lazy(x) + y);
    static_assert(std::is_same_v<std::remove_const_t<decltype(r)>, Eigen::Tensor<double, 0>>);
    EXPECT_EQ(r(), 41.5);
    Eigen::Tensor<double, 0> z;
    mixt::assign(z, mixt::lazy(x) * 2 + 1);
    EXPECT_EQ(z(), 83.0);
    // No element: nothing to do, no error, nothing read or written.
    Eigen::Tensor<std::int8_t, 2> e1(0, 5), e2(0, 5);
    Eigen::Tensor<float, 2> out(0, 5);
    mixt::assign(out, mixt::lazy(e1) * e2 + 0.5f);
    EXPECT_EQ(mixt::eval(mixt::lazy(e1) + e2).size(), 0);
    Eigen::Tensor<std::int8_t, 1> e3(0);
    EXPECT_THROW((void)mixt::eval(mixt::lazy(e3) + 300), mixt::overflow_error); // checked even so
}

TEST(assign, an_integer_literal_beyond_a_narrow_dtype_throws_and_compares_exactly) {
    // As for the other ints and f16: an int4 + 100 does not wrap silently, e5m2 + 70000 does not become inf.
    Eigen::Tensor<mixt::int4, 1> w(3);
    w.setConstant(mixt::int4(5));
    Eigen::Tensor<mixt::int4, 1> out(3);
    out.setConstant(mixt::int4(1));
    EXPECT_THROW(mixt::assign(out, mixt::lazy(w) + 100), mixt::overflow_error);
    EXPECT_EQ(out(0).value(), 1); // nothing written
    Eigen::Tensor<mixt::float8_e5m2, 1> f(3);
    f.setConstant(mixt::float8_e5m2(2.0f));
    EXPECT_THROW((void)mixt::eval(mixt::lazy(f) * 70000), mixt::overflow_error);
    // A comparison with such a literal compares exact values (int4's 5 < 100), as u8 < 300 does.
    const Eigen::Tensor<bool, 1> below = mixt::eval(mixt::lazy(w) < 100);
    EXPECT_TRUE(below(0) && below(1) && below(2));
    const Eigen::Tensor<bool, 1> above = mixt::eval(mixt::lazy(w) > -100);
    EXPECT_TRUE(above(0) && above(1) && above(2));
}

TEST(assign, every_size_around_the_vector_width) {
    for (Eigen::Index n = 1; n <= 40; ++n) {
        Eigen::Tensor<std::uint16_t, 1> a(n);
        Eigen::Tensor<Eigen::half, 1> b(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            a(i) = static_cast<std::uint16_t>(i * 1000);
            b(i) = Eigen::half(static_cast<float>(i) * 0.25f);
        }
        // Guard elements on both sides of a map catch a write past either end.
        std::vector<float> storage(static_cast<std::size_t>(n) + 2, -7.0f);
        Eigen::TensorMap<Eigen::Tensor<float, 1>> dst(storage.data() + 1, n);
        mixt::assign(dst, mixt::lazy(a) * b - 1); // u16 * f16 -> f16, assigned to f32
        EXPECT_EQ(storage.front(), -7.0f);
        EXPECT_EQ(storage.back(), -7.0f);
        for (Eigen::Index i = 0; i < n; ++i) {
            const Eigen::half prod(static_cast<float>(Eigen::half(static_cast<float>(i * 1000))) * (static_cast<float>(i) * 0.25f));
            ASSERT_EQ(dst(i), static_cast<float>(Eigen::half(static_cast<float>(prod) - 1.0f))) << n << " " << i;
        }
    }
}

TEST(assign, non_contiguous_leaves_go_through_eigen) {
    Eigen::Tensor<std::int16_t, 2> a(4, 6);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = static_cast<std::int16_t>(i * 7 - 50);
    const Eigen::TensorRef<Eigen::Tensor<std::int16_t, 2>> ref(a);
    // A shuffled (transposed) operand: not contiguous in the destination's order.
    const auto e = mixt::lazy(a.shuffle(Eigen::array<int, 2>{1, 0})) * 0.5f + mixt::lazy(a.shuffle(Eigen::array<int, 2>{1, 0}));
    const Eigen::Tensor<double, 2> r = mixt::eval(e);
    ASSERT_EQ(r.dimension(0), 6);
    for (Eigen::Index i = 0; i < 4; ++i)
        for (Eigen::Index j = 0; j < 6; ++j) EXPECT_EQ(r(j, i), a(i, j) * 1.5);
    const Eigen::Tensor<std::int16_t, 2> via_ref = mixt::eval(mixt::lazy(ref) - 1);
    EXPECT_EQ(via_ref(3, 5), a(3, 5) - 1);
}

// What an outside cross-check against exact arithmetic found, through expressions: each path (the fused loop,
// the lowering to Eigen, to_eigen) gives the exact results (expr/functors.hpp, complex_divide, float_int_pow,
// complex_int_pow; test/expr/functors_test.cpp checks them at the functor level).
TEST(assign, complex_division_and_integer_powers_on_every_path) {
    using C = std::complex<double>;
    Eigen::Tensor<C, 1> x(11), y(11);
    x.setConstant(C(19.896926648387335, 0.14168469170330952));
    y.setConstant(C(2.2250738585072014e-308, 0));
    x(1) = C(1.7e308, 1.7e308);
    y(1) = C(0.1, 0);
    const Eigen::TensorRef<Eigen::Tensor<C, 1>> xr(x);
    const Eigen::Tensor<C, 1> fused = mixt::eval(mixt::lazy(x) / y);
    const Eigen::Tensor<C, 1> lowered = mixt::eval(mixt::lazy(xr) / y);
    const Eigen::Tensor<C, 1> eigen = mixt::to_eigen(mixt::lazy(x) / y);
    for (const auto* r : {&fused, &lowered, &eigen}) {
        for (Eigen::Index i = 0; i < 11; ++i) {
            const C want = i == 1 ? C(INFINITY, INFINITY) : C(INFINITY, 0.14168469170330952 / 2.2250738585072014e-308);
            EXPECT_EQ((*r)(i), want) << i;
        }
    }

    Eigen::Tensor<Eigen::half, 1> base(9);
    Eigen::Tensor<std::int64_t, 1> exponent(9);
    base.setConstant(Eigen::half(-1.0f));
    exponent.setConstant(-2147483649);
    const Eigen::Tensor<Eigen::half, 1> p = mixt::eval(mixt::pow(mixt::lazy(base), exponent));
    for (Eigen::Index i = 0; i < 9; ++i) EXPECT_EQ(static_cast<float>(p(i)), -1.0f) << i;

    Eigen::Tensor<std::complex<float>, 1> z(10);
    z.setConstant(std::complex<float>(-1, 0));
    const Eigen::Tensor<std::complex<float>, 1> z2 = mixt::eval(mixt::pow(mixt::lazy(z), 2));
    for (Eigen::Index i = 0; i < 10; ++i) {
        EXPECT_EQ(z2(i), std::complex<float>(1, 0)) << i;
        EXPECT_TRUE(std::signbit(z2(i).imag())) << i << ": (-1+0j) ** 2 is 1-0j";
    }
}

} // namespace
