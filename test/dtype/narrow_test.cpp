// The narrow dtypes' storage types (dtype/narrow_float.hpp, dtype/narrow_int.hpp) and their conversions
// (mixt::convert), against a reference written here from each format's definition: the value of every code
// from its fields with std::ldexp, and rounding as a search in the sorted list of the format's values, with the
// specials of each format spelled out as the codes ml_dtypes documents (not derived from mixt's tables).
//   - decode: every code of every format;
//   - encode: every f16 and every bf16 value, and every f32 and double around each midpoint between two
//     neighbouring values, the overflow threshold and the smallest subnormal, of each format, both signs;
//   - the specials (NaN, inf, zeros), narrow to narrow, integers, bool, complex, and Eigen arrays of them.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/dtype/storage.hpp"

namespace {

using mixt::dtype;

// What a format is, written from its definition (the sign bit, the fields, and which codes are special).
struct reference_format {
    dtype d;
    int bits, e_bits, m_bits, bias;
    bool has_sign;
    // Specials, as codes: -1 where the format has none.
    int inf_code;        // +inf
    int nan_made;        // the NaN the encoder makes from +NaN (ml_dtypes' quiet NaN)
    int nan_made_neg;    // from -NaN
    bool overflow_nan;   // overflow and inf encode to NaN (fn, fnuz, e8m0)
    bool saturates;      // overflow and inf encode to +-max (float6, float4)
    bool unsigned_zero;  // no -0 (fnuz): -0 and negatives rounding to 0 are +0
};

const std::vector<reference_format>& formats() {
    static const std::vector<reference_format> f = {
        {dtype::float8_e3m4, 8, 3, 4, 3, true, 0x70, 0x78, 0xf8, false, false, false},
        {dtype::float8_e4m3, 8, 4, 3, 7, true, 0x78, 0x7c, 0xfc, false, false, false},
        {dtype::float8_e5m2, 8, 5, 2, 15, true, 0x7c, 0x7e, 0xfe, false, false, false},
        {dtype::float8_e4m3fn, 8, 4, 3, 7, true, -1, 0x7f, 0xff, true, false, false},
        {dtype::float8_e4m3fnuz, 8, 4, 3, 8, true, -1, 0x80, 0x80, true, false, true},
        {dtype::float8_e4m3b11fnuz, 8, 4, 3, 11, true, -1, 0x80, 0x80, true, false, true},
        {dtype::float8_e5m2fnuz, 8, 5, 2, 16, true, -1, 0x80, 0x80, true, false, true},
        {dtype::float8_e8m0fnu, 8, 8, 0, 127, false, -1, 0xff, 0xff, true, false, false},
        {dtype::float6_e2m3fn, 6, 2, 3, 1, true, -1, 0x20, 0x00, false, true, false},
        {dtype::float6_e3m2fn, 6, 3, 2, 3, true, -1, 0x20, 0x00, false, true, false},
        {dtype::float4_e2m1fn, 4, 2, 1, 1, true, -1, 0x08, 0x00, false, true, false},
    };
    return f;
}

int sign_bit(const reference_format& f) { return f.has_sign ? 1 << (f.bits - 1) : 0; }

bool ref_is_nan(const reference_format& f, int c) {
    const int mag = c & ~sign_bit(f);
    switch (f.d) {
    case dtype::float8_e3m4: return mag > 0x70;
    case dtype::float8_e4m3: return mag > 0x78;
    case dtype::float8_e5m2: return mag > 0x7c;
    case dtype::float8_e4m3fn: return mag == 0x7f;
    case dtype::float8_e4m3fnuz:
    case dtype::float8_e4m3b11fnuz:
    case dtype::float8_e5m2fnuz: return c == 0x80;
    case dtype::float8_e8m0fnu: return c == 0xff;
    default: return false;
    }
}

// The value of code c (NaN codes excluded), from the fields.
double ref_value(const reference_format& f, int c) {
    const bool neg = f.has_sign && (c & sign_bit(f)) != 0;
    const int mag = c & ~sign_bit(f);
    if (f.inf_code >= 0 && mag == f.inf_code) return neg ? -INFINITY : INFINITY;
    const int field = mag >> f.m_bits;
    const int mant = mag & ((1 << f.m_bits) - 1);
    double v = 0;
    if (f.d == dtype::float8_e8m0fnu)
        v = std::ldexp(1.0, field - f.bias);
    else if (field == 0)
        v = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.m_bits);
    else
        v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -f.m_bits), field - f.bias);
    return neg ? -v : v;
}

