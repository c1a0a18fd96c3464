// mixt/eval/reduce.hpp: reductions evaluated on the CPU, against a reference computed here element by element
// (exact for integers: 128-bit sums; long double for floats, compared within a pairwise-summation bound), over
// every set of axes of rank 0-4 operands in both layouts, broadcast and strided operands, keepdims, nested
// reductions, NaN and signed zeros, empty reductions, and the thread pool (equal bit for bit).

#define EIGEN_USE_THREADS
// Float sums fold whole blocks side by side on every CPU here (by default not on AMD, where it is not measured):
// the bits must be those of one block at a time (many_blocks_fold_side_by_side_as_one_at_a_time).
#define MIXT_BLOCKS_SIDE_BY_SIDE 1
#include <mixt/mixt.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

__extension__ typedef __int128 i128;

template <class A, class B>
bool equal(const A& a, const B& b) {
    if (a.size() != b.size()) return false;
    for (Eigen::Index i = 0; i < a.size(); ++i)
        if (!(a.data()[i] == b.data()[i])) return false;
    return true;
}

template <class T, int R, int L>
void fill(Eigen::Tensor<T, R, L>& t, std::uint32_t seed, double lo = -100, double hi = 100) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    for (Eigen::Index i = 0; i < t.size(); ++i) {
        if constexpr (std::is_same_v<T, bool>)
            t.data()[i] = d(g) > 0;
        else if constexpr (std::is_integral_v<T>)
            t.data()[i] = static_cast<T>(std::llround(d(g)));
        else
            t.data()[i] = static_cast<T>(static_cast<float>(d(g)));
    }
}

// Logical multi-index of flat position i of a shape, row-major.
template <std::size_t R>
std::array<Eigen::Index, R> unflatten(Eigen::Index i, const std::array<Eigen::Index, R>& dims) {
    std::array<Eigen::Index, R> idx{};
    for (std::size_t d = R; d-- > 0;) {
        idx[d] = i % dims[d];
        i /= dims[d];
    }
    return idx;
}

// The reference: for each output position (logical row-major over the kept axes), the reduced elements in
// logical row-major order over the reduced axes: out(output index, the reduced elements' indices).
template <std::size_t R, class Out>
void reference_reduce(const std::array<Eigen::Index, R>& dims, const std::array<bool, R>& reduced, Out out) {
    std::array<Eigen::Index, R> kept_dims{}, red_dims{};
    Eigen::Index nk = 1, nr = 1;
    for (std::size_t d = 0; d < R; ++d) {
        kept_dims[d] = reduced[d] ? 1 : dims[d];
        red_dims[d] = reduced[d] ? dims[d] : 1;
        nk *= kept_dims[d];
        nr *= red_dims[d];
    }
    for (Eigen::Index o = 0; o < nk; ++o) {
        const auto ko = unflatten<R>(o, kept_dims);
        std::vector<std::array<Eigen::Index, R>> elems;
        for (Eigen::Index r = 0; r < nr; ++r) {
            const auto kr = unflatten<R>(r, red_dims);
            std::array<Eigen::Index, R> idx{};
            for (std::size_t d = 0; d < R; ++d) idx[d] = reduced[d] ? kr[d] : ko[d];
            elems.push_back(idx);
        }
        out(ko, elems);
    }
}

template <class T>
long double as_ld(const T& x) {
    return static_cast<long double>(static_cast<double>(x));
}

// sum, mean, max, argmax of an i8 * f16 expression (f16 result: checked in f32 against the long double sum
// within a bound, then the f16 rounding) and of i16 (exact), over every subset of axes of a rank-3 tensor.
template <int Layout>
void check_every_axis_subset() {
    Eigen::Tensor<std::int16_t, 3, Layout> a(5, 7, 9);
    Eigen::Tensor<float, 3, Layout> f(5, 7, 9);
    fill(a, 1, -30000, 30000);
    fill(f, 2);
    const std::array<Eigen::Index, 3> dims{5, 7, 9};
    for (int mask = 1; mask < 8; ++mask) { // mask 0 (no axis) has no form: `{}` is a compile error
        std::array<bool, 3> red{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
        std::vector<int> axes;
        for (int d = 0; d < 3; ++d)
            if (red[static_cast<std::size_t>(d)]) axes.push_back(d);
        SCOPED_TRACE("layout " + std::to_string(Layout) + " mask " + std::to_string(mask));
        const auto run = [&](auto... ax) {
            const auto s = mixt::eval(mixt::sum(a, {ax...}, mixt::keepdims));
            const auto m = mixt::eval(mixt::max(f, {ax...}, mixt::keepdims));
            const auto fm = mixt::eval(mixt::mean(f, {ax...}, mixt::keepdims));
            const auto am = mixt::eval(mixt::min(a, {ax...}, mixt::keepdims));
            static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(s)>::Scalar, std::int64_t>);
            reference_reduce<3>(dims, red, [&](const auto& o, const auto& elems) {
                i128 total = 0;
                long double ftotal = 0, fabs_total = 0;
                float fmax = -std::numeric_limits<float>::infinity();
                std::int16_t amin = std::numeric_limits<std::int16_t>::max();
                for (const auto& e : elems) {
                    total += a(e[0], e[1], e[2]);
                    ftotal += f(e[0], e[1], e[2]);
                    fabs_total += std::fabs(static_cast<long double>(f(e[0], e[1], e[2])));
                    fmax = std::max(fmax, f(e[0], e[1], e[2]));
                    amin = std::min(amin, a(e[0], e[1], e[2]));
                }
                ASSERT_EQ(static_cast<i128>(s(o[0], o[1], o[2])), total);
                ASSERT_EQ(m(o[0], o[1], o[2]), fmax);
                ASSERT_EQ(am(o[0], o[1], o[2]), amin);
                const long double n = static_cast<long double>(elems.size());
                const long double bound = (8 + std::log2(n + 1)) * 0x1p-24L * fabs_total / n + 0x1p-24L * std::fabs(ftotal / n);
                ASSERT_LE(std::fabs(static_cast<long double>(fm(o[0], o[1], o[2])) - ftotal / n), bound);
            });
        };
        switch (mask) {
        case 1: run(0); break;
        case 2: run(1); break;
        case 3: run(0, 1); break;
        case 4: run(2); break;
        case 5: run(0, 2); break;
        case 6: run(1, 2); break;
        default: run(0, 1, 2); break;
        }
    }
}

TEST(reduce_eval, every_axis_subset_row_major) { check_every_axis_subset<Eigen::RowMajor>(); }
TEST(reduce_eval, every_axis_subset_col_major) { check_every_axis_subset<Eigen::ColMajor>(); }

TEST(reduce_eval, broadcast_and_strided_operands_fuse_into_the_reduction) {
    // R3's shape, small: sum(i8 [h, w] * f16 [h, 1], axis 1) is f16, accumulated in f32.
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(37, 300);
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(37, 1);
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, 300);
    fill(w, 3);
    fill(s, 4, -1, 1);
    fill(x, 5, -1, 1);
    const auto r = mixt::eval(mixt::sum(mixt::lazy(w) * s * x, 1));
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>, Eigen::Tensor<float, 1>>);
    const auto r16 = mixt::eval(mixt::sum(mixt::lazy(w) * s, 1));
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r16)>, Eigen::Tensor<Eigen::half, 1>>);
    for (Eigen::Index i = 0; i < 37; ++i) {
        long double exact = 0, mag = 0, exact16 = 0;
        for (Eigen::Index j = 0; j < 300; ++j) {
            // The product as mixt computes it: i8 * f16 is f16 (rounded), then * f32 is f32 (rounded).
            const Eigen::half p16 = Eigen::half(static_cast<float>(w(i, j)) * static_cast<float>(s(i, 0)));
            const float p = static_cast<float>(p16) * x(0, j);
            exact += p;
            exact16 += static_cast<float>(p16);
            mag += std::fabs(static_cast<long double>(p));
        }
        EXPECT_LE(std::fabs(r(i) - exact), 16 * 0x1p-24L * mag) << i;
        // f16 result: the f32 sum rounded once (within one f16 ulp of the exact sum, plus the f32 error).
        EXPECT_LE(std::fabs(as_ld(r16(i)) - exact16), std::fabs(exact16) * 0x1p-10L + 1e-3L) << i;
    }
    // The scale broadcast along each row is loaded once per run (the f16 leaf hoisted out of the loop): the
    // same bits as over the scale materialized at the full shape, loaded with every batch; a NaN scale too.
    s(5, 0) = Eigen::half(std::numeric_limits<float>::quiet_NaN());
    const Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s_full = s.broadcast(Eigen::array<Eigen::Index, 2>{1, 300});
    const auto same_bits = [](const auto& a, const auto& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(*a.data()) * static_cast<std::size_t>(a.size())) == 0;
    };
    EXPECT_TRUE(same_bits(mixt::eval(mixt::sum(mixt::lazy(w) * s * x, 1)), mixt::eval(mixt::sum(mixt::lazy(w) * s_full * x, 1))));
    EXPECT_TRUE(same_bits(mixt::eval(mixt::sum(mixt::lazy(w) * s, 1)), mixt::eval(mixt::sum(mixt::lazy(w) * s_full, 1))));
    EXPECT_TRUE(same_bits(mixt::eval(mixt::max(mixt::lazy(w) * s, 1)), mixt::eval(mixt::max(mixt::lazy(w) * s_full, 1))));
    EXPECT_TRUE(same_bits(mixt::eval(mixt::argmax(mixt::lazy(w) * s, 1)), mixt::eval(mixt::argmax(mixt::lazy(w) * s_full, 1))));
    EXPECT_TRUE(same_bits(mixt::eval(mixt::lazy(w) * s), mixt::eval(mixt::lazy(w) * s_full)));
    EXPECT_TRUE(mixt::eval(mixt::sum(mixt::lazy(w) * s, 1))(5) != mixt::eval(mixt::sum(mixt::lazy(w) * s, 1))(5)); // NaN
    // A strided leaf (every other column of a wider tensor) and a slice.
    Eigen::Tensor<std::int32_t, 2, Eigen::RowMajor> big(6, 20);
    fill(big, 6);
    const Eigen::array<Eigen::Index, 2> st{1, 2};
    const auto strided = big.stride(st);
    const auto rs = mixt::eval(mixt::sum(mixt::lazy(strided), 1));
    for (Eigen::Index i = 0; i < 6; ++i) {
        std::int64_t t = 0;
        for (Eigen::Index j = 0; j < 20; j += 2) t += big(i, j);
        EXPECT_EQ(rs(i), t);
    }
    const auto cs = mixt::eval(mixt::max(mixt::lazy(big.slice(Eigen::array<Eigen::Index, 2>{1, 3},
                                                                Eigen::array<Eigen::Index, 2>{4, 5})) * 2, 0));
    for (Eigen::Index j = 0; j < 5; ++j) {
        std::int32_t m = std::numeric_limits<std::int32_t>::min();
        for (Eigen::Index i = 1; i < 5; ++i) m = std::max(m, big(i, j + 3) * 2);
        EXPECT_EQ(cs(j), m);
    }
}

TEST(reduce_eval, channel_last_mean_over_outer_axes) {
    // R2's shape, small: mean(u8 image [h, w, 3], axes {0, 1}) is f32, summed exactly.
    Eigen::Tensor<std::uint8_t, 3, Eigen::RowMajor> img(61, 83, 3);
    fill(img, 7, 0, 255);
    const auto m = mixt::eval(mixt::mean(img, {0, 1}));
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(m)>, Eigen::Tensor<float, 1>>);
    for (Eigen::Index c = 0; c < 3; ++c) {
        std::int64_t t = 0;
        for (Eigen::Index i = 0; i < 61; ++i)
            for (Eigen::Index j = 0; j < 83; ++j) t += img(i, j, c);
        EXPECT_EQ(m(c), static_cast<float>(static_cast<double>(t) / (61.0 * 83.0))) << c;
    }
}

TEST(reduce_eval, integer_sums_and_products_wrap_in_their_dtype) {
    Eigen::Tensor<std::int64_t, 1> a(3);
    a.setValues({std::numeric_limits<std::int64_t>::max(), 1, 1});
    EXPECT_EQ(mixt::eval(mixt::sum(a))(), std::numeric_limits<std::int64_t>::min() + 1);
    Eigen::Tensor<std::int8_t, 1> b(3);
    b.setValues({100, 100, 100});
    EXPECT_EQ(mixt::eval(mixt::sum(b))(), 300);                         // in i64: no wrap
    EXPECT_EQ(mixt::eval(mixt::sum<std::int8_t>(b))(), std::int8_t{44}); // 300 - 256
    EXPECT_EQ(mixt::eval(mixt::prod(b))(), 1000000);
    EXPECT_EQ(mixt::eval(mixt::prod<std::int8_t>(b))(), static_cast<std::int8_t>(1000000 % 256 - 256));
    Eigen::Tensor<std::uint64_t, 1> u(2);
    u.setValues({~std::uint64_t{0}, 2});
    EXPECT_EQ(mixt::eval(mixt::sum(u))(), std::uint64_t{1});
    EXPECT_EQ(mixt::eval(mixt::dot(b, b))(), static_cast<std::int8_t>(30000 % 256 - 256)); // i8 dot wraps
}

