// mixt/eval/strided.hpp: the fused loop over an iteration space. Each broadcast or strided evaluation is compared
// bit for bit with the flat pass over the same operands materialized at the full shape (Eigen's own broadcast
// and copy, no arithmetic), which the rest of the suite checks element by element; and with the lowering to
// Eigen. Views as destinations, Dense operands and destinations, the thread pool, the overlap checks through
// views, and shape errors that leave the destination untouched.
#define EIGEN_USE_THREADS
#include <mixt/mixt.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

using index_t = Eigen::Index;
using c64 = std::complex<float>;
using c128 = std::complex<double>;
using ::testing::HasSubstr;

template <class T>
T value_at(std::mt19937& g, int i) {
    std::uniform_int_distribution<int> d(-100, 100);
    if constexpr (std::is_same_v<T, bool>) {
        return d(g) > 0;
    } else if constexpr (mixt::is_narrow_float_v<T>) {
        return T::from_bits(static_cast<std::uint8_t>(g())); // every code, NaNs included
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(d(g));
    } else if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
        using R = typename T::value_type;
        return T(static_cast<R>(d(g)) / 8, static_cast<R>(d(g)) / 16);
    } else {
        // Some NaNs and infinities among the values.
        if (i % 37 == 5) return T(std::numeric_limits<float>::quiet_NaN());
        if (i % 41 == 7) return T(-std::numeric_limits<float>::infinity());
        return T(static_cast<float>(d(g)) / 16);
    }
}

template <class T, int R, int L>
Eigen::Tensor<T, R, L> filled(const std::array<index_t, static_cast<std::size_t>(R)>& dims, unsigned seed) {
    Eigen::Tensor<T, R, L> t(dims);
    std::mt19937 g(seed);
    for (index_t i = 0; i < t.size(); ++i) t.data()[i] = value_at<T>(g, static_cast<int>(i));
    return t;
}

// `x` broadcast to `to` (NumPy's rule), as a new tensor: Eigen's reshape, broadcast and copy.
template <int R, class T, int r, int L>
Eigen::Tensor<T, R, L> materialized(const Eigen::Tensor<T, r, L>& x, const std::array<index_t, static_cast<std::size_t>(R)>& to) {
    if constexpr (R == 0) {
        return x;
    } else {
        Eigen::array<index_t, R> shape, factors;
        for (int d = 0; d < R; ++d) {
            shape[d] = d < R - r ? 1 : x.dimension(d - (R - r));
            factors[d] = shape[d] == to[d] ? 1 : to[d];
        }
        return x.reshape(shape).broadcast(factors);
    }
}

template <class A, class B>
bool same_bits(const A& a, const B& b) {
    using S = std::remove_const_t<std::remove_pointer_t<decltype(a.data())>>;
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(S) * static_cast<std::size_t>(a.size())) == 0;
}

// build(x, y) over x of shape sa and y of shape sb, broadcast, equals build over both materialized at the
// broadcast shape `full`: by eval, by assign on a thread pool and by the lowering to Eigen.
template <class TA, class TB, int L, std::size_t RA, std::size_t RB, std::size_t R, class Build>
void check_pair(const std::array<index_t, RA>& sa, const std::array<index_t, RB>& sb, const std::array<index_t, R>& full,
                Build build) {
    SCOPED_TRACE(::testing::Message() << "shapes " << mixt::detail::shape_text(sa) << " and "
                                      << mixt::detail::shape_text(sb) << (L == Eigen::RowMajor ? " row-major" : " column-major"));
    const auto a = filled<TA, static_cast<int>(RA), L>(sa, 1);
    const auto b = filled<TB, static_cast<int>(RB), L>(sb, 2);
    const auto fa = materialized<static_cast<int>(R)>(a, full);
    const auto fb = materialized<static_cast<int>(R)>(b, full);
    const auto expected = mixt::eval(build(fa, fb));
    const auto got = mixt::eval(build(a, b));
    EXPECT_EQ(got.dimensions(), expected.dimensions());
    EXPECT_TRUE(same_bits(got, expected));
    Eigen::ThreadPool pool(2);
    Eigen::ThreadPoolDevice device(&pool, 2);
    auto pooled = expected;
    pooled.setZero();
    mixt::assign(pooled, build(a, b), device);
    EXPECT_TRUE(same_bits(pooled, expected));
    // (to_eigen's expression has the operands' layout; eval's result of rank 0 or 1 Eigen's default.)
    using Lowered = decltype(mixt::to_eigen(build(a, b)));
    Eigen::Tensor<typename Eigen::internal::traits<Lowered>::Scalar, static_cast<int>(R),
                  static_cast<int>(Eigen::internal::traits<Lowered>::Layout)>
        lowered = mixt::to_eigen(build(a, b));
    EXPECT_TRUE(same_bits(lowered, expected));
}

