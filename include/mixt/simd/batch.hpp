#ifndef MIXT_SIMD_BATCH_HPP
#define MIXT_SIMD_BATCH_HPP

// mixt::simd::batch<T>: 8 logical elements of one of mixt's 30 concrete dtypes, the unit the fused CPU loop works
// on, with its memory operations. Conversions between batches are in mixt/simd/convert.hpp.
//
//   float in[8] = {...}; std::int8_t out[8];
//   auto b = mixt::simd::load(in);                                     // batch<float>
//   mixt::simd::store(out, mixt::simd::convert<std::int8_t>(b));       // saturating, NaN -> 0
//
// Every node of an expression is a batch of its own value type, so each node's result is rounded to its
// dtype once, exactly as the scalar mixt::convert would. Under AVX2 (mixt/simd/arch.hpp) the
// representation is chosen so that the next operation is one instruction away:
//   - bool, u8, i8, u16, i16, u32, i32: one __m256i `v`, 8 x 32-bit lanes holding the value zero- or
//     sign-extended (bool: 0 or 1). Operations that can leave the range (i8 + i8) must wrap the result
//     back, e.g. with convert<std::int8_t>(convert<std::int32_t>(...)) -- stores truncate regardless.
//   - u64, i64: `__m256i v[2]`, lanes 0-3 then 4-7.
//   - f16, bf16: one __m256 `v` holding each element's exact float value, so arithmetic happens in f32
//     and the result is rounded once when converted back (stores round to nearest-even too).
//   - float: one __m256 `v`; double: `__m256d v[2]`.
//   - complex<float>: planar `__m256 re, im`; complex<double>: `__m256d re[2], im[2]`.
//   - the narrow floats (float8/6/4): one __m256 `v` of their exact values; the narrow ints (int4/2): one
//     __m256i `v` of their values. Their operations run in f32 or i32 (dtype/storage.hpp, narrow_compute_t),
//     so their batches are only loaded, converted and stored (simd/narrow.hpp's conversions).
// Elsewhere a batch is `std::array<T, 8> v` and every operation is a scalar loop over mixt::convert.
//
// Loading an f16 or bf16 element is the exact widening to f32, which (as F16C does) turns a signaling NaN
// into the quiet one with the same payload; that is the one case where store(load(p)) does not reproduce
// the stored bits, and both implementations behave the same.

#include "mixt/dtype/convert.hpp"
#include "mixt/dtype/storage.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/narrow.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <array>

#if MIXT_SIMD_AVX2
#include <immintrin.h>
#endif

