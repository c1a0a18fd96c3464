// mixt/expr/functors.hpp: the per-element meaning of every operation, defined for every input. Each functor
// is fed the values where C++ has undefined behaviour or IEEE has special cases (INT_MIN, -1, 0, max,
// shift counts at and past the width, NaN, +-inf, -0) over every type it applies to, and compared with an
// independent reference (wide or unsigned arithmetic) and with the results the header documents. The CI
// runs this under ASan + UBSan (preset test-asan), which proves the "no undefined behaviour" half.

#include <mixt/expr/functors.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace {

namespace mp = boost::mp11;
namespace d = mixt::detail;

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

using int_types = mp::mp_list<std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t, std::int16_t,
                              std::int32_t, std::int64_t>;
using float_types = mp::mp_list<Eigen::half, Eigen::bfloat16, float, double>;

template <class T>
std::string type_name() {
    if constexpr (std::is_same_v<T, Eigen::half>) return "f16";
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>) return "bf16";
    else if constexpr (std::is_same_v<T, float>) return "f32";
    else if constexpr (std::is_same_v<T, double>) return "f64";
    else if constexpr (std::is_same_v<T, bool>) return "b";
    else return std::string(std::is_signed_v<T> ? "i" : "u") + std::to_string(8 * sizeof(T));
}

// The values where integer arithmetic goes wrong in C++: the extremes, their neighbours, 0, +-1.
template <class T>
std::vector<T> int_specials() {
    using L = std::numeric_limits<T>;
    std::vector<T> v{L::min(), static_cast<T>(L::min() + 1), T(0), T(1), T(2), T(3), T(7),
                     static_cast<T>(L::max() / 2), static_cast<T>(L::max() - 1), L::max()};
    if constexpr (std::is_signed_v<T>) {
        for (T x : {T(-1), T(-2), T(-3), T(-7), static_cast<T>(L::min() / 2)}) v.push_back(x);
    }
    return v;
}

// Wraps an exact (wide) result to T: modulo 2^n, the documented integer semantics.
template <class T>
T wrap(i128 x) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<u128>(x)));
}

// Python's floor division and modulo on exact values.
i128 floor_div(i128 a, i128 b) {
    i128 q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) --q;
    return q;
}

template <class T>
bool same_bits(const T& a, const T& b) {
    if constexpr (d::is_float_like_v<T>) {
        if (Eigen::numext::isnan(a) && Eigen::numext::isnan(b)) return true;
        return std::memcmp(&a, &b, sizeof(T)) == 0;
    } else if constexpr (d::is_complex_v<T>) {
        return same_bits(a.real(), b.real()) && same_bits(a.imag(), b.imag());
    } else {
        return a == b;
    }
}

#define EXPECT_SAME(got, want) EXPECT_PRED2([](const auto& g, const auto& w) { return same_bits(g, w); }, got, want)

// --- Integers -------------------------------------------------------------------------------------------

TEST(functors, integer_add_subtract_multiply_negate_wrap) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        for (T a : int_specials<T>()) {
            EXPECT_EQ(d::neg_fn{}(a), wrap<T>(-i128{a})) << type_name<T>() << " -" << +a;
            for (T b : int_specials<T>()) {
                SCOPED_TRACE(type_name<T>() + " " + std::to_string(+a) + ", " + std::to_string(+b));
                EXPECT_EQ(d::add_fn{}(a, b), wrap<T>(i128{a} + i128{b}));
                EXPECT_EQ(d::sub_fn{}(a, b), wrap<T>(i128{a} - i128{b}));
                // The low 64 bits of the product of the low 64 bits: exact in the unsigned 128-bit type.
                EXPECT_EQ(d::mul_fn{}(a, b), wrap<T>(static_cast<i128>(static_cast<u128>(i128{a}) *
                                                                       static_cast<u128>(i128{b}))));
            }
        }
    });
    // The documented corner: -INT_MIN == INT_MIN.
    EXPECT_EQ(d::neg_fn{}(std::numeric_limits<std::int32_t>::min()), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(d::neg_fn{}(std::uint8_t{1}), std::uint8_t{255});
    EXPECT_EQ(d::add_fn{}(std::int8_t{127}, std::int8_t{1}), std::int8_t{-128});
    EXPECT_EQ(d::mul_fn{}(std::int64_t{-1}, std::numeric_limits<std::int64_t>::min()),
              std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(d::mul_fn{}(std::uint16_t{65535}, std::uint16_t{65535}), std::uint16_t{1});
}

TEST(functors, integer_floor_divide_and_modulo) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        for (T a : int_specials<T>())
            for (T b : int_specials<T>()) {
                SCOPED_TRACE(type_name<T>() + " " + std::to_string(+a) + ", " + std::to_string(+b));
                const T q = d::floor_divide_fn{}(a, b);
                const T r = d::mod_fn{}(a, b);
                if (b == 0) {
                    EXPECT_EQ(q, T(0));
                    EXPECT_EQ(r, T(0));
                } else {
                    const i128 eq = floor_div(a, b);
                    EXPECT_EQ(q, wrap<T>(eq));
                    EXPECT_EQ(r, wrap<T>(i128{a} - eq * i128{b}));
                    // Python's modulo: zero or the sign of the divisor, smaller than it.
                    if (r != 0) {
                        EXPECT_EQ(r < 0, b < 0);
                    }
                }
            }
    });
    constexpr auto i32_min = std::numeric_limits<std::int32_t>::min();
    EXPECT_EQ(d::floor_divide_fn{}(std::int32_t{7}, std::int32_t{-2}), -4);
    EXPECT_EQ(d::floor_divide_fn{}(std::int32_t{-7}, std::int32_t{2}), -4);
    EXPECT_EQ(d::floor_divide_fn{}(std::int32_t{-8}, std::int32_t{2}), -4);
    EXPECT_EQ(d::mod_fn{}(std::int32_t{7}, std::int32_t{-2}), -1);
    EXPECT_EQ(d::mod_fn{}(std::int32_t{-7}, std::int32_t{2}), 1);
    EXPECT_EQ(d::floor_divide_fn{}(i32_min, std::int32_t{-1}), i32_min);
    EXPECT_EQ(d::mod_fn{}(i32_min, std::int32_t{-1}), 0);
    EXPECT_EQ(d::floor_divide_fn{}(std::int8_t{-128}, std::int8_t{-1}), std::int8_t{-128});
    EXPECT_EQ(d::floor_divide_fn{}(std::int64_t{5}, std::int64_t{0}), 0);
    EXPECT_EQ(d::mod_fn{}(std::int64_t{5}, std::int64_t{0}), 0);
    EXPECT_EQ(d::floor_divide_fn{}(std::uint8_t{255}, std::uint8_t{0}), 0);
    EXPECT_EQ(d::mod_fn{}(std::uint64_t{7}, std::uint64_t{0}), 0u);
}