TEST(reduce_eval, nan_signed_zero_and_first_index) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(3, 5);
    x.setValues({{1, 5, 5, -2, 0}, {0.f, -0.f, 3, nan, 3}, {-0.f, 0.f, nan, 7, nan}});
    const auto mx = mixt::eval(mixt::max(x, 1));
    const auto mn = mixt::eval(mixt::min(x, 1));
    const auto ax = mixt::eval(mixt::argmax(x, 1));
    const auto an = mixt::eval(mixt::argmin(x, 1));
    EXPECT_EQ(mx(0), 5.f);
    EXPECT_TRUE(std::isnan(mx(1)));
    EXPECT_TRUE(std::isnan(mn(2)));
    EXPECT_EQ(ax(0), 1); // the first of the two 5s
    EXPECT_EQ(an(0), 3);
    EXPECT_EQ(ax(1), 3); // NaN is the extreme, both ways
    EXPECT_EQ(an(1), 3);
    EXPECT_EQ(ax(2), 2); // the first NaN
    // -0 < +0.
    Eigen::Tensor<float, 1> z(2);
    z.setValues({0.f, -0.f});
    EXPECT_TRUE(std::signbit(mixt::eval(mixt::min(z))()));
    EXPECT_FALSE(std::signbit(mixt::eval(mixt::max(z))()));
    z.setValues({-0.f, 0.f});
    EXPECT_TRUE(std::signbit(mixt::eval(mixt::min(z))()));
    EXPECT_FALSE(std::signbit(mixt::eval(mixt::max(z))()));
    // argmax over all axes: the flat index in the operand's order (row-major here).
    EXPECT_EQ(mixt::eval(mixt::argmax(mixt::lazy(x) * 0 + 1))(), 8); // NaN * 0 is NaN: the first NaN, (1, 3)
    Eigen::Tensor<float, 2, Eigen::RowMajor> y(2, 3);
    y.setValues({{0, 1, 9}, {9, 2, 3}});
    EXPECT_EQ(mixt::eval(mixt::argmax(y))(), 2);
    EXPECT_EQ(mixt::eval(mixt::argmax(mixt::lazy(y) * 0 + 1))(), 0);
    Eigen::Tensor<float, 2, Eigen::ColMajor> yc(2, 3); // column-major: the flat index in column-major order
    yc.setValues({{0, 1, 9}, {9, 2, 3}});
    EXPECT_EQ(mixt::eval(mixt::argmax(yc))(), 1);
    // A long row, so that the candidates come from many lanes and blocks: the first maximum wins.
    Eigen::Tensor<std::uint8_t, 1> longrow(100000);
    longrow.setConstant(3);
    longrow(77777) = 9;
    longrow(88888) = 9;
    longrow(5) = 1;
    longrow(99999) = 1;
    EXPECT_EQ(mixt::eval(mixt::argmax(longrow))(), 77777);
    EXPECT_EQ(mixt::eval(mixt::argmin(longrow))(), 5);
}

TEST(reduce_eval, empty_reductions) {
    Eigen::Tensor<float, 2> e(0, 4);
    const auto s = mixt::eval(mixt::sum(e, 0));
    ASSERT_EQ(s.dimension(0), 4);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(s(j), 0.f);
    EXPECT_EQ(mixt::eval(mixt::prod(e))(), 1.f);
    EXPECT_TRUE(std::isnan(mixt::eval(mixt::mean(e))()));
    EXPECT_FALSE(mixt::eval(mixt::any(e))());
    EXPECT_TRUE(mixt::eval(mixt::all(e))());
    EXPECT_EQ(mixt::eval(mixt::max(e, 1)).size(), 0); // nothing to reduce into: no error
    EXPECT_THROW((void)mixt::eval(mixt::max(e, 0)), mixt::shape_error);
    EXPECT_THROW((void)mixt::eval(mixt::argmin(e)), mixt::shape_error);
    // An error before anything is written.
    Eigen::Tensor<float, 1> dst(4);
    dst.setConstant(7);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(dst) + mixt::min(e, 0)), mixt::shape_error);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(dst(j), 7.f);
}

// Where mixt's accumulator or truth value departs from JAX's on purpose (README, "Reductions"): the exact
// mean of ints, f32 accumulation for an explicit f16 dtype, either part of a complex value for any/all.
TEST(reduce_eval, accumulators_that_depart_from_jax) {
    Eigen::Tensor<std::int32_t, 1> big(2);
    big.setValues({16777217, 1});
    EXPECT_EQ(mixt::eval(mixt::mean(big))(), 8388609.f); // JAX, adding in f32: 8388608
    Eigen::Tensor<Eigen::half, 1> h(3);
    h.setValues({Eigen::half(2048.f), Eigen::half(1.f), Eigen::half(1.f)});
    EXPECT_EQ(static_cast<float>(mixt::eval(mixt::sum<Eigen::half>(h))()), 2050.f); // JAX, adding in f16: 2048
    Eigen::Tensor<std::complex<float>, 1> c(2);
    c.setValues({{0.f, 1.f}, {0.f, 0.f}});
    EXPECT_TRUE(mixt::eval(mixt::any(c))()); // JAX, the real part only: false
    EXPECT_FALSE(mixt::eval(mixt::all(c))());
    c(1) = {2.f, 0.f};
    EXPECT_TRUE(mixt::eval(mixt::all(c))()); // JAX: false
}

TEST(reduce_eval, reductions_feed_elementwise_work) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(4, 6);
    fill(x, 8, -5, 5);
    // The first step of a softmax: x - max(x, 1).
    const auto d = mixt::eval(mixt::lazy(x) - mixt::max(x, 1, mixt::keepdims));
    for (Eigen::Index i = 0; i < 4; ++i) {
        float m = -1e30f;
        for (Eigen::Index j = 0; j < 6; ++j) m = std::max(m, x(i, j));
        for (Eigen::Index j = 0; j < 6; ++j) EXPECT_EQ(d(i, j), x(i, j) - m);
    }
    // A reduction of an expression with a reduction in it, and assign into a view.
    Eigen::Tensor<float, 2, Eigen::RowMajor> out(2, 4);
    out.setZero();
    mixt::assign(out.chip(1, 0), mixt::sum(mixt::lazy(x) - mixt::mean(x, 1, mixt::keepdims), 1));
    for (Eigen::Index i = 0; i < 4; ++i) {
        EXPECT_NEAR(out(1, i), 0.f, 1e-5f);
        EXPECT_EQ(out(0, i), 0.f);
    }
    // any/all of comparisons.
    EXPECT_TRUE(mixt::eval(mixt::any(mixt::lazy(x) > 4.9f))() == (mixt::eval(mixt::max(x))() > 4.9f));
    EXPECT_TRUE(mixt::eval(mixt::all(mixt::lazy(x) > -5.f))());
    // An expression whose arrays are all inside reductions evaluates to a tensor of the result's shape (it
    // gave a Dense Array of the wrong shape).
    const auto twice = mixt::eval(mixt::sum(x, 1) * 2);
    static_assert(std::is_same_v<std::remove_const_t<decltype(twice)>, Eigen::Tensor<float, 1>>);
    const auto once = mixt::eval(mixt::sum(x, 1));
    for (Eigen::Index i = 0; i < 4; ++i) EXPECT_EQ(twice(i), once(i) * 2);
}

TEST(reduce_eval, dense_operands) {
    Eigen::ArrayXf a(1000);
    Eigen::Array<std::int8_t, Eigen::Dynamic, 1> b(1000);
    for (int i = 0; i < 1000; ++i) {
        a(i) = static_cast<float>(i % 7) * 0.25f;
        b(i) = static_cast<std::int8_t>(i % 11 - 5);
    }
    const auto d = mixt::eval(mixt::dot(a, b));
    double ref = 0;
    for (int i = 0; i < 1000; ++i) ref += static_cast<double>(a(i)) * b(i);
    EXPECT_EQ(d(), static_cast<float>(ref)); // exact: quarter-integers
    EXPECT_THROW((void)mixt::dot(a, b.head(999)), mixt::shape_error);
    // Expressions too: their lengths are their arrays' (a length-1 operand is not broadcast, as in JAX).
    EXPECT_THROW((void)mixt::dot(mixt::lazy(a) * 2, b.head(999)), mixt::shape_error);
    EXPECT_THROW((void)mixt::dot(mixt::lazy(a) + 1, mixt::lazy(b.head(1)) * 2), mixt::shape_error);
    EXPECT_EQ(mixt::eval(mixt::dot(mixt::lazy(a) * 2, mixt::lazy(b) + 0))(), static_cast<float>(2 * ref));
    Eigen::MatrixXf m(3, 4);
    m << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
    const auto cols = mixt::eval(mixt::sum(m, 0)); // column sums of a column-major matrix
    EXPECT_EQ(cols(0), 15.f);
    EXPECT_EQ(cols(3), 24.f);
    const auto rows = mixt::eval(mixt::sum(m.block(1, 1, 2, 3), 1));
    EXPECT_EQ(rows(0), 21.f);
    EXPECT_EQ(rows(1), 33.f);
}

// The order a stream is folded in, written out for K = 1 (32 lanes, blocks of 4096) and K = 3 (96 lanes,
// blocks of 96 * 43): element s of a block goes to lane s mod P, each block's lanes are combined column by
// column in lane order and pushed onto a pairwise stack (reduce.hpp's header). Below 2^18 elements the
// stream is one super-block. Column c of the result.
template <class T, class Combine>
T model_fold(const std::vector<T>& x, T identity, Combine combine, std::size_t K = 1, std::size_t c = 0) {
    const std::size_t P = 32 % K == 0 ? 32 : 96, block = P == 32 ? 4096 : 96 * 43; // (make_stream_shape)
    std::vector<std::pair<T, int>> stack;
    for (std::size_t b0 = 0; b0 < x.size(); b0 += block) {
        std::vector<T> l(P, identity);
        for (std::size_t s = b0; s < std::min(x.size(), b0 + block); ++s) l[(s - b0) % P] = combine(l[(s - b0) % P], x[s]);
        T v = l[c];
        for (std::size_t j = 1; j < P / K; ++j) v = combine(v, l[c + j * K]);
        int level = 0;
        while (!stack.empty() && stack.back().second == level) {
            v = combine(stack.back().first, v);
            stack.pop_back();
            ++level;
        }
        stack.push_back({v, level});
    }
    T out = stack.back().first;
    for (std::size_t e = stack.size() - 1; e-- > 0;) out = combine(stack[e].first, out);
    return out;
}

// max (Larger) or min as reduce_op combines: a NaN already there stays, else a NaN arriving wins, else the larger
// (smaller) of the two, -0 < +0.
template <bool Larger, class T>
T model_extreme(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a) return a;
        if (b != b) return b;
    }
    const T lo = Larger ? a : b, hi = Larger ? b : a; // b wins where lo comes before hi
    bool before = lo < hi;
    if constexpr (std::is_floating_point_v<T>) before = before || (lo == hi && std::signbit(lo) && !std::signbit(hi));
    return before ? b : a;
}
template <class T>
T model_larger(T a, T b) { return model_extreme<true>(a, b); }
template <class T>
T model_smaller(T a, T b) { return model_extreme<false>(a, b); }

// The kernel's batches folded straight into the lanes (whole rows of 32 in registers, a run's head and tail
// one by one) give the fold written out above, bit for bit, whether the stream arrives as one run or in runs
// of 37 (a slice: the lanes' rows then start anywhere in a run), for sums with cancellation and for max over
// signed zeros (and NaNs of several payloads: one of them).
TEST(reduce_eval, batches_fold_into_lanes_in_the_stream_order) {
    constexpr Eigen::Index rows = 271, cols = 37;
    Eigen::Tensor<float, 2, Eigen::RowMajor> wide(rows, cols + 3);
    std::mt19937 g(12);
    std::uniform_real_distribution<float> d(-1, 1);
    std::uniform_int_distribution<int> e(-30, 30), pick(0, 99);
    const float nans[] = {std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xffc00002u),
                          std::bit_cast<float>(0x7fe00003u)}; // quiet: * 1 keeps them
    for (int kind = 0; kind < 2; ++kind) {
        for (Eigen::Index i = 0; i < wide.size(); ++i) {
            float v = std::ldexp(d(g), e(g)); // magnitudes 2^-30 to 2^30: the order of a sum shows in its bits
            if (kind == 1) {
                const int k = pick(g);
                v = k < 10 ? 0.0f : k < 20 ? -0.0f : k == 20 ? nans[i % 3] : -std::fabs(v);
            }
            wide.data()[i] = v;
        }
        const auto part = wide.slice(Eigen::array<Eigen::Index, 2>{0, 1}, Eigen::array<Eigen::Index, 2>{rows, cols});
        Eigen::Tensor<float, 2, Eigen::RowMajor> whole = part;
        std::vector<float> stream(whole.data(), whole.data() + whole.size());
        SCOPED_TRACE(kind);
        if (kind == 0) {
            const float want = model_fold(stream, 0.0f, [](float a, float b) { return a + b; });
            const float one_run = mixt::eval(mixt::sum(mixt::lazy(whole) * 1.0f))();
            const float runs_of_37 = mixt::eval(mixt::sum(mixt::lazy(part) * 1.0f))();
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one_run), std::bit_cast<std::uint32_t>(want));
            EXPECT_EQ(std::bit_cast<std::uint32_t>(runs_of_37), std::bit_cast<std::uint32_t>(want));
            // Three columns (96 lanes): the same numbers as an [n / 3, 3] tensor summed over axis 0.
            const auto n3 = static_cast<Eigen::Index>(stream.size() / 3);
            Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>> rgb(stream.data(), n3, 3);
            const auto by_column = mixt::eval(mixt::sum(mixt::lazy(rgb) * 1.0f, 0));
            const std::vector<float> head(stream.begin(), stream.begin() + 3 * n3);
            for (std::size_t c = 0; c < 3; ++c) {
                const float col = model_fold(head, 0.0f, [](float a, float b) { return a + b; }, 3, c);
                EXPECT_EQ(std::bit_cast<std::uint32_t>(by_column(static_cast<Eigen::Index>(c))),
                          std::bit_cast<std::uint32_t>(col)) << c;
            }
        } else {
            const float want = model_fold(stream, -std::numeric_limits<float>::infinity(), model_larger<float>);
            ASSERT_TRUE(std::isnan(want));
            const float one_run = mixt::eval(mixt::max(mixt::lazy(whole) * 1.0f))();
            const float runs_of_37 = mixt::eval(mixt::max(part))();
            // A NaN of the operand's (which one is unspecified: README, "NaN").
            for (const float got : {one_run, runs_of_37})
                EXPECT_TRUE(std::any_of(std::begin(nans), std::end(nans), [&](float n) {
                    return std::bit_cast<std::uint32_t>(n) == std::bit_cast<std::uint32_t>(got);
                })) << std::hex << std::bit_cast<std::uint32_t>(got);
            // Without the NaNs: the largest is a zero, and +0 wins over -0 wherever they lie.
            for (float& v : stream) v = v != v ? -1.0f : v;
            Eigen::TensorMap<Eigen::Tensor<float, 1>> no_nan(stream.data(), static_cast<Eigen::Index>(stream.size()));
            const float m = mixt::eval(mixt::max(mixt::lazy(no_nan) * 1.0f))();
            EXPECT_EQ(std::bit_cast<std::uint32_t>(m), 0u);
            const float mn = mixt::eval(mixt::min(mixt::lazy(no_nan) * -1.0f))();
            EXPECT_EQ(std::bit_cast<std::uint32_t>(mn), 0x80000000u);
        }
    }
}