namespace mixt::simd {

/// The number of logical elements in a batch, whatever the value type.
inline constexpr int lanes = 8;

/// The alignment stream_store needs of its destination: the bytes of a batch of T, at most 32.
template <class T>
inline constexpr std::size_t stream_store_alignment = sizeof(T) * lanes < 32 ? sizeof(T) * lanes : 32;
/// The alignment stream_store_pair needs: the bytes of two batches of T, at most 32.
template <class T>
inline constexpr std::size_t stream_pair_alignment = 2 * sizeof(T) * lanes < 32 ? 2 * sizeof(T) * lanes : 32;

namespace detail {

template <class T>
inline constexpr bool is_dtype_v = ::mixt::detail::is_convert_dtype_v<T>;

// The value a half/bfloat16 element has inside a batch: itself, or its quiet form if it is a signaling NaN.
template <class T>
constexpr T canonical(T x) noexcept {
    if constexpr (mixt::detail::is_small_float_v<T>) {
        return ::mixt::convert<T>(::mixt::convert<float>(x));
    } else {
        return x;
    }
}

// Zero of T. Not T{}: Eigen::half's default constructor leaves its bits unset where Eigen is compiled for a GPU
// (its __half_raw must be trivial there), so T{} would be an indeterminate value.
template <class T>
T zero() noexcept {
    return static_cast<T>(0);
}

} // namespace detail

#if MIXT_SIMD_AVX2

namespace detail {

template <class T>
inline constexpr bool is_lane32_int_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
    std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int32_t>;
template <class T>
inline constexpr bool is_lane64_int_v = std::is_same_v<T, std::uint64_t> || std::is_same_v<T, std::int64_t>;
/// Whether every value of T is exactly an f16 and a bfloat16 (bool and the 8-bit integers): a conversion to
/// either has nothing to round.
template <class T>
inline constexpr bool exact_in_half_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>;
template <class T>
inline constexpr bool is_f32_lane_v =
    mixt::detail::is_small_float_v<T> || std::is_same_v<T, float>;

} // namespace detail

template <class T>
struct batch;

template <class T>
requires detail::is_lane32_int_v<T>
struct batch<T> {
    using value_type = T;
    __m256i v;
};

template <class T>
requires detail::is_lane64_int_v<T>
struct batch<T> {
    using value_type = T;
    __m256i v[2];
};

template <class T>
requires detail::is_f32_lane_v<T>
struct batch<T> {
    using value_type = T;
    __m256 v;
};

template <>
struct batch<double> {
    using value_type = double;
    __m256d v[2];
};

// The narrow dtypes (dtype/narrow_float.hpp, dtype/narrow_int.hpp): a float8/6/4 batch holds its 8 exact values
// as f32 lanes, an int4/2 batch its 8 values in 32-bit lanes. Every operation on them runs in f32 or i32
// (narrow_compute_t, dtype/storage.hpp), so these batches are only loaded, converted and stored.
template <class T>
    requires ::mixt::is_narrow_float_v<T>
struct batch<T> {
    using value_type = T;
    __m256 v;
};

template <class T>
    requires ::mixt::is_narrow_int_v<T>
struct batch<T> {
    using value_type = T;
    __m256i v;
};

template <>
struct batch<std::complex<float>> {
    using value_type = std::complex<float>;
    __m256 re, im;
};

template <>
struct batch<std::complex<double>> {
    using value_type = std::complex<double>;
    __m256d re[2], im[2];
};

namespace detail {

inline __m256 f16x8_to_f32(__m128i h) noexcept {
#if MIXT_SIMD_F16C
    return _mm256_cvtph_ps(h);
#else
    alignas(16) std::uint16_t in[8];
    alignas(32) float out[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(in), h);
    for (int i = 0; i < 8; ++i) out[i] = ::mixt::detail::f16_bits_to_f32(in[i]);
    return _mm256_load_ps(out);
#endif
}

// Rounds to nearest even; NaNs keep sign and top payload bits, quieted (what vcvtps2ph does).
inline __m128i f32x8_to_f16(__m256 f) noexcept {
#if MIXT_SIMD_F16C
    return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
#else
    alignas(32) float in[8];
    alignas(16) std::uint16_t out[8];
    _mm256_store_ps(in, f);
    for (int i = 0; i < 8; ++i) out[i] = ::mixt::detail::f32_to_f16_bits(in[i]);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(out));
#endif
}

// NaN lanes are found with an unordered compare: one instruction, exact for every input.
// 8 bf16 bits widened to the high halves of 32-bit lanes: their f32 bits, a signaling NaN as it is.
inline __m256i bf16x8_widened(__m128i h) noexcept { return _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16); }

inline __m256 bf16x8_to_f32(__m128i h) noexcept {
    const __m256 f = _mm256_castsi256_ps(bf16x8_widened(h));
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    return _mm256_or_ps(f, _mm256_and_ps(nan, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000))));
}

// The rounding bias of b's lanes for bf16: 0x7fff plus the bit that becomes bf16's last (ties to even).
inline __m256i bf16x8_rounding_bias(__m256i b) noexcept {
    return _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1)),
                            _mm256_set1_epi32(0x7fff));
}

