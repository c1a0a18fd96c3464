#ifndef MIXT_SIMD_OPS_AVX2_HPP
#define MIXT_SIMD_OPS_AVX2_HPP

// AVX2 versions of the operations the fused loop meets most, as specializations of
// simd::detail::vectorized (simd/ops.hpp). Each computes exactly what the scalar functor of
// expr/functors.hpp computes, lane by lane:
//   - f16/bf16 arithmetic runs in f32 and is rounded to the node's type once, by the batch conversion
//     (`apply<false>` leaves that rounding to the store: simd::apply_unrounded);
//   - integer + - * run in 32-bit (or 64-bit) lanes and wrap to the node's width;
//   - minimum/maximum keep the functors' order of tests (NaN first, then `b < a`, -0 below +0), not MINPS's;
//   - complex multiplication uses the textbook formula and falls back to the scalar definition for a batch
//     where a lane comes out NaN in both parts (C's Annex G recovery of infinities);
//   - complex + and - of a batch and elements in memory, stored (simd::apply_store, detail::combined_store),
//     combine the memory operand in its interleaved order instead of loading it into a planar batch;
//   - a complex<float> leaf times a float, widened to complex<double> and + or - elements in memory
//     (simd::apply_real_product_store, detail::real_product_store) is computed in memory order throughout;
//   - exp, log, sin, cos (and tanh for f16/bf16) on f32 lanes use Eigen's packet functions (within 2 ulp of
//     the result type; the only results that are not bit-identical to the scalar path).

#include <complex>
#include <cstdint>
#include <type_traits>

#include "mixt/expr/functors.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/batch.hpp"
#include "mixt/simd/convert.hpp"
#include "mixt/simd/ops.hpp"

#if MIXT_SIMD_AVX2
#include <immintrin.h>

#include <Eigen/Core>

namespace mixt::simd::detail {
namespace fn = ::mixt::detail;

template <class T>
inline constexpr bool is_f32_batch_v = is_f32_lane_v<T>;

// A float result of arithmetic on batches of T rounded to T (a no-op for float), or with Round false left
// unrounded, for a store to round (simd::apply_unrounded).
template <class T, bool Round = true>
inline batch<T> round_f32(__m256 r) noexcept {
    if constexpr (std::is_same_v<T, float> || !Round)
        return {r};
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return {_mm256_castsi256_ps(arithmetic_f32x8_to_bf16_high(r))};
    else
        return simd::convert<T>(batch<float>{r});
}

// The lanes (a bit mask) where rounding the f32 values r, each within Ulps f32 ulps of an exact result, to T
// (f16 or bf16) could give another value than rounding the exact result: a lane within Ulps of a midpoint
// between two values of T, where the bits of r's significand below T's last bit are near 100...0. Those are
// the low 13 (f16) or 16 (bf16) bits; with Tiny (f16 results that may be subnormal), below f16's smallest
// normal number 2^-14 f16's spacing stays 2^-24, so there are 126 - E of them (E: r's biased exponent; r below
// 2^-32 rounds to zero from any such distance, and 31 bits say so).
template <class T, int Ulps, bool Tiny>
inline int uncertain_lanes(__m256 r) noexcept {
    constexpr int low = std::is_same_v<T, Eigen::half> ? 13 : 16;
    const __m256i bits = _mm256_castps_si256(r);
    __m256i off;
    if constexpr (Tiny) {
        const __m256i one = _mm256_set1_epi32(1);
        const __m256i biased = _mm256_and_si256(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0xff));
        const __m256i k = _mm256_min_epi32(_mm256_set1_epi32(31),
                                           _mm256_max_epi32(_mm256_set1_epi32(low), _mm256_sub_epi32(_mm256_set1_epi32(126), biased)));
        const __m256i significand =
            _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000));
        const __m256i midpoint = _mm256_sllv_epi32(one, _mm256_sub_epi32(k, one));
        const __m256i below = _mm256_sub_epi32(_mm256_sllv_epi32(one, k), one);
        // (significand - (midpoint - Ulps)) mod 2^k <= 2 Ulps.
        off = _mm256_and_si256(_mm256_sub_epi32(significand, _mm256_sub_epi32(midpoint, _mm256_set1_epi32(Ulps))), below);
    } else {
        // (bits - (midpoint - Ulps)) mod 2^low <= 2 Ulps: three instructions.
        off = _mm256_and_si256(_mm256_sub_epi32(bits, _mm256_set1_epi32((1 << (low - 1)) - Ulps)),
                               _mm256_set1_epi32((1 << low) - 1));
    }
    const __m256i bad = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * Ulps + 1), off);
    return _mm256_movemask_ps(_mm256_castsi256_ps(bad));
}
// h (r rounded to T) with the lanes that uncertain_lanes finds replaced by the scalar definition of Fn at a's
// lanes (correctly rounded to T, functors.hpp). Rare (a lane in a thousand, or a batch with results where
// T's spacing is wider than in r's binade), so out of line.
template <class T, int Ulps, class Fn>
MIXT_COLD __m256 settle_lanes(__m256 r, __m256 h, __m256 a) noexcept {
    const int mask = uncertain_lanes<T, Ulps, std::is_same_v<T, Eigen::half>>(r);
    if (mask == 0) return h;
    alignas(32) float hv[8], av[8];
    _mm256_store_ps(hv, h);
    _mm256_store_ps(av, a);
    for (int l = 0; l < 8; ++l)
        if ((mask >> l) & 1) hv[l] = static_cast<float>(Fn{}(static_cast<T>(av[l])));
    return _mm256_load_ps(hv);
}
// r, f32 values each within Ulps f32 ulps of Fn(a), rounded to T (f16 or bf16; the lanes hold T's values as
// f32) so that every lane is the correctly rounded Fn(a), the scalar definition's value: a lane whose r lies
// within Ulps of a midpoint between two values of T (where r and the exact value could round apart) takes
// the scalar definition. The test in line: the distance in f32 ulps between r and its rounded value h,
// |bits(r) - bits(h)|, is at least half T's spacing (2^12 f32 ulps for f16, 2^15 for bf16) less Ulps. It
// also flags every lane where T's spacing is wider than that (f16's subnormal numbers, a rounding to inf),
// which settle_lanes then tests exactly.
template <class T, int Ulps, class Fn>
inline __m256 rounded_exactly(__m256 r, __m256 a) noexcept {
    constexpr int half_spacing = std::is_same_v<T, Eigen::half> ? 1 << 12 : 1 << 15;
    const __m256 h = simd::convert<T>(batch<float>{r}).v;
    const __m256i d = _mm256_abs_epi32(_mm256_sub_epi32(_mm256_castps_si256(r), _mm256_castps_si256(h)));
    __m256i near = _mm256_cmpgt_epi32(d, _mm256_set1_epi32(half_spacing - Ulps - 1));
    // log makes NaN of every negative input, and a NaN's payload bits look like any distance: NaN lanes are
    // left out (their rounded value is a NaN, which is all the NaN contract asks).
    if constexpr (std::is_same_v<Fn, fn::log_fn>)
        near = _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)), near);
    if (__builtin_expect(!_mm256_testz_si256(near, near), 0)) return settle_lanes<T, Ulps, Fn>(r, h, a);
    return h;
}