// Streams of four blocks and more: a float sum, mean or product of at most side_by_side_max_bytes folds whole
// blocks side by side (stream_fold::blocks_side_by_side), each block's lanes and its end as the block alone
// makes them, pushed in order; longer ones one block at a time. Lengths around multiples of four blocks and
// past a super-block (2^18 values), runs that start inside a block (a slice of long rows), columns that
// divide the 32 lanes (each block's end then combines every K-th lane), f16 products summed in f32: against
// the fold written out, bit for bit.
TEST(reduce_eval, many_blocks_fold_side_by_side_as_one_at_a_time) {
    std::mt19937 g(62);
    std::uniform_real_distribution<float> d(-1, 1);
    std::uniform_int_distribution<int> e(-30, 30);
    const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
    const auto add = [](float a, float b) { return a + b; };
    const auto mul = [](float a, float b) { return a * b; };
    // Magnitudes 2^-30 to 2^30 (the order within a block shows in the bits), [-1, 1) (every block's sum has
    // low bits that the order of the blocks' sums rounds away), or 1 + 2^-8 * [-1, 1) (products).
    enum class spread { wide, unit, near_one };
    const auto draw = [&](spread k) {
        return k == spread::wide ? std::ldexp(d(g), e(g)) : k == spread::unit ? d(g) : 1.0f + std::ldexp(d(g), -8);
    };
    const auto values = [&](Eigen::Index n, spread k) {
        Eigen::Tensor<float, 1> x(n);
        for (Eigen::Index i = 0; i < n; ++i) x(i) = draw(k);
        return x;
    };
    for (const Eigen::Index n : {4 * 4096 - 1, 4 * 4096, 4 * 4096 + 1, 5 * 4096 + 37, 8 * 4096, 13 * 4096 + 4095,
                                 70 * 4096 + 5}) {
        SCOPED_TRACE(n);
        const Eigen::Tensor<float, 1> x = values(n, spread::wide), unit = values(n, spread::unit),
                                      near_one = values(n, spread::near_one);
        const std::vector<float> s(x.data(), x.data() + n), u(unit.data(), unit.data() + n),
            p(near_one.data(), near_one.data() + n);
        const float want = model_fold(s, 0.0f, add), want_unit = model_fold(u, 0.0f, add);
        const bool side_by_side = static_cast<std::size_t>(n) * sizeof(float) <= mixt::detail::side_by_side_max_bytes;
        EXPECT_EQ(mixt::explain(mixt::sum(x)).find(" side by side)") != std::string::npos, side_by_side);
        EXPECT_EQ(bits(mixt::eval(mixt::sum(x))()), bits(want));
        EXPECT_EQ(bits(mixt::eval(mixt::sum(mixt::lazy(x) * 1.0f))()), bits(want));
        EXPECT_EQ(bits(mixt::eval(mixt::sum(unit))()), bits(want_unit));
        EXPECT_EQ(bits(mixt::eval(mixt::mean(unit))()), bits(want_unit / static_cast<float>(n)));
        EXPECT_EQ(bits(mixt::eval(mixt::prod(near_one))()), bits(model_fold(p, 1.0f, mul)));
        for (const Eigen::Index k : {2, 4, 8, 32}) { // k columns: an [n / k, k] tensor summed over axis 0
            SCOPED_TRACE(k);
            Eigen::TensorMap<const Eigen::Tensor<float, 2, Eigen::RowMajor>> cols(x.data(), n / k, k);
            const Eigen::Tensor<float, 1> got = mixt::eval(mixt::sum(cols, 0));
            const std::vector<float> head(s.begin(), s.begin() + n / k * k);
            for (Eigen::Index c = 0; c < k; ++c)
                EXPECT_EQ(bits(got(c)), bits(model_fold(head, 0.0f, add, static_cast<std::size_t>(k), static_cast<std::size_t>(c))))
                    << c;
        }
    }
    // Rows of 20000 values of a slice: each run a row; the second and third start 3616 and 3136 values into a
    // block, which the fold ends one value at a time before taking whole blocks side by side (blocks 5 to 8 and
    // 10 to 13: their order among the pairwise stack's entries shows in the bits). Eight draws: the order of a
    // few sums of [-1, 1) rounds to the same bits now and then.
    Eigen::Tensor<float, 2, Eigen::RowMajor> rows(3, 20001);
    for (int draws = 0; draws < 8; ++draws) {
        for (Eigen::Index i = 0; i < rows.size(); ++i) rows.data()[i] = draw(spread::unit);
        const auto part = rows.slice(Eigen::array<Eigen::Index, 2>{0, 1}, Eigen::array<Eigen::Index, 2>{3, 20000});
        const Eigen::Tensor<float, 2, Eigen::RowMajor> copied = part;
        const std::vector<float> in_order(copied.data(), copied.data() + copied.size());
        EXPECT_EQ(bits(mixt::eval(mixt::sum(part))()), bits(model_fold(in_order, 0.0f, add))) << draws;
    }
    // f16 products, each rounded to f16, summed in f32 and rounded to f16 once.
    const Eigen::Index n = 6 * 4096 + 3;
    Eigen::Tensor<Eigen::half, 1> a(n), b(n);
    std::vector<float> products(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
        a(i) = Eigen::half(std::ldexp(d(g), e(g) / 4));
        b(i) = Eigen::half(d(g));
        products[static_cast<std::size_t>(i)] = static_cast<float>(Eigen::half(static_cast<float>(a(i)) * static_cast<float>(b(i))));
    }
    const Eigen::half got = mixt::eval(mixt::sum(mixt::lazy(a) * b))();
    EXPECT_EQ(std::bit_cast<std::uint16_t>(got), std::bit_cast<std::uint16_t>(Eigen::half(model_fold(products, 0.0f, add))));
}


// min/max of f32 rows through the lanes in registers (integer keys; a NaN wins): streams of three
// blocks and a tail whose values make each part of the order count: all negative, all positive, only -0, zeros
// of both signs, infinities, a NaN of either sign in the first or the last block. The plain leaf and the leaf times 1
// (the kernel's batches), both directions, against the fold written out (model_fold), bit for bit.
TEST(reduce_eval, float_extremes_with_and_without_nan) {
    constexpr Eigen::Index n = 3 * 4096 + 77;
    const float inf = std::numeric_limits<float>::infinity();
    const float positive_nan = std::bit_cast<float>(0x7fc00005u), negative_nan = std::bit_cast<float>(0xffc00007u);
    std::mt19937 g(21);
    std::uniform_real_distribution<float> d(-1, 1);
    std::uniform_int_distribution<int> e(-20, 20);
    std::vector<float> random(static_cast<std::size_t>(n));
    for (float& v : random) v = std::ldexp(d(g), e(g));
    const std::vector<std::pair<const char*, std::function<float(std::size_t, float)>>> cases = {
        {"mixed signs", [](std::size_t, float v) { return v; }},
        {"all negative", [](std::size_t, float v) { return -std::fabs(v) - 1e-30f; }},
        {"all positive", [](std::size_t, float v) { return std::fabs(v) + 1e-30f; }},
        {"negative and -0", [](std::size_t i, float v) { return i % 5 == 0 ? -0.0f : -std::fabs(v) - 1e-30f; }},
        {"positive and +0", [](std::size_t i, float v) { return i % 5 == 0 ? 0.0f : std::fabs(v) + 1e-30f; }},
        {"only -0", [](std::size_t, float) { return -0.0f; }},
        {"zeros of both signs", [](std::size_t i, float) { return i % 3 == 0 ? 0.0f : -0.0f; }},
        {"one +0 among -0", [](std::size_t i, float) { return i == 9000 ? 0.0f : -0.0f; }},
        {"infinities", [&](std::size_t i, float v) { return i % 7 == 0 ? inf : i % 7 == 1 ? -inf : v; }},
        {"a positive NaN in the last block", [&](std::size_t i, float v) { return i == 12300 ? positive_nan : v; }},
        {"a negative NaN in the first block", [&](std::size_t i, float v) { return i == 100 ? negative_nan : v; }},
        {"a negative NaN, then a positive one", [&](std::size_t i, float v) {
             return i == 5000 ? negative_nan : i == 9000 ? positive_nan : v;
         }},
    };
    for (const auto& [what, make] : cases) {
        SCOPED_TRACE(what);
        std::vector<float> stream(random.size());
        for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = make(i, random[i]);
        const Eigen::TensorMap<Eigen::Tensor<const float, 1>> x(stream.data(), n);
        const float want_max = model_fold(stream, -inf, model_larger<float>), want_min = model_fold(stream, inf, model_smaller<float>);
        const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
        // Bit for bit; where the result is a NaN, one of the operand's NaNs (which one is unspecified).
        const auto expect_same = [&](float got, float want) {
            if (want != want)
                EXPECT_TRUE(bits(got) == bits(positive_nan) || bits(got) == bits(negative_nan)) << std::hex << bits(got);
            else
                EXPECT_EQ(bits(got), bits(want));
        };
        expect_same(mixt::eval(mixt::max(x))(), want_max);
        expect_same(mixt::eval(mixt::max(mixt::lazy(x) * 1.0f))(), want_max);
        expect_same(mixt::eval(mixt::min(x))(), want_min);
        expect_same(mixt::eval(mixt::min(mixt::lazy(x) * 1.0f))(), want_min);
        // |x|, and |x| widened to f64: every value's sign bit clear, so the keys are the bits themselves
        // (sign_clear_kernel); a NaN still wins, a negative one with its sign cleared.
        std::vector<float> magnitude(stream.size());
        std::transform(stream.begin(), stream.end(), magnitude.begin(), [](float v) { return std::fabs(v); });
        const float want_abs_max = model_fold(magnitude, -inf, model_larger<float>),
                    want_abs_min = model_fold(magnitude, inf, model_smaller<float>);
        const auto expect_magnitude = [&](double got, float want) {
            if (want != want)
                EXPECT_TRUE(std::isnan(got) && !std::signbit(got) &&
                            (bits(static_cast<float>(got)) == bits(positive_nan) ||
                             bits(static_cast<float>(got)) == (bits(negative_nan) & 0x7fffffffu)))
                    << std::hex << bits(static_cast<float>(got));
            else
                EXPECT_EQ(bits(static_cast<float>(got)), bits(want));
        };
        expect_magnitude(mixt::eval(mixt::max(mixt::abs(mixt::lazy(x))))(), want_abs_max);
        expect_magnitude(mixt::eval(mixt::min(mixt::abs(mixt::lazy(x) * 1.0f)))(), want_abs_min);
        expect_magnitude(mixt::eval(mixt::max(mixt::cast<double>(mixt::abs(mixt::lazy(x)))))(), want_abs_max);
        expect_magnitude(mixt::eval(mixt::min(mixt::cast<double>(mixt::abs(mixt::lazy(x)))))(), want_abs_min);
    }
}

