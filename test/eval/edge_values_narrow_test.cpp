// The narrow dtypes (float8/6/4, int4/2) in the edge-value tables, through real expressions (see
// edge_values.hpp), in a file of their own so that the classic 15 x 15 cast table keeps its size:
//   - mixt::cast into the narrow dtypes, on the source's own edge values and on the target's: every finite
//     value, the midpoints between neighbours and the source's values next to each, the overflow threshold and
//     beyond, half and a quarter of the least positive value; for the narrow ints every value, the halves, the
//     points where they wrap; out of the narrow dtypes on every code; between them; all bit for bit against
//     mixt::convert (which dtype/narrow_test.cpp checks against the formats' definitions), on the fused loop;
//   - + - * / sqrt, -, abs, maximum, < and != of one narrow dtype of each family with itself on every pair of
//     its edge codes (every code of the 4- and 6-bit formats and the narrow ints), against the rule of
//     docs/semantics.md computed here: the exact (double) result rounded once by T(double) (e8m0fnu's product
//     and quotient through float first: its range is f32's), the integer result wrapped by T(int); on the
//     fused loop, and for e4m3fn, e8m0fnu and int4 on the lowering too (MIXT_TEST_EDGE_LOWERING).
// Which pairs: see the lists below (each pair is a compile of the loops of its own).

#include "edge_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

namespace {

namespace mp = boost::mp11;
using edge::paths;
namespace d = mixt::detail;

using narrow_floats = mp::mp_list<mixt::float8_e3m4, mixt::float8_e4m3, mixt::float8_e4m3fn, mixt::float8_e4m3fnuz,
                                  mixt::float8_e4m3b11fnuz, mixt::float8_e5m2, mixt::float8_e5m2fnuz,
                                  mixt::float8_e8m0fnu, mixt::float6_e2m3fn, mixt::float6_e3m2fn, mixt::float4_e2m1fn>;
using narrow_ints = mp::mp_list<mixt::int4, mixt::uint4, mixt::int2, mixt::uint2>;
using narrow_types = mp::mp_append<narrow_floats, narrow_ints>;
// One of each family: what differs between the formats of a family is their constants, which the casts
// from and to the classic dtypes check for every format.
using narrow_cover = mp::mp_list<mixt::float8_e5m2, mixt::float8_e4m3fn, mixt::float8_e4m3fnuz, mixt::float8_e8m0fnu,
                                 mixt::float6_e2m3fn, mixt::float4_e2m1fn, mixt::int4, mixt::uint2>;

template <class T>
constexpr bool is_narrow_float = mixt::is_narrow_float_v<T>;

template <class T>
constexpr unsigned code_count() {
    if constexpr (is_narrow_float<T>)
        return 1u << T::format.bits;
    else
        return 1u << T::bits_wide;
}

template <class T>
double value_of(T x) {
    if constexpr (is_narrow_float<T>)
        return static_cast<double>(static_cast<float>(x));
    else
        return x.value();
}

template <class T>
std::vector<T> every_code() {
    std::vector<T> v;
    for (unsigned c = 0; c < code_count<T>(); ++c) v.push_back(T::from_bits(static_cast<std::uint8_t>(c)));
    return v;
}

// The edge codes of T: every code of a 4- or 6-bit format or a narrow int; of an 8-bit float, both signs of
// zero, the least subnormals, the greatest subnormal and least normals, 1 and its neighbours, the greatest
// finite values and every code above them (inf, NaNs).
template <class T>
std::vector<T> edge_codes() {
    if constexpr (!is_narrow_float<T>) {
        return every_code<T>();
    } else {
        if (T::format.bits < 8) return every_code<T>();
        using tr = typename T::traits;
        const int M = T::format.mantissa;
        const int one = T(1.0).bits() & tr::magnitude_mask;
        std::set<int> mags{0, 1, 2, 3, (1 << M) - 1, 1 << M, (1 << M) + 1, one - 1, one, one + 1,
                           tr::max_code - 2, tr::max_code - 1};
        for (int m = tr::max_code; m <= tr::magnitude_mask; ++m) mags.insert(m);
        std::vector<T> v;
        for (const int m : mags) {
            if (m < 0 || m > tr::magnitude_mask) continue;
            v.push_back(T::from_bits(static_cast<std::uint8_t>(m)));
            if (tr::has_sign) v.push_back(T::from_bits(static_cast<std::uint8_t>(m | tr::sign_bit)));
        }
        return v;
    }
}

// The value of S next to x, away from zero (up) or toward it.
template <class S>
S next_to(S x, bool up) {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
        return std::nextafter(x, up ? std::copysign(std::numeric_limits<S>::infinity(), x) : S(0));
    } else {
        std::uint16_t b;
        std::memcpy(&b, &x, 2);
        if ((b & 0x7fff) == 0) return up ? edge::from_bits<S>(b + 1u) : x;
        b = static_cast<std::uint16_t>(up ? b + 1 : b - 1);
        return edge::from_bits<S>(b);
    }
}