// b + its rounding bias: the high halves of b's lanes rounded to nearest even, the low halves not cleared yet.
inline __m256i bf16x8_rounding_sum(__m256i b) noexcept { return _mm256_add_epi32(b, bf16x8_rounding_bias(b)); }

// f32 -> bf16 rounded to nearest even in the high halves of the lanes, the low halves not cleared: a number's
// lane is b plus its rounding bias, a NaN's lane b with its quiet bit set. The NaN test clears the bias (an and)
// and makes the quiet bit (an and, an or): one uop fewer than a blend of the two sums where a variable blend is
// several uops (Intel). Where it is one (AMD's Zen), the blend of the two is one instruction fewer: taken in builds
// for Zen 3, where it was measured (MIXT_SIMD_BLEND_BF16, simd/arch.hpp).
inline __m256i bf16x8_rounded(__m256 f) noexcept {
    const __m256i b = _mm256_castps_si256(f);
#if MIXT_SIMD_BLEND_BF16
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(bf16x8_rounding_sum(b)),
                                                _mm256_castsi256_ps(_mm256_or_si256(b, _mm256_set1_epi32(0x00400000))), nan));
#else
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    return _mm256_or_si256(_mm256_add_epi32(b, _mm256_andnot_si256(nan, bf16x8_rounding_bias(b))),
                           _mm256_and_si256(nan, _mm256_set1_epi32(0x00400000)));
#endif
}

// f32 -> bf16 rounded to nearest even, returned as f32 bits whose low 16 bits are zero.
inline __m256i f32x8_to_bf16_high(__m256 f) noexcept {
    return _mm256_and_si256(bf16x8_rounded(f), _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
}

// f32x8_to_bf16_high for the result of arithmetic on bf16 values (+, -, *, / and sqrt of lanes that hold bf16
// values): there a NaN lane is one of the operands (quieted) or the default NaN, whose low 16 bits are zero, so
// that adding at most 0x8000 leaves it the same NaN and the NaN test is not needed (as the 16-lane
// simd::wide::detail::arithmetic_to_bf16_high, and resting on the same rule: batch<bf16> lanes hold bf16 values).
inline __m256i arithmetic_f32x8_to_bf16_high(__m256 f) noexcept {
    return _mm256_and_si256(bf16x8_rounding_sum(_mm256_castps_si256(f)),
                            _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
}

// The low 16 bits (or the high 16) of each 32-bit lane, packed: truncation, so it wraps whatever the lanes
// hold (the low 8 bits: narrow_to_u8, simd/narrow.hpp).
inline __m128i narrow_to_u16(__m256i v, bool high_half = false) noexcept {
    const __m256i lo = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12,
                                        13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i hi = _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, 2, 3, 6, 7, 10, 11,
                                        14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i words = _mm256_shuffle_epi8(v, high_half ? hi : lo);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(words, _MM_SHUFFLE(3, 1, 2, 0)));
}

// f32 -> bf16 bits rounded to nearest even, packed. With AVX512-BF16, the CPU's conversion (vcvtneps2bf16 rounds
// to nearest even and quiets a NaN as f32x8_to_bf16_high does, but reads a subnormal input as zero); a batch with
// a subnormal lane, found with one classification, takes the integer rounding instead.
inline __m128i f32x8_to_bf16(__m256 f) noexcept {
#if MIXT_SIMD_AVX512BF16
    if (__builtin_expect(_mm256_fpclass_ps_mask(f, 0x20) == 0, 1)) // 0x20: denormal
        return reinterpret_cast<__m128i>(_mm256_cvtneps_pbh(f));
#endif
    return narrow_to_u16(bf16x8_rounded(f), true); // (the high halves only: the low ones need no clearing)
}

inline __m256i lane_index_mask(int n) noexcept {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Masks for the 64-bit lanes 0-3 (which = 0) or 4-7 (which = 1) of a partial access to n elements.
inline __m256i lane_index_mask64(int n, int which) noexcept {
    const long long base = 4LL * which;
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(base, base + 1, base + 2, base + 3));
}

} // namespace detail

