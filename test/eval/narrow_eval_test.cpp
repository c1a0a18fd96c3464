// Expressions of the narrow dtypes (float8/6/4, int4/2) on every path: the fused loop (flat, tails of every
// length, the strided runs of a broadcast), the thread pool, and the lowering to Eigen, against a reference
// written here from the rules (docs/semantics.md, "Narrow dtypes"): each operation on narrow floats is the
// exact (double) result of the operands' values rounded once to the result's format, by the format's own
// encoder from double (dtype/narrow_float.hpp, tested against ml_dtypes' rules in dtype/narrow_test.cpp); on
// narrow ints, the integer result wrapped to the result's width. The paths compute in f32 and round the f32
// result; that the two agree is the double-rounding theorem, which this test checks on trees of two nodes and
// test/eval/edge_values_narrow_test.cpp on each operation over every pair of edge codes.

#define EIGEN_USE_THREADS
#define MIXT_MIN_BYTES_PER_THREAD 64

#include <mixt/mixt.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace {

namespace mp = boost::mp11;

using narrow_floats =
    ::testing::Types<mixt::float8_e3m4, mixt::float8_e4m3, mixt::float8_e4m3fn, mixt::float8_e4m3fnuz,
                     mixt::float8_e4m3b11fnuz, mixt::float8_e5m2, mixt::float8_e5m2fnuz, mixt::float8_e8m0fnu,
                     mixt::float6_e2m3fn, mixt::float6_e3m2fn, mixt::float4_e2m1fn>;
using family_floats = ::testing::Types<mixt::float8_e5m2, mixt::float8_e4m3fn, mixt::float8_e4m3fnuz,
                                       mixt::float8_e8m0fnu, mixt::float4_e2m1fn>;
using narrow_ints = ::testing::Types<mixt::int4, mixt::uint4, mixt::int2, mixt::uint2>;

constexpr Eigen::Index sizes[] = {1, 7, 9, 16, 33, 257, 1001};

template <class T>
constexpr unsigned code_count = T::value_dtype == mixt::dtype::float4_e2m1fn ? 16
                                : (T::value_dtype == mixt::dtype::float6_e2m3fn || T::value_dtype == mixt::dtype::float6_e3m2fn)
                                    ? 64
                                    : 256;

// Every code, cycled with a stride that pairs each code with many others.
template <class T>
Eigen::Tensor<T, 1> codes(Eigen::Index n, unsigned seed) {
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i)
        t(i) = T::from_bits(static_cast<std::uint8_t>((static_cast<unsigned>(i) * (2 * seed + 1) + seed * 7) % code_count<T>));
    return t;
}

template <class T>
double value_of(T x) {
    return static_cast<double>(static_cast<float>(x));
}

// Equal codes, or both NaN (the NaN contract: which NaN is not compared).
template <class T>
::testing::AssertionResult same(T got, T want) {
    if (got.bits() == want.bits() || (std::isnan(value_of(got)) && std::isnan(value_of(want))))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got code " << int(got.bits()) << " (" << value_of(got) << "), want code "
                                         << int(want.bits()) << " (" << value_of(want) << ")";
}

// The formats whose expressions run on the thread pool and the lowering as well: the pool runs the fused loop's
// kernel on pieces of the range, the lowering the scalar conversions, neither depending on the format but for
// those conversions (an fn format, e8m0fnu's, a finite format's).
template <class T>
constexpr bool pool_and_lowering = T::value_dtype == mixt::dtype::float8_e4m3fn ||
                                   T::value_dtype == mixt::dtype::float8_e8m0fnu ||
                                   T::value_dtype == mixt::dtype::float4_e2m1fn;

