// The narrow dtypes' SIMD conversions (mixt/simd/narrow.hpp) against the scalar mixt::convert, bit for bit, at 8
// lanes (AVX2) and 16 lanes (AVX-512), for each of the 11 narrow float formats and the 4 narrow integers:
//   - decode: every byte (the format's high bits set too, which it ignores);
//   - round_to and encode: every f16 and every bf16 value as f32; every f32 within 64 ulps of each of the
//     format's values, of each midpoint between neighbours (zero and the smallest subnormal included: half the
//     smallest subnormal, the subnormal/normal edge) and of the overflow threshold, on both signs; +-0, +-inf,
//     NaNs with payloads of both kinds and signs, f32 subnormals; 2^21 random f32 bit patterns (fixed seed);
//   - the integers: decode of every byte, encode of every 32-bit lane value in [-2^16, 2^16], the extremes and
//     random ones.
// A width the build does not compile, or the CPU running the test lacks, is skipped.

#include <mixt/dtype/convert.hpp>
#include <mixt/simd/narrow.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using mixt::dtype;

[[maybe_unused]] bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

[[maybe_unused]] bool cpu_has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

[[maybe_unused]] std::string hex(std::uint32_t b) {
    std::ostringstream s;
    s << "0x" << std::hex << b;
    return s.str();
}

template <dtype D>
std::uint8_t scalar_encode(float x) {
    return mixt::convert<mixt::narrow_float<D>>(x).code;
}
template <dtype D>
std::uint32_t scalar_decode(std::uint8_t c) {
    return std::bit_cast<std::uint32_t>(mixt::convert<float>(mixt::narrow_float<D>::from_bits(c)));
}

// Every f32 within `ulps` of the f32 p, on both signs.
[[maybe_unused]] void add_around(std::vector<float>& v, float p, int ulps = 64) {
    const auto b = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(p) & 0x7fffffffu);
    for (std::int64_t i = std::max<std::int64_t>(0, b - ulps); i <= std::min<std::int64_t>(0x7f800000, b + ulps); ++i) {
        v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(i)));
        v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(i) | 0x80000000u));
    }
}

// The inputs every format is checked on (the format's own edges are added by format_inputs).
[[maybe_unused]] const std::vector<float>& common_inputs() {
    static const std::vector<float> v = [] {
        std::vector<float> r;
        for (std::uint32_t h = 0; h < 0x10000u; ++h) {
            r.push_back(mixt::detail::f16_bits_to_f32(static_cast<std::uint16_t>(h)));
            r.push_back(std::bit_cast<float>(h << 16)); // a bf16, signaling NaNs too
        }
        for (std::uint32_t b : {0x7f800001u, 0x7f812345u, 0x7fbfffffu, 0x7fc00000u, 0x7fc00001u, 0x7fd55555u, 0x7fffffffu}) {
            r.push_back(std::bit_cast<float>(b));
            r.push_back(std::bit_cast<float>(b | 0x80000000u));
        }
        // f32 subnormals: the edges, and random ones.
        for (float p : {0.0f, std::bit_cast<float>(0x00400000u), std::bit_cast<float>(0x00800000u)}) add_around(r, p);
        std::mt19937 gen(20261130);
        for (int i = 0; i < 4096; ++i) r.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(gen() & 0x807fffffu)));
        for (int i = 0; i < (1 << 21); ++i) r.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(gen())));
        return r;
    }();
    return v;
}

template <dtype D>
std::vector<float> format_inputs() {
    std::vector<float> r = common_inputs();
    using traits = mixt::detail::narrow_float_traits<D>;
    // The format's finite non-negative values, ascending (0 first where the format has it).
    std::vector<float> values;
    for (int c = 0; c <= traits::magnitude_mask; ++c)
        if (!traits::is_nan_code(static_cast<std::uint8_t>(c))) {
            const float f = std::bit_cast<float>(scalar_decode<D>(static_cast<std::uint8_t>(c)));
            if (f != std::numeric_limits<float>::infinity()) values.push_back(f);
        }
    std::sort(values.begin(), values.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
        add_around(r, values[i]);
        if (i + 1 < values.size()) add_around(r, (values[i] + values[i + 1]) / 2); // exact: M + 2 bits
    }
    const float max = values.back();
    const float ulp = max - values[values.size() - 2];
    add_around(r, max + ulp / 2); // the overflow threshold (e8m0: 1.5 * 2^127)
    add_around(r, max + ulp);
    add_around(r, std::numeric_limits<float>::infinity());
    return r;
}

struct mismatches {
    int count = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ < 8) first += what + "\n";
    }
};

// The scalar path's codes of every input.
template <dtype D>
std::vector<std::uint8_t> scalar_codes(const std::vector<float>& in) {
    std::vector<std::uint8_t> r(in.size());
    std::transform(in.begin(), in.end(), r.begin(), scalar_encode<D>);
    return r;
}