// argmax/argmin over rows long enough for the lanes in registers (5000: more than a block of 4096, not a
// multiple of 32), of f16 (accumulated in f32) and of a slice (runs of 37): the first extreme element, a NaN
// before anything, ties (+0 and -0 are equal) to the first, a row of -inf only at index 0.
// argmax/argmin of f16 and bf16 rows: the plain leaf takes the 16-bit keys (chunks of 256), the leaf times 1
// the f32 lanes; both against a loop written here.
template <class T>
void check_first_extreme_index_of_long_rows() {
    constexpr Eigen::Index rows = 11, cols = 5000;
    Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, cols);
    std::mt19937 g(13);
    std::uniform_int_distribution<int> v(-2000, 2000), at(0, cols - 1);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = T(static_cast<float>(v(g)) / 64);
    const T inf = T(std::numeric_limits<float>::infinity());
    const T nan = T(std::numeric_limits<float>::quiet_NaN());
    const T negative_nan = Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(Eigen::numext::bit_cast<std::uint16_t>(nan) | 0x8000));
    for (Eigen::Index j = 0; j < cols; ++j) x(0, j) = -inf;           // row 0: -inf only
    x(1, 4999) = inf;                                                  // row 1: the last element
    x(2, 77) = inf, x(2, 4100) = inf, x(2, 33) = -inf;                 // row 2: a tie, first at 77
    x(3, 4098) = nan, x(3, 4500) = nan, x(3, 5) = inf;                 // row 3: the first NaN, past a block
    x(4, 31) = nan;                                                    // row 4: a NaN in the first row of lanes
    for (Eigen::Index j = 0; j < cols; ++j) x(5, j) = T(j % 2 ? 0.0f : -0.0f); // row 5: zeros, index 0
    x(6, at(g)) = T(40.0f), x(6, at(g)) = T(-40.0f);
    x(7, 3000) = nan, x(7, 2000) = negative_nan;                       // row 7: a negative NaN first
    x(8, 1023) = T(50.0f), x(8, 1024) = T(50.0f), x(8, 2047) = T(-50.0f), x(8, 3072) = T(-50.0f); // chunk edges
    for (Eigen::Index j = 0; j < cols; ++j) x(9, j) = T(j < 2500 ? -0.0f : 0.0f); // row 9: -0 before +0
    x(9, 4000) = T(-1.0f);
    const auto first_extreme = [&](Eigen::Index r, Eigen::Index c0, Eigen::Index n, bool largest) {
        Eigen::Index best = c0;
        for (Eigen::Index j = c0; j < c0 + n; ++j) {
            const float b = static_cast<float>(x(r, best)), y = static_cast<float>(x(r, j));
            if (b != b) break;
            if (y != y || (largest ? y > b : y < b)) best = j;
        }
        return best - c0;
    };
    const auto amax = mixt::eval(mixt::argmax(x, 1));
    const auto amin = mixt::eval(mixt::argmin(x, 1));
    const auto fmax = mixt::eval(mixt::argmax(mixt::lazy(x) * 1.0f, 1));
    const auto fmin = mixt::eval(mixt::argmin(mixt::lazy(x) * 1.0f, 1));
    const auto part = x.slice(Eigen::array<Eigen::Index, 2>{0, 3}, Eigen::array<Eigen::Index, 2>{rows, 37});
    const auto pmax = mixt::eval(mixt::argmax(part, 1));
    for (Eigen::Index r = 0; r < rows; ++r) {
        EXPECT_EQ(amax(r), first_extreme(r, 0, cols, true)) << r;
        EXPECT_EQ(amin(r), first_extreme(r, 0, cols, false)) << r;
        EXPECT_EQ(fmax(r), first_extreme(r, 0, cols, true)) << r;
        EXPECT_EQ(fmin(r), first_extreme(r, 0, cols, false)) << r;
        EXPECT_EQ(pmax(r), first_extreme(r, 3, 37, true)) << r;
    }
    EXPECT_EQ(amax(0), 0);
    EXPECT_EQ(amax(3), 4098);
    EXPECT_EQ(amax(5), 0);
    EXPECT_EQ(amin(7), 2000);
    EXPECT_EQ(amax(8), 1023);
    EXPECT_EQ(amin(8), 2047);
    EXPECT_EQ(amax(9), 0);
    EXPECT_EQ(amin(9), 4000);
    // Over all of it: the first NaN in row-major order.
    EXPECT_EQ(mixt::eval(mixt::argmax(x))(), 3 * cols + 4098);
    // Each length of row up to a few chunks (a multiple of 32 or not), the extreme placed at every offset in turn.
    for (Eigen::Index n : {32, 33, 64, 96, 1023, 1024, 1056, 2049, 4096}) {
        Eigen::Tensor<T, 2, Eigen::RowMajor> y(5, n);
        for (Eigen::Index i = 0; i < y.size(); ++i) y.data()[i] = T(static_cast<float>(v(g)) / 64);
        y(0, n - 1) = T(100.0f), y(1, n / 2) = T(-100.0f), y(2, n / 3) = nan, y(3, 0) = T(100.0f);
        y(4, 0) = inf, y(4, n - 1) = nan; // a NaN in the last values (past the last multiple of 32 where n is not one)
        const auto ymax = mixt::eval(mixt::argmax(y, 1));
        const auto ymin = mixt::eval(mixt::argmin(y, 1));
        EXPECT_EQ(ymax(0), n - 1) << n;
        EXPECT_EQ(ymin(1), n / 2) << n;
        EXPECT_EQ(ymax(2), n / 3) << n;
        EXPECT_EQ(ymin(2), n / 3) << n;
        EXPECT_EQ(ymax(3), 0) << n;
        EXPECT_EQ(ymax(4), n - 1) << n;
        EXPECT_EQ(ymin(4), n - 1) << n;
        // Ties between two random positions (any lanes, any steps of the scan): the first one, for each extreme.
        Eigen::Tensor<T, 2, Eigen::RowMajor> z(16, n);
        for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = T(static_cast<float>(v(g)) / 64);
        std::uniform_int_distribution<Eigen::Index> pos(0, n - 1);
        std::array<Eigen::Index, 16> first{};
        for (Eigen::Index r = 0; r < 16; ++r) {
            const Eigen::Index a = pos(g), b = pos(g);
            const T tie = T(r % 2 ? -100.0f : 100.0f);
            z(r, a) = tie, z(r, b) = tie;
            first[static_cast<std::size_t>(r)] = std::min(a, b);
        }
        const auto zmax = mixt::eval(mixt::argmax(z, 1));
        const auto zmin = mixt::eval(mixt::argmin(z, 1));
        for (Eigen::Index r = 0; r < 16; ++r) EXPECT_EQ(r % 2 ? zmin(r) : zmax(r), first[static_cast<std::size_t>(r)]) << n << " " << r;
    }
    // Rows on a pool of 8 threads: the same indices.
    {
        Eigen::ThreadPool pool(8);
        Eigen::ThreadPoolDevice device(&pool, 8);
        Eigen::Tensor<T, 2, Eigen::RowMajor> w(300, 3001);
        for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = T(static_cast<float>(v(g)) / 64);
        w(17, 3000) = nan, w(18, 5) = nan, w(18, 2999) = negative_nan;
        const auto a1 = mixt::eval(mixt::argmax(w, 1)), a8 = mixt::eval(mixt::argmax(w, 1), device);
        const auto b1 = mixt::eval(mixt::argmin(w, 1)), b8 = mixt::eval(mixt::argmin(w, 1), device);
        for (Eigen::Index r = 0; r < w.dimension(0); ++r) {
            EXPECT_EQ(a1(r), a8(r)) << r;
            EXPECT_EQ(b1(r), b8(r)) << r;
            Eigen::Index hi = 0, lo = 0;
            for (Eigen::Index j = 0; j < w.dimension(1); ++j) {
                const float y = static_cast<float>(w(r, j));
                if (y != y) {
                    hi = lo = j;
                    break;
                }
                if (y > static_cast<float>(w(r, hi))) hi = j;
                if (y < static_cast<float>(w(r, lo))) lo = j;
            }
            EXPECT_EQ(a1(r), hi) << r;
            EXPECT_EQ(b1(r), lo) << r;
        }
    }
    // One stream longer than a super-block (2^18 values: split in several, combined after): the first extreme.
    {
        Eigen::Tensor<T, 1> u(600001);
        for (Eigen::Index i = 0; i < u.size(); ++i) u.data()[i] = T(static_cast<float>(v(g)) / 64);
        u(400000) = T(200.0f), u(500000) = T(200.0f), u(300001) = T(-200.0f), u(599999) = T(-200.0f);
        EXPECT_EQ(mixt::eval(mixt::argmax(u))(), 400000);
        EXPECT_EQ(mixt::eval(mixt::argmin(u))(), 300001);
        u(550000) = nan, u(600000) = nan;
        EXPECT_EQ(mixt::eval(mixt::argmax(u))(), 550000);
        EXPECT_EQ(mixt::eval(mixt::argmin(u))(), 550000);
    }
}

TEST(reduce_eval, first_extreme_index_of_long_rows) {
    check_first_extreme_index_of_long_rows<Eigen::half>();
    check_first_extreme_index_of_long_rows<Eigen::bfloat16>();
}

// Outer-axis argmax/argmin and sums with a few columns (K = 1 to 8, and 3 and 6, whose lanes are 96): each
// column's first extreme row and its exact sum, against a loop written here.
TEST(reduce_eval, outer_axis_reductions_with_few_columns) {
    for (const Eigen::Index k : {1, 2, 3, 4, 6, 8}) {
        SCOPED_TRACE(k);
        const Eigen::Index n = 5003;
        Eigen::Tensor<float, 2, Eigen::RowMajor> x(n, k);
        Eigen::Tensor<std::int32_t, 2, Eigen::RowMajor> xi(n, k);
        std::mt19937 g(static_cast<std::uint32_t>(14 + k));
        std::uniform_int_distribution<int> v(-500, 500);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            x.data()[i] = static_cast<float>(v(g)) / 4;
            xi.data()[i] = v(g) * 1000000;
        }
        x(4000, 0) = std::numeric_limits<float>::quiet_NaN();
        const auto amax = mixt::eval(mixt::argmax(x, 0));
        const auto amin = mixt::eval(mixt::argmin(mixt::lazy(x) * 1.0f, 0));
        const auto total = mixt::eval(mixt::sum(xi, 0));
        for (Eigen::Index c = 0; c < k; ++c) {
            Eigen::Index hi = 0, lo = 0;
            std::int64_t t = 0;
            for (Eigen::Index i = 0; i < n; ++i) {
                const float y = x(i, c);
                if (x(hi, c) == x(hi, c) && (y != y || y > x(hi, c))) hi = i;
                if (x(lo, c) == x(lo, c) && (y != y || y < x(lo, c))) lo = i;
                t += xi(i, c);
            }
            EXPECT_EQ(amax(c), hi) << c;
            EXPECT_EQ(amin(c), lo) << c;
            EXPECT_EQ(total(c), t) << c;
        }
        EXPECT_EQ(amax(0), 4000);
    }
}

// Sums of bool and 8- and 16-bit integers add in 32-bit lanes within a block and widen once: at the extremes
// of each dtype, over long rows (K = 1), three channels (96 lanes) and everything, exact.
TEST(reduce_eval, narrow_integer_sums_are_exact_at_the_extremes) {
    const auto check = [](auto lo, auto hi) {
        using T = decltype(lo);
        SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
        Eigen::Tensor<T, 2, Eigen::RowMajor> rows(6, 9001), rgb(7001, 3);
        for (Eigen::Index i = 0; i < rows.size(); ++i) rows.data()[i] = i % 977 == 5 ? lo : hi;
        for (Eigen::Index i = 0; i < rgb.size(); ++i) rgb.data()[i] = i % 3 == 1 ? lo : hi;
        const auto by_row = mixt::eval(mixt::sum(rows, 1));
        const auto by_channel = mixt::eval(mixt::sum(rgb, 0));
        const auto mean_channel = mixt::eval(mixt::mean(rgb, 0));
        const auto all = mixt::eval(mixt::sum(rows))();
        i128 total = 0;
        for (Eigen::Index r = 0; r < 6; ++r) {
            i128 t = 0;
            for (Eigen::Index j = 0; j < 9001; ++j) t += static_cast<i128>(rows(r, j));
            EXPECT_EQ(static_cast<i128>(by_row(r)), t) << r;
            total += t;
        }
        EXPECT_EQ(static_cast<i128>(all), total);
        for (Eigen::Index c = 0; c < 3; ++c) {
            const i128 t = static_cast<i128>(c == 1 ? lo : hi) * 7001;
            EXPECT_EQ(static_cast<i128>(by_channel(c)), t) << c;
            EXPECT_EQ(mean_channel(c), static_cast<float>(static_cast<double>(t) / 7001.0)) << c;
        }
    };
    check(std::int8_t{-128}, std::int8_t{127});
    check(std::uint8_t{0}, std::uint8_t{255});
    check(std::int16_t{-32768}, std::int16_t{32767});
    check(std::uint16_t{0}, std::uint16_t{65535});
    check(false, true);
}

// u8 and i8 summed in float (sum<float>): with AVX-512 the values add in 16-bit lanes and each lane's total
// joins its float lane once per call. The same bits as the fold of float adds written out above, with totals
// large enough that the pairwise sums round (near 2^25), over everything (32 lanes), three channels (96
// lanes), as one run and in runs of 37 (a slice: rows of lanes start anywhere in a run).
TEST(reduce_eval, byte_sums_in_float_are_the_fold_of_float_adds) {
    const auto check = [](auto type) {
        using T = decltype(type);
        SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
        std::mt19937 g(21);
        std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        constexpr Eigen::Index n3 = 66667; // 200001 elements: one super-block (model_fold)
        Eigen::Tensor<T, 2, Eigen::RowMajor> x(n3, 3), wide(n3 * 3 / 37 + 1, 40);
        for (Eigen::Index i = 0; i < x.size(); ++i)
            x.data()[i] = i % 7 == 0 ? static_cast<T>(d(g))
                          : std::is_signed_v<T> ? static_cast<T>(std::numeric_limits<T>::min() + i % 3) // negative totals
                                                : static_cast<T>(std::numeric_limits<T>::max() - i % 3);
        std::vector<float> stream(static_cast<std::size_t>(x.size()));
        for (Eigen::Index i = 0; i < x.size(); ++i) stream[static_cast<std::size_t>(i)] = static_cast<float>(x.data()[i]);
        const auto add = [](float a, float b) { return a + b; };
        const float want = model_fold(stream, 0.0f, add);
        ASSERT_GT(std::fabs(want), 0x1p24f);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(mixt::eval(mixt::sum<float>(x))()), std::bit_cast<std::uint32_t>(want));
        const auto by_channel = mixt::eval(mixt::sum<float>(x, 0));
        for (std::size_t c = 0; c < 3; ++c)
            EXPECT_EQ(std::bit_cast<std::uint32_t>(by_channel(static_cast<Eigen::Index>(c))),
                      std::bit_cast<std::uint32_t>(model_fold(stream, 0.0f, add, 3, c))) << c;
        // Runs of 37: the first 37 columns of each row of `wide` hold the stream in order.
        const Eigen::Index rows37 = wide.dimension(0);
        std::vector<float> stream37;
        for (Eigen::Index r = 0; r < rows37; ++r)
            for (Eigen::Index j = 0; j < 40; ++j) {
                wide(r, j) = x.data()[(r * 37 + j) % x.size()];
                if (j < 37) stream37.push_back(static_cast<float>(wide(r, j)));
            }
        const auto part = wide.slice(Eigen::array<Eigen::Index, 2>{0, 0}, Eigen::array<Eigen::Index, 2>{rows37, 37});
        EXPECT_EQ(std::bit_cast<std::uint32_t>(mixt::eval(mixt::sum<float>(part))()),
                  std::bit_cast<std::uint32_t>(model_fold(stream37, 0.0f, add)));
    };
    check(std::uint8_t{});
    check(std::int8_t{});
}