template <int L>
void check_shapes_of_every_kind() {
    // Each expression runs another loop of eval/fused.hpp: batches (i8 + f32), blocks or words (u8 + i8), f16
    // and bf16 (wide or batches), a comparison with a literal, where, complex with a leaf combined in memory.
    const auto f32_i8 = [](const auto& x, const auto& y) { return mixt::lazy(x) + y; };
    const auto u8_i8 = [](const auto& x, const auto& y) { return mixt::lazy(x) * 3 - y; };
    const auto f16_bf16 = [](const auto& x, const auto& y) { return mixt::lazy(x) * y + 1; };
    const auto select = [](const auto& x, const auto& y) { return mixt::where(mixt::lazy(x) > 0, y, mixt::lazy(x) * 0.5); };
    const auto complex = [](const auto& x, const auto& y) { return mixt::lazy(x) * 2.0f + y; };
    using A2 = std::array<index_t, 2>;
    using A1 = std::array<index_t, 1>;
    using A3 = std::array<index_t, 3>;
    using A4 = std::array<index_t, 4>;
    // A bias on every row, a value per row, an outer product, a rank-0 tensor.
    check_pair<float, std::int8_t, L>(A2{37, 45}, A1{45}, A2{37, 45}, f32_i8);
    check_pair<float, std::int8_t, L>(A2{37, 45}, A2{37, 1}, A2{37, 45}, f32_i8);
    check_pair<float, std::int8_t, L>(A2{37, 1}, A2{1, 45}, A2{37, 45}, f32_i8);
    check_pair<float, std::int8_t, L>(A2{37, 45}, std::array<index_t, 0>{}, A2{37, 45}, f32_i8);
    check_pair<float, std::int8_t, L>(std::array<index_t, 0>{}, std::array<index_t, 0>{}, std::array<index_t, 0>{}, f32_i8);
    // Each operand broadcast in turn, ranks 3 and 4, size-1 axes between others.
    check_pair<std::uint8_t, std::int8_t, L>(A3{3, 1, 70}, A3{1, 5, 70}, A3{3, 5, 70}, u8_i8);
    check_pair<std::uint8_t, std::int8_t, L>(A4{2, 1, 4, 33}, A3{3, 1, 33}, A4{2, 3, 4, 33}, u8_i8);
    check_pair<std::uint8_t, std::int8_t, L>(A1{33}, A4{2, 3, 1, 1}, A4{2, 3, 1, 33}, u8_i8);
    check_pair<Eigen::half, Eigen::bfloat16, L>(A3{4, 9, 3}, A1{3}, A3{4, 9, 3}, f16_bf16);
    check_pair<Eigen::half, Eigen::bfloat16, L>(A2{3, 5000}, A2{3, 1}, A2{3, 5000}, f16_bf16);
    check_pair<Eigen::half, Eigen::bfloat16, L>(A2{1, 5000}, A2{3, 1}, A2{3, 5000}, f16_bf16);
    check_pair<float, std::int16_t, L>(A3{6, 1, 17}, A2{5, 17}, A3{6, 5, 17}, select);
    check_pair<float, std::int16_t, L>(A1{1}, A2{5, 17}, A2{5, 17}, select);
    check_pair<c64, c128, L>(A2{9, 21}, A1{21}, A2{9, 21}, complex);
    check_pair<c64, c128, L>(A2{9, 1}, A2{9, 21}, A2{9, 21}, complex);
    // An operand with one value along every run (stride 0: read as copies with mask 0, or, for the block loop,
    // copied the run's length): on each loop, the leaf combined in memory too, runs longer than a stage.
    check_pair<float, std::int8_t, L>(A2{4, 5000}, A2{4, 1}, A2{4, 5000}, f32_i8);
    check_pair<std::uint8_t, std::int8_t, L>(A2{5, 101}, A2{5, 1}, A2{5, 101}, u8_i8);
    check_pair<std::uint8_t, std::int8_t, L>(A2{5, 1}, A2{5, 4133}, A2{5, 4133}, u8_i8);
    check_pair<Eigen::half, Eigen::bfloat16, L>(A2{3, 5000}, A2{1, 1}, A2{3, 5000}, f16_bf16);
    check_pair<c64, c128, L>(A2{9, 21}, A2{9, 1}, A2{9, 21}, complex);
    check_pair<c64, c128, L>(A2{3, 4100}, A2{3, 1}, A2{3, 4100}, complex);
    check_pair<float, std::int16_t, L>(A2{6, 1}, A2{6, 77}, A2{6, 77}, select);
    // Every f16 and bf16 leaf broadcast along the runs (row-major: converted once per run, hoisted_leaf_kernel),
    // a NaN and an infinity among the values: a scale per row (B3), an f32 array times a bf16 per row.
    check_pair<std::int8_t, Eigen::half, L>(A2{45, 300}, A2{45, 1}, A2{45, 300},
                                            [](const auto& x, const auto& y) { return mixt::lazy(x) * y; });
    check_pair<float, Eigen::bfloat16, L>(A2{5, 4133}, A2{5, 1}, A2{5, 4133}, f16_bf16);
    // A channel-last image and a per-channel vector: runs of many rows, more rows than one run takes.
    check_pair<std::uint8_t, float, L>(A3{50, 40, 3}, A1{3}, A3{50, 40, 3},
                                       [](const auto& x, const auto& y) { return (mixt::lazy(x) / 255.0f - y) / 0.25f; });
}