// The doubles where a conversion into T decides something: T's values, the midpoints between them, the
// overflow threshold and beyond, half the least subnormal (a tie with zero); for the narrow ints every value
// and the points where they wrap or saturate, and halves (truncation).
template <class T>
std::vector<double> target_points() {
    std::vector<double> pts;
    if constexpr (is_narrow_float<T>) {
        std::vector<double> vals;
        for (const T x : every_code<T>()) {
            const double v = value_of(x);
            if (std::isfinite(v) && v >= 0) vals.push_back(v);
        }
        std::sort(vals.begin(), vals.end());
        vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
        for (std::size_t i = 0; i < vals.size(); ++i) {
            pts.push_back(vals[i]);
            if (i + 1 < vals.size()) pts.push_back((vals[i] + vals[i + 1]) / 2);
        }
        const double top = vals.back();
        const double half_ulp = std::ldexp(1.0, std::ilogb(top) - T::format.mantissa - 1);
        pts.push_back(top + half_ulp); // the overflow threshold: rounds away (ties to even, max's code is odd)
        pts.push_back(top + 2 * half_ulp);
        pts.push_back(2 * top);
        // The least positive value's half: a tie with zero (e8m0fnu: its least is 2^-127, the tie rounds up).
        pts.push_back(vals[0] == 0 ? vals[1] / 2 : vals[0] / 2);
        pts.push_back(vals[0] == 0 ? vals[1] / 4 : vals[0] / 4);
    } else {
        for (int k = -20; k <= 20; ++k) {
            pts.push_back(k);
            pts.push_back(k + 0.5);
            pts.push_back(k + 0.75);
        }
        for (const double w : {64.0, 128.0, 256.0, 65536.0, 4294967296.0})
            for (const double d : {-1.0, 0.0, 1.0, 2.0, 7.0, 8.0}) pts.push_back(w + d);
    }
    return pts;
}

// Values of S for a cast into T: S's own edge values, and T's points in S with S's neighbours of each, both signs.
template <class S, class T>
std::vector<S> cast_sources() {
    std::vector<S> v = edge::specials<S>();
    if constexpr (!std::is_same_v<S, bool>) {
        for (const double p : target_points<T>()) {
            for (const double sp : {p, -p}) {
                if constexpr (d::is_complex_v<S>) {
                    using R = typename S::value_type;
                    v.emplace_back(mixt::convert<R>(sp), R(0));
                    v.emplace_back(mixt::convert<R>(sp), R(1));
                } else if constexpr (std::is_integral_v<S>) {
                    if (std::is_unsigned_v<S> && sp < 0) continue;
                    if (std::fabs(sp) >= 0x1p63) continue;
                    const auto i = static_cast<std::int64_t>(sp);
                    for (std::int64_t di = -1; di <= 1; ++di) v.push_back(static_cast<S>(i + di));
                } else {
                    const S s = mixt::convert<S>(sp);
                    v.push_back(s);
                    if (std::isfinite(static_cast<double>(s))) {
                        v.push_back(next_to(s, true));
                        v.push_back(next_to(s, false));
                    }
                }
            }
        }
    }
    return v;
}