TEST(functors, shifts_by_any_count) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        constexpr int bits = 8 * sizeof(T);
        std::vector<T> counts = int_specials<T>();
        for (int c = 0; c <= bits + 2 && c <= static_cast<int>(std::numeric_limits<T>::max()); ++c)
            counts.push_back(static_cast<T>(c));
        for (T a : int_specials<T>())
            for (T c : counts) {
                SCOPED_TRACE(type_name<T>() + " " + std::to_string(+a) + " shifted by " + std::to_string(+c));
                const bool in_range = i128{c} >= 0 && i128{c} < bits;
                const T left = d::shift_left_fn{}(a, c);
                const T right = d::shift_right_fn{}(a, c);
                if (in_range) {
                    EXPECT_EQ(left, wrap<T>(static_cast<i128>(static_cast<u128>(i128{a}) << +c)));
                    // Arithmetic shift: floor division by 2^c.
                    EXPECT_EQ(right, wrap<T>(floor_div(a, i128{1} << +c)));
                } else {
                    EXPECT_EQ(left, T(0));
                    EXPECT_EQ(right, a < 0 ? T(-1) : T(0));
                }
            }
    });
    EXPECT_EQ(d::shift_left_fn{}(std::int32_t{1}, std::int32_t{31}), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(d::shift_left_fn{}(std::int32_t{1}, std::int32_t{32}), 0);
    EXPECT_EQ(d::shift_left_fn{}(std::int32_t{1}, std::int32_t{-1}), 0);
    EXPECT_EQ(d::shift_right_fn{}(std::int8_t{-128}, std::int8_t{7}), -1);
    EXPECT_EQ(d::shift_right_fn{}(std::int8_t{-128}, std::int8_t{100}), -1);
    EXPECT_EQ(d::shift_right_fn{}(std::int8_t{-128}, std::int8_t{-1}), -1);
    EXPECT_EQ(d::shift_right_fn{}(std::int8_t{127}, std::int8_t{8}), 0);
    EXPECT_EQ(d::shift_right_fn{}(std::uint64_t{~0ull}, std::uint64_t{64}), 0u);
    EXPECT_EQ(d::shift_left_fn{}(std::uint8_t{0x81}, std::uint8_t{1}), std::uint8_t{2});
}

TEST(functors, bitwise) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        using U = std::make_unsigned_t<T>;
        for (T a : int_specials<T>()) {
            EXPECT_EQ(d::bit_not_fn{}(a), static_cast<T>(static_cast<U>(~static_cast<std::uint64_t>(a))));
            for (T b : int_specials<T>()) {
                const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
                EXPECT_EQ(d::bit_and_fn{}(a, b), static_cast<T>(static_cast<U>(ua & ub)));
                EXPECT_EQ(d::bit_or_fn{}(a, b), static_cast<T>(static_cast<U>(ua | ub)));
                EXPECT_EQ(d::bit_xor_fn{}(a, b), static_cast<T>(static_cast<U>(ua ^ ub)));
            }
        }
    });
    EXPECT_EQ(d::bit_not_fn{}(std::int8_t{0}), std::int8_t{-1});
    EXPECT_EQ(d::bit_not_fn{}(std::uint16_t{0}), std::uint16_t{65535});
}

TEST(functors, integer_abs) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        for (T a : int_specials<T>()) {
            const i128 exact = a < 0 ? -i128{a} : i128{a};
            EXPECT_EQ(d::abs_fn{}(a), wrap<T>(exact)) << type_name<T>() << " " << +a;
            static_assert(std::is_same_v<decltype(d::abs_fn{}(a)), T>);
        }
    });
    EXPECT_EQ(d::abs_fn{}(std::numeric_limits<std::int8_t>::min()), std::numeric_limits<std::int8_t>::min());
    EXPECT_EQ(d::abs_fn{}(std::numeric_limits<std::int64_t>::min()), std::numeric_limits<std::int64_t>::min());
}

template <class T>
T pow_reference(T base, std::uint64_t e) { // repeated multiplication modulo 2^64, then wrapped
    std::uint64_t r = 1;
    for (std::uint64_t k = 0; k < e; ++k) r *= static_cast<std::uint64_t>(base);
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(r));
}

TEST(functors, integer_pow) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        for (T base : int_specials<T>()) {
            for (int e = 0; e <= 70; ++e)
                EXPECT_EQ(d::pow_fn{}(base, static_cast<T>(e)), pow_reference(base, static_cast<std::uint64_t>(e)))
                    << type_name<T>() << " " << +base << " ** " << e;
            // A huge exponent: even bases vanish (2^64 divides the true power), +-1 and 0 as expected.
            const T big = std::numeric_limits<T>::max();
            if (base % 2 == 0) {
                EXPECT_EQ(d::pow_fn{}(base, big), T(0)) << type_name<T>() << " " << +base;
            }
            EXPECT_EQ(d::pow_fn{}(T(1), big), T(1));
            if constexpr (std::is_signed_v<T>) {
                // max is odd, max - 1 even.
                EXPECT_EQ(d::pow_fn{}(T(-1), big), T(-1));
                EXPECT_EQ(d::pow_fn{}(T(-1), static_cast<T>(big - 1)), T(1));
                // Negative exponents: 1 / x**-e truncated.
                for (T e : {T(-1), T(-2), T(-3), std::numeric_limits<T>::min()}) {
                    const T want = base == 1 ? T(1) : base == -1 ? ((e % 2 != 0) ? T(-1) : T(1)) : T(0);
                    EXPECT_EQ(d::pow_fn{}(base, e), want) << type_name<T>() << " " << +base << " ** " << +e;
                }
            }
        }
    });
    EXPECT_EQ(d::pow_fn{}(std::int32_t{0}, std::int32_t{-1}), 0);
    EXPECT_EQ(d::pow_fn{}(std::int32_t{0}, std::int32_t{0}), 1);
    EXPECT_EQ(d::pow_fn{}(std::int32_t{2}, std::int32_t{31}), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(d::pow_fn{}(std::int32_t{2}, std::int32_t{32}), 0);
    EXPECT_EQ(d::pow_fn{}(std::uint8_t{3}, std::uint8_t{5}), std::uint8_t{243});
    EXPECT_EQ(d::pow_fn{}(std::uint8_t{3}, std::uint8_t{6}), std::uint8_t{729 % 256});
}