inline __m256i mask_to_bool(__m256i m) noexcept { return _mm256_srli_epi32(m, 31); }
inline __m256i mask_to_bool(__m256 m) noexcept { return mask_to_bool(_mm256_castps_si256(m)); }
inline __m256i mask_to_bool(__m256d lo, __m256d hi) noexcept {
    const int bits = _mm256_movemask_pd(lo) | (_mm256_movemask_pd(hi) << 4);
    return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(bits), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
                            _mm256_set1_epi32(1));
}

template <class Fn>
inline constexpr bool is_arith_v = std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn> ||
                                   std::is_same_v<Fn, fn::mul_fn> || std::is_same_v<Fn, fn::div_fn>;
template <class Fn>
inline constexpr bool is_minmax_v = std::is_same_v<Fn, fn::minimum_fn> || std::is_same_v<Fn, fn::maximum_fn>;
template <class Fn>
inline constexpr int compare_predicate() {
    if constexpr (std::is_same_v<Fn, fn::equal_fn>) return _CMP_EQ_OQ;
    else if constexpr (std::is_same_v<Fn, fn::not_equal_fn>) return _CMP_NEQ_UQ;
    else if constexpr (std::is_same_v<Fn, fn::less_fn>) return _CMP_LT_OQ;
    else if constexpr (std::is_same_v<Fn, fn::less_equal_fn>) return _CMP_LE_OQ;
    else if constexpr (std::is_same_v<Fn, fn::greater_fn>) return _CMP_GT_OQ;
    else if constexpr (std::is_same_v<Fn, fn::greater_equal_fn>) return _CMP_GE_OQ;
    else return -1;
}
// A variable, not a call: at -O0 GCC's intrinsics are macros whose immediate must be a plain constant.
template <class Fn>
inline constexpr int compare_predicate_v = compare_predicate<Fn>();
template <class Fn>
inline constexpr bool is_compare_v = compare_predicate_v<Fn> >= 0;