// mixt::cast<To>(values) against mixt::convert<To>, bit for bit.
template <paths Paths, class To, class From>
void check_cast(const std::vector<From>& values) {
    const edge::pairs<From, From> p(values, {From{}});
    edge::check_paths<Paths>(
        "cast<" + edge::name<To>() + ">(" + edge::name<From>() + ")", [](auto x) { return mixt::cast<To>(std::move(x)); },
        [&](Eigen::Index k) { return mixt::convert<To>(p.a(k)); }, [](const To& x, const To& y) { return edge::same_bits(x, y); },
        p.a);
}

// Each cast and operation is a compile of the loops of its own (0.2 s with GCC at -O3; this file is held to about
// a minute), so the tables take the pairs where the pair decides the path, and one dtype of each family where
// only the format's constants differ:
//   into a narrow float: the classic dtypes of each route (bool, 8-bit ints, i32 (beyond f32's 24 bits), 64-bit
//   ints (beyond f64's 53), f16, bf16, f32, f64, c64) into one float of each family; into int4 and uint2 from
//   one integer of each width and signedness and the floats;
//   out of a narrow dtype: every one (its decoder's constants) into f32, f16 and i32 (f32 to the others is
//   the classic cast table's);
//   between them: each float family's representative into the next and the previous of the list (a ring: wider
//   into narrower and back, fn into fnuz, e8m0fnu both ways), and int4 <-> uint2 <-> e4m3fn.
using into_float_sources = mp::mp_list<bool, std::uint8_t, std::uint64_t, std::int8_t, std::int32_t, std::int64_t,
                                       Eigen::half, Eigen::bfloat16, float, double, std::complex<float>>;
using into_int_sources = mp::mp_list<std::int8_t, std::uint32_t, std::int64_t, std::uint64_t, float, double>;
using decode_targets = mp::mp_list<float, Eigen::half, std::int32_t>;
using cover_floats = mp::mp_list<mixt::float8_e5m2, mixt::float8_e4m3fn, mixt::float8_e4m3fnuz, mixt::float8_e8m0fnu,
                                 mixt::float6_e2m3fn, mixt::float4_e2m1fn>;

TEST(edge_values_narrow, casts_from_classic_dtypes) {
    mp::mp_for_each<narrow_cover>([](auto t) {
        using T = decltype(t);
        using sources = std::conditional_t<is_narrow_float<T>, into_float_sources, into_int_sources>;
        mp::mp_for_each<sources>([](auto s) { check_cast<paths::fused_only, T>(cast_sources<decltype(s), T>()); });
    });
}

TEST(edge_values_narrow, casts_to_classic_dtypes) {
    mp::mp_for_each<narrow_types>([](auto t) {
        using T = decltype(t);
        const std::vector<T> codes = every_code<T>();
        mp::mp_for_each<decode_targets>([&](auto s) {
            check_cast<paths::fused_only, decltype(s)>(codes);
        });
    });
}

TEST(edge_values_narrow, casts_between_narrow_dtypes) {
    using ring = cover_floats;
    constexpr std::size_t n = mp::mp_size<ring>::value;
    mp::mp_for_each<mp::mp_iota_c<n>>([](auto i) {
        using A = mp::mp_at_c<ring, i>;
        const std::vector<A> codes = every_code<A>();
        check_cast<paths::fused_only, mp::mp_at_c<ring, (i + 1) % n>>(codes);
        check_cast<paths::fused_only, mp::mp_at_c<ring, (i + n - 1) % n>>(codes);
    });
    check_cast<paths::fused_only, mixt::uint2>(every_code<mixt::int4>());
    check_cast<paths::fused_only, mixt::int4>(every_code<mixt::uint2>());
    check_cast<paths::fused_only, mixt::float8_e4m3fn>(every_code<mixt::int4>());
    check_cast<paths::fused_only, mixt::int4>(every_code<mixt::float8_e4m3fn>());
    check_cast<paths::fused_only, mixt::uint2>(every_code<mixt::float8_e4m3fn>());
}

// Equal codes, or both NaN (arithmetic does not document which NaN: the NaN contract).
template <class T>
bool same_result(const T& got, const T& want) {
    if constexpr (is_narrow_float<T>)
        return got.bits() == want.bits() || (std::isnan(value_of(got)) && std::isnan(value_of(want)));
    else
        return edge::same_bits(got, want);
}

