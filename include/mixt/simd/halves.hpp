#ifndef MIXT_SIMD_HALVES_HPP
#define MIXT_SIMD_HALVES_HPP

// f16 values 32 to a register, computed in f16 arithmetic (AVX512-FP16; MIXT_SIMD_AVX512FP16):
//   - load_halves(p): 32 contiguous elements of f16, i8 or u8 as f16 values (every i8 and u8 is one exactly);
//   - broadcast_halves(x): 32 copies of an f16;
//   - apply_halves(fn, a, b): +, - or * of f16 operands, rounded to f16 to nearest even;
//   - widen_halves(h, lo, hi): the 32 values as two registers of 16 floats (exact), in element order.
// Each result has the bits of the f32 lanes' way (simd/wide.hpp: the operands widened to f32, the operation in
// f32, the result rounded to f16): a sum, difference or product of two f16 values rounded once to f16 is that
// rounded from f32 (f32 carries 24 bits, at least 2 * 11 + 2, so rounding twice gives the same f16), a NaN operand
// comes out quieted with its payload, the first operand's where both are NaN, as vaddps, vsubps and vmulps give
// it, and an invalid operation gives the default NaN, whose f16 is the f32 one narrowed. Subnormal f16 operands and
// results are computed exactly (the f16 instructions do not flush them).
//
// Their use (eval/fused.hpp, half_kernel; eval/reduce_stream.hpp, fold_rows_of): a row of a reduction whose f32
// values come from an f16 subtree with at least one such operation (`sum(i8 * f16 scale, axis 1)`), where one
// instruction rounds 32 products that the f32 lanes round with two conversions per 16 (docs/performance-notes.md,
// "f16 products in f16 arithmetic").

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include "mixt/expr/functors.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/wide.hpp"

#if MIXT_SIMD_AVX512FP16
#include <immintrin.h>
#endif

namespace mixt::simd::wide {

#if MIXT_SIMD_AVX512FP16

/// The number of elements in a register of halves.
inline constexpr int half_lanes = 32;

/// Whether load_halves(const T*) exists: f16, and the integers every value of which is an f16 (i8, u8).
template <class T>
inline constexpr bool has_halves_v =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>;

/// Whether apply_halves(fn, a, b) computes fn: +, -, *.
template <class Fn>
inline constexpr bool halves_supported_v = std::is_same_v<Fn, ::mixt::detail::add_fn> ||
                                           std::is_same_v<Fn, ::mixt::detail::sub_fn> ||
                                           std::is_same_v<Fn, ::mixt::detail::mul_fn>;

/// Loads 32 contiguous elements as f16 values (no alignment needed).
template <class T>
    requires has_halves_v<T>
__m512h load_halves(const T* p) noexcept {
    if constexpr (std::is_same_v<T, Eigen::half>)
        return _mm512_castsi512_ph(_mm512_loadu_si512(p));
    else
        return _mm512_cvtepi16_ph(load_words(p)); // (each byte widened to a 16-bit lane: every value fits i16)
}

/// All 32 lanes equal to x (its bits, NaN payloads included).
inline __m512h broadcast_halves(Eigen::half x) noexcept {
    std::uint16_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return _mm512_castsi512_ph(_mm512_set1_epi16(static_cast<short>(bits)));
}

/// fn on every lane, rounded to f16 (see halves_supported_v).
template <class Fn>
    requires halves_supported_v<Fn>
__m512h apply_halves(const Fn&, __m512h a, __m512h b) noexcept {
    if constexpr (std::is_same_v<Fn, ::mixt::detail::add_fn>) return _mm512_add_ph(a, b);
    else if constexpr (std::is_same_v<Fn, ::mixt::detail::sub_fn>) return _mm512_sub_ph(a, b);
    else return _mm512_mul_ph(a, b);
}

/// The 32 values of h as floats: elements 0-15 in lo, 16-31 in hi.
inline void widen_halves(__m512h h, __m512& lo, __m512& hi) noexcept {
    lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(h));
    const __m512i bits = _mm512_castph_si512(h);
    hi = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_castsi512_si256(_mm512_shuffle_i64x2(bits, bits, 0xee))));
}

#else

inline constexpr int half_lanes = 32;
template <class T>
inline constexpr bool has_halves_v = false;
template <class Fn>
inline constexpr bool halves_supported_v = false;

#endif // MIXT_SIMD_AVX512FP16

} // namespace mixt::simd::wide

#endif // MIXT_SIMD_HALVES_HPP