template <class Fn>
inline __m256 arith_ps(__m256 a, __m256 b) noexcept {
    if constexpr (std::is_same_v<Fn, fn::add_fn>) return _mm256_add_ps(a, b);
    else if constexpr (std::is_same_v<Fn, fn::sub_fn>) return _mm256_sub_ps(a, b);
    else if constexpr (std::is_same_v<Fn, fn::mul_fn>) return _mm256_mul_ps(a, b);
    else return _mm256_div_ps(a, b);
}
template <class Fn>
inline __m256d arith_pd(__m256d a, __m256d b) noexcept {
    if constexpr (std::is_same_v<Fn, fn::add_fn>) return _mm256_add_pd(a, b);
    else if constexpr (std::is_same_v<Fn, fn::sub_fn>) return _mm256_sub_pd(a, b);
    else if constexpr (std::is_same_v<Fn, fn::mul_fn>) return _mm256_mul_pd(a, b);
    else return _mm256_div_pd(a, b);
}
template <class Fn>
inline __m256 minmax_ps(__m256 a, __m256 b) noexcept {
    // minimum: b < a ? b : a; maximum: a < b ? b : a; equal operands: their bits or-ed (minimum) or and-ed
    // (maximum), which is either operand except for -0 and +0, where it is -0 (minimum) or +0 (maximum); then NaN
    // of b, then NaN of a wins.
    constexpr bool min = std::is_same_v<Fn, fn::minimum_fn>;
    const __m256 take_b = min ? _mm256_cmp_ps(b, a, _CMP_LT_OQ) : _mm256_cmp_ps(a, b, _CMP_LT_OQ);
    __m256 r = _mm256_blendv_ps(a, b, take_b);
    r = _mm256_blendv_ps(r, min ? _mm256_or_ps(a, b) : _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    r = _mm256_blendv_ps(r, b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
template <class Fn>
inline __m256d minmax_pd(__m256d a, __m256d b) noexcept {
    constexpr bool min = std::is_same_v<Fn, fn::minimum_fn>;
    const __m256d take_b = min ? _mm256_cmp_pd(b, a, _CMP_LT_OQ) : _mm256_cmp_pd(a, b, _CMP_LT_OQ);
    __m256d r = _mm256_blendv_pd(a, b, take_b);
    r = _mm256_blendv_pd(r, min ? _mm256_or_pd(a, b) : _mm256_and_pd(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ));
    r = _mm256_blendv_pd(r, b, _mm256_cmp_pd(b, b, _CMP_UNORD_Q));
    return _mm256_blendv_pd(r, a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
}

// --- f32 lanes: float, half, bfloat16 -------------------------------------------------------------------
template <class T, class Fn>
    requires(is_f32_batch_v<T> && (is_arith_v<Fn> || is_minmax_v<Fn>))
struct vectorized<T, Fn, T, T> : std::true_type {
    template <bool Round = true>
    static batch<T> apply(const Fn&, const batch<T>& a, const batch<T>& b) noexcept {
        if constexpr (is_arith_v<Fn>)
            return round_f32<T, Round>(arith_ps<Fn>(a.v, b.v));
        else
            return {minmax_ps<Fn>(a.v, b.v)}; // picks an operand: already of type T
    }
};
template <class T, class Fn>
    requires(is_f32_batch_v<T> && is_compare_v<Fn>)
struct vectorized<bool, Fn, T, T> : std::true_type {
    static batch<bool> apply(const Fn&, const batch<T>& a, const batch<T>& b) noexcept {
        return {mask_to_bool(_mm256_cmp_ps(a.v, b.v, compare_predicate_v<Fn>))};
    }
};
template <class T>
    requires is_f32_batch_v<T>
struct vectorized<T, fn::neg_fn, T> : std::true_type {
    static batch<T> apply(const fn::neg_fn&, const batch<T>& a) noexcept {
        return {_mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f))};
    }
};
template <class T>
    requires is_f32_batch_v<T>
struct vectorized<T, fn::abs_fn, T> : std::true_type {
    static batch<T> apply(const fn::abs_fn&, const batch<T>& a) noexcept {
        return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)};
    }
};
template <class T>
    requires is_f32_batch_v<T>
struct vectorized<T, fn::sqrt_fn, T> : std::true_type {
    template <bool Round = true>
    static batch<T> apply(const fn::sqrt_fn&, const batch<T>& a) noexcept {
        return round_f32<T, Round>(_mm256_sqrt_ps(a.v));
    }
};

#if defined(EIGEN_VECTORIZE_AVX)
// Eigen's exp, log, sin and cos on f32 are within 1 ulp (measured against double), except exp where the
// result is subnormal (it flushes to 0): batches with such lanes take the scalar definition. Eigen's tanh is
// a rational approximation up to 5 ulp off in f32, so it serves only f16/bf16 nodes, whose rounding absorbs it.
template <class T, class Fn>
inline constexpr bool is_eigen_math_v =
    std::is_same_v<Fn, fn::exp_fn> || std::is_same_v<Fn, fn::log_fn> || std::is_same_v<Fn, fn::sin_fn> ||
    std::is_same_v<Fn, fn::cos_fn> || (std::is_same_v<Fn, fn::tanh_fn> && !std::is_same_v<T, float>);
template <class T, class Fn>
    requires(is_f32_batch_v<T> && is_eigen_math_v<T, Fn>)
struct vectorized<T, Fn, T> : std::true_type {
    template <bool Round = true>
    static batch<T> apply(const Fn& f, const batch<T>& a) noexcept {
        using namespace Eigen::internal;
        const Packet8f x = a.v;
        Packet8f r;
        if constexpr (std::is_same_v<Fn, fn::exp_fn>) {
            if (_mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ)) != 0)
                return apply_lanes<T>(f, a);
            r = pexp(x);
        } else if constexpr (std::is_same_v<Fn, fn::log_fn>) {
            // plog takes a subnormal input for the smallest normal number (log(1e-45f) would be -87.3).
            const __m256 subnormal = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ),
                                                   _mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ));
            if (_mm256_movemask_ps(subnormal) != 0) return apply_lanes<T>(f, a);
            r = plog(x);
        } else if constexpr (std::is_same_v<Fn, fn::sin_fn>) {
            r = psin(x);
        } else if constexpr (std::is_same_v<Fn, fn::cos_fn>) {
            r = pcos(x);
        } else {
            r = ptanh(x);
        }
        // Eigen's functions are within 1 ulp of f32 (tanh 5); an f16 or bf16 result is rounded once more, which
        // must give the correctly rounded value (the scalar definition's): rounded here, even for Round false
        // (a store's rounding of it is exact).
        if constexpr (std::is_same_v<T, float>)
            return {r};
        else
            return {rounded_exactly<T, std::is_same_v<Fn, fn::tanh_fn> ? 8 : 4, Fn>(r, a.v)};
    }
};