// Rows of one column up to 256 values take a path of their own (many rows computed at a time, their lanes
// ended together): each row's result is still the stream's fold written out (model_fold), bit for bit, for
// every row length from 1 to 260 (around the lanes' 32, both sides of the path's limits 128 and 256): sums whose
// order shows in their bits, max over signed zeros, -0 and NaNs, f16 means (f32 lanes), wrapping i8 sums and
// f64 products; for rows of two axes {0, 2} of a [5, rows, n] tensor (the rows' values not contiguous), a
// broadcast operand, and on an 8-thread pool (the same bits).
TEST(reduce_eval, short_rows_fold_as_their_streams) {
    Eigen::ThreadPool pool(8);
    Eigen::ThreadPoolDevice device(&pool, 8);
    std::mt19937 g(31);
    std::uniform_real_distribution<float> d(-1, 1);
    std::uniform_int_distribution<int> e(-24, 24), pick(0, 99);
    const auto add = [](auto a, auto b) { return a + b; };
    const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
    for (Eigen::Index n = 1; n <= 260; n += n < 40 ? 1 : n < 120 ? 7 : n < 250 ? 17 : 1) {
        SCOPED_TRACE(n);
        const Eigen::Index rows = 37;
        Eigen::Tensor<float, 2, Eigen::RowMajor> x(rows, n), m(rows, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            x.data()[i] = std::ldexp(d(g), e(g));
            const int k = pick(g);
            m.data()[i] = k < 15 ? 0.0f : k < 30 ? -0.0f : k == 30 ? std::numeric_limits<float>::quiet_NaN() : -std::fabs(x.data()[i]);
        }
        Eigen::Tensor<float, 1, Eigen::RowMajor> scale(n); // broadcast along the rows
        for (Eigen::Index j = 0; j < n; ++j) scale(j) = std::ldexp(1.0f, static_cast<int>(j % 5) - 2);
        const auto sums = mixt::eval(mixt::sum(x, 1));
        const auto sums8 = mixt::eval(mixt::sum(x, 1), device);
        const auto scaled = mixt::eval(mixt::sum(mixt::lazy(x) * scale.reshape(Eigen::array<Eigen::Index, 2>{1, n}), 1));
        const auto maxes = mixt::eval(mixt::max(m, 1));
        const auto maxes8 = mixt::eval(mixt::max(m, 1), device);
        for (Eigen::Index r = 0; r < rows; ++r) {
            std::vector<float> row(static_cast<std::size_t>(n)), row_scaled(row.size()), row_m(row.size());
            for (Eigen::Index j = 0; j < n; ++j) {
                row[static_cast<std::size_t>(j)] = x(r, j);
                row_scaled[static_cast<std::size_t>(j)] = x(r, j) * scale(j);
                row_m[static_cast<std::size_t>(j)] = m(r, j);
            }
            const float want = model_fold(row, 0.0f, add);
            EXPECT_EQ(bits(sums(r)), bits(want)) << r;
            EXPECT_EQ(bits(sums8(r)), bits(want)) << r;
            EXPECT_EQ(bits(scaled(r)), bits(model_fold(row_scaled, 0.0f, add))) << r;
            const float top = model_fold(row_m, -std::numeric_limits<float>::infinity(), model_larger<float>);
            if (std::isnan(top)) {
                EXPECT_TRUE(std::isnan(maxes(r)) && std::isnan(maxes8(r))) << r;
            } else {
                EXPECT_EQ(bits(maxes(r)), bits(top)) << r;
                EXPECT_EQ(bits(maxes8(r)), bits(top)) << r;
            }
        }
        // f16 means (accumulated in f32) and i8 sums (wrapping in the default int), f64 products.
        Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> h(rows, n);
        Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> b(rows, n);
        Eigen::Tensor<double, 2, Eigen::RowMajor> p(rows, n);
        for (Eigen::Index i = 0; i < h.size(); ++i) {
            h.data()[i] = Eigen::half(std::ldexp(d(g), e(g) / 3));
            b.data()[i] = static_cast<std::int8_t>(pick(g) * 2 - 100);
            p.data()[i] = 1.0 + d(g) / 8;
        }
        const auto means = mixt::eval(mixt::mean(h, 1));
        const auto bsums = mixt::eval(mixt::sum(b, 1));
        const auto prods = mixt::eval(mixt::prod(p, 1));
        for (Eigen::Index r = 0; r < rows; ++r) {
            std::vector<float> hf(static_cast<std::size_t>(n));
            std::vector<std::int64_t> bi(hf.size());
            std::vector<double> pd(hf.size());
            for (Eigen::Index j = 0; j < n; ++j) {
                hf[static_cast<std::size_t>(j)] = static_cast<float>(h(r, j));
                bi[static_cast<std::size_t>(j)] = b(r, j);
                pd[static_cast<std::size_t>(j)] = p(r, j);
            }
            const float mean = model_fold(hf, 0.0f, add) / static_cast<float>(n);
            EXPECT_EQ(std::bit_cast<std::uint16_t>(means(r)), std::bit_cast<std::uint16_t>(Eigen::half(mean))) << r;
            EXPECT_EQ(bsums(r), model_fold(bi, std::int64_t{0}, add)) << r;
            const double prod = model_fold(pd, 1.0, [](double u, double v) { return u * v; });
            EXPECT_EQ(std::bit_cast<std::uint64_t>(prods(r)), std::bit_cast<std::uint64_t>(prod)) << r;
        }
        // Rows of two axes: sum over {0, 2} of [5, rows, n], each row's values in the order of its box (axis 0,
        // then axis 2).
        if (n <= 50) {
            Eigen::Tensor<float, 3, Eigen::RowMajor> t(5, rows, n);
            for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] = std::ldexp(d(g), e(g));
            const auto got = mixt::eval(mixt::sum(t, {0, 2}));
            const auto got8 = mixt::eval(mixt::sum(t, {0, 2}), device);
            for (Eigen::Index r = 0; r < rows; ++r) {
                std::vector<float> row;
                for (Eigen::Index a = 0; a < 5; ++a)
                    for (Eigen::Index j = 0; j < n; ++j) row.push_back(t(a, r, j));
                const float want = model_fold(row, 0.0f, add);
                EXPECT_EQ(bits(got(r)), bits(want)) << r;
                EXPECT_EQ(bits(got8(r)), bits(want)) << r;
            }
        }
    }
}

// Fewer rows than a lane group (short_rows_in_blocks: the rows' lanes ended together, the last values of each
// row, fewer than the lanes, read with the identity after them): 1 and 5 rows of 1 to 140 values, sums of f32 and
// f64 whose order shows in their bits, max and min of f32 over signed zeros and NaNs, max of i32 and sums of i64,
// each the stream's fold written out (model_fold), bit for bit.
template <class T, class Make, class Reduce, class Combine>
void check_few_short_rows(std::mt19937& g, const Make& make, const Reduce& reduce, T identity, const Combine& combine) {
    for (const Eigen::Index rows : {1, 5})
        for (Eigen::Index n = 1; n <= 140; n += n < 70 ? 1 : 7) {
            SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(n));
            Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, n);
            for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = make(g);
            const auto got = reduce(x);
            for (Eigen::Index r = 0; r < rows; ++r) {
                std::vector<T> row(static_cast<std::size_t>(n));
                for (Eigen::Index j = 0; j < n; ++j) row[static_cast<std::size_t>(j)] = x(r, j);
                const T want = model_fold(row, identity, combine);
                if constexpr (std::is_floating_point_v<T>) {
                    if (std::isnan(want)) {
                        EXPECT_TRUE(std::isnan(got(r))) << r; // (a NaN's sign and payload: README, "NaN")
                        continue;
                    }
                }
                EXPECT_EQ(std::memcmp(&got(r), &want, sizeof(T)), 0) << r << ": " << got(r) << " against " << want;
            }
        }
}

TEST(reduce_eval, few_short_rows_fold_as_their_streams) {
    std::mt19937 g(43);
    std::uniform_real_distribution<double> d(-1, 1);
    std::uniform_int_distribution<int> e(-24, 24), pick(0, 99);
    const auto add = [](auto a, auto b) { return a + b; };
    const auto f32 = [&](std::mt19937& gen) { return static_cast<float>(std::ldexp(d(gen), e(gen))); };
    const auto f64 = [&](std::mt19937& gen) { return std::ldexp(d(gen), e(gen)); };
    const auto zeros_and_nans = [&](std::mt19937& gen) {
        const int k = pick(gen);
        return k < 20 ? 0.0f : k < 40 ? -0.0f : k == 40 ? std::numeric_limits<float>::quiet_NaN() : f32(gen);
    };
    const auto i32 = [&](std::mt19937& gen) { return static_cast<std::int32_t>(gen()); };
    const auto i64 = [&](std::mt19937& gen) { return static_cast<std::int64_t>((std::uint64_t{gen()} << 32) | gen()); };
    const auto sum = [](const auto& x) { return mixt::eval(mixt::sum(x, 1)); };
    check_few_short_rows<float>(g, f32, sum, 0.0f, add);
    check_few_short_rows<double>(g, f64, sum, 0.0, add);
    check_few_short_rows<float>(g, zeros_and_nans, [](const auto& x) { return mixt::eval(mixt::max(x, 1)); },
                                -std::numeric_limits<float>::infinity(), model_larger<float>);
    check_few_short_rows<float>(g, zeros_and_nans, [](const auto& x) { return mixt::eval(mixt::min(x, 1)); },
                                std::numeric_limits<float>::infinity(), model_smaller<float>);
    check_few_short_rows<std::int32_t>(g, i32, [](const auto& x) { return mixt::eval(mixt::max(x, 1)); },
                                       std::numeric_limits<std::int32_t>::min(), model_larger<std::int32_t>);
    check_few_short_rows<std::int64_t>(g, i64, sum, std::int64_t{0},
                                       [](std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b)); });
}

// argmax and argmin along short rows (1 to 128 values: first_extremes_across, 16 rows of a 4-byte type or 8 of an
// 8-byte one side by side with AVX-512 (rows of more than 16 values of an 8-byte type each in 8 lanes), types of
// 1 and 2 bytes and bool widened to i32 and then the same, each row in turn otherwise; 129 and
// 130: the streams) against a loop written here: the first NaN where a row has one, else the first of its extreme
// values (-0 and +0 equal), over values drawn from a few so that rows have ties, signed zeros and NaNs of both
// signs (and u32 and u64 values of 2^31 and 2^63 and more; for the integers of 1 and 2 bytes, the same draws
// converted; bools true with odds from 0 in a row to 1, by row). f32 through mixt::eval: rows read in place (batches of whole groups,
// then a last partial one from a buffer), an expression's rows (from a buffer), a strided operand, and on a pool;
// the other types: mixt::eval's argmax in place, and the argmin indices (first_extreme_indexes) and the argmax
// lanes (first_extremes_across, for a destination whose rows are not in order) called directly, for every type.
template <class T>
void check_short_rows_first_extremes() {
    std::mt19937 g(43);
    constexpr bool floating = std::is_floating_point_v<T>;
    const T nan = floating ? std::numeric_limits<T>::quiet_NaN() : T(5);
    const T tiny = floating ? std::numeric_limits<T>::denorm_min() * 3 : T(4);
    const T choices[] = {T(-1), T(0), floating ? -T(0) : T(6), T(1), T(2), T(-3), floating ? T(2.5) : T(-9), tiny, static_cast<T>(-tiny), T(7)};
    std::uniform_int_distribution<int> pick(0, 9), rare(0, 199);
    using argmax_op = mixt::detail::reduce_op<mixt::reduce_kind::argmax, T>;
    using argmin_op = mixt::detail::reduce_op<mixt::reduce_kind::argmin, T>;
    for (Eigen::Index n = 1; n <= 130; n += n < 40 ? 1 : n < 120 ? 9 : 1) {
        SCOPED_TRACE(n);
        // More rows than one batch of short_rows_across (4096 values, whole groups of 32 rows) and a few more (a
        // last group of 16 rows with 5, 11 or 13 of them, of 8 with 5 or 3).
        const Eigen::Index rows = std::max<Eigen::Index>(32, 4096 / n / 32 * 32) + (n % 3 == 0 ? 37 : n % 3 == 1 ? 43 : 45);
        Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>) { // row k true with odds (k % 11) / 10: all false to all true
                x.data()[i] = pick(g) < (i / n) % 11;
            } else {
                const int r = rare(g);
                x.data()[i] = r == 0 ? nan : r == 1 ? -nan : choices[pick(g)];
            }
        }
        const auto first_extreme = [&](Eigen::Index r, bool max) {
            Eigen::Index best = 0;
            for (Eigen::Index j = 0; j < n; ++j) {
                const T y = x(r, j);
                if (y != y) return j;
                if (max ? y > x(r, best) : y < x(r, best)) best = j;
            }
            return best;
        };
        // argmax into a map of the rows' results, with 16 guards after them that nothing may write.
        std::vector<Eigen::Index> ax_and_guards(static_cast<std::size_t>(rows + 16), -7);
        Eigen::TensorMap<Eigen::Tensor<Eigen::Index, 1, Eigen::RowMajor>> ax(ax_and_guards.data(), rows);
        mixt::assign(ax, mixt::argmax(x, 1));
        for (Eigen::Index k = rows; k < rows + 16; ++k) EXPECT_EQ(ax_and_guards[static_cast<std::size_t>(k)], -7) << k;
        // The direct calls read whole groups of rows: a copy of x with its last group filled out.
        const Eigen::Index groups = (rows + mixt::detail::lane_group - 1) / mixt::detail::lane_group;
        Eigen::Tensor<T, 1> whole(groups * mixt::detail::lane_group * n); // (not a vector: T may be bool)
        whole.setZero();
        std::copy_n(x.data(), x.size(), whole.data());
        std::vector<std::int32_t> lo(static_cast<std::size_t>(rows)); // (i32 indices, as the x32 policies give)
        mixt::detail::first_extreme_indexes<argmin_op, T>(whole.data(), n, rows, lo.data());
        std::vector<typename argmax_op::lane> lanes(static_cast<std::size_t>(groups * mixt::detail::lane_group));
        mixt::detail::first_extremes_across<argmax_op, T>(whole.data(), n, groups, lanes.data());
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index hi = first_extreme(r, true);
            EXPECT_EQ(ax(r), hi) << r;
            EXPECT_EQ(lo[static_cast<std::size_t>(r)], first_extreme(r, false)) << r;
            EXPECT_EQ(lanes[static_cast<std::size_t>(r)].i, hi) << r;
        }
        if constexpr (std::is_same_v<T, float>) {
            Eigen::ThreadPool pool(4);
            Eigen::ThreadPoolDevice device(&pool, 4);
            const auto an = mixt::eval(mixt::argmin(x, 1));
            const auto ax4 = mixt::eval(mixt::argmax(x, 1), device);
            const auto doubled = mixt::eval(mixt::argmin(mixt::lazy(x) * 2.0f, 1)); // an expression: from a buffer
            Eigen::Tensor<T, 2, Eigen::RowMajor> wide(rows, n + 3);
            wide.setConstant(T(100));
            wide.slice(Eigen::array<Eigen::Index, 2>{0, 1}, Eigen::array<Eigen::Index, 2>{rows, n}) = x;
            const auto sliced = mixt::eval(
                mixt::argmax(wide.slice(Eigen::array<Eigen::Index, 2>{0, 1}, Eigen::array<Eigen::Index, 2>{rows, n}), 1));
            for (Eigen::Index r = 0; r < rows; ++r) {
                const Eigen::Index hi = first_extreme(r, true), low = first_extreme(r, false);
                EXPECT_EQ(an(r), low) << r;
                EXPECT_EQ(ax4(r), hi) << r;
                EXPECT_EQ(doubled(r), low) << r;
                EXPECT_EQ(sliced(r), hi) << r;
            }
        }
    }
}

TEST(reduce_eval, short_rows_first_extremes) {
    check_short_rows_first_extremes<float>();
    check_short_rows_first_extremes<double>();
    check_short_rows_first_extremes<std::int32_t>();
    check_short_rows_first_extremes<std::uint32_t>();
    check_short_rows_first_extremes<std::int64_t>();
    check_short_rows_first_extremes<std::uint64_t>();
    // The types of 1 and 2 bytes and bool: widened to i32 with AVX-512 (widened_rows), else a row at a time.
    check_short_rows_first_extremes<std::int8_t>();
    check_short_rows_first_extremes<std::uint8_t>();
    check_short_rows_first_extremes<std::int16_t>();
    check_short_rows_first_extremes<std::uint16_t>();
    check_short_rows_first_extremes<bool>();
}