// e, evaluated by eval (the fused loop), and for pool_and_lowering<T> by assign on a thread pool and by the
// lowering, each checked against want(i).
template <class T, class E, class Want>
void check_all_paths(const E& e, Eigen::Index n, const Want& want, const std::string& what) {
    const Eigen::Tensor<T, 1> fused = mixt::eval(e);
    for (Eigen::Index i = 0; i < n; ++i) ASSERT_TRUE(same(fused(i), want(i))) << what << " fused, n " << n << ", element " << i;
    if constexpr (pool_and_lowering<T>) {
        Eigen::ThreadPool pool(3);
        Eigen::ThreadPoolDevice device(&pool, 3);
        Eigen::Tensor<T, 1> threaded(n);
        mixt::assign(threaded, e, device);
        const Eigen::Tensor<T, 1> lowered = mixt::to_eigen(e);
        for (Eigen::Index i = 0; i < n; ++i) {
            ASSERT_TRUE(same(threaded(i), want(i))) << what << " thread pool, n " << n << ", element " << i;
            ASSERT_TRUE(same(lowered(i), want(i))) << what << " lowered, n " << n << ", element " << i;
        }
    }
}

template <class T>
class narrow_float_eval : public ::testing::Test {};
TYPED_TEST_SUITE(narrow_float_eval, narrow_floats);
// One format of each family (ieee, fn, fnuz, e8m0, finite): the tests whose code does not depend on the format but for its
// conversions, which the other tests check for every format.
template <class T>
class narrow_float_family_eval : public ::testing::Test {};
TYPED_TEST_SUITE(narrow_float_family_eval, family_floats);

TYPED_TEST(narrow_float_eval, trees_are_the_exact_result_rounded_once_per_node) {
    using T = TypeParam;
    for (const Eigen::Index n : sizes) {
        const auto a = codes<T>(n, 1), b = codes<T>(n, 2);
        const auto va = [&](Eigen::Index i) { return value_of(a(i)); };
        const auto vb = [&](Eigen::Index i) { return value_of(b(i)); };
        // e8m0fnu's range is f32's: a product beyond f32's range is f32's (0 or inf) before it is rounded
        // (docs/semantics.md), where the exact value would round to the format's least or greatest.
        const auto in_f32 = [](double x) { return T::value_dtype == mixt::dtype::float8_e8m0fnu ? double(float(x)) : x; };
        // Two nodes: the product is rounded to T before the sum (one rounding per node).
        check_all_paths<T>(mixt::lazy(a) * b + a, n, [&](Eigen::Index i) { return T(value_of(T(in_f32(va(i) * vb(i)))) + va(i)); },
                           "a * b + a");
        // A weak literal takes T: 0.3 is rounded to T first.
        check_all_paths<T>(mixt::lazy(a) * 0.3, n, [&](Eigen::Index i) { return T(in_f32(va(i) * value_of(T(0.3)))); }, "a * 0.3");
        // Each operation on every pair of edge codes: test/eval/edge_values_narrow_test.cpp.
    }
}

TYPED_TEST(narrow_float_family_eval, comparisons_and_where_compare_values) {
    using T = TypeParam;
    const Eigen::Index n = 300;
    const auto a = codes<T>(n, 3), b = codes<T>(n, 4);
    const Eigen::Tensor<bool, 1> lt = mixt::eval(mixt::lazy(a) < b);
    const Eigen::Tensor<bool, 1> lt_lowered = mixt::to_eigen(mixt::lazy(a) < b);
    const Eigen::Tensor<T, 1> picked = mixt::eval(mixt::where(mixt::lazy(a) < b, a, b));
    for (Eigen::Index i = 0; i < n; ++i) {
        const bool want = value_of(a(i)) < value_of(b(i));
        EXPECT_EQ(lt(i), want) << i;
        EXPECT_EQ(lt_lowered(i), want) << i;
        EXPECT_TRUE(same(picked(i), want ? a(i) : b(i))) << i;
    }
}