// exp of a half node: exp(x) = 2^n e^g with n = round(x / ln2) and g = x - n ln2 in [-0.35, 0.35], ln2 in
// two parts (Cody and Waite): ln2_hi has 15 significant bits, so n ln2_hi is exact and so is x - n ln2_hi (x
// is a half, a multiple of 2^-12 wherever n != 0); only the n ln2_lo term rounds. e^g is the degree-6 Taylor
// polynomial (truncation below 1.7e-7 relative). Over every half input the f32 value is within 2.6 f32 ulps
// of exp, with FMA or without, which rounded_exactly is told (exp_half_ulps): the few lanes near a rounding
// boundary of f16 take the correctly rounded scalar definition, the others round to half once, like every
// f16 node. The input is clamped to [-27, 27] first: exp(27) rounds to +inf in half, exp(-27) to 0, and n
// stays within f32's normal exponents. The clamp keeps a NaN (MAXPS and MINPS return their second operand
// when one is NaN), and every later step carries it, sign and payload included.
// n = round(t) is the "magic number" rounding: adding 1.5 * 2^23 leaves round(t) in the low mantissa
// bits, whose value shifted into the exponent field (mod 2^32) is 2^n's bits.
// The constants are shared with the 16-lane version (simd/wide.hpp), so both compute the same f32 value.
inline constexpr float exp_taylor[7] = {1.0f, 1.0f, 0.5f, 1.0f / 6.0f, 1.0f / 24.0f, 1.0f / 120.0f, 1.0f / 720.0f};
inline constexpr float exp_ln2_hi = 0.693145751953125f;        // 0x3f317200
inline constexpr float exp_ln2_lo = 1.42860682030941723212e-6f; // ln2 - ln2_hi
inline constexpr float exp_clamp = 27.0f;
// How far (in f32 ulps) the value may be from exp's: what rounded_exactly allows for (half_math_test checks
// every input, so a larger error fails there).
inline constexpr int exp_half_ulps = 3;
inline __m256 madd_ps(__m256 a, __m256 b, __m256 c) noexcept {
#if defined(__FMA__)
    return _mm256_fmadd_ps(a, b, c);
#else
    return _mm256_add_ps(_mm256_mul_ps(a, b), c);
#endif
}
// c - a b
inline __m256 nmadd_ps(__m256 a, __m256 b, __m256 c) noexcept {
#if defined(__FMA__)
    return _mm256_fnmadd_ps(a, b, c);
#else
    return _mm256_sub_ps(c, _mm256_mul_ps(a, b));
#endif
}
template <>
struct vectorized<Eigen::half, fn::exp_fn, Eigen::half> : std::true_type {
    template <bool Round = true>
    static batch<Eigen::half> apply(const fn::exp_fn&, const batch<Eigen::half>& a) noexcept {
        const __m256 magic = _mm256_set1_ps(12582912.0f); // 1.5 * 2^23
        const __m256 x = _mm256_min_ps(_mm256_set1_ps(exp_clamp), _mm256_max_ps(_mm256_set1_ps(-exp_clamp), a.v));
        const __m256 s = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), magic);
        const __m256 n = _mm256_sub_ps(s, magic);
        __m256 g = nmadd_ps(n, _mm256_set1_ps(exp_ln2_hi), x); // exact
        g = nmadd_ps(n, _mm256_set1_ps(exp_ln2_lo), g);
        __m256 p = _mm256_set1_ps(exp_taylor[6]);
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[5]));
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[4]));
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[3]));
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[2]));
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[1]));
        p = madd_ps(p, g, _mm256_set1_ps(exp_taylor[0]));
        const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(s), _mm256_set1_epi32(127)), 23);
        const __m256 r = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
        return {rounded_exactly<Eigen::half, exp_half_ulps, fn::exp_fn>(r, a.v)}; // rounded even for Round false
    }
};
#endif

// --- double ----------------------------------------------------------------------------------------------
template <class Fn>
    requires(is_arith_v<Fn> || is_minmax_v<Fn>)
struct vectorized<double, Fn, double, double> : std::true_type {
    static batch<double> apply(const Fn&, const batch<double>& a, const batch<double>& b) noexcept {
        if constexpr (is_arith_v<Fn>)
            return {{arith_pd<Fn>(a.v[0], b.v[0]), arith_pd<Fn>(a.v[1], b.v[1])}};
        else
            return {{minmax_pd<Fn>(a.v[0], b.v[0]), minmax_pd<Fn>(a.v[1], b.v[1])}};
    }
};
template <class Fn>
    requires is_compare_v<Fn>
struct vectorized<bool, Fn, double, double> : std::true_type {
    static batch<bool> apply(const Fn&, const batch<double>& a, const batch<double>& b) noexcept {
        return {mask_to_bool(_mm256_cmp_pd(a.v[0], b.v[0], compare_predicate_v<Fn>),
                             _mm256_cmp_pd(a.v[1], b.v[1], compare_predicate_v<Fn>))};
    }
};
template <>
struct vectorized<double, fn::sqrt_fn, double> : std::true_type {
    static batch<double> apply(const fn::sqrt_fn&, const batch<double>& a) noexcept {
        return {{_mm256_sqrt_pd(a.v[0]), _mm256_sqrt_pd(a.v[1])}};
    }
};

// --- integers in 32-bit lanes (bool, 8-, 16- and 32-bit) -------------------------------------------------
template <class T, class Fn>
    requires(is_lane32_int_v<T> && !std::is_same_v<T, bool> &&
             (std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn> || std::is_same_v<Fn, fn::mul_fn> ||
              std::is_same_v<Fn, fn::bit_and_fn> || std::is_same_v<Fn, fn::bit_or_fn> ||
              std::is_same_v<Fn, fn::bit_xor_fn>))