// round_to and encode of W lanes (8 or 16) against the scalar path (want: its codes), on every input.
template <dtype D, int W, class Round, class Encode>
void check_rounding(const std::vector<float>& in, const std::vector<std::uint8_t>& want_codes, Round round, Encode encode) {
    mismatches round_bad, encode_bad;
    for (std::size_t i = 0; i < in.size(); i += W) {
        alignas(64) float x[W] = {};
        const std::size_t n = std::min<std::size_t>(W, in.size() - i);
        std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(i), n, x);
        alignas(64) float r[W];
        alignas(16) std::uint8_t codes[16];
        round(x, r);
        encode(x, codes);
        for (std::size_t j = 0; j < n; ++j) {
            const std::uint8_t want_code = want_codes[i + j];
            const std::uint32_t want = scalar_decode<D>(want_code);
            const std::uint32_t got = std::bit_cast<std::uint32_t>(r[j]);
            const std::string at = "x = " + hex(std::bit_cast<std::uint32_t>(x[j]));
            if (got != want) round_bad.add(at + ": round_to " + hex(got) + ", convert " + hex(want));
            if (codes[j] != want_code) encode_bad.add(at + ": encode " + hex(codes[j]) + ", convert " + hex(want_code));
        }
    }
    EXPECT_EQ(round_bad.count, 0) << mixt::name(D) << " round_to, " << W << " lanes:\n" << round_bad.first;
    EXPECT_EQ(encode_bad.count, 0) << mixt::name(D) << " encode, " << W << " lanes:\n" << encode_bad.first;
}

// decode of every byte in W lanes against the scalar path.
template <dtype D, int W, class Decode>
void check_decoding(Decode decode) {
    mismatches bad;
    for (int base = 0; base < 256; base += W) {
        alignas(16) std::uint8_t codes[16] = {};
        for (int j = 0; j < W; ++j) codes[j] = static_cast<std::uint8_t>(base + j);
        alignas(64) float out[W];
        decode(codes, out);
        for (int j = 0; j < W; ++j) {
            const std::uint32_t got = std::bit_cast<std::uint32_t>(out[j]);
            const std::uint32_t want = scalar_decode<D>(codes[j]);
            if (got != want) bad.add("code " + hex(codes[j]) + ": decode " + hex(got) + ", convert " + hex(want));
        }
    }
    EXPECT_EQ(bad.count, 0) << mixt::name(D) << " decode, " << W << " lanes:\n" << bad.first;
}

template <class P>
class narrow_simd_float : public ::testing::Test {};
using float_formats =
    ::testing::Types<std::integral_constant<dtype, dtype::float8_e3m4>, std::integral_constant<dtype, dtype::float8_e4m3>,
                     std::integral_constant<dtype, dtype::float8_e4m3fn>, std::integral_constant<dtype, dtype::float8_e4m3fnuz>,
                     std::integral_constant<dtype, dtype::float8_e4m3b11fnuz>, std::integral_constant<dtype, dtype::float8_e5m2>,
                     std::integral_constant<dtype, dtype::float8_e5m2fnuz>, std::integral_constant<dtype, dtype::float8_e8m0fnu>,
                     std::integral_constant<dtype, dtype::float6_e2m3fn>, std::integral_constant<dtype, dtype::float6_e3m2fn>,
                     std::integral_constant<dtype, dtype::float4_e2m1fn>>;
struct format_name {
    template <class P>
    static std::string GetName(int) {
        return std::string(mixt::name(P::value));
    }
};
TYPED_TEST_SUITE(narrow_simd_float, float_formats, format_name);

