#ifndef MIXT_SIMD_NARROW_HPP
#define MIXT_SIMD_NARROW_HPP

// The narrow dtypes' conversions in SIMD registers: the float8/float6/float4 formats of dtype/narrow_float.hpp
// to and from f32 lanes, and int4/uint4/int2/uint2 to and from 32-bit integer lanes, bit for bit as the
// scalar mixt::convert, for every input (NaNs included: a NaN decodes to the quiet NaN of its sign, and an f32
// NaN encodes to each family's NaN code, or to the zero of the other sign for float6/float4).
//   - 16 lanes (MIXT_SIMD_AVX512) in mixt::simd::wide::narrow: 16 codes, one per byte of an __m128i, and __m512
//     or __m512i lanes;
//   - 8 lanes (MIXT_SIMD_AVX2) in mixt::simd::narrow: 8 codes in the low 8 bytes of an __m128i (encode leaves
//     the high 8 bytes zero), and __m256 or __m256i lanes.
// Each offers, for a narrow float dtype D:
//   - decode<D>(codes): each code's exact f32 value (the code's high bits, above the format's width, ignored);
//   - round_to<D>(x): each f32 lane rounded to D and kept as f32, i.e. the bits of
//     convert<float>(convert<narrow_float<D>>(x)), so that a node of dtype D computes in f32 lanes as f16 and
//     bf16 nodes do (simd/wide.hpp, round_to);
//   - encode<D>(x): the codes convert<narrow_float<D>>(x) of f32 lanes, rounded or not;
// and for a narrow integer dtype D: decode<D>(codes) (the low bits sign- or zero-extended to 32 bits) and
// encode<D>(lanes) (each lane's low bits, i.e. wrapped).
//
//   #if MIXT_SIMD_AVX512
//   __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));       // 16 float8_e4m3fn
//   __m512 x = mixt::simd::wide::narrow::decode<mixt::dtype::float8_e4m3fn>(c);
//   _mm_storeu_si128(reinterpret_cast<__m128i*>(q),
//                    mixt::simd::wide::narrow::encode<mixt::dtype::float8_e5m2>(_mm512_mul_ps(x, x)));
//   #endif
//
// How, without a per-lane branch, a gather or an f32 subnormal operand (which AMD's and Intel's cores handle
// slowly):
//   - decoding places the code's exponent and mantissa fields at the bottom of f32's and adds 127 - bias to the
//     exponent, exact for every normal code; the codes that this gets wrong (subnormals, whose implicit bit is
//     0, and the top field's inf and NaN) are blended in from a table in registers indexed by the code's low
//     bits (vpermps / vpermi2ps) at 16 lanes, and at 8 lanes computed as 2^emin * (1 + c / 2^M) - 2^emin.
//     float6 and float4, 32 and 16 magnitudes, are a table lookup (at 8 lanes float4 only).
//   - rounding is the magic-number rounding (|x| + c) - c with c = 2^(max(e, emin) - M + 23), e the lane's
//     exponent: the sum has the format's quantum as its last bit, so the one f32 addition rounds to nearest
//     even at the format's precision, subnormal results included, and the subtraction is exact. Overflow is a
//     comparison of |x| with the format's threshold (max + half an ulp; above it for e4m3fn, whose max has an
//     even mantissa, at it for the others), and each family's specials are blended in.
//   - encoding reads the code from the same sum: as integers, sum - c is the rounded magnitude counted in
//     quanta, which plus the exponent fields above emin's (max(e, emin) - emin, shifted to the code's field)
//     is the code's magnitude, a carry into the next binade included. The sign and each family's specials
//     are then set in the code.
// Nothing is multiplied, so floating-point contraction (-ffp-contract) cannot change a result. As the scalar
// conversions (dtype/convert.hpp), this assumes the default rounding mode (round to nearest even, which the
// magic-number addition relies on) and no -ffast-math (which may simplify (|x| + c) - c to |x|).

#include <array>
#include <cstdint>

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/narrow_float.hpp"
#include "mixt/dtype/narrow_int.hpp"
#include "mixt/simd/arch.hpp"

#if MIXT_SIMD_AVX2
#include <immintrin.h>
#endif

#if MIXT_SIMD_AVX2