/// Loads 8 narrow elements (float8/6/4, int4/2), one byte each.
template <class T>
    requires ::mixt::detail::is_narrow_v<T>
batch<T> load(const T* p) noexcept {
    return {narrow::decode<T::value_dtype>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
}

/// Loads 8 contiguous elements (no alignment needed): `auto b = mixt::simd::load(p);`
template <class T>
batch<T> load(const T* p) noexcept {
    static_assert(detail::is_dtype_v<T>, "mixt::simd::load(p) requires p to point to one of mixt's dtypes");
    if constexpr (std::is_same_v<T, bool>) {
        // A bool's storage is one byte; min(byte, 1) makes any nonzero byte true.
        const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
        return {_mm256_cvtepu8_epi32(_mm_min_epu8(bytes, _mm_set1_epi8(1)))};
    } else if constexpr (std::is_same_v<T, std::uint8_t>) {
        return {_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::int8_t>) {
        return {_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
        return {_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::int16_t>) {
        return {_mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))};
    } else if constexpr (detail::is_lane64_int_v<T>) {
        return {{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4))}};
    } else if constexpr (std::is_same_v<T, Eigen::half>) {
        return {detail::f16x8_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
        return {detail::bf16x8_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, float>) {
        return {_mm256_loadu_ps(p)};
    } else if constexpr (std::is_same_v<T, double>) {
        return {{_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}};
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        // std::complex is layout-compatible with T[2] ([complex.numbers]). The 128-bit halves are loaded so
        // that one in-lane shuffle each gives the real and imaginary parts in order (an insert from memory
        // does not use the shuffle port, which the permutes of a whole-register load would).
        const float* f = reinterpret_cast<const float*>(p);
        const __m256 a = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(f)), _mm_loadu_ps(f + 8), 1);
        const __m256 b = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(f + 4)), _mm_loadu_ps(f + 12), 1);
        // a: r0 i0 r1 i1 | r4 i4 r5 i5, b: r2 i2 r3 i3 | r6 i6 r7 i7
        return {_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))};
    } else {
        const double* d = reinterpret_cast<const double*>(p);
        batch<T> b;
        for (int h = 0; h < 2; ++h) {
            const double* q = d + 8 * h;
            const __m256d x = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(q)), _mm_loadu_pd(q + 4), 1);
            const __m256d y = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(q + 2)), _mm_loadu_pd(q + 6), 1);
            // x: r0 i0 | r2 i2, y: r1 i1 | r3 i3
            b.re[h] = _mm256_unpacklo_pd(x, y);
            b.im[h] = _mm256_unpackhi_pd(x, y);
        }
        return b;
    }
}

/// load(p) for an operand of an operation that quiets a signaling NaN itself (+, -, *, / of floats: x86 returns
/// the quiet form of the first NaN operand, the NaN load would have made): bf16 widened without load's quieting
/// (a compare, an and and an or per batch), the other types as load (simd::wide::load_operand at 16 lanes).
template <class T>
batch<T> load_operand(const T* p) noexcept {
    if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return {_mm256_castsi256_ps(detail::bf16x8_widened(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))))};
    else
        return load(p);
}

namespace detail {
// The 8 elements of a batch of 2-byte T in memory order, as one 128-bit value (f16 and bf16 rounded).
template <class T>
__m128i packed_u16(const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, Eigen::half>)
        return f32x8_to_f16(b.v);
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return f32x8_to_bf16(b.v);
    else
        return narrow_to_u16(b.v);
}
} // namespace detail

/// Stores 8 narrow elements, one byte each.
template <class T>
    requires ::mixt::detail::is_narrow_v<T>
void store(T* p, const batch<T>& b) noexcept {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), narrow::encode<T::value_dtype>(b.v));
}