TEST(functors, integer_min_max_clip_compare) {
    mp::mp_for_each<int_types>([](auto t) {
        using T = decltype(t);
        for (T a : int_specials<T>())
            for (T b : int_specials<T>()) {
                EXPECT_EQ(d::minimum_fn{}(a, b), a < b ? a : b);
                EXPECT_EQ(d::maximum_fn{}(a, b), a < b ? b : a);
                EXPECT_EQ(d::less_fn{}(a, b), a < b);
                EXPECT_EQ(d::less_equal_fn{}(a, b), a <= b);
                EXPECT_EQ(d::greater_fn{}(a, b), a > b);
                EXPECT_EQ(d::greater_equal_fn{}(a, b), a >= b);
                EXPECT_EQ(d::equal_fn{}(a, b), a == b);
                EXPECT_EQ(d::not_equal_fn{}(a, b), a != b);
                if (!(b < a)) {
                    for (T x : int_specials<T>()) EXPECT_EQ(d::clip_fn{}(x, a, b), x < a ? a : b < x ? b : x);
                }
            }
    });
}

// --- Bool -----------------------------------------------------------------------------------------------

TEST(functors, bool_arithmetic_is_logic) {
    for (bool a : {false, true})
        for (bool b : {false, true}) {
            EXPECT_EQ(d::add_fn{}(a, b), a || b);
            EXPECT_EQ(d::mul_fn{}(a, b), a && b);
            EXPECT_EQ(d::logical_and_fn{}(a, b), a && b);
            EXPECT_EQ(d::logical_or_fn{}(a, b), a || b);
            EXPECT_EQ(d::bit_and_fn{}(a, b), a && b);
            EXPECT_EQ(d::bit_or_fn{}(a, b), a || b);
            EXPECT_EQ(d::bit_xor_fn{}(a, b), a != b);
            EXPECT_EQ(d::pow_fn{}(a, b), b ? a : true); // x ** 0 == 1
            EXPECT_EQ(d::minimum_fn{}(a, b), a && b);
            EXPECT_EQ(d::maximum_fn{}(a, b), a || b);
            EXPECT_EQ(d::less_fn{}(a, b), !a && b);
            EXPECT_EQ(d::equal_fn{}(a, b), a == b);
        }
    EXPECT_EQ(d::logical_not_fn{}(true), false);
    EXPECT_EQ(d::bit_not_fn{}(false), true);
    EXPECT_EQ(d::bit_not_fn{}(true), false);
    EXPECT_EQ(d::abs_fn{}(true), true);
    static_assert(std::is_same_v<decltype(d::add_fn{}(true, true)), bool>);
}

// --- Floating point ---------------------------------------------------------------------------------------

template <class T>
T f(double x) {
    return static_cast<T>(x);
}
template <class T>
T nan_v() {
    return std::numeric_limits<T>::quiet_NaN();
}
template <class T>
T inf_v() {
    return std::numeric_limits<T>::infinity();
}

template <class T>
std::vector<T> float_specials() {
    using L = std::numeric_limits<T>;
    return {T(0), f<T>(-0.0), T(1), f<T>(-1.0), f<T>(0.5), f<T>(-2.5), f<T>(7.0), f<T>(-7.0), L::max(), L::lowest(),
            L::min(), L::denorm_min(), L::infinity(), f<T>(-static_cast<double>(L::infinity())), L::quiet_NaN()};
}

TEST(functors, float_arithmetic_rounds_once_in_the_compute_type) {
    mp::mp_for_each<float_types>([](auto t) {
        using T = decltype(t);
        using C = d::compute_t<T>; // f16 and bf16 compute in f32
        for (T a : float_specials<T>()) {
            EXPECT_SAME(d::neg_fn{}(a), static_cast<T>(-static_cast<C>(a)));
            EXPECT_SAME(d::abs_fn{}(a), static_cast<T>(std::abs(static_cast<C>(a))));
            for (T b : float_specials<T>()) {
                const C ca = static_cast<C>(a), cb = static_cast<C>(b);
                SCOPED_TRACE(type_name<T>() + " " + std::to_string(static_cast<double>(ca)) + ", " +
                             std::to_string(static_cast<double>(cb)));
                EXPECT_SAME(d::add_fn{}(a, b), static_cast<T>(ca + cb));
                EXPECT_SAME(d::sub_fn{}(a, b), static_cast<T>(ca - cb));
                EXPECT_SAME(d::mul_fn{}(a, b), static_cast<T>(ca * cb));
                EXPECT_SAME(d::div_fn{}(a, b), static_cast<T>(ca / cb));
                EXPECT_EQ(d::equal_fn{}(a, b), ca == cb);
                EXPECT_EQ(d::not_equal_fn{}(a, b), ca != cb);
                EXPECT_EQ(d::less_fn{}(a, b), ca < cb);
                EXPECT_EQ(d::less_equal_fn{}(a, b), ca <= cb);
                EXPECT_EQ(d::greater_fn{}(a, b), ca > cb);
                EXPECT_EQ(d::greater_equal_fn{}(a, b), ca >= cb);
            }
        }
    });
    // f16: 65504 + 16 = 65520 lies halfway to 2^16 and rounds (to even) to inf; 2048 + 1 ties back to 2048.
    EXPECT_TRUE(Eigen::numext::isinf(d::add_fn{}(Eigen::half(65504.0f), Eigen::half(16.0f))));
    EXPECT_EQ(static_cast<float>(d::add_fn{}(Eigen::half(2048.0f), Eigen::half(1.0f))), 2048.0f);
    EXPECT_EQ(static_cast<float>(d::add_fn{}(Eigen::bfloat16(256.0f), Eigen::bfloat16(1.0f))), 256.0f);
    EXPECT_TRUE(Eigen::numext::isnan(d::div_fn{}(0.0f, 0.0f)));
    EXPECT_EQ(d::div_fn{}(-1.0, 0.0), -inf_v<double>());
    EXPECT_TRUE(std::signbit(d::neg_fn{}(0.0f)));
    EXPECT_FALSE(std::signbit(d::abs_fn{}(-0.0)));
    EXPECT_FALSE(d::equal_fn{}(nan_v<float>(), nan_v<float>()));
    EXPECT_TRUE(d::not_equal_fn{}(nan_v<double>(), nan_v<double>()));
    EXPECT_TRUE(d::equal_fn{}(0.0, -0.0));
}