namespace mixt::simd::detail {

/// The constants of narrow float format D that its SIMD conversions use, all f32 or code bits.
template <dtype D>
struct narrow_simd {
    using traits = ::mixt::detail::narrow_float_traits<D>;
    static constexpr float_family family = traits::f.family;
    static constexpr int M = traits::M;
    static constexpr int bias = traits::f.bias;
    static constexpr int sign_position = traits::f.bits - 1;
    static constexpr int magnitude_mask = traits::magnitude_mask;
    /// The shift that puts a code's magnitude (exponent and mantissa fields) at the bottom of f32's fields.
    static constexpr int field_shift = 23 - M;
    /// Added to a normal code's magnitude shifted into f32's fields, it rebiases the exponent.
    static constexpr std::uint32_t rebias = static_cast<std::uint32_t>(127 - bias) << 23;
    /// The f32 exponent field of the format's smallest normal, 2^emin = 2^(1 - bias), in place.
    static constexpr std::uint32_t emin_field = static_cast<std::uint32_t>(128 - bias) << 23;
    /// Added to an exponent field e, in place, it gives the magic constant c = 2^(e - M + 23).
    static constexpr std::uint32_t magic_offset = static_cast<std::uint32_t>(23 - M) << 23;
    static constexpr std::uint32_t max_bits = ::mixt::detail::narrow_to_f32_bits<D>(traits::max_code);
    /// The smallest magnitude that overflows (max + half an ulp): for e4m3fn only a magnitude above it does.
    static constexpr std::uint32_t threshold_bits = max_bits + (1u << (22 - M));
    /// The code of +inf (ieee) and of +NaN (ieee, fn), and +inf's shifted into f32's fields.
    static constexpr std::uint32_t inf_code = traits::overflow_code(false);
    static constexpr std::uint32_t nan_code = traits::nan_code(false);
    static constexpr std::uint32_t inf_field = inf_code << field_shift;
    static constexpr std::uint32_t max_code_value = traits::max_code;

    /// Whether decode replaces code c's rebiased magnitude: a subnormal (zero exponent field; rebiasing adds
    /// an implicit one it does not have) or a top-field special (ieee inf and NaN, e4m3fn's NaN).
    static constexpr bool is_replaced(int c) noexcept {
        return (c >> M) == 0 || (family == float_family::ieee && (c >> M) == traits::top_field) ||
               (family == float_family::fn && c == magnitude_mask);
    }
    /// The replaced magnitude codes' f32 bits, indexed by the code's low log2(N) bits (other entries zero).
    template <int N>
    static constexpr std::array<std::uint32_t, N> replaced_table() noexcept {
        std::array<std::uint32_t, N> t{};
        for (int c = 0; c <= magnitude_mask; ++c)
            if (is_replaced(c)) t[static_cast<std::size_t>(c % N)] = ::mixt::detail::narrow_to_f32_bits<D>(static_cast<std::uint8_t>(c));
        return t;
    }
    /// Whether no two replaced magnitude codes share their low 4 bits, so that one 16-entry vpermps finds them.
    static constexpr bool replaced_fit_16 = [] {
        int seen = 0;
        for (int c = 0; c <= magnitude_mask; ++c)
            if (is_replaced(c)) {
                if ((seen >> (c % 16)) & 1) return false;
                seen |= 1 << (c % 16);
            }
        return true;
    }();
    /// The f32 bits of codes 0 .. N-1 (the magnitudes of float6 and of float4; float4's every code).
    template <int N>
    static constexpr std::array<std::uint32_t, N> table() noexcept {
        std::array<std::uint32_t, N> t{};
        for (int i = 0; i < N; ++i) t[static_cast<std::size_t>(i)] = ::mixt::detail::narrow_to_f32_bits<D>(static_cast<std::uint8_t>(i));
        return t;
    }
    /// e8m0fnu, indexed by the code's low 4 bits: 2^-127 for code 0 and +NaN for code 0xff.
    static constexpr std::array<std::uint32_t, 16> e8m0_table() noexcept {
        std::array<std::uint32_t, 16> t{};
        t[0] = 0x00400000u;
        t[15] = 0x7fc00000u;
        return t;
    }
    static constexpr std::array<std::uint32_t, 32> magnitudes32 = table<32>();
    static constexpr std::array<std::uint32_t, 16> codes16 = table<16>();
    static constexpr std::array<std::uint32_t, 8> magnitudes8 = table<8>();
    static constexpr std::array<std::uint32_t, 16> replaced16 = replaced_table<16>();
    static constexpr std::array<std::uint32_t, 32> replaced32 = replaced_table<32>();
    static constexpr std::array<std::uint32_t, 16> e8m0_specials = e8m0_table();
};

template <dtype D>
inline constexpr bool is_narrow_float_dtype_v = is_small_float(D);
template <dtype D>
inline constexpr bool is_narrow_int_dtype_v = is_small(D) && !is_small_float(D);

} // namespace mixt::simd::detail