/// Stores 8 contiguous elements (no alignment needed): `mixt::simd::store(p, b);`
template <class T>
void store(T* p, const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), detail::narrow_to_u8(b.v));
    } else if constexpr (sizeof(T) == 2) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), detail::packed_u16(b));
    } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), b.v);
    } else if constexpr (detail::is_lane64_int_v<T>) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), b.v[0]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + 4), b.v[1]);
    } else if constexpr (std::is_same_v<T, float>) {
        _mm256_storeu_ps(p, b.v);
    } else if constexpr (std::is_same_v<T, double>) {
        _mm256_storeu_pd(p, b.v[0]);
        _mm256_storeu_pd(p + 4, b.v[1]);
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        // One in-lane shuffle per register, then 128-bit stores (no permute across the halves).
        float* f = reinterpret_cast<float*>(p);
        const __m256 lo = _mm256_unpacklo_ps(b.re, b.im); // r0 i0 r1 i1 | r4 i4 r5 i5
        const __m256 hi = _mm256_unpackhi_ps(b.re, b.im); // r2 i2 r3 i3 | r6 i6 r7 i7
        _mm_storeu_ps(f, _mm256_castps256_ps128(lo));
        _mm_storeu_ps(f + 4, _mm256_castps256_ps128(hi));
        _mm_storeu_ps(f + 8, _mm256_extractf128_ps(lo, 1));
        _mm_storeu_ps(f + 12, _mm256_extractf128_ps(hi, 1));
    } else {
        double* d = reinterpret_cast<double*>(p);
        for (int h = 0; h < 2; ++h) {
            double* q = d + 8 * h;
            const __m256d lo = _mm256_unpacklo_pd(b.re[h], b.im[h]); // r0 i0 | r2 i2
            const __m256d hi = _mm256_unpackhi_pd(b.re[h], b.im[h]); // r1 i1 | r3 i3
            _mm_storeu_pd(q, _mm256_castpd256_pd128(lo));
            _mm_storeu_pd(q + 2, _mm256_castpd256_pd128(hi));
            _mm_storeu_pd(q + 4, _mm256_extractf128_pd(lo, 1));
            _mm_storeu_pd(q + 6, _mm256_extractf128_pd(hi, 1));
        }
    }
}

template <class T>
    requires ::mixt::detail::is_narrow_v<T>
void stream_store(T* p, const batch<T>& b) noexcept {
#if defined(__x86_64__) || defined(_M_X64)
    _mm_stream_si64(reinterpret_cast<long long*>(p), _mm_cvtsi128_si64(narrow::encode<T::value_dtype>(b.v)));
#else
    store(p, b);
#endif
}