TYPED_TEST(narrow_float_eval, casts_round_once_from_every_source) {
    using T = TypeParam;
    const Eigen::Index n = 1001;
    Eigen::Tensor<float, 1> f(n);
    Eigen::Tensor<double, 1> d(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        // Values around every magnitude a narrow format has, with the ties and their neighbours.
        const double m = std::ldexp(1.0 + static_cast<double>(i % 64) / 64.0, static_cast<int>(i % 40) - 20);
        const double v = (i % 2 ? -m : m) * (1.0 + (i % 3 == 0 ? 0x1p-30 : 0.0));
        f(i) = static_cast<float>(v);
        d(i) = v;
    }
    f(0) = std::numeric_limits<float>::quiet_NaN();
    f(1) = std::numeric_limits<float>::infinity();
    f(2) = -0.0f;
    f(3) = std::numeric_limits<float>::denorm_min();
    const auto from = [&](const auto& src, const char* what) {
        check_all_paths<T>(mixt::cast<T>(mixt::lazy(src)), n, [&](Eigen::Index i) { return mixt::convert<T>(src(i)); }, what);
    };
    from(f, "cast from f32");
    from(d, "cast from f64");
    // The other sources, into one format of each family: test/eval/edge_values_narrow_test.cpp.
    // And out: the exact value.
    const auto a = codes<T>(n, 5);
    const Eigen::Tensor<float, 1> back = mixt::eval(mixt::cast<float>(mixt::lazy(a)));
    for (Eigen::Index i = 0; i < n; ++i) {
        const float want = static_cast<float>(a(i));
        EXPECT_TRUE(std::memcmp(&back(i), &want, 4) == 0 || (std::isnan(back(i)) && std::isnan(want))) << i;
    }

}

TYPED_TEST(narrow_float_family_eval, broadcast_runs_compute_the_same_bits) {
    using T = TypeParam;
    const Eigen::Index rows = 13, cols = 21;
    Eigen::Tensor<T, 2> a(rows, cols);
    Eigen::Tensor<T, 2> col(rows, 1);
    Eigen::Tensor<float, 2> row(1, cols);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = T::from_bits(static_cast<std::uint8_t>((i * 11) % code_count<T>));
    for (Eigen::Index r = 0; r < rows; ++r) col(r, 0) = T::from_bits(static_cast<std::uint8_t>((r * 5 + 1) % code_count<T>));
    for (Eigen::Index c = 0; c < cols; ++c) row(0, c) = 0.25f * static_cast<float>(c) - 2.0f;
    const Eigen::Tensor<T, 2> sum = mixt::eval(mixt::lazy(a) + col);
    const Eigen::Tensor<float, 2> scaled = mixt::eval(mixt::cast<float>(mixt::lazy(a)) * row);
    for (Eigen::Index r = 0; r < rows; ++r)
        for (Eigen::Index c = 0; c < cols; ++c) {
            EXPECT_TRUE(same(sum(r, c), T(value_of(a(r, c)) + value_of(col(r, 0))))) << r << ", " << c;
            const float want = static_cast<float>(a(r, c)) * row(0, c);
            EXPECT_TRUE(scaled(r, c) == want || (std::isnan(scaled(r, c)) && std::isnan(want))) << r << ", " << c;
        }
}

TYPED_TEST(narrow_float_family_eval, reductions_accumulate_in_f32) {
    using T = TypeParam;
    const Eigen::Index rows = 37, cols = 300;
    Eigen::Tensor<T, 2> a(rows, cols);
    // Finite values only, so that each row's f32 sum is exact whatever the order (the codes of at most 4
    // significant bits, summed 300 at a time).
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        T x = T::from_bits(static_cast<std::uint8_t>((i * 13) % code_count<T>));
        if (!std::isfinite(value_of(x)) || std::fabs(value_of(x)) > 16 || std::fabs(value_of(x)) < 0.25) x = T(1.0);
        a.data()[i] = x;
    }
    const auto s = mixt::eval(mixt::sum(mixt::lazy(a), 1));
    const auto m = mixt::eval(mixt::max(mixt::lazy(a), 1));
    const auto am = mixt::eval(mixt::argmax(mixt::lazy(a), 1));
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(s)>::Scalar, T>);
    for (Eigen::Index r = 0; r < rows; ++r) {
        double total = 0, best = -INFINITY;
        Eigen::Index at = 0;
        for (Eigen::Index c = 0; c < cols; ++c) {
            total += value_of(a(r, c));
            if (value_of(a(r, c)) > best) best = value_of(a(r, c)), at = c;
        }
        EXPECT_TRUE(same(s(r), T(total))) << r;
        EXPECT_TRUE(same(m(r), T(best))) << r;
        EXPECT_EQ(am(r), at) << r;
    }
}