namespace mixt::simd::detail {
// The low 8 bits of each 32-bit lane, packed: truncation, so it wraps whatever the lanes hold.
inline __m128i narrow_to_u8(__m256i v) noexcept {
    const __m256i bytes =
        _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                                                12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1)));
}
} // namespace mixt::simd::detail

// --- 8 lanes --------------------------------------------------------------------------------------------------

namespace mixt::simd::narrow {

namespace detail {
using ::mixt::simd::detail::narrow_simd;

inline __m256i i32(std::uint32_t b) noexcept { return _mm256_set1_epi32(static_cast<int>(b)); }
inline __m256 f32(std::uint32_t b) noexcept { return _mm256_castsi256_ps(i32(b)); }

// x rounded to D, kept as f32 (round_to).
template <dtype D>
inline __m256 round_lanes(__m256 x) noexcept {
    using C = narrow_simd<D>;
    const __m256i b = _mm256_castps_si256(x);
    const __m256 sign = _mm256_and_ps(x, f32(0x80000000u));
    if constexpr (C::family == float_family::e8m0) {
        // Ties up: the kept bit is the implicit one. Positive f32 subnormals: at most 2^-127 -> 2^-127 (code 0),
        // above -> 2^-126. Zero, negatives, inf, NaN and overflow (>= 1.5 * 2^127) -> NaN.
        __m256i r = _mm256_and_si256(_mm256_add_epi32(b, i32(0x00400000u)), i32(0x7f800000u));
        r = _mm256_blendv_epi8(r, i32(0x00400000u), _mm256_cmpgt_epi32(i32(0x00400001u), b));
        const __m256i t = _mm256_sub_epi32(b, i32(1));
        const __m256i bad = _mm256_cmpeq_epi32(_mm256_max_epu32(t, i32(0x7f3fffffu)), t);
        return _mm256_castsi256_ps(_mm256_blendv_epi8(r, i32(0x7fc00000u), bad));
    } else {
        const __m256 ax = _mm256_and_ps(x, f32(0x7fffffffu));
        const __m256i e = _mm256_max_epi32(_mm256_and_si256(b, i32(0x7f800000u)), i32(C::emin_field));
        const __m256 c = _mm256_castsi256_ps(_mm256_add_epi32(e, i32(C::magic_offset)));
        const __m256 threshold = f32(C::threshold_bits);
        if constexpr (C::family == float_family::fnuz) {
            // c with x's sign: a result rounded to zero comes out +0, as fnuz has no -0.
            const __m256 cs = _mm256_or_ps(c, sign);
            const __m256 r = _mm256_sub_ps(_mm256_add_ps(x, cs), cs);
            return _mm256_blendv_ps(r, f32(C::family == float_family::fnuz ? 0xffc00000u : 0x7fc00000u), _mm256_cmp_ps(ax, threshold, _CMP_NLT_UQ));
        } else {
            __m256 r = _mm256_sub_ps(_mm256_add_ps(ax, c), c);
            if constexpr (C::family == float_family::ieee) {
                r = _mm256_blendv_ps(r, f32(0x7f800000u), _mm256_cmp_ps(ax, threshold, _CMP_GE_OQ));
                r = _mm256_blendv_ps(r, f32(0x7fc00000u), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
                return _mm256_or_ps(r, sign);
            } else if constexpr (C::family == float_family::fn) {
                r = _mm256_blendv_ps(r, f32(C::family == float_family::fnuz ? 0xffc00000u : 0x7fc00000u), _mm256_cmp_ps(ax, threshold, _CMP_NLE_UQ));
                return _mm256_or_ps(r, sign);
            } else { // finite: saturates (min returns max where r is NaN, from c overflowing); NaN -> -+0
                r = _mm256_min_ps(r, f32(C::max_bits));
                r = _mm256_blendv_ps(r, f32(0x80000000u), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
                return _mm256_xor_ps(r, sign);
            }
        }
    }
}
} // namespace detail

/// The exact f32 values of the 8 narrow float codes of D in the low 8 bytes of `codes`.
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m256 decode(__m128i codes) noexcept {
    using C = detail::narrow_simd<D>;
    using detail::f32;
    using detail::i32;
    if constexpr (C::family == float_family::e8m0) {
        const __m256i x = _mm256_cvtepu8_epi32(codes);
        __m256i r = _mm256_slli_epi32(x, 23);
        r = _mm256_blendv_epi8(r, i32(0x00400000u), _mm256_cmpeq_epi32(x, _mm256_setzero_si256()));
        return _mm256_castsi256_ps(_mm256_blendv_epi8(r, i32(0x7fc00000u), _mm256_cmpeq_epi32(x, i32(0xff))));
    } else if constexpr (C::sign_position == 3) {
        const __m256i x = _mm256_cvtepu8_epi32(codes);
        const __m256 m = _mm256_permutevar8x32_ps(_mm256_loadu_ps(reinterpret_cast<const float*>(C::magnitudes8.data())), x);
        return _mm256_or_ps(m, _mm256_castsi256_ps(_mm256_and_si256(_mm256_slli_epi32(x, 28), i32(0x80000000u))));
    } else {
        // The magnitude rebiased in f32's fields; a subnormal code c is then 2^emin * (1 + c / 2^M) once the
        // exponent's implicit one is added, from which subtracting 2^emin leaves c * 2^(emin - M) exactly
        // (with no subnormal f32 operand, which AMD's and Intel's cores take slowly).
        const __m256i x = _mm256_cvtepu8_epi32(codes);
        const __m256i m = _mm256_and_si256(_mm256_slli_epi32(x, C::field_shift), i32(static_cast<std::uint32_t>(C::magnitude_mask) << C::field_shift));
        const __m256 normal = _mm256_castsi256_ps(_mm256_add_epi32(m, i32(C::rebias)));
        const __m256 subnormal = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_add_epi32(m, i32(C::rebias + (1u << 23)))), f32(C::emin_field));
        __m256 r = _mm256_blendv_ps(normal, subnormal, _mm256_castsi256_ps(_mm256_cmpgt_epi32(i32(1u << 23), m)));
        if constexpr (C::family == float_family::ieee) {
            r = _mm256_blendv_ps(r, f32(0x7f800000u), _mm256_castsi256_ps(_mm256_cmpgt_epi32(m, i32(C::inf_field - 1))));
            r = _mm256_blendv_ps(r, f32(0x7fc00000u), _mm256_castsi256_ps(_mm256_cmpgt_epi32(m, i32(C::inf_field))));
        } else if constexpr (C::family == float_family::fn) {
            r = _mm256_blendv_ps(r, f32(0x7fc00000u), _mm256_castsi256_ps(_mm256_cmpeq_epi32(m, i32(0x7fu << C::field_shift))));
        } else if constexpr (C::family == float_family::fnuz) { // 0x80 is NaN, decoded with its sign bit set
            r = _mm256_blendv_ps(r, f32(0x7fc00000u), _mm256_castsi256_ps(_mm256_cmpeq_epi32(x, i32(0x80u))));
        }
        const __m256i sign = _mm256_and_si256(_mm256_slli_epi32(x, 31 - C::sign_position), i32(0x80000000u));
        return _mm256_or_ps(r, _mm256_castsi256_ps(sign));
    }
}

/// Each lane of x rounded to the nearest value of D, as f32: convert<float>(convert<narrow_float<D>>(x)).
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m256 round_to(__m256 x) noexcept {
    return detail::round_lanes<D>(x);
}

/// The codes convert<narrow_float<D>>(x) of the 8 lanes of x, in the low 8 bytes (the high 8 zero).
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m128i encode(__m256 x) noexcept {
    using C = detail::narrow_simd<D>;
    using detail::f32;
    using detail::i32;
    if constexpr (C::family == float_family::e8m0) {
        return simd::detail::narrow_to_u8(_mm256_srli_epi32(_mm256_castps_si256(detail::round_lanes<D>(x)), 23));
    } else {
        // The magic-number sum |x| + c holds the rounded magnitude as a count n of quanta 2^(max(e, emin) - M)
        // in its low bits: n = sum - c as integers, which is the code's magnitude, once the exponent fields
        // above emin's are added (n carries into the next field by itself).
        const __m256i b = _mm256_castps_si256(x);
        const __m256 ax = _mm256_and_ps(x, f32(0x7fffffffu));
        const __m256i e = _mm256_max_epi32(_mm256_and_si256(b, i32(0x7f800000u)), i32(C::emin_field));
        const __m256i c = _mm256_add_epi32(e, i32(C::magic_offset));
        const __m256i sum = _mm256_castps_si256(_mm256_add_ps(ax, _mm256_castsi256_ps(c)));
        __m256i m = _mm256_add_epi32(_mm256_sub_epi32(sum, c), _mm256_srli_epi32(_mm256_sub_epi32(e, i32(C::emin_field)), C::field_shift));
        const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(b, 31 - C::sign_position), i32(1u << C::sign_position));
        const __m256 threshold = f32(C::threshold_bits);
        __m256i code;
        if constexpr (C::family == float_family::ieee) {
            m = _mm256_blendv_epi8(m, i32(C::inf_code), _mm256_castps_si256(_mm256_cmp_ps(ax, threshold, _CMP_GE_OQ)));
            m = _mm256_blendv_epi8(m, i32(C::nan_code), _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
            code = _mm256_or_si256(m, sign);
        } else if constexpr (C::family == float_family::fn) {
            m = _mm256_blendv_epi8(m, i32(C::nan_code), _mm256_castps_si256(_mm256_cmp_ps(ax, threshold, _CMP_NLE_UQ)));
            code = _mm256_or_si256(m, sign);
        } else if constexpr (C::family == float_family::fnuz) {
            // No -0: the sign only on a nonzero magnitude; NaN, inf and overflow are 0x80.
            code = _mm256_or_si256(m, _mm256_andnot_si256(_mm256_cmpeq_epi32(m, _mm256_setzero_si256()), sign));
            code = _mm256_blendv_epi8(code, i32(0x80u), _mm256_castps_si256(_mm256_cmp_ps(ax, threshold, _CMP_NLT_UQ)));
        } else { // finite: saturates; a NaN is the zero of the other sign
            m = _mm256_blendv_epi8(m, i32(C::max_code_value), _mm256_castps_si256(_mm256_cmp_ps(ax, f32(C::max_bits), _CMP_GT_OQ)));
            code = _mm256_or_si256(m, sign);
            code = _mm256_blendv_epi8(code, _mm256_xor_si256(sign, i32(1u << C::sign_position)),
                                      _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
        }
        return simd::detail::narrow_to_u8(code);
    }
}

/// The values of the 8 narrow integer codes of D in the low 8 bytes of `codes`, as 32-bit lanes.
template <dtype D>
    requires simd::detail::is_narrow_int_dtype_v<D>
inline __m256i decode(__m128i codes) noexcept {
    using T = narrow_int<D>;
    const __m256i x = _mm256_cvtepu8_epi32(codes);
    if constexpr (T::is_signed)
        return _mm256_srai_epi32(_mm256_slli_epi32(x, 32 - T::bits_wide), 32 - T::bits_wide);
    else
        return _mm256_and_si256(x, _mm256_set1_epi32(T::mask));
}

/// The codes of D of the 8 32-bit lanes of v (their low bits: wrapped), in the low 8 bytes (the high 8 zero).
template <dtype D>
    requires simd::detail::is_narrow_int_dtype_v<D>
inline __m128i encode(__m256i v) noexcept {
    return _mm_and_si128(simd::detail::narrow_to_u8(v), _mm_set1_epi8(static_cast<char>(narrow_int<D>::mask)));
}

} // namespace mixt::simd::narrow

// --- 16 lanes -------------------------------------------------------------------------------------------------

#if MIXT_SIMD_AVX512

// GCC 12's AVX-512 intrinsics trip -Wuninitialized (GCC bug 105593; see simd/wide.hpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define MIXT_NARROW_DIAGNOSTICS_PUSHED 1
#endif

namespace mixt::simd::wide::narrow {

namespace detail {
using ::mixt::simd::detail::narrow_simd;

inline __m512i i32(std::uint32_t b) noexcept { return _mm512_set1_epi32(static_cast<int>(b)); }
inline __m512 f32(std::uint32_t b) noexcept { return _mm512_castsi512_ps(i32(b)); }
template <std::size_t N>
inline __m512 table(const std::array<std::uint32_t, N>& t, std::size_t first = 0) noexcept {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(t.data() + first));
}

// vpternlogd truth tables over (a, b, c).
inline constexpr int a_or_b_and_c = 0xf8;  // a | (b & c)
inline constexpr int a_xor_b_and_c = 0x78; // a ^ (b & c)
inline constexpr int c_selects_b = 0xd8;   // (b & c) | (a & ~c)
inline constexpr int c_selects_a = 0xe4;   // (a & c) | (b & ~c)

// x rounded to D, kept as f32 (round_to).
template <dtype D>
inline __m512 round_lanes(__m512 x) noexcept {
    using C = narrow_simd<D>;
    const __m512i b = _mm512_castps_si512(x);
    if constexpr (C::family == float_family::e8m0) {
        // As the 8-lane round_lanes: ties up, positive f32 subnormals to 2^-127 or 2^-126, the rest NaN.
        __m512i r = _mm512_and_si512(_mm512_add_epi32(b, i32(0x00400000u)), i32(0x7f800000u));
        r = _mm512_mask_mov_epi32(r, _mm512_cmple_epu32_mask(b, i32(0x00400000u)), i32(0x00400000u));
        const __mmask16 bad = _mm512_cmpge_epu32_mask(_mm512_sub_epi32(b, i32(1)), i32(0x7f3fffffu));
        return _mm512_castsi512_ps(_mm512_mask_mov_epi32(r, bad, i32(0x7fc00000u)));
    } else {
        const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(b, i32(0x7fffffffu)));
        const __m512i e = _mm512_max_epi32(_mm512_and_si512(b, i32(0x7f800000u)), i32(C::emin_field));
        const __m512i c = _mm512_add_epi32(e, i32(C::magic_offset));
        const __m512 threshold = f32(C::threshold_bits);
        const __m512i sign = i32(0x80000000u);
        if constexpr (C::family == float_family::fnuz) {
            // c with x's sign: a result rounded to zero comes out +0, as fnuz has no -0.
            const __m512 cs = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(c, b, sign, c_selects_b));
            const __m512 r = _mm512_sub_ps(_mm512_add_ps(x, cs), cs);
            return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, threshold, _CMP_NLT_UQ), f32(C::family == float_family::fnuz ? 0xffc00000u : 0x7fc00000u));
        } else {
            const __m512 cf = _mm512_castsi512_ps(c);
            __m512 r = _mm512_sub_ps(_mm512_add_ps(ax, cf), cf);
            if constexpr (C::family == float_family::ieee) {
                // Overflow, inf and NaN in one masked vfixupimmps on |x|: +inf for a number, the default NaN
                // (its sign then replaced by x's) for a NaN.
                constexpr int table = 0x3 | 0x3 << 4 | 0x5 << 20 | 0x5 << 28; // QNaN, SNaN; +inf, positive
                r = _mm512_mask_fixupimm_ps(r, _mm512_cmp_ps_mask(ax, threshold, _CMP_NLT_UQ), ax, i32(table), 0);
                return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(r), b, sign, c_selects_b));
            } else if constexpr (C::family == float_family::fn) {
                r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, threshold, _CMP_NLE_UQ), f32(C::family == float_family::fnuz ? 0xffc00000u : 0x7fc00000u));
                return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(r), b, sign, c_selects_b));
            } else { // finite: saturates (min returns max where r is NaN, from c overflowing); NaN -> -+0
                r = _mm512_min_ps(r, f32(C::max_bits));
                r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), f32(0x80000000u));
                return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(r), b, sign, a_xor_b_and_c));
            }
        }
    }
}
} // namespace detail