// The finite non-negative codes in increasing order of value (+0 first where the format has a zero).
std::vector<int> ascending_codes(const reference_format& f) {
    std::vector<int> out;
    const int count = f.has_sign ? 1 << (f.bits - 1) : 1 << f.bits;
    for (int c = 0; c < count; ++c) {
        if (ref_is_nan(f, c) || (f.inf_code >= 0 && c == f.inf_code)) continue;
        out.push_back(c); // magnitudes ascend with the code in every format
    }
    return out;
}

// The finite non-negative values of f in increasing order, with their codes (built once per format).
struct value_table {
    std::vector<int> codes;
    std::vector<double> values;
};
const value_table& table_of(const reference_format& f) {
    static std::array<value_table, mixt::dtype_count> tables;
    auto& t = tables[static_cast<std::size_t>(f.d)];
    if (t.codes.empty()) {
        t.codes = ascending_codes(f);
        for (int c : t.codes) t.values.push_back(ref_value(f, c));
    }
    return t;
}

// x rounded to format f by the definition: the nearest value, ties to the code of even mantissa (e8m0fnu: ties
// up, as its only significand bit is the implicit 1; below 2^-126 its codes 0x00 and 0x01 are rounded to as
// a subnormal step of 2^-126 would be, ml_dtypes' behaviour), beyond the largest value the format's overflow.
int ref_encode(const reference_format& f, double x) {
    const bool neg = std::signbit(x);
    const int s = neg ? sign_bit(f) : 0;
    if (std::isnan(x)) return neg ? f.nan_made_neg : f.nan_made;
    if (f.d == dtype::float8_e8m0fnu && (neg || x == 0)) return 0xff;
    const auto& codes = table_of(f).codes;
    const auto& values = table_of(f).values;
    const int max_code = codes.back();
    auto overflow = [&] {
        if (f.saturates) return s | max_code;
        if (f.overflow_nan) return neg ? f.nan_made_neg : f.nan_made;
        return s | f.inf_code;
    };
    const double a = std::fabs(x);
    if (std::isinf(a)) return overflow();
    const int zero = f.unsigned_zero ? 0 : s;
    if (f.d == dtype::float8_e8m0fnu && a < std::ldexp(1.0, -126)) return a <= std::ldexp(1.0, -127) ? 0x00 : 0x01;
    // The step after the largest value, as the format would continue (its ulp at the top binade).
    const double vmax = values.back();
    const double top_ulp = f.d == dtype::float8_e8m0fnu ? vmax : std::ldexp(1.0, std::ilogb(vmax) - f.m_bits);
    if (a >= vmax) {
        const double mid = vmax + top_ulp / 2;
        if (a < mid) return s | max_code;
        if (a > mid) return overflow();
        // A tie: the even neighbour. The next code's mantissa would be max's + 1, so the tie stays at max exactly
        // when max's mantissa is even (e8m0fnu: never).
        const bool max_even = f.d != dtype::float8_e8m0fnu && (max_code & 1) == 0;
        return max_even ? (s | max_code) : overflow();
    }
    // values[i] <= a < values[i + 1]
    const auto i = static_cast<std::size_t>(std::upper_bound(values.begin(), values.end(), a) - values.begin()) - 1;
    const double mid = (values[i] + values[i + 1]) / 2; // exact: a few bits
    int pick = 0;
    if (a < mid)
        pick = codes[i];
    else if (a > mid)
        pick = codes[i + 1];
    else if (f.d == dtype::float8_e8m0fnu)
        pick = codes[i + 1];
    else
        pick = (codes[i] & 1) == 0 ? codes[i] : codes[i + 1];
    if (pick == 0) return zero;
    return s | pick;
}