/// Stores 8 contiguous elements with non-temporal (streaming) stores, which write around the caches
/// (mixt/simd/stream.hpp says when that pays): p must be aligned to stream_store_alignment<T>, and
/// simd::stream_fence() must follow the last of them before another thread reads the data.
template <class T>
void stream_store(T* p, const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>) {
#if defined(__x86_64__) || defined(_M_X64)
        _mm_stream_si64(reinterpret_cast<long long*>(p), _mm_cvtsi128_si64(detail::narrow_to_u8(b.v)));
#else
        store(p, b);
#endif
    } else if constexpr (sizeof(T) == 2) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(p), detail::packed_u16(b));
    } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p), b.v);
    } else if constexpr (detail::is_lane64_int_v<T>) {
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p), b.v[0]);
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 4), b.v[1]);
    } else if constexpr (std::is_same_v<T, float>) {
        _mm256_stream_ps(p, b.v);
    } else if constexpr (std::is_same_v<T, double>) {
        _mm256_stream_pd(p, b.v[0]);
        _mm256_stream_pd(p + 4, b.v[1]);
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        float* f = reinterpret_cast<float*>(p);
        const __m256 lo = _mm256_unpacklo_ps(b.re, b.im); // r0 i0 r1 i1 | r4 i4 r5 i5
        const __m256 hi = _mm256_unpackhi_ps(b.re, b.im); // r2 i2 r3 i3 | r6 i6 r7 i7
        _mm256_stream_ps(f, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_stream_ps(f + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    } else {
        double* d = reinterpret_cast<double*>(p);
        for (int h = 0; h < 2; ++h) {
            const __m256d lo = _mm256_unpacklo_pd(b.re[h], b.im[h]); // r0 i0 | r2 i2
            const __m256d hi = _mm256_unpackhi_pd(b.re[h], b.im[h]); // r1 i1 | r3 i3
            _mm256_stream_pd(d + 8 * h, _mm256_permute2f128_pd(lo, hi, 0x20));
            _mm256_stream_pd(d + 8 * h + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
        }
    }
}

/// Whether store_pair packs its two batches into one 32-byte store (else it is two store calls): bf16 results
/// rounded in integer arithmetic, whose rounded high halves two batches make one register of by a shift each, a
/// pack and a lane permute, where two stores of 16 bytes take a byte shuffle and a lane permute each
/// (docs/performance-notes.md, "bf16 results in pairs").
template <class T>
inline constexpr bool packs_pairs_v = std::is_same_v<T, Eigen::bfloat16> && !MIXT_SIMD_AVX512BF16;

/// store(p, a) then store(p + 8, b), as one 32-byte store where packs_pairs_v<T>.
template <class T>
void store_pair(T* p, const batch<T>& a, const batch<T>& b) noexcept {
    if constexpr (packs_pairs_v<T>) {
        const __m256i words = _mm256_packus_epi32(_mm256_srli_epi32(detail::bf16x8_rounded(a.v), 16),
                                                  _mm256_srli_epi32(detail::bf16x8_rounded(b.v), 16));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permute4x64_epi64(words, _MM_SHUFFLE(3, 1, 2, 0)));
    } else {
        store(p, a);
        store(p + lanes, b);
    }
}

/// stream_store(p, a) then stream_store(p + 8, b), where 2-byte elements (f16, bf16, 16-bit integers) go out as
/// one 32-byte store rather than two of 16, as the report's traffic floor writes them (docs/performance-notes.md).
/// p must be aligned to stream_pair_alignment<T>.
template <class T>
void stream_store_pair(T* p, const batch<T>& a, const batch<T>& b) noexcept {
    if constexpr (sizeof(T) == 2) {
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p),
                            _mm256_inserti128_si256(_mm256_castsi128_si256(detail::packed_u16(a)), detail::packed_u16(b), 1));
    } else {
        stream_store(p, a);
        stream_store(p + lanes, b);
    }
}

/// load_partial of narrow elements: lanes n..7 are zero (e8m0fnu has no zero, but its lanes are f32 lanes).
template <class T>
    requires ::mixt::detail::is_narrow_v<T>
batch<T> load_partial(const T* p, int n) noexcept {
    alignas(16) std::uint8_t codes[16] = {};
    std::memcpy(codes, p, static_cast<std::size_t>(n));
    const auto v = narrow::decode<T::value_dtype>(_mm_load_si128(reinterpret_cast<const __m128i*>(codes)));
    if constexpr (::mixt::is_narrow_float_v<T>)
        return {_mm256_and_ps(v, _mm256_castsi256_ps(detail::lane_index_mask(n)))};
    else
        return {_mm256_and_si256(v, detail::lane_index_mask(n))};
}

template <class T>
    requires ::mixt::detail::is_narrow_v<T>
void store_partial(T* p, const batch<T>& b, int n) noexcept {
    alignas(16) std::uint8_t codes[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(codes), narrow::encode<T::value_dtype>(b.v));
    std::memcpy(p, codes, static_cast<std::size_t>(n));
}