/// The exact f32 values of the 16 narrow float codes of D in `codes`.
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m512 decode(__m128i codes) noexcept {
    using C = detail::narrow_simd<D>;
    using detail::f32;
    using detail::i32;
    if constexpr (C::family == float_family::e8m0) {
        // 2^(code - 127) is the code in f32's exponent field, but for 0 (2^-127, subnormal) and 0xff (NaN),
        // found as the codes c with c + 1 <= 1 in bytes.
        const __m512i x = _mm512_cvtepu8_epi32(codes);
        const __mmask16 k = _mm_cmple_epu8_mask(_mm_add_epi8(codes, _mm_set1_epi8(1)), _mm_set1_epi8(1));
        return _mm512_mask_permutexvar_ps(_mm512_castsi512_ps(_mm512_slli_epi32(x, 23)), k, x,
                                          detail::table(C::e8m0_specials));
    } else if constexpr (C::sign_position == 3) {
        // 16 codes, sign included: one vpermps (it reads the index's low 4 bits).
        return _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(codes), detail::table(C::codes16));
    } else if constexpr (C::sign_position == 5) {
        // 32 magnitudes: one vpermi2ps (it reads the index's low 5 bits); the sign from bit 5.
        const __m512i x = _mm512_cvtepu8_epi32(codes);
        const __m512 m = _mm512_permutex2var_ps(detail::table(C::magnitudes32), x, detail::table(C::magnitudes32, 16));
        return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(m), _mm512_slli_epi32(x, 26),
                                                             i32(0x80000000u), detail::a_or_b_and_c));
    } else {
        // The magnitude rebiased in f32's fields, but for the codes the rebiasing gets wrong (subnormals, and
        // the top field's inf and NaN), taken from a table in registers by the code's low bits.
        const __m512i x = _mm512_cvtepi8_epi32(codes); // bit 31 is the sign
        const __m512i m = _mm512_and_si512(_mm512_slli_epi32(x, C::field_shift), i32(0x7fu << C::field_shift));
        __m512 r = _mm512_castsi512_ps(_mm512_add_epi32(m, i32(C::rebias)));
        __mmask16 k = _mm512_testn_epi32_mask(m, i32(0x7f800000u));
        if constexpr (C::family == float_family::ieee)
            k = _kor_mask16(k, _mm512_cmpge_epu32_mask(m, i32(C::inf_field)));
        else if constexpr (C::family == float_family::fn)
            k = _kor_mask16(k, _mm512_cmpeq_epi32_mask(m, i32(0x7fu << C::field_shift)));
        if constexpr (C::replaced_fit_16)
            r = _mm512_mask_permutexvar_ps(r, k, x, detail::table(C::replaced16));
        else
            r = _mm512_mask_mov_ps(r, k, _mm512_permutex2var_ps(detail::table(C::replaced32), x, detail::table(C::replaced32, 16)));
        if constexpr (C::family == float_family::fnuz) // 0x80 is NaN, decoded with its sign bit set
            r = _mm512_mask_mov_ps(r, _mm_cmpeq_epi8_mask(codes, _mm_set1_epi8(static_cast<char>(0x80))), f32(0x7fc00000u));
        return _mm512_castsi512_ps(
            _mm512_ternarylogic_epi32(_mm512_castps_si512(r), x, i32(0x80000000u), detail::a_or_b_and_c));
    }
}