template <dtype D>
const reference_format& format_of() {
    for (const auto& f : formats())
        if (f.d == D) return f;
    throw std::logic_error("no such format");
}

std::string hex(int c) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%02x", c);
    return b;
}

template <dtype D>
void check_decode() {
    using T = mixt::narrow_float<D>;
    const auto& f = format_of<D>();
    for (int c = 0; c < (1 << f.bits); ++c) {
        const T x = T::from_bits(static_cast<std::uint8_t>(c));
        const double d = mixt::convert<double>(x);
        const float fl = static_cast<float>(x);
        if (ref_is_nan(f, c)) {
            EXPECT_TRUE(std::isnan(d) && std::isnan(fl)) << mixt::name(D) << " " << hex(c);
            // The sign of a NaN code is its sign bit (an fnuz NaN, 0x80, is -NaN); always quiet.
            const bool neg = f.has_sign && (c & sign_bit(f)) != 0;
            EXPECT_EQ(std::signbit(fl), neg) << mixt::name(D) << " " << hex(c);
            EXPECT_EQ(mixt::detail::f32_bits(fl) & 0x7fffffffu, 0x7fc00000u) << mixt::name(D) << " " << hex(c);
            continue;
        }
        const double want = ref_value(f, c);
        EXPECT_EQ(d, want) << mixt::name(D) << " " << hex(c);
        EXPECT_EQ(std::signbit(d), std::signbit(want)) << mixt::name(D) << " " << hex(c);
        EXPECT_EQ(static_cast<double>(fl), want) << mixt::name(D) << " " << hex(c);
        // Every non-NaN code round-trips (its -0 included).
        EXPECT_EQ(T(d).bits(), c) << mixt::name(D) << " " << hex(c);
        EXPECT_EQ(T(fl).bits(), c) << mixt::name(D) << " " << hex(c);
    }
}

template <dtype D>
void check_encode_one(double x, int& failures) {
    using T = mixt::narrow_float<D>;
    const auto& f = format_of<D>();
    const int want = ref_encode(f, x);
    const int got = T(x).bits();
    const int got_convert = mixt::convert<T>(x).bits();
    if (got != want || got_convert != want) {
        if (++failures <= 20)
            ADD_FAILURE() << mixt::name(D) << " of " << std::hexfloat << x << std::defaultfloat << " (" << x
                          << "): " << hex(got) << ", reference " << hex(want);
    }
    // From float (when x is one), through mixt::convert as every expression converts.
    const float xf = static_cast<float>(x);
    if (static_cast<double>(xf) == x || std::isnan(x)) {
        const int gf = mixt::convert<T>(xf).bits();
        if (gf != want && ++failures <= 20)
            ADD_FAILURE() << mixt::name(D) << " of float " << xf << ": " << hex(gf) << ", reference " << hex(want);
    }
}