TEST(strided, broadcasting_matches_the_flat_pass_bit_for_bit) {
    check_shapes_of_every_kind<Eigen::ColMajor>();
    check_shapes_of_every_kind<Eigen::RowMajor>();
}

// Runs of short rows whose f16, bf16 or narrow float operands are broadcast along the rows (a scale per block
// of 32 elements): read once per row (run_rows_of), all of them or the first, the others staged as copies.
// Every code of the narrow types among the values; rows of one, two and three wide batches (48: a pair and a
// single), and rows the rule leaves to the staged copies (20: not whole batches).
// Equal bits, or both NaN: the sign and payload of a NaN are unspecified (the README's NaN contract), and where
// two NaN operands meet, which one an operation returns depends on the order the compiler gave its operands
// (e4m3fn keeps a NaN's sign: 0x7f or 0xff).
template <class A, class B>
bool same_values(const A& a, const B& b) {
    if (a.size() != b.size()) return false;
    for (index_t i = 0; i < a.size(); ++i) {
        const auto x = a.data()[i];
        const auto y = b.data()[i];
        if (std::memcmp(&x, &y, sizeof x) != 0 && !(std::isnan(static_cast<float>(x)) && std::isnan(static_cast<float>(y))))
            return false;
    }
    return true;
}

template <int L>
void check_rows_read_once() {
    using A3 = std::array<index_t, 3>;
    using A2 = std::array<index_t, 2>;
    using e2m1 = mixt::float4_e2m1fn;
    using e8m0 = mixt::float8_e8m0fnu;
    for (const index_t n : {16, 32, 48, 20}) {
        SCOPED_TRACE(::testing::Message() << "rows of " << n);
        // The MXFP4 block dequantization: e2m1 codes, an e8m0 scale per row (NaN, 2^-127 and 2^127 among them).
        const auto mx = [](const auto& x, const auto& y) {
            return mixt::cast<Eigen::bfloat16>(mixt::cast<float>(mixt::lazy(x)) * mixt::cast<float>(mixt::lazy(y)));
        };
        check_pair<e2m1, e8m0, L>(A3{37, 5, n}, A3{37, 5, 1}, A3{37, 5, n}, mx);
        // An f16 scale per row of f32 values (the leaf read once per row is the only hoistable one), and f16
        // values times a bf16 per row (the second of two hoistable leaves).
        check_pair<float, Eigen::half, L>(A2{70, n}, A2{70, 1}, A2{70, n},
                                          [](const auto& x, const auto& y) { return mixt::lazy(x) * y; });
        check_pair<Eigen::half, Eigen::bfloat16, L>(A2{70, n}, A2{70, 1}, A2{70, n},
                                                    [](const auto& x, const auto& y) { return mixt::lazy(x) * y + 1; });
        // Two leaves per row, both read once per row (the variant of all of the kernel's hoistable leaves): f32
        // values, an f16 scale and a bf16 offset per row, rounded to e4m3 (a narrow destination). Then e4m3
        // values (hoistable too, not broadcast): the scale read per row, the offset staged.
        {
            const auto x = filled<float, 2, L>(A2{70, n}, 13);
            const auto x8 = filled<mixt::float8_e4m3fn, 2, L>(A2{70, n}, 16);
            const auto sc = filled<Eigen::half, 2, L>(A2{70, 1}, 14);
            const auto of = filled<Eigen::bfloat16, 2, L>(A2{70, 1}, 15);
            const auto build = [](const auto& a, const auto& b, const auto& c) {
                return mixt::cast<mixt::float8_e4m3fn>(mixt::cast<float>(mixt::lazy(a)) * b + c);
            };
            const auto sc_full = materialized<2>(sc, A2{70, n});
            const auto of_full = materialized<2>(of, A2{70, n});
            if (L == Eigen::RowMajor && mixt::simd::avx2) {
                Eigen::Tensor<mixt::float8_e4m3fn, 2, L> probe(70, n);
                const bool whole = n % (mixt::simd::avx512 ? 16 : 8) == 0;
                EXPECT_THAT(mixt::explain(probe, build(x, sc, of)),
                            HasSubstr(whole ? "operands read once per row 2\n" : "staged operands 2\n"));
                EXPECT_THAT(mixt::explain(probe, build(x8, sc, of)),
                            HasSubstr(whole ? "staged operands 1, operands read once per row 1\n" : "staged operands 2\n"));
            }
            const auto check = [&](const auto& values) {
                const auto expected = mixt::eval(build(values, sc_full, of_full));
                EXPECT_TRUE(same_values(mixt::eval(build(values, sc, of)), expected));
                Eigen::ThreadPool pool(2);
                Eigen::ThreadPoolDevice device(&pool, 2);
                auto pooled = expected;
                pooled.setZero();
                mixt::assign(pooled, build(values, sc, of), device);
                EXPECT_TRUE(same_values(pooled, expected));
            };
            check(x);
            check(x8);
            // A destination staged between the computation and its memory: every other row of a larger tensor.
            const auto expected = mixt::eval(build(x, sc_full, of_full));
            Eigen::Tensor<mixt::float8_e4m3fn, 2, L> wide(140, n);
            mixt::assign(wide.stride(Eigen::array<index_t, 2>{2, 1}), build(x, sc, of));
            Eigen::Tensor<mixt::float8_e4m3fn, 2, L> every_other = wide.stride(Eigen::array<index_t, 2>{2, 1});
            EXPECT_TRUE(same_values(every_other, expected));
            // A packed destination (float4 e2m1, two a byte: computed into a stage, then packed), on a pool,
            // against the same expression into an array of one code a byte (a NaN product rounds to a signed
            // zero in e2m1, so the two paths must order the operands alike: the same kernel does).
            const auto to_f4 = [](const auto& a, const auto& b) {
                return mixt::cast<mixt::float4_e2m1fn>(mixt::lazy(a) * b);
            };
            const auto f4_expected = mixt::eval(to_f4(x, sc));
            std::vector<std::uint8_t> bytes(static_cast<std::size_t>(70 * n / 2), 0xA5);
            Eigen::ThreadPool pool(2);
            Eigen::ThreadPoolDevice device(&pool, 2);
            mixt::assign(mixt::packed<mixt::float4_e2m1fn, L>(bytes.data(), index_t{70}, n), to_f4(x, sc), device);
            for (index_t i = 0; i < f4_expected.size(); ++i) {
                const auto code = static_cast<std::uint8_t>((bytes[static_cast<std::size_t>(i / 2)] >> (4 * (i % 2))) & 0xF);
                ASSERT_EQ(code, f4_expected.data()[i].bits()) << "element " << i;
            }
        }
    }
}