TYPED_TEST(narrow_simd_float, decode_of_every_code_matches_convert) {
    [[maybe_unused]] constexpr dtype D = TypeParam::value;
    bool ran = false;
#if MIXT_SIMD_AVX2
    if (cpu_has_avx2()) {
        check_decoding<D, 8>([](const std::uint8_t* c, float* out) {
            _mm256_store_ps(out, mixt::simd::narrow::decode<D>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
        });
        ran = true;
    }
#endif
#if MIXT_SIMD_AVX512
    if (cpu_has_avx512()) {
        check_decoding<D, 16>([](const std::uint8_t* c, float* out) {
            _mm512_store_ps(out, mixt::simd::wide::narrow::decode<D>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
        });
    } else {
        std::cout << "[ note ] no AVX-512 on this CPU: the 16-lane decode is not checked\n";
    }
#endif
    if (!ran) GTEST_SKIP() << "no AVX2 in this build or on this CPU";
}

TYPED_TEST(narrow_simd_float, round_to_and_encode_match_convert) {
    [[maybe_unused]] constexpr dtype D = TypeParam::value;
    bool ran = false;
#if MIXT_SIMD_AVX2
    const std::vector<float> in = format_inputs<D>();
    const std::vector<std::uint8_t> want = scalar_codes<D>(in);
    if (cpu_has_avx2()) {
        check_rounding<D, 8>(
            in, want, [](const float* x, float* r) { _mm256_store_ps(r, mixt::simd::narrow::round_to<D>(_mm256_load_ps(x))); },
            [](const float* x, std::uint8_t* c) {
                const __m128i codes = mixt::simd::narrow::encode<D>(_mm256_load_ps(x));
                EXPECT_EQ(_mm_extract_epi64(codes, 1), 0) << "the high 8 bytes of an 8-lane encode";
                _mm_store_si128(reinterpret_cast<__m128i*>(c), codes);
            });
        ran = true;
    }
#endif
#if MIXT_SIMD_AVX512
    if (cpu_has_avx512()) {
        check_rounding<D, 16>(
            in, want, [](const float* x, float* r) { _mm512_store_ps(r, mixt::simd::wide::narrow::round_to<D>(_mm512_load_ps(x))); },
            [](const float* x, std::uint8_t* c) {
                _mm_store_si128(reinterpret_cast<__m128i*>(c), mixt::simd::wide::narrow::encode<D>(_mm512_load_ps(x)));
            });
    } else {
        std::cout << "[ note ] no AVX-512 on this CPU: the 16-lane round_to and encode are not checked\n";
    }
#endif
    if (!ran) GTEST_SKIP() << "no AVX2 in this build or on this CPU";
}

template <class P>
class narrow_simd_int : public ::testing::Test {};
using int_formats = ::testing::Types<std::integral_constant<dtype, dtype::int4>, std::integral_constant<dtype, dtype::uint4>,
                                     std::integral_constant<dtype, dtype::int2>, std::integral_constant<dtype, dtype::uint2>>;
TYPED_TEST_SUITE(narrow_simd_int, int_formats, format_name);

template <dtype D>
std::vector<std::int32_t> int_inputs() {
    std::vector<std::int32_t> r;
    for (std::int32_t i = -(1 << 16); i <= (1 << 16); ++i) r.push_back(i);
    for (std::int32_t i : {INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, INT32_MAX}) r.push_back(i);
    std::mt19937 gen(41);
    for (int i = 0; i < (1 << 16); ++i) r.push_back(static_cast<std::int32_t>(gen()));
    while (r.size() % 16 != 0) r.push_back(0);
    return r;
}

TYPED_TEST(narrow_simd_int, decode_and_encode_match_convert) {
    [[maybe_unused]] constexpr dtype D = TypeParam::value;
    using T = mixt::narrow_int<D>;
    [[maybe_unused]] const auto check = [](int lanes, auto decode, auto encode) {
        mismatches bad;
        for (int base = 0; base < 256; base += lanes) {
            alignas(16) std::uint8_t codes[16] = {};
            for (int j = 0; j < lanes; ++j) codes[j] = static_cast<std::uint8_t>(base + j);
            alignas(64) std::int32_t out[16];
            decode(codes, out);
            for (int j = 0; j < lanes; ++j) {
                T t;
                t.code = codes[j]; // high bits kept: value() ignores them
                if (out[j] != t.value()) bad.add("decode of " + hex(codes[j]) + ": " + std::to_string(out[j]));
            }
        }
        const std::vector<std::int32_t> in = int_inputs<D>();
        for (std::size_t i = 0; i < in.size(); i += static_cast<std::size_t>(lanes)) {
            alignas(16) std::uint8_t codes[16];
            encode(in.data() + i, codes);
            for (int j = 0; j < lanes; ++j) {
                const std::uint8_t want = mixt::convert<T>(in[i + static_cast<std::size_t>(j)]).code;
                if (codes[j] != want)
                    bad.add("encode of " + std::to_string(in[i + static_cast<std::size_t>(j)]) + ": " + hex(codes[j]));
            }
        }
        EXPECT_EQ(bad.count, 0) << mixt::name(D) << ", " << lanes << " lanes:\n" << bad.first;
    };
    bool ran = false;
#if MIXT_SIMD_AVX2
    if (cpu_has_avx2()) {
        check(
            8,
            [](const std::uint8_t* c, std::int32_t* out) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                                    mixt::simd::narrow::decode<D>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
            },
            [](const std::int32_t* v, std::uint8_t* c) {
                const __m128i codes = mixt::simd::narrow::encode<D>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)));
                EXPECT_EQ(_mm_extract_epi64(codes, 1), 0) << "the high 8 bytes of an 8-lane encode";
                _mm_storeu_si128(reinterpret_cast<__m128i*>(c), codes);
            });
        ran = true;
    }
#endif
#if MIXT_SIMD_AVX512
    if (cpu_has_avx512()) {
        check(
            16,
            [](const std::uint8_t* c, std::int32_t* out) {
                _mm512_storeu_si512(out, mixt::simd::wide::narrow::decode<D>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
            },
            [](const std::int32_t* v, std::uint8_t* c) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(c), mixt::simd::wide::narrow::encode<D>(_mm512_loadu_si512(v)));
            });
    }
#endif
    if (!ran) GTEST_SKIP() << "no AVX2 in this build or on this CPU";
}

} // namespace