template <dtype D>
void check_encode() {
    const auto& f = format_of<D>();
    int failures = 0;
    // Every f16 and every bf16 value (both exact in double), through their own types too.
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const auto h = mixt::detail::half_from_bits(static_cast<std::uint16_t>(b));
        const auto bf = mixt::detail::bf16_from_bits(static_cast<std::uint16_t>(b));
        check_encode_one<D>(mixt::convert<double>(h), failures);
        check_encode_one<D>(mixt::convert<double>(bf), failures);
        using T = mixt::narrow_float<D>;
        const int want_h = ref_encode(f, mixt::convert<double>(h));
        const int want_bf = ref_encode(f, mixt::convert<double>(bf));
        if (mixt::convert<T>(h).bits() != want_h && ++failures <= 20) ADD_FAILURE() << mixt::name(D) << " of f16 bits " << hex(static_cast<int>(b));
        if (mixt::convert<T>(bf).bits() != want_bf && ++failures <= 20) ADD_FAILURE() << mixt::name(D) << " of bf16 bits " << hex(static_cast<int>(b));
    }
    // Around every midpoint between neighbours, the overflow threshold and half the smallest subnormal: the
    // midpoint itself, and floats and doubles 1 and 2 ulps either side.
    const auto& values = table_of(f).values;
    std::vector<double> points;
    for (std::size_t i = 0; i + 1 < values.size(); ++i) points.push_back((values[i] + values[i + 1]) / 2);
    const double vmax = values.back();
    const double top_ulp = f.d == dtype::float8_e8m0fnu ? vmax : std::ldexp(1.0, std::ilogb(vmax) - f.m_bits);
    points.push_back(vmax + top_ulp / 2);
    points.push_back(vmax + top_ulp);
    points.push_back(values.front() == 0 ? values[1] / 2 : values.front() / 2);
    for (double v : values) points.push_back(v);
    for (double p : points) {
        for (double sgn : {1.0, -1.0}) {
            const double m = sgn * p;
            check_encode_one<D>(m, failures);
            float lo = static_cast<float>(m), hi = lo;
            double dlo = m, dhi = m;
            for (int k = 0; k < 2; ++k) {
                lo = std::nextafter(lo, -INFINITY);
                hi = std::nextafter(hi, INFINITY);
                dlo = std::nextafter(dlo, -INFINITY);
                dhi = std::nextafter(dhi, INFINITY);
                check_encode_one<D>(lo, failures);
                check_encode_one<D>(hi, failures);
                check_encode_one<D>(dlo, failures);
                check_encode_one<D>(dhi, failures);
            }
        }
    }
    // The specials and the extremes of double.
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (double x : {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                     -std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::max(),
                     std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min(), 1e-300,
                     std::ldexp(1.0, -127), std::ldexp(1.25, -127), std::ldexp(1.0, -126), std::ldexp(1.0, 128)})
        check_encode_one<D>(x, failures);
    EXPECT_EQ(failures, 0) << mixt::name(D);
}

template <dtype D>
void check_narrow_to_narrow() {
    // Every code of D into every other narrow format: decoded exactly, rounded once.
    using From = mixt::narrow_float<D>;
    auto into = [&]<dtype To>() {
        const auto& f = format_of<To>();
        for (int c = 0; c < (1 << format_of<D>().bits); ++c) {
            const From x = From::from_bits(static_cast<std::uint8_t>(c));
            const int got = mixt::convert<mixt::narrow_float<To>>(x).bits();
            // (Into its own type: the value itself, bit for bit, a NaN's code included.)
            const int want = To == D ? c : ref_encode(f, static_cast<double>(static_cast<float>(x)));
            EXPECT_EQ(got, want) << mixt::name(D) << " " << hex(c) << " -> " << mixt::name(To);
        }
    };
    into.template operator()<dtype::float8_e3m4>();
    into.template operator()<dtype::float8_e4m3>();
    into.template operator()<dtype::float8_e5m2>();
    into.template operator()<dtype::float8_e4m3fn>();
    into.template operator()<dtype::float8_e4m3fnuz>();
    into.template operator()<dtype::float8_e4m3b11fnuz>();
    into.template operator()<dtype::float8_e5m2fnuz>();
    into.template operator()<dtype::float8_e8m0fnu>();
    into.template operator()<dtype::float6_e2m3fn>();
    into.template operator()<dtype::float6_e3m2fn>();
    into.template operator()<dtype::float4_e2m1fn>();
}

template <dtype D>
void check_format() {
    check_decode<D>();
    check_encode<D>();
    check_narrow_to_narrow<D>();
}