TEST(strided, leaves_broadcast_along_short_rows_are_read_once_per_row) {
    check_rows_read_once<Eigen::RowMajor>();
    check_rows_read_once<Eigen::ColMajor>();
    // The plan says so (row-major, rows of 32 of whole batches on every SIMD target).
    Eigen::Tensor<mixt::float4_e2m1fn, 3, Eigen::RowMajor> w(8, 64, 32);
    Eigen::Tensor<mixt::float8_e8m0fnu, 3, Eigen::RowMajor> s(8, 64, 1);
    Eigen::Tensor<Eigen::bfloat16, 3, Eigen::RowMajor> out(8, 64, 32);
    const std::string plan =
        mixt::explain(out, mixt::cast<Eigen::bfloat16>(mixt::cast<float>(mixt::lazy(w)) * mixt::cast<float>(mixt::lazy(s))));
    if (mixt::simd::avx2) {
        EXPECT_THAT(plan, HasSubstr("staged operands 0, operands read once per row 1\n"));
    }
}

TEST(strided, rank_one_operands_mix_with_either_layout) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> m(3, 4);
    Eigen::Tensor<std::int8_t, 1> v(4); // column-major, rank 1: the same memory either way
    m.setConstant(1.0f);
    for (index_t j = 0; j < 4; ++j) v(j) = static_cast<std::int8_t>(j);
    const auto r = mixt::eval(mixt::lazy(m) + v);
    static_assert(static_cast<int>(decltype(r)::Layout) == static_cast<int>(Eigen::RowMajor));
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 4; ++j) EXPECT_EQ(r(i, j), 1.0f + static_cast<float>(j));
}