/// Each lane of x rounded to the nearest value of D, as f32: convert<float>(convert<narrow_float<D>>(x)).
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m512 round_to(__m512 x) noexcept {
    return detail::round_lanes<D>(x);
}

/// The codes convert<narrow_float<D>>(x) of the 16 lanes of x.
template <dtype D>
    requires simd::detail::is_narrow_float_dtype_v<D>
inline __m128i encode(__m512 x) noexcept {
    using C = detail::narrow_simd<D>;
    using detail::f32;
    using detail::i32;
    if constexpr (C::family == float_family::e8m0) {
        return _mm512_cvtepi32_epi8(_mm512_srli_epi32(_mm512_castps_si512(detail::round_lanes<D>(x)), 23));
    } else {
        // As the 8-lane encode: the magnitude is the magic-number sum's count of quanta, plus the exponent fields.
        const __m512i b = _mm512_castps_si512(x);
        const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(b, i32(0x7fffffffu)));
        const __m512i e = _mm512_max_epi32(_mm512_and_si512(b, i32(0x7f800000u)), i32(C::emin_field));
        const __m512i c = _mm512_add_epi32(e, i32(C::magic_offset));
        const __m512i sum = _mm512_castps_si512(_mm512_add_ps(ax, _mm512_castsi512_ps(c)));
        __m512i m = _mm512_add_epi32(_mm512_sub_epi32(sum, c), _mm512_srli_epi32(_mm512_sub_epi32(e, i32(C::emin_field)), C::field_shift));
        // x's sign at the code's sign bit (x's exponent bits below it are masked off by the ternary logic).
        const __m512i sign = _mm512_srli_epi32(b, 31 - C::sign_position);
        const __m512i magnitude = i32(static_cast<std::uint32_t>(C::magnitude_mask));
        const __m512 threshold = f32(C::threshold_bits);
        __m512i code;
        if constexpr (C::family == float_family::ieee) {
            m = _mm512_mask_mov_epi32(m, _mm512_cmp_ps_mask(ax, threshold, _CMP_GE_OQ), i32(C::inf_code));
            m = _mm512_mask_mov_epi32(m, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), i32(C::nan_code));
            code = _mm512_ternarylogic_epi32(m, sign, magnitude, detail::c_selects_a);
        } else if constexpr (C::family == float_family::fn) {
            m = _mm512_mask_mov_epi32(m, _mm512_cmp_ps_mask(ax, threshold, _CMP_NLE_UQ), i32(C::nan_code));
            code = _mm512_ternarylogic_epi32(m, sign, magnitude, detail::c_selects_a);
        } else if constexpr (C::family == float_family::fnuz) {
            // No -0: the sign only on a nonzero magnitude; NaN, inf and overflow are 0x80.
            code = _mm512_mask_ternarylogic_epi32(m, _mm512_test_epi32_mask(m, m), sign, magnitude, detail::c_selects_a);
            code = _mm512_mask_mov_epi32(code, _mm512_cmp_ps_mask(ax, threshold, _CMP_NLT_UQ), i32(0x80u));
        } else { // finite: saturates; a NaN is the zero of the other sign
            m = _mm512_mask_mov_epi32(m, _mm512_cmp_ps_mask(ax, f32(C::max_bits), _CMP_GT_OQ), i32(C::max_code_value));
            code = _mm512_ternarylogic_epi32(m, sign, magnitude, detail::c_selects_a);
            code = _mm512_mask_andnot_epi32(code, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), sign, i32(1u << C::sign_position));
        }
        return _mm512_cvtepi32_epi8(code);
    }
}