// NumPy's floor_divide and remainder: fmod adjusted to the divisor's sign, the quotient snapped to an integer.
struct divmod_case {
    double a, b, q, r;
};
TEST(functors, float_floor_divide_and_modulo_are_numpys) {
    const double inf = inf_v<double>(), nan = nan_v<double>();
    const divmod_case cases[] = {
        {7, 2, 3, 1},          {7, -2, -4, -1},     {-7, 2, -4, 1},     {-7, -2, 3, -1},   {6, 3, 2, 0},
        {-6, 3, -2, 0},        {6, -3, -2, -0.0},   {0, 5, 0, 0},       {-0.0, 5, -0.0, 0}, {0, -5, -0.0, -0.0},
        {7.5, 2, 3, 1.5},      {-7.5, 2, -4, 0.5},  {1, inf, 0, 1},     {-1, inf, -1, inf}, {1, -inf, -1, -inf},
        {inf, 1, nan, nan},    {1, 0, inf, nan},    {-1, 0, -inf, nan}, {0, 0, nan, nan},   {nan, 1, nan, nan},
        {1, nan, nan, nan},    {-0.5, 1, -1, 0.5},
    };
    mp::mp_for_each<float_types>([&](auto t) {
        using T = decltype(t);
        for (const auto& c : cases) {
            SCOPED_TRACE(type_name<T>() + " " + std::to_string(c.a) + " divmod " + std::to_string(c.b));
            EXPECT_SAME(d::floor_divide_fn{}(f<T>(c.a), f<T>(c.b)), f<T>(c.q));
            EXPECT_SAME(d::mod_fn{}(f<T>(c.a), f<T>(c.b)), f<T>(c.r));
        }
        // The identity a == b * q + r and r having b's sign, where r is not rounded away (moderate values).
        for (T a : float_specials<T>())
            for (T b : float_specials<T>()) {
                const double da = static_cast<double>(a), db = static_cast<double>(b);
                const auto moderate = [](double x) { return std::abs(x) >= 0.25 && std::abs(x) <= 1e4; };
                if (!moderate(da) || !moderate(db)) continue;
                const double q = static_cast<double>(d::floor_divide_fn{}(a, b));
                const double r = static_cast<double>(d::mod_fn{}(a, b));
                EXPECT_EQ(q, std::floor(q));
                EXPECT_NEAR(db * q + r, da, 1e-3 * std::abs(da) + 1e-30) << da << " divmod " << db;
                if (r != 0) {
                    EXPECT_EQ(r < 0, db < 0);
                }
            }
    });
}

TEST(functors, float_min_max_clip_propagate_nan) {
    mp::mp_for_each<float_types>([](auto t) {
        using T = decltype(t);
        for (T a : float_specials<T>())
            for (T b : float_specials<T>()) {
                const double da = static_cast<double>(a), db = static_cast<double>(b);
                const T mn = d::minimum_fn{}(a, b), mx = d::maximum_fn{}(a, b);
                if (std::isnan(da) || std::isnan(db)) {
                    EXPECT_TRUE(Eigen::numext::isnan(mn));
                    EXPECT_TRUE(Eigen::numext::isnan(mx));
                } else {
                    EXPECT_EQ(static_cast<double>(mn), std::min(da, db));
                    EXPECT_EQ(static_cast<double>(mx), std::max(da, db));
                }
            }
        const T nan = nan_v<T>();
        EXPECT_TRUE(Eigen::numext::isnan(d::clip_fn{}(nan, T(0), T(1))));
        EXPECT_TRUE(Eigen::numext::isnan(d::clip_fn{}(T(0.5f), nan, T(1))));
        EXPECT_TRUE(Eigen::numext::isnan(d::clip_fn{}(T(0.5f), T(0), nan)));
        EXPECT_SAME(d::clip_fn{}(inf_v<T>(), T(0), T(1)), T(1));
        EXPECT_SAME(d::clip_fn{}(f<T>(-2.5), T(0), T(1)), T(0));
        EXPECT_SAME(d::clip_fn{}(T(0.5f), T(0), T(1)), T(0.5f));
        EXPECT_SAME(d::clip_fn{}(T(0.5f), T(1), T(0)), T(0)); // low > high: high wins, as NumPy
        // -0 is below +0 (IEEE 754-2019 minimum and maximum, as JAX), whichever comes first.
        const T pz = T(0), nz = f<T>(-0.0);
        EXPECT_SAME(d::minimum_fn{}(pz, nz), nz);
        EXPECT_SAME(d::minimum_fn{}(nz, pz), nz);
        EXPECT_SAME(d::maximum_fn{}(pz, nz), pz);
        EXPECT_SAME(d::maximum_fn{}(nz, pz), pz);
        EXPECT_SAME(d::clip_fn{}(nz, pz, T(1)), pz);
        EXPECT_SAME(d::clip_fn{}(pz, T(-1), nz), nz);
    });
}