TEST(strided, the_lowering_takes_rank_one_operands_of_either_layout) {
    // Eigen wants one layout in an expression: the lowering gives a rank-1 operand the result's layout.
    Eigen::Tensor<float, 2, Eigen::RowMajor> m(3, 4);
    Eigen::Tensor<std::int8_t, 1> v(4); // column-major
    for (index_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(i);
    for (index_t j = 0; j < 4; ++j) v(j) = static_cast<std::int8_t>(10 * j);
    const Eigen::Tensor<float, 2, Eigen::RowMajor> lowered = mixt::to_eigen(mixt::lazy(m) + v);
    const Eigen::TensorRef<Eigen::Tensor<std::int8_t, 1>> ref(v); // not a view: evaluated through the lowering
    const auto through_ref = mixt::eval(mixt::lazy(m) + ref);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 4; ++j) {
            EXPECT_EQ(lowered(i, j), m(i, j) + static_cast<float>(v(j)));
            EXPECT_EQ(through_ref(i, j), m(i, j) + static_cast<float>(v(j)));
        }
    // A row-major rank-1 destination of an expression of column-major operands, through the lowering.
    Eigen::Tensor<float, 1, Eigen::RowMajor> row(4);
    mixt::assign(row, mixt::lazy(ref) + 1);
    for (index_t j = 0; j < 4; ++j) EXPECT_EQ(row(j), static_cast<float>(v(j)) + 1);
}