struct vectorized<T, Fn, T, T> : std::true_type {
    static batch<T> apply(const Fn&, const batch<T>& a, const batch<T>& b) noexcept {
        __m256i r;
        if constexpr (std::is_same_v<Fn, fn::add_fn>) r = _mm256_add_epi32(a.v, b.v);
        else if constexpr (std::is_same_v<Fn, fn::sub_fn>) r = _mm256_sub_epi32(a.v, b.v);
        else if constexpr (std::is_same_v<Fn, fn::mul_fn>) r = _mm256_mullo_epi32(a.v, b.v);
        else if constexpr (std::is_same_v<Fn, fn::bit_and_fn>) r = _mm256_and_si256(a.v, b.v);
        else if constexpr (std::is_same_v<Fn, fn::bit_or_fn>) r = _mm256_or_si256(a.v, b.v);
        else r = _mm256_xor_si256(a.v, b.v);
        return {wrap32<T>(r)};
    }
};
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::mul_fn> || std::is_same_v<Fn, fn::bit_and_fn> ||
             std::is_same_v<Fn, fn::bit_or_fn> || std::is_same_v<Fn, fn::bit_xor_fn> ||
             std::is_same_v<Fn, fn::logical_and_fn> || std::is_same_v<Fn, fn::logical_or_fn>)
struct vectorized<bool, Fn, bool, bool> : std::true_type {
    static batch<bool> apply(const Fn&, const batch<bool>& a, const batch<bool>& b) noexcept {
        if constexpr (std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::bit_or_fn> ||
                      std::is_same_v<Fn, fn::logical_or_fn>)
            return {_mm256_or_si256(a.v, b.v)};
        else if constexpr (std::is_same_v<Fn, fn::bit_xor_fn>)
            return {_mm256_xor_si256(a.v, b.v)};
        else
            return {_mm256_and_si256(a.v, b.v)};
    }
};
template <class T, class Fn>
    requires(is_lane32_int_v<T> && is_compare_v<Fn>)
struct vectorized<bool, Fn, T, T> : std::true_type {
    static batch<bool> apply(const Fn&, const batch<T>& a, const batch<T>& b) noexcept {
        __m256i x = a.v, y = b.v;
        if constexpr (std::is_same_v<T, std::uint32_t>) { // order unsigned values as signed ones
            x = _mm256_xor_si256(x, _mm256_set1_epi32(INT32_MIN));
            y = _mm256_xor_si256(y, _mm256_set1_epi32(INT32_MIN));
        }
        __m256i m;
        if constexpr (std::is_same_v<Fn, fn::equal_fn>) m = _mm256_cmpeq_epi32(x, y);
        else if constexpr (std::is_same_v<Fn, fn::not_equal_fn>) m = _mm256_xor_si256(_mm256_cmpeq_epi32(x, y), _mm256_set1_epi32(-1));
        else if constexpr (std::is_same_v<Fn, fn::less_fn>) m = _mm256_cmpgt_epi32(y, x);
        else if constexpr (std::is_same_v<Fn, fn::greater_fn>) m = _mm256_cmpgt_epi32(x, y);
        else if constexpr (std::is_same_v<Fn, fn::less_equal_fn>) m = _mm256_xor_si256(_mm256_cmpgt_epi32(x, y), _mm256_set1_epi32(-1));
        else m = _mm256_xor_si256(_mm256_cmpgt_epi32(y, x), _mm256_set1_epi32(-1));
        return {mask_to_bool(m)};
    }
};

// --- 64-bit integers ---------------------------------------------------------------------------------------
template <class T, class Fn>
    requires(is_lane64_int_v<T> &&
             (std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn> || std::is_same_v<Fn, fn::bit_and_fn> ||
              std::is_same_v<Fn, fn::bit_or_fn> || std::is_same_v<Fn, fn::bit_xor_fn>))
struct vectorized<T, Fn, T, T> : std::true_type {
    static __m256i op(__m256i a, __m256i b) noexcept {
        if constexpr (std::is_same_v<Fn, fn::add_fn>) return _mm256_add_epi64(a, b);
        else if constexpr (std::is_same_v<Fn, fn::sub_fn>) return _mm256_sub_epi64(a, b);
        else if constexpr (std::is_same_v<Fn, fn::bit_and_fn>) return _mm256_and_si256(a, b);
        else if constexpr (std::is_same_v<Fn, fn::bit_or_fn>) return _mm256_or_si256(a, b);
        else return _mm256_xor_si256(a, b);
    }
    static batch<T> apply(const Fn&, const batch<T>& a, const batch<T>& b) noexcept {
        return {{op(a.v[0], b.v[0]), op(a.v[1], b.v[1])}};
    }
};

// --- where: a bool batch selects between two batches of the same type --------------------------------------
template <class T>
    requires(is_f32_batch_v<T> || is_lane32_int_v<T> || std::is_same_v<T, double> || is_lane64_int_v<T>)
struct vectorized<T, fn::where_fn, bool, T, T> : std::true_type {
    static batch<T> apply(const fn::where_fn&, const batch<bool>& c, const batch<T>& x, const batch<T>& y) noexcept {
        const __m256i m = _mm256_sub_epi32(_mm256_setzero_si256(), c.v); // 1 -> all ones
        if constexpr (is_f32_batch_v<T>) {
            return {_mm256_blendv_ps(y.v, x.v, _mm256_castsi256_ps(m))};
        } else if constexpr (is_lane32_int_v<T>) {
            return {_mm256_blendv_epi8(y.v, x.v, m)};
        } else {
            const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(m));
            const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(m, 1));
            if constexpr (std::is_same_v<T, double>)
                return {{_mm256_blendv_pd(y.v[0], x.v[0], _mm256_castsi256_pd(lo)),
                         _mm256_blendv_pd(y.v[1], x.v[1], _mm256_castsi256_pd(hi))}};
            else
                return {{_mm256_blendv_epi8(y.v[0], x.v[0], lo), _mm256_blendv_epi8(y.v[1], x.v[1], hi)}};
        }
    }
};