TEST(narrow_float, every_code_decodes_and_every_boundary_encodes) {
    check_format<dtype::float8_e3m4>();
    check_format<dtype::float8_e4m3>();
    check_format<dtype::float8_e5m2>();
    check_format<dtype::float8_e4m3fn>();
    check_format<dtype::float8_e4m3fnuz>();
    check_format<dtype::float8_e4m3b11fnuz>();
    check_format<dtype::float8_e5m2fnuz>();
    check_format<dtype::float8_e8m0fnu>();
    check_format<dtype::float6_e2m3fn>();
    check_format<dtype::float6_e3m2fn>();
    check_format<dtype::float4_e2m1fn>();
}

// The figures the formats are known by (ml_dtypes' documentation and the OCP specifications), as a check of the
// reference itself.
TEST(narrow_float, known_extremes) {
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e4m3fn>::highest()), 448.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e5m2>::highest()), 57344.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e4m3fnuz>::highest()), 240.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e4m3b11fnuz>::highest()), 30.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e3m4>::highest()), 15.5f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e4m3>::highest()), 240.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float8_e8m0fnu>::highest()), std::ldexp(1.0f, 127));
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float6_e2m3fn>::highest()), 7.5f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float6_e3m2fn>::highest()), 28.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float4_e2m1fn>::highest()), 6.0f);
    EXPECT_EQ(static_cast<float>(Eigen::NumTraits<mixt::float4_e2m1fn>::lowest()), -6.0f);
    EXPECT_EQ(static_cast<float>(mixt::float8_e4m3fn::from_bits(0x01)), std::ldexp(1.0f, -9));
    EXPECT_EQ(static_cast<float>(mixt::float8_e5m2fnuz::from_bits(0x01)), std::ldexp(1.0f, -17));
    EXPECT_EQ(static_cast<float>(mixt::float8_e8m0fnu::from_bits(0x00)), std::ldexp(1.0f, -127));
    // ml_dtypes' examples: 464 is a tie that stays at 448 in e4m3fn, just above it is NaN; e8m0fnu rounds 1.5
    // up to 2 and 0.7 down to 0.5; fnuz has no -0.
    EXPECT_EQ(mixt::float8_e4m3fn(464.0f).bits(), 0x7e);
    EXPECT_EQ(mixt::float8_e4m3fn(464.0001f).bits(), 0x7f);
    EXPECT_EQ(static_cast<float>(mixt::float8_e8m0fnu(1.5f)), 2.0f);
    EXPECT_EQ(static_cast<float>(mixt::float8_e8m0fnu(0.7f)), 0.5f);
    EXPECT_EQ(mixt::float8_e4m3fnuz(-0.0f).bits(), 0x00);
    EXPECT_EQ(mixt::float8_e4m3fn(-0.0f).bits(), 0x80);
    // A double rounds once: 1 + 2^-4 + 2^-30 is above the tie between 1 and 1.125 in e4m3 (through float it
    // would be the tie, and round to 1).
    EXPECT_EQ(static_cast<float>(mixt::float8_e4m3(1.0 + std::ldexp(1.0, -4) + std::ldexp(1.0, -30))), 1.125f);
}