TEST(strided, views_as_destinations) {
    Eigen::Tensor<float, 3> t(4, 5, 6);
    const auto sentinel = [&] { t.setConstant(-7.0f); };
    Eigen::Tensor<std::int8_t, 1> row(6);
    for (index_t k = 0; k < 6; ++k) row(k) = static_cast<std::int8_t>(k + 1);
    Eigen::Tensor<float, 2> plane(4, 6);
    for (index_t i = 0; i < plane.size(); ++i) plane.data()[i] = static_cast<float>(i);
    // chip: the plane t(:, 2, :), row broadcast over its first dimension.
    sentinel();
    mixt::assign(t.chip(2, 1), mixt::lazy(plane) * row);
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 5; ++j)
            for (index_t k = 0; k < 6; ++k)
                EXPECT_EQ(t(i, j, k), j == 2 ? plane(i, k) * static_cast<float>(row(k)) : -7.0f) << i << j << k;
    // slice, and stride: every other element.
    sentinel();
    const Eigen::array<index_t, 3> off{1, 1, 2}, ext{2, 3, 4};
    Eigen::Tensor<float, 3> zeros(2, 3, 1);
    zeros.setZero();
    mixt::assign(t.slice(off, ext),
                 mixt::lazy(row.slice(Eigen::array<index_t, 1>{0}, Eigen::array<index_t, 1>{4})) + zeros + 0.5f);
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 5; ++j)
            for (index_t k = 0; k < 6; ++k) {
                const bool in = i >= 1 && i < 3 && j >= 1 && j < 4 && k >= 2 && k < 6;
                EXPECT_EQ(t(i, j, k), in ? static_cast<float>(row(k - 2)) + 0.5f : -7.0f);
            }
    sentinel();
    const Eigen::array<index_t, 3> step{2, 2, 3};
    Eigen::Tensor<Eigen::half, 3> h(2, 3, 2);
    for (index_t i = 0; i < h.size(); ++i) h.data()[i] = Eigen::half(static_cast<float>(i));
    mixt::assign(t.stride(step), mixt::lazy(h) - 1);
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 5; ++j)
            for (index_t k = 0; k < 6; ++k) {
                const bool in = i % 2 == 0 && j % 2 == 0 && k % 3 == 0;
                EXPECT_EQ(t(i, j, k), in ? static_cast<float>(h(i / 2, j / 2, k / 3)) - 1.0f : -7.0f);
            }
    // A view as an operand: a chip of a row-major tensor, broadcast.
    Eigen::Tensor<float, 2, Eigen::RowMajor> src(3, 6);
    for (index_t i = 0; i < src.size(); ++i) src.data()[i] = static_cast<float>(i);
    Eigen::Tensor<float, 2, Eigen::RowMajor> out(4, 3), column(4, 1);
    column.setZero();
    mixt::assign(out, mixt::lazy(src.chip(2, 1)) + column); // src(:, 2) = {2, 8, 14}, on every row
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 3; ++j) EXPECT_EQ(out(i, j), src(j, 2));
}