// Rows longer than the lanes, read in place, are transposed in registers (fold_rows_across) or folded a row at a
// time in memory order (end_rows_of_one_block), as long_rows_transposed says for the CPU running the test: both
// folds give each row's stream fold bit for bit here, whichever the CPU, for sums and for max over signed zeros.
// Sums and maxima along rows of 1-256 values, over more rows than two of short_rows_across's batches (4096 values
// each, whole groups of 32 rows: their results stored straight into the destination) and a last part batch, for
// 4- and 8-byte lanes (rows of 8-byte values transposed 8 at a time; integers of 1-4 bytes summed in 64 bits, from
// a buffer or widened in registers; rows folded in memory order by short_rows_in_order with AVX-512), each
// row the fold of its stream written out (model_fold), bit for bit, on one thread and on eight.
template <class T, class Acc>
void check_many_short_rows(std::mt19937& g) {
    SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
    Eigen::ThreadPool pool(8);
    Eigen::ThreadPoolDevice device(&pool, 8);
    std::uniform_real_distribution<double> d(-1, 1);
    std::uniform_int_distribution<int> e(-24, 24), pick(0, 99);
    const auto add = [](Acc a, Acc b) {
        if constexpr (std::is_integral_v<Acc>) { // wrapping, as the lanes add (no signed overflow here)
            using U = std::make_unsigned_t<Acc>;
            return static_cast<Acc>(static_cast<U>(a) + static_cast<U>(b));
        } else {
            return static_cast<Acc>(a + b);
        }
    };
    const auto larger = model_larger<T>;
    const auto same = [](auto u, auto v) {
        if constexpr (std::is_floating_point_v<decltype(u)>)
            return (std::isnan(u) && std::isnan(v)) || std::memcmp(&u, &v, sizeof(u)) == 0;
        else
            return u == v;
    };
    for (const Eigen::Index n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 24, 31, 32, 33, 40, 64, 100, 128, 200, 256}) {
        SCOPED_TRACE(n);
        const Eigen::Index batch = std::max<Eigen::Index>(32, 4096 / n / 32 * 32), rows = 2 * batch + 37;
        Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, n), m(rows, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            const int k = pick(g);
            const bool negative = i / n % 3 == 0; // every third row below zero: its maximum too
            if constexpr (std::is_floating_point_v<T>) {
                x.data()[i] = static_cast<T>(std::ldexp(d(g), e(g)));
                m.data()[i] = k < 15   ? (negative ? -T(0) : T(0))
                              : k < 30 ? -T(0)
                              : k == 30 && !negative ? std::numeric_limits<T>::quiet_NaN()
                              : negative ? -std::fabs(x.data()[i])
                                         : x.data()[i];
            } else {
                x.data()[i] = static_cast<T>(std::uniform_int_distribution<long long>(
                    std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max())(g));
                const T below = x.data()[i] < 0 ? x.data()[i] : static_cast<T>(-x.data()[i] - 1); // (unsigned: any)
                m.data()[i] = k < 30 ? std::numeric_limits<T>::lowest() : negative ? below : x.data()[i];
            }
        }
        const auto sums = mixt::eval(mixt::sum(x, 1)), sums8 = mixt::eval(mixt::sum(x, 1), device);
        const auto maxes = mixt::eval(mixt::max(m, 1)), maxes8 = mixt::eval(mixt::max(m, 1), device);
        static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(sums)>::Scalar, Acc>);
        std::size_t wrong = 0;
        for (Eigen::Index r = 0; r < rows; ++r) {
            std::vector<Acc> row(static_cast<std::size_t>(n));
            std::vector<T> row_m(row.size());
            for (Eigen::Index j = 0; j < n; ++j) {
                row[static_cast<std::size_t>(j)] = static_cast<Acc>(x(r, j));
                row_m[static_cast<std::size_t>(j)] = m(r, j);
            }
            const Acc want = model_fold(row, Acc(0), add);
            const T top = model_fold(row_m, mixt::detail::reduce_op<mixt::reduce_kind::max, T>::identity(), larger);
            const bool ok = same(sums(r), want) && same(sums8(r), want) && same(maxes(r), top) && same(maxes8(r), top);
            if (!ok && wrong++ < 5)
                ADD_FAILURE() << "row " << r << ": sum " << sums(r) << " / " << sums8(r) << " want " << want << ", max "
                              << maxes(r) << " / " << maxes8(r) << " want " << top;
        }
        EXPECT_EQ(wrong, 0u);
    }
}

TEST(reduce_eval, many_short_rows_fold_as_their_streams) {
    std::mt19937 g(47);
    check_many_short_rows<float, float>(g);
    check_many_short_rows<double, double>(g);
    check_many_short_rows<std::int64_t, std::int64_t>(g);
    check_many_short_rows<std::int32_t, std::int64_t>(g);
    check_many_short_rows<std::uint8_t, std::uint64_t>(g);
    check_many_short_rows<std::int8_t, std::int64_t>(g);
    check_many_short_rows<std::int16_t, std::int64_t>(g);
    check_many_short_rows<std::uint16_t, std::uint64_t>(g);
    check_many_short_rows<std::uint32_t, std::uint64_t>(g);
}

// Short rows read in place from an operand past rows_prefetch_threshold_bytes (where rows_prefetched asks for its
// lines ahead, in a build that prefetches: not the tests', MIXT_SOFTWARE_PREFETCH=0), of lengths that fill the
// transpose's vectors (16 f32, 8 f64), that read the next row's values in plain loads (8-15 f32, 5-7 f64), and that
// take masked loads (7 f32): each row's sum is its stream's fold and its argmax the first largest value, in rows up
// to the operand's last.
template <class T>
void check_rows_of_a_large_operand(std::mt19937& g) {
    SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
    const std::vector<Eigen::Index> lengths =
        sizeof(T) == 4 ? std::vector<Eigen::Index>{7, 8, 12, 16, 24, 32} : std::vector<Eigen::Index>{5, 7, 8, 16};
    for (const Eigen::Index n : lengths) {
        SCOPED_TRACE(n);
        const Eigen::Index rows =
            static_cast<Eigen::Index>(mixt::detail::rows_prefetch_threshold_bytes / sizeof(T)) / n + 37;
        Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, n);
        std::uniform_int_distribution<int> d(-64, 64); // small integers: ties for argmax
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = std::ldexp(static_cast<T>(d(g)), d(g) % 8);
        const auto sums = mixt::eval(mixt::sum(x, 1));
        const auto at = mixt::eval(mixt::argmax(x, 1));
        int wrong = 0;
        for (Eigen::Index r = 0; r < rows; ++r) {
            const T* row = x.data() + r * n;
            const T want = model_fold(std::vector<T>(row, row + n), T(0), [](T u, T v) { return u + v; });
            const auto top = std::max_element(row, row + n) - row; // (the first of the largest)
            if ((sums(r) != want || at(r) != top) && wrong++ < 3)
                ADD_FAILURE() << "row " << r << ": sum " << sums(r) << " want " << want << ", argmax " << at(r)
                              << " want " << top;
        }
        EXPECT_EQ(wrong, 0);
    }
}

TEST(reduce_eval, short_rows_of_a_large_operand) {
    std::mt19937 g(53);
    check_rows_of_a_large_operand<float>(g);
    check_rows_of_a_large_operand<double>(g);
}

// min and max of integers of 1 and 2 bytes along rows of 1-256 values (rows of 16 bytes or more folded in memory
// order, in lanes of their own type, by short_rows_in_order with AVX-512): each row's extreme, on one thread
// and on eight.
template <class T>
void check_narrow_extremes(std::mt19937& g) {
    SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
    Eigen::ThreadPool pool(8);
    Eigen::ThreadPoolDevice device(&pool, 8);
    for (const Eigen::Index n : {1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 128, 129, 200, 256}) {
        SCOPED_TRACE(n);
        const Eigen::Index rows = 3 * 4096 / n + 5;
        Eigen::Tensor<T, 2, Eigen::RowMajor> x(rows, n);
        std::uniform_int_distribution<int> d(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
        std::uniform_int_distribution<Eigen::Index> at(0, n - 1);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<T>(d(g) / 2); // away from the ends
        for (Eigen::Index r = 0; r < rows; ++r) { // an end of T's range somewhere in two rows of three
            if (r % 3 == 1) x(r, at(g)) = std::numeric_limits<T>::max();
            if (r % 3 == 2) x(r, at(g)) = std::numeric_limits<T>::lowest();
        }
        const auto hi = mixt::eval(mixt::max(x, 1)), hi8 = mixt::eval(mixt::max(x, 1), device);
        const auto lo = mixt::eval(mixt::min(x, 1)), lo8 = mixt::eval(mixt::min(x, 1), device);
        std::size_t wrong = 0;
        for (Eigen::Index r = 0; r < rows; ++r) {
            T top = x(r, 0), bottom = x(r, 0);
            for (Eigen::Index j = 1; j < n; ++j) {
                top = std::max(top, x(r, j));
                bottom = std::min(bottom, x(r, j));
            }
            if ((hi(r) != top || hi8(r) != top || lo(r) != bottom || lo8(r) != bottom) && wrong++ < 5)
                ADD_FAILURE() << "row " << r << ": max " << +hi(r) << " / " << +hi8(r) << " want " << +top << ", min "
                              << +lo(r) << " / " << +lo8(r) << " want " << +bottom;
        }
        EXPECT_EQ(wrong, 0u);
    }
}

// Short rows whose results land out of row order in the destination (a [3, R] slice of a [3, R + 5] array for the
// rows of a [3, R, n] one, so each row's result goes through plan.out_offset, not straight into place): every
// strategy of short rows (side by side from a buffer or in place, widened in registers, in memory order) gives
// each row its own fold. Integer sums wrap, as the lanes add; min/max as reduce_op combines them.
template <class T>
void check_rows_out_of_order(std::mt19937& g) {
    SCOPED_TRACE(mixt::short_name(mixt::dtype_of_v<T>));
    for (const Eigen::Index n : {2, 3, 4, 5, 8, 16, 17, 24, 32, 33, 64, 100}) {
        SCOPED_TRACE(n);
        const Eigen::Index R = std::max<Eigen::Index>(32, 4096 / n / 32 * 32) + 11; // a whole batch and a part
        Eigen::Tensor<T, 3, Eigen::RowMajor> x(3, R, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
            if constexpr (std::is_floating_point_v<T>)
                x.data()[i] = static_cast<T>(std::uniform_real_distribution<double>(-8, 8)(g));
            else
                x.data()[i] = static_cast<T>(std::uniform_int_distribution<long long>(
                    std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max())(g));
        }
        using S = typename decltype(mixt::eval(mixt::sum(x, 2)))::Scalar;
        Eigen::Tensor<S, 2, Eigen::RowMajor> sums(3, R + 5);
        Eigen::Tensor<T, 2, Eigen::RowMajor> tops(3, R + 5), bottoms(3, R + 5);
        const Eigen::array<Eigen::Index, 2> at{0, 0}, extent{3, R};
        mixt::assign(sums.slice(at, extent), mixt::sum(x, 2));
        mixt::assign(tops.slice(at, extent), mixt::max(x, 2));
        mixt::assign(bottoms.slice(at, extent), mixt::min(x, 2));
        int wrong = 0;
        for (Eigen::Index a = 0; a < 3; ++a)
            for (Eigen::Index r = 0; r < R; ++r) {
                const T* row = x.data() + (a * R + r) * n;
                T top = row[0], bottom = row[0];
                std::uint64_t total = 0;
                for (Eigen::Index j = 0; j < n; ++j) {
                    top = model_larger(top, row[j]);
                    bottom = model_smaller(bottom, row[j]);
                    if constexpr (!std::is_floating_point_v<T>) total += static_cast<std::uint64_t>(row[j]);
                }
                S want_sum;
                if constexpr (std::is_floating_point_v<T>) // the stream's order: model_fold
                    want_sum = model_fold(std::vector<T>(row, row + n), T(0), [](T u, T v) { return u + v; });
                else
                    want_sum = static_cast<S>(total);
                wrong += sums(a, r) != want_sum || tops(a, r) != top || bottoms(a, r) != bottom;
                if (wrong == 1 && (sums(a, r) != want_sum || tops(a, r) != top || bottoms(a, r) != bottom))
                    ADD_FAILURE() << "row (" << a << ", " << r << "): sum " << +sums(a, r) << " want " << +want_sum
                                  << ", max " << +tops(a, r) << " want " << +top << ", min " << +bottoms(a, r)
                                  << " want " << +bottom;
            }
        EXPECT_EQ(wrong, 0);
    }
}

TEST(reduce_eval, short_rows_out_of_row_order) {
    std::mt19937 g(61);
    check_rows_out_of_order<float>(g);
    check_rows_out_of_order<double>(g);
    check_rows_out_of_order<std::int64_t>(g);
    check_rows_out_of_order<std::int32_t>(g);
    check_rows_out_of_order<std::uint8_t>(g);
    check_rows_out_of_order<std::int8_t>(g);
    check_rows_out_of_order<std::int16_t>(g);
}

TEST(reduce_eval, narrow_integer_extremes_along_rows) {
    std::mt19937 g(53);
    check_narrow_extremes<std::int8_t>(g);
    check_narrow_extremes<std::uint8_t>(g);
    check_narrow_extremes<std::int16_t>(g);
    check_narrow_extremes<std::uint16_t>(g);
    // Reductions in a wider type than the array's: max of i8 as i16 (the kernel widens; not in memory order) and
    // sums of i8 as i32 and of u16 as i32 (widened in registers where in memory order).
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> x(999, 24);
    Eigen::Tensor<std::uint16_t, 2, Eigen::RowMajor> w(999, 24);
    std::uniform_int_distribution<int> d(-128, 127), e(0, 65535);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
        x.data()[i] = static_cast<std::int8_t>(d(g));
        w.data()[i] = static_cast<std::uint16_t>(e(g));
    }
    const auto top = mixt::eval(mixt::max(mixt::cast<std::int16_t>(x), 1));
    const auto sums = mixt::eval(mixt::sum<std::int32_t>(x, 1));
    const auto wide_sums = mixt::eval(mixt::sum<std::int32_t>(w, 1));
    for (Eigen::Index r = 0; r < x.dimension(0); ++r) {
        std::int16_t t = x(r, 0);
        std::int32_t s = 0, ws = 0;
        for (Eigen::Index j = 0; j < x.dimension(1); ++j) {
            t = std::max<std::int16_t>(t, x(r, j));
            s += x(r, j);
            ws += w(r, j);
        }
        ASSERT_EQ(top(r), t) << r;
        ASSERT_EQ(sums(r), s) << r;
        ASSERT_EQ(wide_sums(r), ws) << r;
    }
}