// --- complex ---------------------------------------------------------------------------------------------
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct vectorized<std::complex<float>, Fn, std::complex<float>, std::complex<float>> : std::true_type {
    static batch<std::complex<float>> apply(const Fn&, const batch<std::complex<float>>& a,
                                            const batch<std::complex<float>>& b) noexcept {
        return {arith_ps<Fn>(a.re, b.re), arith_ps<Fn>(a.im, b.im)};
    }
};
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct vectorized<std::complex<double>, Fn, std::complex<double>, std::complex<double>> : std::true_type {
    static batch<std::complex<double>> apply(const Fn&, const batch<std::complex<double>>& a,
                                             const batch<std::complex<double>>& b) noexcept {
        return {{arith_pd<Fn>(a.re[0], b.re[0]), arith_pd<Fn>(a.re[1], b.re[1])},
                {arith_pd<Fn>(a.im[0], b.im[0]), arith_pd<Fn>(a.im[1], b.im[1])}};
    }
};
// A complex batch + or - 8 complex elements in memory, stored (simd::apply_store): a's planar parts are
// interleaved into memory order (one in-lane shuffle per register), the memory operand is loaded by 128-bit
// halves into the same order (inserts from memory use no shuffle port), and the sums are stored by halves.
// The same additions as the planar path, operand for operand, so the same bits.
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct combined_store<std::complex<float>, Fn> : std::true_type {
    template <bool ALeft>
    static void store(std::complex<float>* out, const batch<std::complex<float>>& a,
                      const std::complex<float>* p) noexcept {
        const float* q = reinterpret_cast<const float*>(p);
        float* o = reinterpret_cast<float*>(out);
        const __m256 a0145 = _mm256_unpacklo_ps(a.re, a.im); // elements 0 1 | 4 5
        const __m256 a2367 = _mm256_unpackhi_ps(a.re, a.im); // elements 2 3 | 6 7
        const __m256 m0145 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q)), _mm_loadu_ps(q + 8), 1);
        const __m256 m2367 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 4)), _mm_loadu_ps(q + 12), 1);
        const __m256 r0145 = ALeft ? arith_ps<Fn>(a0145, m0145) : arith_ps<Fn>(m0145, a0145);
        const __m256 r2367 = ALeft ? arith_ps<Fn>(a2367, m2367) : arith_ps<Fn>(m2367, a2367);
        _mm_storeu_ps(o, _mm256_castps256_ps128(r0145));
        _mm_storeu_ps(o + 4, _mm256_castps256_ps128(r2367));
        _mm_storeu_ps(o + 8, _mm256_extractf128_ps(r0145, 1));
        _mm_storeu_ps(o + 12, _mm256_extractf128_ps(r2367, 1));
    }
};
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct combined_store<std::complex<double>, Fn> : std::true_type {
    template <bool ALeft>
    static void store(std::complex<double>* out, const batch<std::complex<double>>& a,
                      const std::complex<double>* p) noexcept {
        for (int h = 0; h < 2; ++h) {
            const double* q = reinterpret_cast<const double*>(p) + 8 * h;
            double* o = reinterpret_cast<double*>(out) + 8 * h;
            const __m256d a02 = _mm256_unpacklo_pd(a.re[h], a.im[h]); // elements 0 | 2 of this half
            const __m256d a13 = _mm256_unpackhi_pd(a.re[h], a.im[h]); // elements 1 | 3
            const __m256d m02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(q)), _mm_loadu_pd(q + 4), 1);
            const __m256d m13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(q + 2)), _mm_loadu_pd(q + 6), 1);
            const __m256d r02 = ALeft ? arith_pd<Fn>(a02, m02) : arith_pd<Fn>(m02, a02);
            const __m256d r13 = ALeft ? arith_pd<Fn>(a13, m13) : arith_pd<Fn>(m13, a13);
            _mm_storeu_pd(o, _mm256_castpd256_pd128(r02));
            _mm_storeu_pd(o + 2, _mm256_castpd256_pd128(r13));
            _mm_storeu_pd(o + 4, _mm256_extractf128_pd(r02, 1));
            _mm_storeu_pd(o + 6, _mm256_extractf128_pd(r13, 1));
        }
    }
};

// Eight complex<float> elements held interleaved in two registers, elements 0 1 | 4 5 and 2 3 | 6 7, widened
// to complex<double> by 128-bit halves (which come out in memory order) and combined with the eight
// complex<double> elements at p, loaded and stored by whole registers (Stream: streaming stores, out 32-byte
// aligned).
template <class Fn, bool ALeft, bool Stream = false>
void widen_combine_store(std::complex<double>* out, __m256 a0145, __m256 a2367, const std::complex<double>* p) noexcept {
    const double* q = reinterpret_cast<const double*>(p);
    double* o = reinterpret_cast<double*>(out);
    const __m256d w[4] = {_mm256_cvtps_pd(_mm256_castps256_ps128(a0145)), _mm256_cvtps_pd(_mm256_castps256_ps128(a2367)),
                          _mm256_cvtps_pd(_mm256_extractf128_ps(a0145, 1)),
                          _mm256_cvtps_pd(_mm256_extractf128_ps(a2367, 1))};
    for (int j = 0; j < 4; ++j) {
        const __m256d m = _mm256_loadu_pd(q + 4 * j);
        const __m256d r = ALeft ? arith_pd<Fn>(w[j], m) : arith_pd<Fn>(m, w[j]);
        if constexpr (Stream)
            _mm256_stream_pd(o + 4 * j, r);
        else
            _mm256_storeu_pd(o + 4 * j, r);
    }
}