TEST(strided, dense_operands_and_destinations) {
    Eigen::ArrayXf x(100);
    Eigen::Array<std::int8_t, Eigen::Dynamic, 1> y(100);
    for (index_t i = 0; i < 100; ++i) {
        x(i) = static_cast<float>(i) / 4;
        y(i) = static_cast<std::int8_t>(i - 50);
    }
    // All-Dense operands evaluate to a Dense Array.
    const auto r = mixt::eval(mixt::lazy(x) + y);
    static_assert(std::is_same_v<std::remove_const_t<decltype(r)>, Eigen::ArrayXf>);
    for (index_t i = 0; i < 100; ++i) EXPECT_EQ(r(i), x(i) + static_cast<float>(y(i)));
    // With mixt::operators, two Dense arrays of different scalars are mixt's; same scalars, and complex with
    // real (which Eigen combines itself), stay Eigen's.
    {
        using namespace mixt::operators;
        const Eigen::ArrayXf z = mixt::eval(x * y);
        EXPECT_EQ(z(99), x(99) * 49.0f);
        static_assert(mixt::mixt_expression<decltype(x * y)>);
        static_assert(!mixt::mixt_expression<decltype(x * x)>);
        Eigen::ArrayXcf cx(3);
        static_assert(!mixt::mixt_expression<decltype(cx * Eigen::ArrayXf(3))>);
    }
    // Matrices: rank 2 in storage order; a block as operand and as destination; a map of half.
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(40, 30), c = Eigen::MatrixXf::Constant(40, 30, -1.0f);
    std::vector<Eigen::half> hs(20 * 10);
    for (std::size_t i = 0; i < hs.size(); ++i) hs[i] = Eigen::half(static_cast<float>(i % 13));
    const Eigen::Map<const Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic>> h(hs.data(), 20, 10);
    mixt::assign(c.block(3, 4, 20, 10), mixt::lazy(a.block(1, 2, 20, 10)) + h);
    for (index_t i = 0; i < 40; ++i)
        for (index_t j = 0; j < 30; ++j) {
            const bool in = i >= 3 && i < 23 && j >= 4 && j < 14;
            EXPECT_EQ(c(i, j), in ? a(i - 2, j - 2) + static_cast<float>(h(i - 3, j - 4)) : -1.0f);
        }
    // A row of a column-major matrix (elements 40 apart) as destination and as operand.
    mixt::assign(c.row(5), mixt::lazy(a.row(7)) * 2 + y.head(30));
    for (index_t j = 0; j < 30; ++j) EXPECT_EQ(c(5, j), a(7, j) * 2 + static_cast<float>(y(j)));
    // A matrix-shaped result keeps the operands' storage order.
    Eigen::Matrix<std::int16_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm(3, 4);
    rm.setConstant(2);
    const Eigen::Array<float, 1, 4> halves = Eigen::Array<float, 1, 4>::Constant(0.5f);
    const auto p = mixt::eval(mixt::lazy(rm) * halves);
    static_assert(std::is_same_v<std::remove_const_t<decltype(p)>,
                                 Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>);
    EXPECT_EQ(p.rows(), 3);
    EXPECT_EQ(p(2, 3), 1.0f);
    // A map with an inner stride as destination (every third float).
    std::vector<float> buffer(30, 9.0f);
    Eigen::Map<Eigen::ArrayXf, 0, Eigen::InnerStride<3>> every_third(buffer.data(), 10);
    mixt::assign(every_third, mixt::lazy(y.head(10)) + 0.25f);
    for (index_t i = 0; i < 30; ++i)
        EXPECT_EQ(buffer[static_cast<std::size_t>(i)], i % 3 == 0 ? static_cast<float>(y(i / 3)) + 0.25f : 9.0f);
}