TEST(functors, float_pow) {
    mp::mp_for_each<float_types>([](auto t) {
        using T = decltype(t);
        using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
        for (T a : float_specials<T>())
            for (T b : float_specials<T>())
                EXPECT_SAME(d::pow_fn{}(a, b), static_cast<T>(std::pow(static_cast<C>(a), static_cast<C>(b))));
        // An integer exponent keeps the base's type; the exponent is not converted to it first.
        static_assert(std::is_same_v<decltype(d::pow_fn{}(T(2), std::int64_t{3})), T>);
        EXPECT_SAME(d::pow_fn{}(T(2), std::int8_t{-1}), T(0.5f));
        EXPECT_SAME(d::pow_fn{}(T(2), std::int64_t{3}), T(8));
        EXPECT_SAME(d::pow_fn{}(T(-2), std::int32_t{3}), T(-8));
        EXPECT_SAME(d::pow_fn{}(T(0), std::int32_t{-1}), inf_v<T>());
        EXPECT_SAME(d::pow_fn{}(nan_v<T>(), std::int32_t{0}), T(1));
        EXPECT_SAME(d::pow_fn{}(T(1), nan_v<T>()), T(1));
        EXPECT_TRUE(Eigen::numext::isnan(d::pow_fn{}(f<T>(-8.0), T(0.5f))));
        EXPECT_SAME(d::pow_fn{}(T(2), std::numeric_limits<std::uint64_t>::max()), inf_v<T>());
        EXPECT_SAME(d::pow_fn{}(T(2), std::numeric_limits<std::int64_t>::min()), T(0));
    });
    // f16: 2 ** 16 overflows the half range.
    EXPECT_TRUE(Eigen::numext::isinf(d::pow_fn{}(Eigen::half(2.0f), std::int32_t{16})));
}

TEST(functors, float_functions_on_special_values) {
    mp::mp_for_each<float_types>([](auto t) {
        using T = decltype(t);
        const T nan = nan_v<T>(), inf = inf_v<T>(), minus_inf = f<T>(-std::numeric_limits<double>::infinity());
        EXPECT_TRUE(Eigen::numext::isnan(d::sqrt_fn{}(T(-1))));
        EXPECT_SAME(d::sqrt_fn{}(f<T>(-0.0)), f<T>(-0.0));
        EXPECT_SAME(d::sqrt_fn{}(inf), inf);
        EXPECT_SAME(d::sqrt_fn{}(T(4)), T(2));
        EXPECT_SAME(d::log_fn{}(T(0)), minus_inf);
        EXPECT_TRUE(Eigen::numext::isnan(d::log_fn{}(T(-1))));
        EXPECT_SAME(d::log_fn{}(T(1)), T(0));
        EXPECT_SAME(d::exp_fn{}(minus_inf), T(0));
        EXPECT_SAME(d::exp_fn{}(inf), inf);
        EXPECT_SAME(d::exp_fn{}(T(0)), T(1));
        EXPECT_TRUE(Eigen::numext::isnan(d::sin_fn{}(inf)));
        EXPECT_TRUE(Eigen::numext::isnan(d::cos_fn{}(minus_inf)));
        EXPECT_SAME(d::sin_fn{}(f<T>(-0.0)), f<T>(-0.0));
        EXPECT_SAME(d::tanh_fn{}(inf), T(1));
        EXPECT_SAME(d::tanh_fn{}(minus_inf), T(-1));
        for (auto fn_nan : {d::sqrt_fn{}(nan), d::exp_fn{}(nan), d::log_fn{}(nan), d::sin_fn{}(nan),
                            d::cos_fn{}(nan), d::tanh_fn{}(nan), d::abs_fn{}(nan), d::neg_fn{}(nan)})
            EXPECT_TRUE(Eigen::numext::isnan(fn_nan));
    });
}

// --- Complex ----------------------------------------------------------------------------------------------

TEST(functors, complex) {
    using C = std::complex<float>;
    const float nan = nan_v<float>();
    // Lexicographic order, NaN in either part propagates.
    EXPECT_EQ(d::minimum_fn{}(C(1, 5), C(2, -5)), C(1, 5));
    EXPECT_EQ(d::maximum_fn{}(C(1, 5), C(1, 6)), C(1, 6));
    EXPECT_EQ(d::minimum_fn{}(C(1, 5), C(1, 6)), C(1, 5));
    EXPECT_TRUE(std::isnan(d::minimum_fn{}(C(0, nan), C(1, 1)).imag()));
    EXPECT_TRUE(std::isnan(d::maximum_fn{}(C(1, 1), C(nan, 0)).real()));
    EXPECT_EQ(d::clip_fn{}(C(5, 0), C(0, 0), C(1, 1)), C(1, 1));
    // abs is the magnitude, in the real type, without overflow in the intermediate.
    static_assert(std::is_same_v<decltype(d::abs_fn{}(C(3, 4))), float>);
    EXPECT_EQ(d::abs_fn{}(C(3, 4)), 5.0f);
    EXPECT_EQ(d::abs_fn{}(std::complex<double>(3e300, 4e300)), 5e300);
    EXPECT_EQ(d::real_fn{}(C(3, 4)), 3.0f);
    EXPECT_EQ(d::imag_fn{}(C(3, 4)), 4.0f);
    EXPECT_EQ(d::imag_fn{}(2.5), 0.0);
    EXPECT_EQ(d::conj_fn{}(C(3, 4)), C(3, -4));
    EXPECT_TRUE(d::equal_fn{}(C(1, 2), C(1, 2)));
    EXPECT_TRUE(d::not_equal_fn{}(C(1, 2), C(1, -2)));
    EXPECT_FALSE(d::equal_fn{}(C(nan, 0), C(nan, 0)));
    EXPECT_EQ(d::add_fn{}(C(1, 2), C(3, 4)), C(4, 6));
    EXPECT_EQ(d::mul_fn{}(C(1, 2), C(3, 4)), C(-5, 10));
    EXPECT_EQ(d::neg_fn{}(C(1, -2)), C(-1, 2));
    // pow with an integer exponent keeps the base's type.
    static_assert(std::is_same_v<decltype(d::pow_fn{}(C(0, 1), std::int32_t{2})), C>);
    const C i2 = d::pow_fn{}(C(0, 1), std::int32_t{2});
    EXPECT_NEAR(i2.real(), -1.0f, 1e-6f);
    EXPECT_NEAR(i2.imag(), 0.0f, 1e-6f);
    EXPECT_TRUE(std::isnan(d::sqrt_fn{}(C(nan, 0)).real()));
    EXPECT_EQ(d::sqrt_fn{}(C(-4, 0)), C(0, 2));
}