// The same with a complex<float> batch widened to complex<double> first (`c64 * f32 + c128`): interleaved while
// still float (one shuffle per register for all 8 elements), then widened and combined (widen_combine_store).
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct combined_store<std::complex<double>, Fn, std::complex<float>> : std::true_type {
    template <bool ALeft>
    static void store(std::complex<double>* out, const batch<std::complex<float>>& a,
                      const std::complex<double>* p) noexcept {
        widen_combine_store<Fn, ALeft>(out, _mm256_unpacklo_ps(a.re, a.im), _mm256_unpackhi_ps(a.re, a.im), p);
    }
};

// `c64 * f32 + c128` with the complex<float> operand a leaf: the product of 8 complex<float> elements at a and
// a float batch x (a complex<float> whose imaginary part is +0), widened to complex<double> and combined with
// the 8 elements at p. The product is computed in memory order, two elements per 128-bit half: a is loaded
// by halves as elements 0 1 | 4 5 and 2 3 | 6 7, x's lanes are doubled into the same order by one in-lane
// unpack each, and for a = (re, im), x = (x, +0):
//     (re * x) - (im * 0)    and    (re * 0) + (im * x)    (RealLeft: (x * re) - (0 * im), (x * im) + (0 * re))
// are one product, one product of the swapped pairs by zero, and one addsub. These are the products and sums
// of the planar complex product (vectorized<complex<float>, mul_fn, ...>), operand for operand, except that
// with the leaf on the left the imaginary part adds the same two terms in the other order. A sum of two
// numbers does not depend on their order, and a sum of two NaNs (where the first operand's payload would
// win) only arises here with re or x NaN, or with re infinite and both re * x and im * x giving the default
// NaN: the first two make both parts NaN, and the third gives the same default NaN either way. A lane that
// comes out NaN in both parts needs C's Annex G recovery (complex_multiply): store returns false and stores
// nothing, and the caller takes the planar path for the batch.
template <class Fn>
    requires(std::is_same_v<Fn, fn::add_fn> || std::is_same_v<Fn, fn::sub_fn>)
struct real_product_store<std::complex<double>, Fn> : std::true_type {
    template <bool ALeft, bool RealLeft, bool Stream>
    static bool store(std::complex<double>* out, const std::complex<float>* a, const batch<float>& x,
                      const std::complex<double>* p) noexcept {
#if MIXT_SIMD_AVX512
        return store512<ALeft, RealLeft, Stream>(out, a, x, p);
#else
        return store256<ALeft, RealLeft, Stream>(out, a, x, p);
#endif
    }

#if MIXT_SIMD_AVX512
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
// GCC 12's AVX-512 intrinsics trip -W(maybe-)uninitialized where they are inlined (bug 105593): see wide.hpp.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    // On AVX-512 the 8 elements are one register in memory order: x's lanes doubled by one permute, the
    // products as above, the sums and differences by one add and one masked subtract (no addsub at 512 bits),
    // and the widening by 256-bit halves, which come out in memory order too.
    template <bool ALeft, bool RealLeft, bool Stream>
    static bool store512(std::complex<double>* out, const std::complex<float>* a, const batch<float>& x,
                         const std::complex<double>* p) noexcept {
        const __m512 z = _mm512_loadu_ps(reinterpret_cast<const float*>(a));
        const __m512 xx = _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
                                                _mm512_castps256_ps512(x.v));
        const __m512 zero = _mm512_setzero_ps();
        const __m512 swapped = _mm512_permute_ps(z, 0xB1);
        const __m512 prod = RealLeft ? _mm512_mul_ps(xx, z) : _mm512_mul_ps(z, xx);
        const __m512 by_zero = RealLeft ? _mm512_mul_ps(zero, swapped) : _mm512_mul_ps(swapped, zero);
        const __m512 r = _mm512_mask_sub_ps(_mm512_add_ps(prod, by_zero), __mmask16{0x5555}, prod, by_zero);
        const __mmask16 nan = _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q);
        if ((nan & (nan >> 1) & 0x5555) != 0) [[unlikely]]
            return false;
        const double* q = reinterpret_cast<const double*>(p);
        double* o = reinterpret_cast<double*>(out);
        const __m512d w[2] = {_mm512_cvtps_pd(_mm512_castps512_ps256(r)),
                              _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1)))};
        const auto combine = [](__m512d u, __m512d v) {
            if constexpr (std::is_same_v<Fn, fn::add_fn>) return _mm512_add_pd(u, v);
            else return _mm512_sub_pd(u, v);
        };
        for (int h = 0; h < 2; ++h) {
            const __m512d m = _mm512_loadu_pd(q + 8 * h);
            const __m512d v = ALeft ? combine(w[h], m) : combine(m, w[h]);
            if constexpr (Stream) { // by 256-bit halves: out is 32-byte aligned
                _mm256_stream_pd(o + 8 * h, _mm512_castpd512_pd256(v));
                _mm256_stream_pd(o + 8 * h + 4, _mm512_extractf64x4_pd(v, 1));
            } else {
                _mm512_storeu_pd(o + 8 * h, v);
            }
        }
        return true;
    }
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic pop
#endif
#endif

    template <bool ALeft, bool RealLeft, bool Stream>
    static bool store256(std::complex<double>* out, const std::complex<float>* a, const batch<float>& x,
                         const std::complex<double>* p) noexcept {
        const float* q = reinterpret_cast<const float*>(a);
        const __m256 a0145 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q)), _mm_loadu_ps(q + 8), 1);
        const __m256 a2367 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 4)), _mm_loadu_ps(q + 12), 1);
        const __m256 zero = _mm256_setzero_ps();
        const auto product = [&](__m256 z, __m256 xx) {
            const __m256 swapped = _mm256_permute_ps(z, 0xB1); // (im, re) of each element
            return RealLeft ? _mm256_addsub_ps(_mm256_mul_ps(xx, z), _mm256_mul_ps(zero, swapped))
                            : _mm256_addsub_ps(_mm256_mul_ps(z, xx), _mm256_mul_ps(swapped, zero));
        };
        const __m256 r0145 = product(a0145, _mm256_unpacklo_ps(x.v, x.v));
        const __m256 r2367 = product(a2367, _mm256_unpackhi_ps(x.v, x.v));
        const __m256 nan_r = _mm256_cmp_ps(r0145, r0145, _CMP_UNORD_Q);
        const __m256 nan_s = _mm256_cmp_ps(r2367, r2367, _CMP_UNORD_Q);
        const __m256 both = _mm256_or_ps(_mm256_and_ps(nan_r, _mm256_permute_ps(nan_r, 0xB1)),
                                         _mm256_and_ps(nan_s, _mm256_permute_ps(nan_s, 0xB1)));
        if (_mm256_movemask_ps(both) != 0) [[unlikely]]
            return false;
        widen_combine_store<Fn, ALeft, Stream>(out, r0145, r2367, p);
        return true;
    }
};