/// The values of the 16 narrow integer codes of D in `codes`, as 32-bit lanes.
template <dtype D>
    requires simd::detail::is_narrow_int_dtype_v<D>
inline __m512i decode(__m128i codes) noexcept {
    using T = narrow_int<D>;
    const __m512i x = _mm512_cvtepu8_epi32(codes);
    if constexpr (T::is_signed)
        return _mm512_srai_epi32(_mm512_slli_epi32(x, 32 - T::bits_wide), 32 - T::bits_wide);
    else
        return _mm512_and_si512(x, _mm512_set1_epi32(T::mask));
}

/// The codes of D of the 16 32-bit lanes of v (their low bits: wrapped).
template <dtype D>
    requires simd::detail::is_narrow_int_dtype_v<D>
inline __m128i encode(__m512i v) noexcept {
    return _mm_and_si128(_mm512_cvtepi32_epi8(v), _mm_set1_epi8(static_cast<char>(narrow_int<D>::mask)));
}

} // namespace mixt::simd::wide::narrow

#if defined(MIXT_NARROW_DIAGNOSTICS_PUSHED)
#pragma GCC diagnostic pop
#undef MIXT_NARROW_DIAGNOSTICS_PUSHED
#endif

#endif // MIXT_SIMD_AVX512

#endif // MIXT_SIMD_AVX2

#endif // MIXT_SIMD_NARROW_HPP