/// Loads the first n (0 <= n < 8) elements, reading nothing past p + n; lanes n..7 are zero.
template <class T>
batch<T> load_partial(const T* p, int n) noexcept {
    if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        // Masked-off lanes of a maskload never touch memory (and never fault).
        return {_mm256_maskload_epi32(reinterpret_cast<const int*>(p), detail::lane_index_mask(n))};
    } else if constexpr (std::is_same_v<T, float>) {
        return {_mm256_maskload_ps(p, detail::lane_index_mask(n))};
    } else if constexpr (detail::is_lane64_int_v<T>) {
        const auto* q = reinterpret_cast<const long long*>(p);
        return {{_mm256_maskload_epi64(q, detail::lane_index_mask64(n, 0)),
                 _mm256_maskload_epi64(q + 4, detail::lane_index_mask64(n, 1))}};
    } else if constexpr (std::is_same_v<T, double>) {
        return {{_mm256_maskload_pd(p, detail::lane_index_mask64(n, 0)),
                 _mm256_maskload_pd(p + 4, detail::lane_index_mask64(n, 1))}};
    } else if constexpr (detail::is_lane32_int_v<T>) {
        // bool and 8- and 16-bit integers: each element widened to its 32-bit lane as load() widens it (a bool's
        // nonzero byte is 1). Not through a buffer of packed elements: a tail that store_partial packed into one
        // and this loaded back widened is a narrowing store and a widening load of the same bytes, which Clang
        // 14 crashes compiling with AVX2 (docs/performance-notes.md, "Clang 14 and 8-bit tails").
        alignas(32) std::int32_t wide[lanes] = {};
        for (int i = 0; i < n; ++i) {
            if constexpr (std::is_same_v<T, bool>) {
                unsigned char byte;
                std::memcpy(&byte, p + i, 1);
                wide[i] = byte != 0;
            } else {
                wide[i] = static_cast<std::int32_t>(p[i]);
            }
        }
        return {_mm256_load_si256(reinterpret_cast<const __m256i*>(wide))};
    } else {
        // f16, bf16 and complex elements: through a zeroed buffer (only a loop's tail pays for it).
        T buf[lanes];
        for (int i = 0; i < lanes; ++i) buf[i] = i < n ? p[i] : detail::zero<T>();
        return load(buf);
    }
}

/// Stores the first n (0 <= n < 8) lanes, writing nothing past p + n.
template <class T>
void store_partial(T* p, const batch<T>& b, int n) noexcept {
    if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        _mm256_maskstore_epi32(reinterpret_cast<int*>(p), detail::lane_index_mask(n), b.v);
    } else if constexpr (std::is_same_v<T, float>) {
        _mm256_maskstore_ps(p, detail::lane_index_mask(n), b.v);
    } else if constexpr (detail::is_lane64_int_v<T>) {
        auto* q = reinterpret_cast<long long*>(p);
        _mm256_maskstore_epi64(q, detail::lane_index_mask64(n, 0), b.v[0]);
        _mm256_maskstore_epi64(q + 4, detail::lane_index_mask64(n, 1), b.v[1]);
    } else if constexpr (std::is_same_v<T, double>) {
        _mm256_maskstore_pd(p, detail::lane_index_mask64(n, 0), b.v[0]);
        _mm256_maskstore_pd(p + 4, detail::lane_index_mask64(n, 1), b.v[1]);
    } else if constexpr (detail::is_lane32_int_v<T>) {
        // bool and 8- and 16-bit integers: the low bytes of each 32-bit lane, as store() packs them, taken lane
        // by lane (load_partial says why not packed).
        alignas(32) std::int32_t wide[lanes];
        _mm256_store_si256(reinterpret_cast<__m256i*>(wide), b.v);
        for (int i = 0; i < n; ++i) {
            const auto low = static_cast<std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>>(wide[i]);
            std::memcpy(p + i, &low, sizeof(T));
        }
    } else {
        T buf[lanes];
        store(buf, b);
        for (int i = 0; i < n; ++i) p[i] = buf[i];
    }
}