#if MIXT_SIMD_AVX512
// fold_rows_in_order itself, whichever strategy the CPU running the test chooses: sums, min and max of every
// pair of an integer array S and a wider integer lane A it widens in registers (sign or zero extension), and of
// integers and floats read as they are (min/max of floats as keys: signed zeros, NaNs of both signs), over rows
// shorter than half a vector, of one, around whole vectors and longer; each row against a fold in A.
template <class A, class S>
void check_in_order_rows(std::mt19937& g) {
    SCOPED_TRACE(std::string(mixt::short_name(mixt::dtype_of_v<S>)) + " as " + std::string(mixt::short_name(mixt::dtype_of_v<A>)));
    constexpr Eigen::Index W = 64 / sizeof(A), rows = 7;
    const auto run = [&]<mixt::reduce_kind K>(std::integral_constant<mixt::reduce_kind, K>, const std::vector<S>& x,
                                             Eigen::Index n, auto combine) {
        using Op = mixt::detail::reduce_op<K, A>;
        std::vector<typename Op::lane> got(static_cast<std::size_t>(rows)); // (an integer sum's lanes wrap: unsigned)
        mixt::detail::fold_rows_in_order<Op, A>(x.data(), n, rows, got.data());
        for (Eigen::Index r = 0; r < rows; ++r) {
            A want = Op::identity();
            for (Eigen::Index j = 0; j < n; ++j) want = combine(want, static_cast<A>(x[static_cast<std::size_t>(r * n + j)]));
            const A have = static_cast<A>(got[static_cast<std::size_t>(r)]);
            if constexpr (std::is_floating_point_v<A>) {
                if (std::isnan(want)) {
                    EXPECT_TRUE(std::isnan(have)) << "kind " << static_cast<int>(K) << ", n " << n << ", row " << r;
                    continue;
                }
            }
            EXPECT_EQ(std::memcmp(&have, &want, sizeof(A)), 0) << "kind " << static_cast<int>(K) << ", n " << n << ", row " << r
                                                               << ": " << +have << " want " << +want;
        }
    };
    for (const Eigen::Index n : {Eigen::Index{1}, Eigen::Index{2}, W / 4, W / 2 - 1, W / 2, W - 1, W, W + 1, 2 * W, 3 * W + 5, Eigen::Index{100}}) {
        if (n < 1) continue;
        std::vector<S> x(static_cast<std::size_t>(rows * n));
        for (std::size_t i = 0; i < x.size(); ++i) {
            if constexpr (std::is_floating_point_v<S>) {
                const int k = std::uniform_int_distribution<int>(0, 99)(g);
                const S v = static_cast<S>(std::uniform_real_distribution<double>(-4, 4)(g));
                x[i] = k < 10 ? S(0) : k < 20 ? -S(0) : k == 20 ? std::numeric_limits<S>::quiet_NaN()
                       : k == 21 ? -std::numeric_limits<S>::quiet_NaN() : v;
            } else {
                x[i] = static_cast<S>(std::uniform_int_distribution<long long>(std::numeric_limits<S>::lowest(),
                                                                               std::numeric_limits<S>::max())(g));
            }
        }
        const auto larger = model_larger<A>, smaller = model_smaller<A>;
        if constexpr (!std::is_floating_point_v<A> && sizeof(A) >= 4) { // (sums of 1- and 2-byte lanes: none)
            run(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::sum>{}, x, n, [](A a, A b) {
                using U = std::make_unsigned_t<A>; // wrapping, as the lanes add
                return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
            });
        }
        run(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::max>{}, x, n, larger);
        run(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::min>{}, x, n, smaller);
    }
    if constexpr (!std::is_same_v<A, S>) {
        // fold_widened_rows_across (rows of 2-4 values side by side, widened in registers; sums of rows of 8-32
        // bytes 8 at a time) over two groups of lane_group rows, whichever strategy the CPU takes.
        constexpr Eigen::Index groups = 2, across = groups * mixt::detail::lane_group;
        using sum_op = mixt::detail::reduce_op<mixt::reduce_kind::sum, A>;
        for (const Eigen::Index n : {2, 3, 4, 8, 16, 24, 32}) {
            const bool extremes = n <= mixt::detail::short_row_columns;
            if (!extremes && !mixt::detail::byte_rows_summed_across<sum_op, A, S>(n)) continue;
            SCOPED_TRACE(n);
            std::vector<S> x(static_cast<std::size_t>(across * n));
            for (auto& v : x)
                v = static_cast<S>(std::uniform_int_distribution<long long>(std::numeric_limits<S>::lowest(),
                                                                            std::numeric_limits<S>::max())(g));
            const auto side_by_side = [&]<mixt::reduce_kind K>(std::integral_constant<mixt::reduce_kind, K>, auto combine) {
                using Op = mixt::detail::reduce_op<K, A>;
                std::vector<typename Op::lane> got(static_cast<std::size_t>(across)); // (sums: unsigned lanes)
                mixt::detail::fold_widened_rows_across<Op, A>(x.data(), n, groups, got.data());
                for (Eigen::Index r = 0; r < across; ++r) {
                    A want = Op::identity();
                    for (Eigen::Index j = 0; j < n; ++j) want = combine(want, static_cast<A>(x[static_cast<std::size_t>(r * n + j)]));
                    EXPECT_EQ(static_cast<A>(got[static_cast<std::size_t>(r)]), want) << "side by side, kind " << static_cast<int>(K) << ", n " << n << ", row " << r;
                }
            };
            side_by_side(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::sum>{}, [](A a, A b) {
                using U = std::make_unsigned_t<A>;
                return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
            });
            if (!extremes) continue;
            side_by_side(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::max>{}, model_larger<A>);
            side_by_side(std::integral_constant<mixt::reduce_kind, mixt::reduce_kind::min>{}, model_smaller<A>);
        }
    }
}

TEST(reduce_eval, rows_in_memory_order_every_widening) {
    std::mt19937 g(59);
    check_in_order_rows<std::int32_t, std::int8_t>(g);
    check_in_order_rows<std::int32_t, std::uint8_t>(g);
    check_in_order_rows<std::int32_t, std::int16_t>(g);
    check_in_order_rows<std::uint32_t, std::uint16_t>(g);
    check_in_order_rows<std::int64_t, std::int8_t>(g);
    check_in_order_rows<std::uint64_t, std::uint8_t>(g);
    check_in_order_rows<std::int64_t, std::uint8_t>(g);
    check_in_order_rows<std::uint64_t, std::int8_t>(g);
    check_in_order_rows<std::int64_t, std::int16_t>(g);
    check_in_order_rows<std::int64_t, std::uint16_t>(g);
    check_in_order_rows<std::int64_t, std::int32_t>(g);
    check_in_order_rows<std::uint64_t, std::uint32_t>(g);
    check_in_order_rows<std::int64_t, std::uint32_t>(g);
    check_in_order_rows<std::int8_t, std::int8_t>(g);
    check_in_order_rows<std::uint8_t, std::uint8_t>(g);
    check_in_order_rows<std::int16_t, std::int16_t>(g);
    check_in_order_rows<std::uint16_t, std::uint16_t>(g);
    check_in_order_rows<std::int32_t, std::int32_t>(g);
    check_in_order_rows<std::uint64_t, std::uint64_t>(g);
    check_in_order_rows<float, float>(g);
    check_in_order_rows<double, double>(g);
}
#endif

// Rows of 33-256 values folded a row at a time in memory order (end_rows_of_one_block), where the lanes are 4 or
// 8 bytes transposed in registers 16 or 8 rows at a time (fold_rows_across), and for max each row in one vector
// (fold_rows_in_order, with AVX-512): each the fold of the stream.
template <class T>
void check_long_rows_both_ways(std::uint32_t seed) {
    using sum_op = mixt::detail::reduce_op<mixt::reduce_kind::sum, T>;
    using max_op = mixt::detail::reduce_op<mixt::reduce_kind::max, T>;
    using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    constexpr Eigen::Index groups = 2, rows = groups * mixt::detail::lane_group;
    std::mt19937 g(seed);
    std::uniform_real_distribution<T> d(-1, 1);
    std::uniform_int_distribution<int> e(-24, 24), pick(0, 99);
    const auto add = [](T a, T b) { return a + b; };
    const auto larger = model_larger<T>;
    const auto bits = [](T v) { return std::bit_cast<bits_t>(v); };
    for (Eigen::Index n = 33; n <= 256; n += n < 70 ? 1 : 13) {
        SCOPED_TRACE(n);
        std::vector<T> x(static_cast<std::size_t>(rows * n)), m(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = std::ldexp(d(g), e(g));
            const int k = pick(g);
            m[i] = k < 15 ? T(0) : k < 30 ? -T(0) : -std::fabs(x[i]);
        }
        const auto row_of = [&](const std::vector<T>& v, Eigen::Index r) {
            return std::vector<T>(v.begin() + r * n, v.begin() + (r + 1) * n);
        };
        const auto check = [&]<class Op>(Op, const std::vector<T>& v, T identity, auto combine) {
            std::vector<T> in_order(static_cast<std::size_t>(rows));
            for (Eigen::Index r = 0; r < rows; r += 8)
                mixt::detail::end_rows_of_one_block<Op, T, 8>(v.data() + r * n, n, 8, in_order.data() + r);
            std::vector<T> transposed(static_cast<std::size_t>(rows));
            constexpr bool transposes = mixt::detail::transposes_rows_v<Op, T>;
            if constexpr (transposes) mixt::detail::fold_rows_across<Op, T>(v.data(), n, groups, transposed.data());
            std::vector<T> one_vector(static_cast<std::size_t>(rows));
            constexpr bool in_one_vector = mixt::detail::folds_rows_in_order_v<Op, T, mixt::detail::leaf_kernel<T>>;
#if MIXT_SIMD_AVX512
            if constexpr (in_one_vector)
                mixt::detail::fold_rows_in_order<Op, T>(v.data(), n, rows, one_vector.data());
#endif
            for (Eigen::Index r = 0; r < rows; ++r) {
                const T want = model_fold(row_of(v, r), identity, combine);
                EXPECT_EQ(bits(in_order[static_cast<std::size_t>(r)]), bits(want)) << r;
                if constexpr (transposes) {
                    EXPECT_EQ(bits(transposed[static_cast<std::size_t>(r)]), bits(want)) << r;
                }
                if constexpr (in_one_vector) {
                    EXPECT_EQ(bits(one_vector[static_cast<std::size_t>(r)]), bits(want)) << r;
                }
            }
        };
        if (n <= mixt::detail::short_row_stream<sum_op, T>) check(sum_op{}, x, T(0), add);
        check(max_op{}, m, -std::numeric_limits<T>::infinity(), larger);
    }
}

// Rows of 1-256 values of a reduction whose result does not depend on the grouping (min/max of floats, integer
// sums and products that wrap, integer min/max), ended in memory order (end_rows_of_one_block: its lanes folded and combined in
// registers where they are vectors): each the fold of its row, bit for bit; a NaN result where the row has a NaN
// (which one is unspecified: README, "NaN"), over NaNs of both signs, infinities and signed zeros; some of the 8
// rows not kept (their results are not written).
template <class T>
void check_grouping_free_rows(std::uint32_t seed) {
    using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    std::mt19937 g(seed);
    std::uniform_int_distribution<int> pick(0, 299), e(-20, 20);
    std::uniform_real_distribution<double> d(-1, 1);
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    const auto value = [&]() -> T {
        const int k = pick(g);
        if constexpr (std::is_floating_point_v<T>) {
            if (k == 0) return nan;
            if (k == 1) return -nan;
            if (k < 5) return k == 2 ? inf : -inf;
            if (k < 40) return k < 20 ? T(0) : -T(0);
            return static_cast<T>(std::ldexp(d(g), e(g)));
        } else {
            if (k < 10) return k < 5 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
            if (k < 20) return static_cast<T>(k - 15); // (small values: products that do not vanish)
            return static_cast<T>((static_cast<std::uint64_t>(g()) << 32) | g()); // (all 64 bits for i64)
        }
    };
    const auto bits = [](T v) { return std::bit_cast<bits_t>(v); };
    const auto check = [&]<class Op>(Op, const std::vector<T>& x, Eigen::Index n, Eigen::Index kept, T identity, auto combine) {
        std::vector<typename Op::lane> out(8, typename Op::lane(7));
        mixt::detail::end_rows_of_one_block<Op, T, 8>(x.data(), n, kept, out.data());
        for (Eigen::Index r = 0; r < 8; ++r) {
            if (r >= kept) {
                EXPECT_EQ(out[static_cast<std::size_t>(r)], typename Op::lane(7)) << r;
                continue;
            }
            const std::vector<T> row(x.begin() + r * n, x.begin() + (r + 1) * n);
            const T want = model_fold(row, identity, combine);
            const T got = static_cast<T>(out[static_cast<std::size_t>(r)]);
            if constexpr (std::is_floating_point_v<T>) {
                if (want != want) {
                    EXPECT_NE(got, got) << r;
                    continue;
                }
            }
            EXPECT_EQ(bits(got), bits(want)) << r;
        }
    };
    for (Eigen::Index n = 1; n <= 256; n += n < 40 ? 1 : 9) {
        SCOPED_TRACE(n);
        std::vector<T> x(static_cast<std::size_t>(8 * n));
        for (T& v : x) v = value();
        const Eigen::Index kept = 1 + n % 8;
        using max_op = mixt::detail::reduce_op<mixt::reduce_kind::max, T>;
        using min_op = mixt::detail::reduce_op<mixt::reduce_kind::min, T>;
        const T lowest = std::is_floating_point_v<T> ? -inf : std::numeric_limits<T>::lowest();
        const T highest = std::is_floating_point_v<T> ? inf : std::numeric_limits<T>::max();
        check(max_op{}, x, n, kept, lowest, model_larger<T>);
        check(min_op{}, x, n, kept, highest, model_smaller<T>);
        if constexpr (!std::is_floating_point_v<T>) {
            using sum_op = mixt::detail::reduce_op<mixt::reduce_kind::sum, T>;
            using U = std::make_unsigned_t<T>;
            check(sum_op{}, x, n, kept, T(0), [](T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); });
            using prod_op = mixt::detail::reduce_op<mixt::reduce_kind::prod, T>;
            check(prod_op{}, x, n, kept, T(1), [](T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); });
        }
    }
}

TEST(reduce_eval, rows_whose_result_ignores_grouping_end_as_their_fold) {
    check_grouping_free_rows<float>(46);
    check_grouping_free_rows<double>(47);
    check_grouping_free_rows<std::int32_t>(48);
    check_grouping_free_rows<std::int64_t>(49);
}

TEST(reduce_eval, long_rows_fold_the_same_transposed_or_in_memory_order) {
    check_long_rows_both_ways<float>(43);
    check_long_rows_both_ways<double>(44);
}