// Every operation of T with itself on every pair of T's edge codes, against the rule computed on the operands'
// exact values: the exact result, then one rounding (floats) or the low bits (ints).
// The lowering runs the same scalar conversions for every format: it checks one float format with NaN, e8m0fnu
// and int4.
template <class T>
constexpr paths op_paths = std::is_same_v<T, mixt::float8_e4m3fn> || std::is_same_v<T, mixt::float8_e8m0fnu> ||
                                   std::is_same_v<T, mixt::int4>
                               ? paths::both
                               : paths::fused_only;

template <class T>
void check_ops() {
    const edge::pairs<T, T> p(edge_codes<T>(), edge_codes<T>());
    const std::string n = edge::name<T>();
    const auto binary = [&](const char* what, auto make, auto want) {
        using R = mixt::value_t<decltype(make(mixt::lazy(p.a), mixt::lazy(p.b)))>;
        edge::check_paths<op_paths<T>>(
            std::string(what) + "(" + n + ", " + n + ")", make,
            [&](Eigen::Index k) { return static_cast<R>(want(value_of(p.a(k)), value_of(p.b(k)))); },
            [](const R& x, const R& y) { return same_result(x, y); }, p.a, p.b);
    };
    const auto unary = [&](const char* what, auto make, auto want) {
        using R = mixt::value_t<decltype(make(mixt::lazy(p.a)))>;
        edge::check_paths<op_paths<T>>(
            std::string(what) + "(" + n + ")", make, [&](Eigen::Index k) { return static_cast<R>(want(value_of(p.a(k)))); },
            [](const R& x, const R& y) { return same_result(x, y); }, p.a);
    };
    const auto round = [](double x) {
        if constexpr (is_narrow_float<T>)
            return T(x);
        else
            return T(static_cast<std::int64_t>(x));
    };
    // e8m0fnu's range is f32's: a product or quotient outside it is f32's 0 or inf before the rounding.
    const auto f32_range = [](double x) { return T::value_dtype == mixt::dtype::float8_e8m0fnu ? double(float(x)) : x; };
    binary("add", [](auto x, auto y) { return std::move(x) + std::move(y); }, [=](double x, double y) { return round(x + y); });
    binary("subtract", [](auto x, auto y) { return std::move(x) - std::move(y); }, [=](double x, double y) { return round(x - y); });
    binary("multiply", [](auto x, auto y) { return std::move(x) * std::move(y); }, [=](double x, double y) { return round(f32_range(x * y)); });
    binary("maximum", [](auto x, auto y) { return mixt::maximum(std::move(x), std::move(y)); }, [=](double x, double y) {
        if (std::isnan(x) || std::isnan(y)) return round(NAN);
        if (x == y) return round(std::signbit(x) ? y : x); // +0 over -0
        return round(x < y ? y : x);
    });
    unary("negate", [](auto x) { return -std::move(x); }, [=](double x) { return round(-x); });
    unary("abs", [](auto x) { return mixt::abs(std::move(x)); }, [=](double x) { return round(std::fabs(x)); });
    if constexpr (is_narrow_float<T>) {
        binary("divide", [](auto x, auto y) { return std::move(x) / std::move(y); }, [=](double x, double y) { return round(f32_range(x / y)); });
        unary("sqrt", [](auto x) { return mixt::sqrt(std::move(x)); }, [=](double x) { return round(std::sqrt(x)); });
    }
    // The comparisons: an ordered one and the unordered != (== is its negation in the same code).
    binary("less", [](auto x, auto y) { return std::move(x) < std::move(y); }, [](double x, double y) { return x < y; });
    binary("not_equal", [](auto x, auto y) { return std::move(x) != std::move(y); }, [](double x, double y) { return x != y; });
}

TEST(edge_values_narrow, operations_of_one_narrow_dtype_of_each_family_with_itself) {
    mp::mp_for_each<narrow_cover>([](auto t) { check_ops<decltype(t)>(); });
}

} // namespace