template <class T>
    requires ::mixt::detail::is_narrow_v<T>
batch<T> broadcast(T x) noexcept {
    if constexpr (::mixt::is_narrow_float_v<T>)
        return {_mm256_set1_ps(static_cast<float>(x))};
    else
        return {_mm256_set1_epi32(x.value())};
}

/// All 8 lanes equal to x: `auto ones = mixt::simd::broadcast(1.0f);`
template <class T>
batch<T> broadcast(T x) noexcept {
    static_assert(detail::is_dtype_v<T>, "mixt::simd::broadcast(x) requires x to be one of mixt's dtypes");
    if constexpr (std::is_same_v<T, bool>) {
        return {_mm256_set1_epi32(x ? 1 : 0)};
    } else if constexpr (detail::is_lane32_int_v<T>) {
        return {_mm256_set1_epi32(static_cast<std::int32_t>(x))};
    } else if constexpr (detail::is_lane64_int_v<T>) {
        const __m256i v = _mm256_set1_epi64x(static_cast<long long>(x));
        return {{v, v}};
    } else if constexpr (detail::is_f32_lane_v<T>) {
        return {_mm256_set1_ps(::mixt::convert<float>(x))};
    } else if constexpr (std::is_same_v<T, double>) {
        const __m256d v = _mm256_set1_pd(x);
        return {{v, v}};
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        return {_mm256_set1_ps(x.real()), _mm256_set1_ps(x.imag())};
    } else {
        const __m256d re = _mm256_set1_pd(x.real());
        const __m256d im = _mm256_set1_pd(x.imag());
        return {{re, re}, {im, im}};
    }
}

#else // portable batches

template <class T>
struct batch {
    static_assert(detail::is_dtype_v<T>, "mixt::simd::batch<T> requires T to be one of mixt's dtypes");
    using value_type = T;
    std::array<T, lanes> v;
};

template <class T>
batch<T> load(const T* p) noexcept {
    batch<T> b;
    for (int i = 0; i < lanes; ++i) b.v[i] = detail::canonical(p[i]);
    return b;
}

template <class T>
void store(T* p, const batch<T>& b) noexcept {
    for (int i = 0; i < lanes; ++i) p[i] = b.v[i];
}

template <class T>
inline constexpr bool packs_pairs_v = false;

template <class T>
void store_pair(T* p, const batch<T>& a, const batch<T>& b) noexcept {
    store(p, a);
    store(p + lanes, b);
}

// Portable batches have no streaming stores: the fused loop streams through a buffer instead.
template <class T>
void stream_store(T* p, const batch<T>& b) noexcept {
    store(p, b);
}

template <class T>
void stream_store_pair(T* p, const batch<T>& a, const batch<T>& b) noexcept {
    store(p, a);
    store(p + lanes, b);
}

template <class T>
batch<T> load_partial(const T* p, int n) noexcept {
    batch<T> b;
    for (int i = 0; i < lanes; ++i) b.v[i] = i < n ? detail::canonical(p[i]) : detail::zero<T>();
    return b;
}

template <class T>
void store_partial(T* p, const batch<T>& b, int n) noexcept {
    for (int i = 0; i < n; ++i) p[i] = b.v[i];
}

template <class T>
batch<T> broadcast(T x) noexcept {
    batch<T> b;
    b.v.fill(detail::canonical(x));
    return b;
}

#endif // MIXT_SIMD_AVX2

/// The 8 elements of a batch, for tests and debugging: `float out[8]; mixt::simd::to_array(b, out);`
template <class T>
void to_array(const batch<T>& b, T (&out)[lanes]) noexcept {
    store(out, b);
}

} // namespace mixt::simd

#endif // MIXT_SIMD_BATCH_HPP