#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512
// Sums of f32 rows of 1-40 values, 8 rows side by side with their columns transposed in registers (AVX2 without
// AVX-512: fold_float_rows_transposed, which fold_rows_across takes for rows of 8-32 values on the CPUs that
// short_rows_transposed names; called here whatever the CPU): each row's sum is its values added in order from +0,
// as a row at a time adds them, bit for bit (a NaN as a NaN), over signed zeros, infinities, NaNs and values of
// many magnitudes.
TEST(reduce_eval, float_rows_transposed_sum_as_a_row_at_a_time) {
    using sum_op = mixt::detail::reduce_op<mixt::reduce_kind::sum, float>;
    std::mt19937 g(45);
    std::uniform_real_distribution<float> d(-1, 1);
    std::uniform_int_distribution<int> e(-30, 30), pick(0, 199);
    constexpr Eigen::Index rows = 64;
    for (Eigen::Index n = 1; n <= 40; ++n) {
        SCOPED_TRACE(n);
        std::vector<float> x(static_cast<std::size_t>(rows * n));
        for (float& v : x) {
            const int k = pick(g);
            v = k < 10 ? 0.0f : k < 20 ? -0.0f : k == 20 ? std::numeric_limits<float>::infinity()
                : k == 21 ? -std::numeric_limits<float>::infinity() : k == 22 ? std::numeric_limits<float>::quiet_NaN()
                : std::ldexp(d(g), e(g));
        }
        std::vector<float> out(static_cast<std::size_t>(rows), 1.0f);
        mixt::detail::fold_float_rows_transposed<sum_op>(x.data(), n, rows, out.data());
        for (Eigen::Index r = 0; r < rows; ++r) {
            float want = 0.0f;
            for (Eigen::Index j = 0; j < n; ++j) want += x[static_cast<std::size_t>(r * n + j)];
            const float got = out[static_cast<std::size_t>(r)];
            EXPECT_TRUE((std::isnan(want) && std::isnan(got)) || std::bit_cast<std::uint32_t>(want) == std::bit_cast<std::uint32_t>(got))
                << r << ": " << got << " against " << want;
        }
    }
}
#endif

// Rows whose f32 values come from an f16 subtree with an f16 operation (`sum(i8 * f16 scale, axis 1)`,
// `sum(i8 * f16 * f32, axis 1)`, `sum(f16 - f16 * u8, axis 1)`) are made 32 at a time in f16 arithmetic where the
// target has AVX512-FP16 (MIXT_SIMD_AVX512FP16: fold_rows_of, wide_pair). Each reduction against the same one of
// the f16 tensor evaluated first (the fused loop's f32 lanes, then a sum of an f16 leaf, which takes no f16
// arithmetic), bit for bit (a NaN as a NaN, whatever its bits): products rounded to f16 at both ends of its range
// (subnormal, overflowing to infinity), signed zeros, infinities, quiet and signaling NaNs of both signs and
// payloads, and 0 * inf. Rows of 32 to
// 4133 values (whole rows of lanes and tails), one thread and four. On other targets both sides take the f32
// lanes.
TEST(reduce_eval, f16_products_of_rows_as_through_f32) {
    using half = Eigen::half;
    std::mt19937 g(61);
    const auto from_bits = [](std::uint16_t b) { return std::bit_cast<half>(b); };
    // Scales: ordinary, subnormal-making, overflowing, and the special values.
    const std::vector<std::uint16_t> specials = {0x3c00, 0x0001, 0x03ff, 0x0400, 0x1000, 0x7bff, 0x7800, 0x8000, 0x0000,
                                                 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe03, 0xfd55, 0xb555, 0x2e66};
    Eigen::ThreadPool pool(4);
    Eigen::ThreadPoolDevice device(&pool, 4);
    const auto bits32 = [](float v) { return std::bit_cast<std::uint32_t>(v); };
    const auto bits16 = [](half v) { return std::bit_cast<std::uint16_t>(v); };
    // The same bits, or both NaN (README, "NaN": a NaN's sign and payload are unspecified; which NaN of a row's
    // sum survives depends on which operand of each addition the compiler puts first).
    const auto same32 = [&](float u, float v) { return (std::isnan(u) && std::isnan(v)) || bits32(u) == bits32(v); };
    const auto same16 = [&](half u, half v) {
        return (Eigen::numext::isnan(u) && Eigen::numext::isnan(v)) || bits16(u) == bits16(v);
    };
    for (const Eigen::Index n : {32, 64, 96, 100, 4133}) {
        SCOPED_TRACE(n);
        const Eigen::Index rows = 67;
        Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> q(rows, n);
        Eigen::Tensor<std::uint8_t, 2, Eigen::RowMajor> u(rows, n);
        Eigen::Tensor<half, 2, Eigen::RowMajor> s(rows, 1), a(rows, n), b(rows, n);
        Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, n);
        for (Eigen::Index i = 0; i < q.size(); ++i) {
            const int k = static_cast<int>(g() % 100);
            q.data()[i] = k < 5 ? std::int8_t{-128} : k < 10 ? std::int8_t{127} : k < 15 ? std::int8_t{0} : static_cast<std::int8_t>(g());
            u.data()[i] = static_cast<std::uint8_t>(g());
            a.data()[i] = k < 3 ? from_bits(specials[g() % specials.size()]) : from_bits(static_cast<std::uint16_t>(g() % 0x7c00 | (g() & 0x8000)));
            b.data()[i] = k > 96 ? from_bits(specials[g() % specials.size()]) : half(std::ldexp(static_cast<float>(g() % 2048) / 2048, static_cast<int>(g() % 30) - 20));
        }
        for (Eigen::Index r = 0; r < rows; ++r)
            s(r, 0) = r < static_cast<Eigen::Index>(specials.size()) ? from_bits(specials[static_cast<std::size_t>(r)])
                                                                     : half(std::ldexp(1.0f + static_cast<float>(g() % 1024) / 1024, static_cast<int>(g() % 36) - 26));
        for (Eigen::Index j = 0; j < n; ++j) x(0, j) = std::ldexp(static_cast<float>(g() % 2001) / 1000 - 1, static_cast<int>(g() % 8));

        const Eigen::Tensor<half, 2, Eigen::RowMajor> qs = mixt::eval(mixt::lazy(q) * s);
        const Eigen::Tensor<half, 2, Eigen::RowMajor> ab = mixt::eval(mixt::lazy(a) - mixt::lazy(b) * u);
        const auto want3 = mixt::eval(mixt::sum(qs, 1));
        const auto want4 = mixt::eval(mixt::sum(mixt::lazy(qs) * x, 1));
        const auto want5 = mixt::eval(mixt::sum(ab, 1));
        for (int threads : {1, 4}) {
            SCOPED_TRACE(threads);
            const auto got3 = threads == 1 ? mixt::eval(mixt::sum(mixt::lazy(q) * s, 1)) : mixt::eval(mixt::sum(mixt::lazy(q) * s, 1), device);
            const auto got4 = threads == 1 ? mixt::eval(mixt::sum(mixt::lazy(q) * s * x, 1)) : mixt::eval(mixt::sum(mixt::lazy(q) * s * x, 1), device);
            const auto got5 = threads == 1 ? mixt::eval(mixt::sum(mixt::lazy(a) - mixt::lazy(b) * u, 1)) : mixt::eval(mixt::sum(mixt::lazy(a) - mixt::lazy(b) * u, 1), device);
            static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got3)>::Scalar, half>);
            static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got4)>::Scalar, float>);
            std::size_t wrong = 0;
            for (Eigen::Index r = 0; r < rows; ++r) {
                const bool ok = same16(got3(r), want3(r)) && same32(got4(r), want4(r)) && same16(got5(r), want5(r));
                if (!ok && wrong++ < 5)
                    ADD_FAILURE() << "row " << r << ": " << std::hex << bits16(got3(r)) << " / " << bits16(want3(r)) << ", "
                                  << bits32(got4(r)) << " / " << bits32(want4(r)) << ", " << bits16(got5(r)) << " / "
                                  << bits16(want5(r));
            }
            EXPECT_EQ(wrong, 0u);
        }
    }
}

TEST(reduce_eval, thread_pool_equals_one_thread_bit_for_bit) {
    Eigen::ThreadPool pool(8);
    Eigen::ThreadPoolDevice device(&pool, 8);
    Eigen::Tensor<float, 1> x(3000017);
    Eigen::Tensor<Eigen::half, 1> h(3000017);
    fill(x, 9);
    fill(h, 10, -2, 2);
    const float one = mixt::eval(mixt::sum(mixt::lazy(x) * h))();
    const float many = mixt::eval(mixt::sum(mixt::lazy(x) * h), device)();
    EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(many));
    long double exact = 0, mag = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
        const float p = x(i) * static_cast<float>(h(i));
        exact += p;
        mag += std::fabs(static_cast<long double>(p));
    }
    EXPECT_LE(std::fabs(one - exact), 64 * 0x1p-24L * mag);
    // Many rows, columns, and rows longer than a super-block.
    Eigen::Tensor<float, 2, Eigen::RowMajor> m(700, 1500);
    fill(m, 11);
    for (int axis = 0; axis < 2; ++axis) {
        const auto a1 = mixt::eval(mixt::sum(m, axis));
        const auto a8 = mixt::eval(mixt::sum(m, axis), device);
        ASSERT_EQ(a1.size(), a8.size());
        for (Eigen::Index i = 0; i < a1.size(); ++i)
            EXPECT_EQ(std::bit_cast<std::uint32_t>(a1(i)), std::bit_cast<std::uint32_t>(a8(i))) << axis << " " << i;
        const auto b1 = mixt::eval(mixt::argmax(m, axis));
        const auto b8 = mixt::eval(mixt::argmax(m, axis), device);
        for (Eigen::Index i = 0; i < b1.size(); ++i) EXPECT_EQ(b1(i), b8(i));
    }
}

TEST(reduce_eval, to_eigen_lowers_a_reduction_to_eigens_reducers) {
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(5, 7);
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(5, 1);
    fill(w, 21);
    fill(s, 22, -2, 2);
    // Exact cases: integer sums, extremes, indices, any; float sums of few small values.
    const Eigen::Tensor<std::int64_t, 1, Eigen::RowMajor> a = mixt::to_eigen(mixt::sum(w, 1));
    EXPECT_TRUE(equal(a, mixt::eval(mixt::sum(w, 1))));
    const Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> b = mixt::to_eigen(mixt::max(w, 0, mixt::keepdims));
    EXPECT_TRUE(equal(b, mixt::eval(mixt::max(w, 0, mixt::keepdims))));
    const Eigen::Tensor<std::int64_t, 1, Eigen::RowMajor> c = mixt::to_eigen(mixt::argmin(mixt::lazy(w) * s, 1));
    EXPECT_TRUE(equal(c, mixt::eval(mixt::argmin(mixt::lazy(w) * s, 1))));
    const Eigen::Tensor<std::int64_t, 0, Eigen::RowMajor> d = mixt::to_eigen(mixt::argmax(w));
    EXPECT_EQ(d(), mixt::eval(mixt::argmax(w))());
    const Eigen::Tensor<bool, 0, Eigen::RowMajor> e = mixt::to_eigen(mixt::any(mixt::lazy(w) > 100));
    EXPECT_EQ(e(), mixt::eval(mixt::any(mixt::lazy(w) > 100))());
    const Eigen::Tensor<float, 1, Eigen::RowMajor> f = mixt::to_eigen(mixt::mean(w, 0));
    const auto f_eval = mixt::eval(mixt::mean(w, 0));
    for (Eigen::Index j = 0; j < 7; ++j) EXPECT_EQ(f(j), f_eval(j)); // exact sums, one rounding each
    const Eigen::Tensor<Eigen::half, 1, Eigen::RowMajor> g = mixt::to_eigen(mixt::sum(mixt::lazy(w) * s, 1));
    const auto g_eval = mixt::eval(mixt::sum(mixt::lazy(w) * s, 1));
    for (Eigen::Index i = 0; i < 5; ++i)
        EXPECT_NEAR(static_cast<float>(g(i)), static_cast<float>(g_eval(i)), std::fabs(static_cast<float>(g_eval(i))) * 0x1p-9f);
    // NaN propagates through the lowered max, as through eval's.
    Eigen::Tensor<float, 1> n(3);
    n.setValues({1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f});
    const Eigen::Tensor<float, 0> h = mixt::to_eigen(mixt::max(n));
    EXPECT_TRUE(std::isnan(h()));
    // Nothing to reduce: the same error as eval's.
    Eigen::Tensor<float, 2> empty(0, 2);
    EXPECT_THROW((void)mixt::to_eigen(mixt::min(empty, 0)), mixt::shape_error);
}

TEST(reduce_eval, bools_and_wrapping_on_both_paths) {
    Eigen::Tensor<bool, 1> b(3);
    b.setValues({true, false, true});
    // sum<bool> and prod<bool> are `or` and `and`, as JAX's (XLA adds and multiplies predicates so).
    EXPECT_TRUE(mixt::eval(mixt::sum<bool>(b))());
    EXPECT_FALSE(mixt::eval(mixt::prod<bool>(b))());
    EXPECT_TRUE(mixt::eval(mixt::dot(b, b))());
    EXPECT_EQ(mixt::eval(mixt::sum(b))(), 2); // the default int
    EXPECT_EQ(mixt::eval(mixt::argmax(b))(), 0);
    EXPECT_EQ(mixt::eval(mixt::argmin(b))(), 1);
    EXPECT_FALSE(mixt::eval(mixt::min(b))());
    // The lowering wraps as eval does (no signed overflow inside Eigen's reducers).
    Eigen::Tensor<std::int64_t, 1> i(2);
    i.setValues({std::numeric_limits<std::int64_t>::max(), 1});
    const Eigen::Tensor<std::int64_t, 0> s = mixt::to_eigen(mixt::sum(i));
    EXPECT_EQ(s(), mixt::eval(mixt::sum(i))());
    Eigen::Tensor<std::uint16_t, 1> u(3);
    u.setValues({60000, 60000, 3});
    const Eigen::Tensor<std::uint16_t, 0> p = mixt::to_eigen(mixt::prod<std::uint16_t>(u));
    EXPECT_EQ(p(), mixt::eval(mixt::prod<std::uint16_t>(u))());
    EXPECT_EQ(p(), static_cast<std::uint16_t>(60000ull * 60000ull * 3ull));
    // A reduction of nothing without an identity throws even where the result has no element.
    Eigen::Tensor<float, 2> e(0, 0);
    EXPECT_THROW((void)mixt::eval(mixt::max(e, 1)), mixt::shape_error);
    // Over an axis of one element: each element itself.
    Eigen::Tensor<float, 2> column(1000, 1);
    fill(column, 23);
    const auto same = mixt::eval(mixt::sum(column, 1));
    for (Eigen::Index k = 0; k < 1000; ++k) ASSERT_EQ(same(k), column(k, 0));
}

} // namespace