// The complex product rounds each of its four products and two sums once (no fused multiply-add, on any
// target: GCC 12 contracts std::complex's operator* to vfmaddsub under -march=x86-64-v3 even with
// -ffp-contract=off), and recovers infinities as C's Annex G when both parts come out NaN.
TEST(functors, complex_product_rounds_each_term_and_recovers_infinities) {
    using C = std::complex<double>;
    const double e = std::ldexp(1.0, -28), inf = inf_v<double>(), nan = nan_v<double>();
    const double big = std::numeric_limits<double>::max();
    // (1+e)(1-e) = 1 - 2^-56 rounds to 1, so the real part is exactly 0; a fused multiply-add gives -2^-56.
    const C p = d::mul_fn{}(C(1 + e, 1), C(1 - e, 1));
    EXPECT_EQ(p.real(), 0.0);
    EXPECT_EQ(p.imag(), 2.0);
    // One part NaN: no recovery (as libgcc's __muldc3): (inf, nan). With FMA the imaginary part would be inf.
    const C q = d::mul_fn{}(C(1, -2.5), C(big, inf));
    EXPECT_EQ(q.real(), inf);
    EXPECT_TRUE(std::isnan(q.imag()));
    // Both parts NaN with an infinite operand: the infinite operand is boxed to +-1/+-0, the result infinite.
    const C r = d::mul_fn{}(C(inf, nan), C(1, 0));
    EXPECT_EQ(r.real(), inf);
    // Both parts NaN, no infinite operand but an overflowing product: NaN operands become 0 and the
    // products are scaled to infinity.
    const C s = d::mul_fn{}(C(nan, big), C(big, big));
    EXPECT_EQ(s.real(), -inf);
    EXPECT_EQ(s.imag(), inf);
    // NaN with nothing infinite stays NaN.
    const C t = d::mul_fn{}(C(nan, 1), C(1, 1));
    EXPECT_TRUE(std::isnan(t.real()) && std::isnan(t.imag()));
    // complex64 follows the same formula in float.
    using F = std::complex<float>;
    const float ef = std::ldexp(1.0f, -13);
    EXPECT_EQ(d::mul_fn{}(F(1 + ef, 1), F(1 - ef, 1)).real(), 0.0f);
    EXPECT_EQ(d::mul_fn{}(F(inf_v<float>(), nan_v<float>()), F(1, 0)).real(), inf_v<float>());
}

// complex<float> division computes in complex<double> (complex_divide) and rounds each part once: the same
// bits on the CPU and in CUDA device code (where std::complex's operator/ compiles to nothing), and each part
// correctly rounded but for double rounding next to a tie. Checked against the quotient in long double
// (64-bit mantissa: the float parts' products are exact), rounded to float. (Where long double is double,
// the reference is the algorithm itself: the test then checks only the special cases.)
TEST(functors, complex_float_division_is_correctly_rounded) {
    using C = std::complex<float>;
    using L = long double;
    std::uint64_t state = 0x2545f4914f6cdd1dull;
    const auto next = [&] {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        return state;
    };
    const auto random_float = [&] {
        const float m = static_cast<float>(next() >> 40) * 0x1p-24f + 0.5f;
        const int exponent = static_cast<int>(next() % 120) - 60;
        return ((next() & 1) != 0 ? -1.0f : 1.0f) * std::ldexp(m, exponent);
    };
    const auto ulps_apart = [](float a, float b) {
        const auto ordered = [](float x) {
            std::int32_t i = 0;
            std::memcpy(&i, &x, sizeof i);
            return i < 0 ? std::int64_t{INT32_MIN} - i : std::int64_t{i};
        };
        const std::int64_t d = ordered(a) - ordered(b);
        return d < 0 ? -d : d;
    };
    int exact = 0, total = 0;
    for (int k = 0; k < 100000; ++k) {
        const C x(random_float(), random_float()), y(random_float(), random_float());
        const L xr = x.real(), xi = x.imag(), yr = y.real(), yi = y.imag();
        const L den = yr * yr + yi * yi;
        const float re = static_cast<float>((xr * yr + xi * yi) / den), im = static_cast<float>((xi * yr - xr * yi) / den);
        const C q = d::div_fn{}(x, y);
        ASSERT_LE(ulps_apart(q.real(), re), 1) << x << " / " << y << " = " << q;
        ASSERT_LE(ulps_apart(q.imag(), im), 1) << x << " / " << y << " = " << q;
        exact += (q.real() == re) + (q.imag() == im);
        total += 2;
    }
    EXPECT_GE(exact, total - total / 10000) << exact << " of " << total << " parts correctly rounded";
    // IEEE's special cases where one part of the divisor is zero: each part divided.
    const float inf = inf_v<float>();
    EXPECT_EQ(d::div_fn{}(C(1, -1), C(0, 0)), C(inf, -inf));
    EXPECT_EQ(d::div_fn{}(C(3, 6), C(3, 0)), C(1, 2));
}