// The scalar definition of a complex product, for the rare batch with a lane that is NaN in both parts. Out
// of line and cold, with the parts as separate vector arguments, which travel in registers: a call inline
// through references, or with batch arguments (passed in memory), made the compiler spill both operands to
// the stack for every batch, before the test that almost never calls it.
MIXT_COLD inline batch<std::complex<float>> complex_multiply_lanes(__m256 a_re, __m256 a_im, __m256 b_re,
                                                                    __m256 b_im) noexcept {
    return apply_lanes<std::complex<float>>(fn::mul_fn{}, batch<std::complex<float>>{a_re, a_im},
                                            batch<std::complex<float>>{b_re, b_im});
}
MIXT_COLD inline batch<std::complex<double>>
complex_multiply_lanes(__m256d a_re0, __m256d a_re1, __m256d a_im0, __m256d a_im1, __m256d b_re0, __m256d b_re1,
                       __m256d b_im0, __m256d b_im1) noexcept {
    return apply_lanes<std::complex<double>>(fn::mul_fn{}, batch<std::complex<double>>{{a_re0, a_re1}, {a_im0, a_im1}},
                                             batch<std::complex<double>>{{b_re0, b_re1}, {b_im0, b_im1}});
}

template <>
struct vectorized<std::complex<float>, fn::mul_fn, std::complex<float>, std::complex<float>> : std::true_type {
    static batch<std::complex<float>> apply(const fn::mul_fn&, const batch<std::complex<float>>& a,
                                            const batch<std::complex<float>>& b) noexcept {
        const __m256 re = _mm256_sub_ps(_mm256_mul_ps(a.re, b.re), _mm256_mul_ps(a.im, b.im));
        const __m256 im = _mm256_add_ps(_mm256_mul_ps(a.re, b.im), _mm256_mul_ps(a.im, b.re));
        const __m256 both_nan = _mm256_and_ps(_mm256_cmp_ps(re, re, _CMP_UNORD_Q), _mm256_cmp_ps(im, im, _CMP_UNORD_Q));
        if (_mm256_movemask_ps(both_nan) != 0) [[unlikely]] return complex_multiply_lanes(a.re, a.im, b.re, b.im);
        return {re, im};
    }
};
template <>
struct vectorized<std::complex<double>, fn::mul_fn, std::complex<double>, std::complex<double>> : std::true_type {
    static batch<std::complex<double>> apply(const fn::mul_fn&, const batch<std::complex<double>>& a,
                                             const batch<std::complex<double>>& b) noexcept {
        batch<std::complex<double>> r;
        int nan = 0;
        for (int h = 0; h < 2; ++h) {
            r.re[h] = _mm256_sub_pd(_mm256_mul_pd(a.re[h], b.re[h]), _mm256_mul_pd(a.im[h], b.im[h]));
            r.im[h] = _mm256_add_pd(_mm256_mul_pd(a.re[h], b.im[h]), _mm256_mul_pd(a.im[h], b.re[h]));
            nan |= _mm256_movemask_pd(
                _mm256_and_pd(_mm256_cmp_pd(r.re[h], r.re[h], _CMP_UNORD_Q), _mm256_cmp_pd(r.im[h], r.im[h], _CMP_UNORD_Q)));
        }
        if (nan != 0) [[unlikely]]
            return complex_multiply_lanes(a.re[0], a.re[1], a.im[0], a.im[1], b.re[0], b.re[1], b.im[0], b.im[1]);
        return r;
    }
};

} // namespace mixt::simd::detail
#endif // MIXT_SIMD_AVX2

#endif // MIXT_SIMD_OPS_AVX2_HPP