template <class T>
class narrow_int_eval : public ::testing::Test {};
TYPED_TEST_SUITE(narrow_int_eval, narrow_ints);

TYPED_TEST(narrow_int_eval, arithmetic_wraps) {
    using T = TypeParam;
    for (const Eigen::Index n : sizes) {
        Eigen::Tensor<T, 1> a(n), b(n);
        for (Eigen::Index i = 0; i < n; ++i) a(i) = T(i * 3 + 1), b(i) = T(i * 5 + 2);
        const auto va = [&](Eigen::Index i) { return a(i).value(); };
        const auto vb = [&](Eigen::Index i) { return b(i).value(); };
        const auto check = [&](const auto& e, const auto& want, const char* what) {
            const Eigen::Tensor<T, 1> fused = mixt::eval(e);
            const Eigen::Tensor<T, 1> lowered = mixt::to_eigen(e);
            for (Eigen::Index i = 0; i < n; ++i) {
                ASSERT_EQ(fused(i).bits(), T(want(i)).bits()) << what << " n " << n << " element " << i;
                ASSERT_EQ(lowered(i).bits(), T(want(i)).bits()) << what << " lowered, n " << n << " element " << i;
            }
        };
        check(mixt::lazy(a) + b, [&](Eigen::Index i) { return va(i) + vb(i); }, "a + b");
        check(mixt::lazy(a) - b, [&](Eigen::Index i) { return va(i) - vb(i); }, "a - b");
        check(mixt::lazy(a) * b + 1, [&](Eigen::Index i) { return T(va(i) * vb(i)).value() + 1; }, "a * b + 1");
        check(-mixt::lazy(a), [&](Eigen::Index i) { return -va(i); }, "-a");
    }
}

TYPED_TEST(narrow_int_eval, casts_wrap_integers_and_saturate_floats) {
    using T = TypeParam;
    const Eigen::Index n = 301;
    Eigen::Tensor<std::int32_t, 1> i32(n);
    Eigen::Tensor<float, 1> f(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        i32(i) = static_cast<std::int32_t>(i * 40503) - 6000000;
        f(i) = static_cast<float>(i) * 0.37f - 50.0f;
    }
    f(0) = NAN;
    const Eigen::Tensor<T, 1> wrapped = mixt::eval(mixt::cast<T>(mixt::lazy(i32)));
    const Eigen::Tensor<T, 1> saturated = mixt::eval(mixt::cast<T>(mixt::lazy(f)));
    const Eigen::Tensor<float, 1> back = mixt::eval(mixt::cast<float>(mixt::lazy(wrapped)));
    for (Eigen::Index i = 0; i < n; ++i) {
        EXPECT_EQ(wrapped(i).bits(), T(i32(i)).bits()) << i;
        const double t = std::isnan(f(i)) ? 0.0 : std::trunc(static_cast<double>(f(i)));
        EXPECT_EQ(saturated(i).value(), static_cast<int>(std::clamp(t, double(T::min_value), double(T::max_value)))) << i;
        EXPECT_EQ(back(i), static_cast<float>(wrapped(i).value())) << i;
    }
}

TYPED_TEST(narrow_int_eval, sums_give_the_default_int) {
    using T = TypeParam;
    const Eigen::Index rows = 5, cols = 1000;
    Eigen::Tensor<T, 2> a(rows, cols);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = T(i * 7 + 3);
    const auto s = mixt::eval(mixt::sum(mixt::lazy(a), 1));
    const auto m = mixt::eval(mixt::min(mixt::lazy(a), 1));
    using S = typename std::remove_cvref_t<decltype(s)>::Scalar;
    static_assert(std::is_same_v<S, std::conditional_t<T::is_signed, std::int64_t, std::uint64_t>>);
    for (Eigen::Index r = 0; r < rows; ++r) {
        std::int64_t total = 0;
        int least = 100;
        for (Eigen::Index c = 0; c < cols; ++c) total += a(r, c).value(), least = std::min(least, a(r, c).value());
        EXPECT_EQ(s(r), static_cast<S>(total)) << r;
        EXPECT_EQ(m(r).value(), least) << r;
    }
}

} // namespace