TEST(strided, overlap_through_views) {
    Eigen::Tensor<float, 2> a(6, 8);
    for (index_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<float>(i);
    const Eigen::Tensor<float, 2> before = a;
    const auto untouched = [&] { return same_bits(a, before); };
    // A row broadcast over the whole tensor it belongs to: row 0 would change under the later rows.
    EXPECT_THROW(mixt::assign(a, mixt::lazy(a) + a.chip(0, 0)), mixt::aliasing_error);
    EXPECT_TRUE(untouched());
    // One row of a column-major tensor into another: their element ranges interleave (conservative).
    EXPECT_THROW(mixt::assign(a.chip(1, 0), mixt::lazy(a.chip(0, 0)) + 1), mixt::aliasing_error);
    EXPECT_TRUE(untouched());
    // A shifted slice of the same tensor.
    const Eigen::array<index_t, 2> off0{0, 0}, off1{0, 1}, ext{6, 7};
    EXPECT_THROW(mixt::assign(a.slice(off1, ext), mixt::lazy(a.slice(off0, ext)) * 2), mixt::aliasing_error);
    EXPECT_TRUE(untouched());
    // The very same view, element for element, is fine.
    mixt::assign(a.chip(3, 0), mixt::lazy(a.chip(3, 0)) * 2);
    for (index_t j = 0; j < 8; ++j) EXPECT_EQ(a(3, j), 2 * before(3, j));
    Eigen::MatrixXf m = Eigen::MatrixXf::Constant(5, 4, 1.0f);
    mixt::assign(m.row(2), mixt::lazy(m.row(2)) + 1);
    EXPECT_EQ(m(2, 3), 2.0f);
    EXPECT_EQ(m(1, 3), 1.0f);
    EXPECT_THROW(mixt::assign(m.row(2), mixt::lazy(m.row(3)) + m.col(0).head(4)), mixt::aliasing_error);
    // A destination that is an Eigen expression with memory (a reshape of the tensor) is checked too.
    const Eigen::DSizes<index_t, 2> same_shape(6, 8);
    const Eigen::Tensor<float, 2> snapshot = a;
    EXPECT_THROW(mixt::assign(a.reshape(same_shape), mixt::lazy(a) + a.chip(0, 0)), mixt::aliasing_error);
    EXPECT_TRUE(same_bits(a, snapshot));
}

TEST(strided, shape_errors_leave_the_destination_untouched) {
    Eigen::Tensor<float, 2> a(2, 3), dst(2, 3);
    Eigen::Tensor<float, 1> four(4), three(3);
    a.setConstant(1.0f);
    four.setConstant(2.0f);
    three.setConstant(3.0f);
    dst.setConstant(5.0f);
    const Eigen::Tensor<float, 2> before = dst;
    try {
        mixt::assign(dst, mixt::lazy(a) + four);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("mixt: assign: shape mismatch: operands of shapes [2, 3] and [4]"));
    }
    EXPECT_TRUE(same_bits(dst, before));
    // A [1, 3] result broadcasts into [2, 3] (NumPy's `out=`); the destination never stretches: [2, 3] into
    // [1, 3] throws.
    mixt::assign(dst, mixt::lazy(a.slice(Eigen::array<index_t, 2>{0, 0}, Eigen::array<index_t, 2>{1, 3})) + three);
    for (index_t j = 0; j < 3; ++j) {
        EXPECT_EQ(dst(0, j), a(0, j) + 3.0f);
        EXPECT_EQ(dst(1, j), a(0, j) + 3.0f);
    }
    mixt::assign(dst, mixt::lazy(before) * 1);
    Eigen::Tensor<float, 2> one_row(1, 3);
    one_row.setConstant(5.0f);
    const Eigen::Tensor<float, 2> one_row_before = one_row;
    try {
        mixt::assign(one_row, mixt::lazy(a) + 1);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("the destination has shape [1, 3] but the expression has shape [2, 3]"));
    }
    EXPECT_TRUE(same_bits(one_row, one_row_before));
    Eigen::Tensor<float, 2> wide(2, 4);
    try {
        mixt::assign(wide, mixt::lazy(a) * three);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("the destination has shape [2, 4] but the expression has shape [2, 3]"));
    }
    EXPECT_TRUE(same_bits(dst, before));
}

} // namespace