// complex<double> division is written out (complex_divide): libgcc's __divdc3 gave (inf, nan) and (nan, nan) for
// the finite quotients below. Exact values from 300-bit arithmetic (mpmath) where quoted.
TEST(functors, complex_double_division_keeps_finite_quotients) {
    using C = std::complex<double>;
    const double inf = inf_v<double>();
    // (19.896926648387335+0.14168469170330952j) / 2.2250738585072014e-308: exact (inf, 6.3676e306).
    const C a = d::div_fn{}(C(19.896926648387335, 0.14168469170330952), C(2.2250738585072014e-308, 0));
    EXPECT_EQ(a.real(), inf);
    EXPECT_EQ(a.imag(), 0.14168469170330952 / 2.2250738585072014e-308);
    // (1.7e308+1.7e308j) / 0.1: exact (inf, inf).
    const C b = d::div_fn{}(C(1.7e308, 1.7e308), C(0.1, 0));
    EXPECT_EQ(b.real(), inf);
    EXPECT_EQ(b.imag(), inf);
    // A numerator whose products overflow though the quotient is finite: (1.7e308+1.7e308j) / (1+1j) = 1.7e308.
    const C c = d::div_fn{}(C(1.7e308, 1.7e308), C(1, 1));
    EXPECT_EQ(c.real(), 1.7e308);
    EXPECT_EQ(c.imag(), 0.0);
    // A denominator whose squared norm underflows: (1+1j) / (1e-200+1e-200j) = 1e200.
    const C e = d::div_fn{}(C(1, 1), C(1e-200, 1e-200));
    EXPECT_NEAR(e.real() / 1e200, 1.0, 4e-16);
    EXPECT_EQ(e.imag(), 0.0);
    // A real or imaginary divisor divides each part: correctly rounded.
    EXPECT_EQ(d::div_fn{}(C(1, 3), C(3, 0)), C(1.0 / 3, 1.0));
    EXPECT_EQ(d::div_fn{}(C(1, 3), C(0, 3)), C(1.0, -1.0 / 3));
    // Annex G: an infinite numerator over a finite divisor is infinite, a finite one over an infinite divisor 0.
    const C f = d::div_fn{}(C(inf, 1), C(3, 4));
    EXPECT_TRUE(std::isinf(f.real()) && std::isinf(f.imag()));
    const C g = d::div_fn{}(C(1, 1), C(inf, 4));
    EXPECT_EQ(g, C(0, 0));
    // Random quotients over the whole exponent range against long double (64-bit mantissa, 15-bit exponent: no
    // overflow in x * conj(y) / |y|^2): within 4 eps of the quotient's norm, part by part.
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    const auto next = [&] {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        return state;
    };
    const auto random_double = [&] {
        const double m = static_cast<double>(next() >> 11) * 0x1p-53 + 0.5;
        const int exponent = static_cast<int>(next() % 2040) - 1020;
        return ((next() & 1) != 0 ? -1.0 : 1.0) * std::ldexp(m, exponent);
    };
    int checked = 0;
    for (int k = 0; k < 20000; ++k) {
        const C x(random_double(), random_double()), y(random_double(), random_double());
        using L = long double;
        const L xr = x.real(), xi = x.imag(), yr = y.real(), yi = y.imag();
        const L den = yr * yr + yi * yi;
        const L re = (xr * yr + xi * yi) / den, im = (xi * yr - xr * yi) / den;
        const L norm = std::max(std::fabs(re), std::fabs(im));
        if (!(norm < L(std::numeric_limits<double>::max()) && norm > L(std::numeric_limits<double>::min()))) continue;
        ++checked;
        const C q = d::div_fn{}(x, y);
        const L tolerance = 4 * norm * L(std::numeric_limits<double>::epsilon());
        ASSERT_LE(std::fabs(L(q.real()) - re), tolerance) << x << " / " << y << " = " << q;
        ASSERT_LE(std::fabs(L(q.imag()) - im), tolerance) << x << " / " << y << " = " << q;
    }
    EXPECT_GT(checked, 5000);
}

// A float base with an integer exponent computes exactly in the exponent: converting it to the base's compute
// type first made odd exponents above 2^24 (f16, bf16, f32) or 2^53 (f64) even.
TEST(functors, float_pow_keeps_the_exponents_parity) {
    mp::mp_for_each<float_types>([](auto t) {
        using T = decltype(t);
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), std::int64_t{-2147483649}), f<T>(-1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), std::int32_t{(1 << 24) + 1}), f<T>(-1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), (std::int64_t{1} << 53) + 1), f<T>(-1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), std::numeric_limits<std::int64_t>::max()), f<T>(-1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), std::numeric_limits<std::uint64_t>::max()), f<T>(-1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-1.0), std::numeric_limits<std::int64_t>::min()), f<T>(1.0)) << type_name<T>();
        EXPECT_SAME(d::pow_fn{}(f<T>(-2.0), std::numeric_limits<std::int64_t>::max()), f<T>(-inf_v<double>()))
            << type_name<T>();
    });
    // The magnitude too: (1 + 2^-52) ** (2^53 + 1) is e^2 (to 2^-104), and (1 + 2^-23) ** (2^24 + 1) in f32 is
    // the f32 nearest to e^(2 + 2^-24 + ...) (the exponent rounded to f32 would give e^2 exactly, another f32).
    const double e2 = std::exp(2.0);
    EXPECT_NEAR(d::pow_fn{}(1.0 + 0x1p-52, (std::int64_t{1} << 53) + 1), e2, 2 * e2 * 0x1p-52);
    const long double want32 = std::pow(1.0L + 0x1p-23L, static_cast<long double>((1 << 24) + 1));
    EXPECT_SAME(d::pow_fn{}(1.0f + 0x1p-23f, std::int32_t{(1 << 24) + 1}), static_cast<float>(want32));
}

// A complex base with an integer exponent (an integer dtype, or a complex value that is an integer) multiplies by
// repeated squaring; exp(e * log(base)) gave (-1+0j) ** 2 = 1+1.75e-7j.
TEST(functors, complex_pow_with_an_integer_exponent_multiplies) {
    const auto check = [](auto z) {
        using C = decltype(z);
        using F = typename C::value_type;
        const C r1 = d::pow_fn{}(C(-1, 0), std::int32_t{2});
        const C r2 = d::pow_fn{}(C(-1, 0), C(2, 0));
        for (const C r : {r1, r2}) {
            EXPECT_EQ(r.real(), F(1));
            EXPECT_EQ(r.imag(), F(0));
            EXPECT_TRUE(std::signbit(r.imag())) << "(-1+0j) ** 2 is 1-0j";
        }
        EXPECT_EQ(d::pow_fn{}(C(0, 1), std::int64_t{2}), C(-1, 0));
        EXPECT_EQ(d::pow_fn{}(C(0, 1), std::int64_t{3}), C(0, -1));
        EXPECT_EQ(d::pow_fn{}(C(0, 1), std::uint8_t{4}), C(1, 0));
        EXPECT_EQ(d::pow_fn{}(C(nan_v<F>(), 1), std::int32_t{0}), C(1, 0));
        EXPECT_EQ(d::pow_fn{}(C(2, 0), std::int32_t{-2}), C(F(0.25), 0));
        EXPECT_EQ(d::pow_fn{}(C(1, 2), true), C(1, 2));
        EXPECT_EQ(d::pow_fn{}(C(1, 2), false), C(1, 0));
        // z ** n against the product of n factors in long double, n = -6..6: within 2 * |n| eps normwise.
        for (const C base : {C(F(1.5), F(-0.25)), C(F(-0.75), F(3)), C(F(1e3), F(1))}) {
            for (int n = -6; n <= 6; ++n) {
                std::complex<long double> want(1, 0);
                const std::complex<long double> b(base.real(), base.imag());
                for (int k = 0; k < std::abs(n); ++k) want *= b;
                if (n < 0) want = std::complex<long double>(1, 0) / want;
                const C got = d::pow_fn{}(base, n);
                const long double error = std::abs(std::complex<long double>(got.real(), got.imag()) - want);
                EXPECT_LE(error, (2 * std::abs(n) + 1) * std::abs(want) * std::numeric_limits<F>::epsilon())
                    << base << " ** " << n << " = " << got;
                EXPECT_EQ(d::pow_fn{}(base, C(F(n), 0)), got) << "an integer-valued complex exponent";
            }
        }
    };
    check(std::complex<float>{});
    check(std::complex<double>{});
    // (3e9+1j) ** 2 in c64: one product, (9e18 - 1, 6e9) each part rounded once.
    using F = std::complex<float>;
    EXPECT_EQ(d::pow_fn{}(F(3e9f, 1), std::int32_t{2}), F(9e18f, 6e9f));
}