TEST(narrow_float, integers_bool_and_complex) {
    // Integers round once, also above 2^53 (no rounding to double first that would make a tie).
    const std::int64_t below_tie = (std::int64_t{3} << 60) - 1; // just under 1.5 * 2^61
    EXPECT_EQ(static_cast<double>(mixt::convert<mixt::float8_e8m0fnu>(below_tie)), std::ldexp(1.0, 61));
    EXPECT_EQ(static_cast<double>(mixt::convert<mixt::float8_e8m0fnu>(std::int64_t{3} << 60)), std::ldexp(1.0, 62));
    EXPECT_EQ(mixt::convert<mixt::float8_e4m3fn>(std::int32_t{-1000}).bits(), 0xff); // overflow: NaN of its sign
    EXPECT_EQ(mixt::convert<mixt::float8_e5m2>(std::uint64_t{1} << 63).bits(), 0x7c);  // +inf
    EXPECT_EQ(static_cast<float>(mixt::convert<mixt::float4_e2m1fn>(5)), 4.0f);        // tie 5 between 4 and 6: even
    EXPECT_EQ(mixt::convert<mixt::float8_e8m0fnu>(0).bits(), 0xff);                    // no zero
    EXPECT_EQ(mixt::convert<mixt::float8_e8m0fnu>(false).bits(), 0xff);
    EXPECT_EQ(static_cast<float>(mixt::convert<mixt::float8_e4m3fn>(true)), 1.0f);
    // To integers as every float converts (truncated, NaN -> 0, saturated), to bool as != 0 (NaN is true).
    EXPECT_EQ(mixt::convert<std::int8_t>(mixt::float8_e5m2(-57344.0f)), -128);
    EXPECT_EQ(mixt::convert<std::uint8_t>(mixt::float8_e4m3fn(-3.5f)), 0);
    EXPECT_EQ(mixt::convert<std::int32_t>(mixt::float8_e4m3fn(-3.5f)), -3);
    EXPECT_EQ(mixt::convert<std::int32_t>(mixt::float8_e4m3fn::from_bits(0x7f)), 0);
    EXPECT_EQ(mixt::convert<std::int64_t>(mixt::float8_e5m2::from_bits(0x7c)), std::numeric_limits<std::int64_t>::max());
    EXPECT_TRUE(mixt::convert<bool>(mixt::float8_e4m3fnuz::from_bits(0x80)));
    EXPECT_FALSE(mixt::convert<bool>(mixt::float8_e4m3fn::from_bits(0x80)));
    EXPECT_TRUE(mixt::convert<bool>(mixt::float8_e8m0fnu::from_bits(0x00)));
    // Complex: the real part, and back with a zero imaginary part.
    EXPECT_EQ(static_cast<float>(mixt::convert<mixt::float8_e4m3fn>(std::complex<double>(2.5, 7.0))), 2.5f);
    EXPECT_EQ(mixt::convert<std::complex<float>>(mixt::float6_e3m2fn(-28.0f)), std::complex<float>(-28.0f, 0.0f));
    // f16 and bf16 targets round once from the exact value.
    EXPECT_EQ(static_cast<float>(mixt::convert<Eigen::half>(mixt::float8_e5m2(57344.0f))), 57344.0f);
    EXPECT_EQ(static_cast<float>(mixt::convert<Eigen::bfloat16>(mixt::float8_e3m4(15.5f))), 15.5f);
}

template <dtype D>
void check_narrow_int() {
    using T = mixt::narrow_int<D>;
    const int bits = D == dtype::int4 || D == dtype::uint4 ? 4 : 2;
    const bool is_signed = D == dtype::int4 || D == dtype::int2;
    const int lo = is_signed ? -(1 << (bits - 1)) : 0;
    const int hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    // Every code: its value by two's complement, and back.
    for (int c = 0; c < (1 << bits); ++c) {
        const int want = is_signed && c >= (1 << (bits - 1)) ? c - (1 << bits) : c;
        const T x = T::from_bits(static_cast<std::uint8_t>(c));
        EXPECT_EQ(x.value(), want) << mixt::name(D) << " " << c;
        EXPECT_EQ(mixt::convert<std::int64_t>(x), want);
        EXPECT_EQ(mixt::convert<double>(x), want);
        EXPECT_EQ(mixt::convert<bool>(x), want != 0);
        EXPECT_EQ(mixt::convert<T>(mixt::convert<std::int16_t>(x)).bits(), c);
    }
    // Every int16 wraps modulo 2^bits, as mixt's integers do.
    for (int i = -32768; i <= 32767; ++i) {
        const int m = ((i % (1 << bits)) + (1 << bits)) % (1 << bits);
        const int want = is_signed && m > hi ? m - (1 << bits) : m;
        ASSERT_EQ(mixt::convert<T>(static_cast<std::int16_t>(i)).value(), want) << mixt::name(D) << " " << i;
    }
    EXPECT_EQ(mixt::convert<T>(std::uint64_t{0xffffffffffffffffu}).value(), is_signed ? -1 : hi);
    // Floats truncate toward zero and saturate; NaN is 0.
    for (double x : {-1e300, -9.9, -2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.5, 2.9, 3.9, 7.9, 15.9, 16.0, 1e300}) {
        const double t = std::trunc(x);
        const int want = t < lo ? lo : t > hi ? hi : static_cast<int>(t);
        EXPECT_EQ(mixt::convert<T>(x).value(), want) << mixt::name(D) << " " << x;
        EXPECT_EQ(mixt::convert<T>(static_cast<float>(x)).value(), want) << mixt::name(D) << " " << x;
    }
    EXPECT_EQ(mixt::convert<T>(std::numeric_limits<float>::quiet_NaN()).value(), 0);
    EXPECT_EQ(mixt::convert<T>(-INFINITY).value(), lo);
    EXPECT_EQ(mixt::convert<T>(mixt::float8_e4m3fn(448.0f)).value(), hi);
    EXPECT_EQ(mixt::convert<T>(true).value(), 1);
}

TEST(narrow_int, every_code_wraps_and_saturates) {
    check_narrow_int<dtype::int4>();
    check_narrow_int<dtype::uint4>();
    check_narrow_int<dtype::int2>();
    check_narrow_int<dtype::uint2>();
}

TEST(narrow_storage, every_concrete_node_has_a_one_byte_storage_type) {
    static_assert(std::is_same_v<mixt::storage_t<mixt::dtype_tag<dtype::float8_e4m3fn>>, mixt::float8_e4m3fn>);
    static_assert(std::is_same_v<mixt::tag_of_t<mixt::int4>, mixt::dtype_tag<dtype::int4>>);
    static_assert(mixt::dtype_of_v<mixt::float4_e2m1fn> == dtype::float4_e2m1fn);
    static_assert(sizeof(mixt::float8_e5m2) == 1 && sizeof(mixt::uint2) == 1);
    static_assert(std::is_trivially_copyable_v<mixt::float8_e8m0fnu> && std::is_trivially_copyable_v<mixt::int4>);
    // Constant expressions, as the other conversions are.
    static_assert(mixt::float8_e4m3fn(448.0f).bits() == 0x7e);
    static_assert(mixt::convert<mixt::int4>(9).value() == -7);
    static_assert(mixt::convert<float>(mixt::float8_e5m2::from_bits(0x7b)) == 57344.0f);
}

TEST(narrow_storage, eigen_arrays_hold_them) {
    Eigen::Tensor<mixt::float8_e4m3fn, 2> t(2, 3);
    t.setConstant(mixt::float8_e4m3fn(1.5f));
    t(1, 2) = mixt::float8_e4m3fn(-448.0f);
    EXPECT_EQ(static_cast<float>(t(0, 0)), 1.5f);
    EXPECT_EQ(t(1, 2).bits(), 0xfe);
    Eigen::Tensor<mixt::float8_e4m3fn, 2> copy = t;
    EXPECT_EQ(copy(1, 2), t(1, 2));
    Eigen::Array<mixt::int4, Eigen::Dynamic, 1> a(4);
    for (int i = 0; i < 4; ++i) a(i) = mixt::int4(i * 5);
    EXPECT_EQ(a(3).value(), -1); // 15 wraps
    EXPECT_TRUE((a == a).all());
    Eigen::Tensor<mixt::uint2, 1> z(3);
    z.setZero();
    EXPECT_EQ(z(2).value(), 0);
}

} // namespace