// The accuracy README states for complex functions: within 4 eps of the exact result, normwise
// (|got - exact| <= 4 eps |exact|), against long double (64-bit mantissa) over parts in [-10, 10]. Powers with a
// general exponent compute exp(w * log(z)) in a wider type, so a large |w * log(z)| keeps that bound too (in
// complex128 itself, pow(7, 3.5 + 20j) was 1527 eps off in the cross-check, and 31 eps on this test's inputs).
TEST(functors, complex_functions_are_within_4_eps_normwise) {
    const auto check = [](auto zero, const char* name, auto fn, auto reference, double lo, double hi) {
        using C = decltype(zero);
        using F = typename C::value_type;
        using L = std::complex<long double>;
        std::uint64_t state = 0x2545f4914f6cdd1dull;
        const auto uniform = [&] {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            return lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1p-53;
        };
        double worst = 0;
        for (int k = 0; k < 20000; ++k) {
            const C z(static_cast<F>(uniform()), static_cast<F>(uniform()));
            const C got = fn(z);
            const L want = reference(L(z.real(), z.imag()));
            const long double norm = std::abs(want);
            if (!(norm > 0) || norm > std::numeric_limits<F>::max() || norm < std::numeric_limits<F>::min()) continue;
            const long double error = std::abs(L(got.real(), got.imag()) - want) / norm;
            worst = std::max(worst, static_cast<double>(error / std::numeric_limits<F>::epsilon()));
        }
        EXPECT_LE(worst, 4.0) << name << (sizeof(F) == 4 ? " c64" : " c128");
    };
    const auto each_type = [&](auto zero) {
        using C = decltype(zero);
        using L = std::complex<long double>;
        check(zero, "exp", d::exp_fn{}, [](L z) { return std::exp(z); }, -10, 10);
        check(zero, "log", d::log_fn{}, [](L z) { return std::log(z); }, -10, 10);
        check(zero, "sqrt", d::sqrt_fn{}, [](L z) { return std::sqrt(z); }, -10, 10);
        check(zero, "sin", d::sin_fn{}, [](L z) { return std::sin(z); }, -10, 10);
        check(zero, "cos", d::cos_fn{}, [](L z) { return std::cos(z); }, -10, 10);
        check(zero, "tanh", d::tanh_fn{}, [](L z) { return std::tanh(z); }, -10, 10);
        check(zero, "z ** (0.5+1.25j)", [](C z) { return d::pow_fn{}(z, C(0.5f, 1.25f)); },
              [](L z) { return std::pow(z, L(0.5L, 1.25L)); }, -10, 10);
        check(zero, "z ** (30.5+40.25j)", [](C z) { return d::pow_fn{}(z, C(30.5f, 40.25f)); },
              [](L z) { return std::pow(z, L(30.5L, 40.25L)); }, -3, 3);
        check(zero, "7 ** w", [](C w) { return d::pow_fn{}(C(7, 0), w); },
              [](L w) { return std::pow(L(7, 0), w); }, -20, 20);
    };
    each_type(std::complex<float>{});
    each_type(std::complex<double>{});
}

TEST(functors, where_and_identity) {
    EXPECT_EQ(d::where_fn{}(true, 1, 2), 1);
    EXPECT_EQ(d::where_fn{}(false, 1, 2), 2);
    EXPECT_TRUE(std::isnan(d::where_fn{}(true, nan_v<double>(), 0.0)));
    EXPECT_EQ(d::identity_fn{}(std::int8_t{-3}), std::int8_t{-3});
}

} // namespace

// exp of f16 and bf16 for GPU code (small_float_exp: in float, settled in double near a rounding boundary) is
// the host's correctly rounded value (exp in double, rounded once) for every one of the 65536 values of each
// type. The host runs the same explicitly rounded steps the device does (fma_rn, add_rn, mul_rn), so this checks
// the method without a GPU; test/gpu/gpu_test.cu checks the device's own result against the host.
template <class T>
void expect_small_float_exp_of_every_value() {
    int wrong = 0;
    for (std::uint32_t i = 0; i < 65536; ++i) {
        const T x = Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(i));
        const T got = mixt::detail::small_float_exp(x);
        const T want = mixt::detail::exp_fn_in_double{}(x);
        const auto gb = Eigen::numext::bit_cast<std::uint16_t>(got), wb = Eigen::numext::bit_cast<std::uint16_t>(want);
        const bool both_nan = Eigen::numext::isnan(got) && Eigen::numext::isnan(want);
        if (gb != wb && !both_nan && ++wrong <= 3)
            ADD_FAILURE() << "exp of bits " << i << ": " << static_cast<float>(got) << " instead of " << static_cast<float>(want);
    }
    EXPECT_EQ(wrong, 0);
}
TEST(functors, small_float_exp_is_correctly_rounded_for_every_value) {
    expect_small_float_exp_of_every_value<Eigen::half>();
    expect_small_float_exp_of_every_value<Eigen::bfloat16>();
}
