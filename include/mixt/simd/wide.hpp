#ifndef MIXT_SIMD_WIDE_HPP
#define MIXT_SIMD_WIDE_HPP

// mixt::simd::wide::batch<T>: 16 elements in one AVX-512 register, for the expressions of f16, bf16 and f32
// arithmetic (with 8- to 32-bit integer and bool leaves) that the fused loop runs 16 lanes at a time on
// AVX-512 targets (MIXT_SIMD_AVX512, mixt/simd/arch.hpp). It mirrors simd::batch's layout at twice the width:
//   - f16, bf16, float: one __m512 `v` holding each element's exact float value (f16 and bf16 arithmetic runs
//     in f32 and is rounded to the node's type once, as in the 8-lane batches);
//   - u8, i8, u16, i16, u32, i32: one __m512i `v`, 16 x 32-bit lanes holding the value zero- or sign-extended;
//   - bool: an AVX-512 mask register `m`, one bit per element.
// Every operation computes what the 8-lane version computes, lane for lane, with the same instructions at
// twice the width, so results do not depend on which loop ran: `wide::supported_v<R, Fn, Ts...>` says which
// operations exist, `wide::convertible_v<To, From>` which conversions (to f16, bf16 and f32 only, and only
// where one rounding gives the result: i32 -> f16 would round twice).
//
//   #if MIXT_SIMD_AVX512
//   auto x = mixt::simd::wide::load(p);                                    // wide::batch<Eigen::half>
//   mixt::simd::wide::store(q, mixt::simd::wide::convert<float>(x));       // 16 floats
//   #endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mixt/simd/arch.hpp"
#include "mixt/simd/batch.hpp"
#include "mixt/simd/convert.hpp"
#include "mixt/simd/narrow.hpp"
#include "mixt/simd/ops.hpp"

namespace mixt::simd::wide {

// The words' types and operations, the same with AVX-512 (32 lanes of 16 bits) and with AVX2 where
// MIXT_SIMD_AVX2_WORDS (16 lanes): every trait false where neither has them.
inline constexpr bool has_words = MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS;
namespace detail {
// The integer lane types of up to 16 bits (u8, i8, u16, i16), and of 16 (u16, i16).
template <class T>
inline constexpr bool is_word_v = std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int16_t>;
template <class T>
inline constexpr bool is_word_lane_v = is_word_v<T> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>;
template <class Fn>
inline constexpr bool is_word_op_v =
    std::is_same_v<Fn, ::mixt::detail::add_fn> || std::is_same_v<Fn, ::mixt::detail::sub_fn> ||
    std::is_same_v<Fn, ::mixt::detail::mul_fn> || std::is_same_v<Fn, ::mixt::detail::bit_and_fn> ||
    std::is_same_v<Fn, ::mixt::detail::bit_or_fn> || std::is_same_v<Fn, ::mixt::detail::bit_xor_fn>;
} // namespace detail

/// Whether load_words(const T*) exists: u8, i8, u16, i16.
template <class T>
inline constexpr bool has_words_v = has_words && detail::is_word_lane_v<T>;
/// Whether a value of From reaches To in a word lane without a change of bits: To is u16 or i16.
template <class To, class From>
inline constexpr bool word_convertible_v = has_words && detail::is_word_v<To> && detail::is_word_lane_v<From>;
/// Whether apply_words(fn, a, b) computes fn on R for operands of R, R: +, -, *, &, |, ^ on u16 and i16.
template <class R, class Fn, class... Ts>
inline constexpr bool word_supported_v = false;
template <class R, class Fn>
inline constexpr bool word_supported_v<R, Fn, R, R> = has_words && detail::is_word_v<R> && detail::is_word_op_v<Fn>;

#if MIXT_SIMD_AVX512

// GCC 12's AVX-512 intrinsics pass a self-initialized `_mm512_undefined_*()` register to their builtins, which
// -Wuninitialized and -Wmaybe-uninitialized report wherever they are inlined (GCC bug 105593, fixed in GCC
// 13); GCC checks the pragma along the inlining chain, so it covers the callers of these functions too.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define MIXT_WIDE_DIAGNOSTICS_PUSHED 1
#endif

/// The number of elements in a wide batch.
inline constexpr int lanes = 16;

namespace detail {
namespace fn = ::mixt::detail;
using ::mixt::simd::detail::is_f32_lane_v;

template <class T>
inline constexpr bool is_int_lane_v = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
                                      std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int16_t> ||
                                      std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>;
} // namespace detail

/// Whether wide::batch<T> exists.
template <class T>
inline constexpr bool has_batch_v =
    detail::is_f32_lane_v<T> || detail::is_int_lane_v<T> || std::is_same_v<T, bool> || ::mixt::detail::is_narrow_v<T>;

template <class T>
struct batch;
template <class T>
    requires detail::is_f32_lane_v<T>
struct batch<T> {
    using value_type = T;
    __m512 v;
};
template <class T>
    requires detail::is_int_lane_v<T>
struct batch<T> {
    using value_type = T;
    __m512i v;
};
template <>
struct batch<bool> {
    using value_type = bool;
    __mmask16 m;
};
/// A narrow float's 16 exact values as f32 lanes; a narrow int's 16 values as 32-bit lanes (as simd::batch).
template <class T>
    requires ::mixt::is_narrow_float_v<T>
struct batch<T> {
    using value_type = T;
    __m512 v;
};
template <class T>
    requires ::mixt::is_narrow_int_v<T>
struct batch<T> {
    using value_type = T;
    __m512i v;
};

/// The alignment stream_store needs of its destination: the bytes of a wide batch of T (f16, bf16, f32).
template <class T>
inline constexpr std::size_t stream_alignment = sizeof(T) * lanes;

namespace detail {

// 16 bf16 elements at p, each in the high half of a 32-bit lane (their f32 bits, a signaling NaN as it is).
inline __m512i bf16_widened(const Eigen::bfloat16* p) noexcept {
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16);
}

// bf16 bits (in the high half of each 32-bit lane) to their f32 value; a signaling NaN is quieted, as the
// 8-lane load does (simd::detail::bf16x8_to_f32).
inline __m512 bf16_high_to_f32(__m512i bits) noexcept {
    const __m512 f = _mm512_castsi512_ps(bits);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    return _mm512_mask_or_ps(f, nan, f, _mm512_castsi512_ps(_mm512_set1_epi32(0x00400000)));
}

// b + 0x7fff, or b + 0x8000 on the lanes where the bit that becomes bf16's last is set (a masked add on
// vptestmd's lanes: ties to even): the high halves of b's lanes rounded, the low halves not cleared yet.
inline __m512i bf16_rounding_sum(__m512i b) noexcept {
    const __mmask16 odd = _mm512_test_epi32_mask(b, _mm512_set1_epi32(0x00010000));
    const __m512i half = _mm512_add_epi32(b, _mm512_set1_epi32(0x7fff));
    return _mm512_mask_add_epi32(half, odd, b, _mm512_set1_epi32(0x8000));
}

// f32 -> bf16 rounded to nearest even in the high halves of the lanes, the low halves not cleared: the rounding
// sum (three instructions); a NaN lane is b with its quiet bit set instead (a masked or over the sum).
inline __m512i bf16_rounded(__m512 f) noexcept {
    const __m512i b = _mm512_castps_si512(f);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(bf16_rounding_sum(b), nan, b, _mm512_set1_epi32(0x00400000));
}

// f32 -> bf16 rounded to nearest even, as f32 bits whose low 16 bits are zero (simd::detail::f32x8_to_bf16_high).
inline __m512i f32_to_bf16_high(__m512 f) noexcept {
    return _mm512_and_si512(bf16_rounded(f), _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
}

// f32_to_bf16_high for the result of arithmetic on bf16 values (+, -, *, / and sqrt of lanes that hold bf16
// values), in four instructions: there a NaN lane is one of the operands (quieted) or the default NaN, whose low
// 16 bits are zero, so that adding at most 0x8000 leaves it the same NaN and the NaN test is not needed. Any
// other lane is rounded as f32_to_bf16_high rounds it. (This rests on batch<bf16>'s own rule, that its lanes hold
// bf16 values: a NaN computed from lanes that do not, such as an unrounded batch, could come out as a zero.)
inline __m512i arithmetic_to_bf16_high(__m512 f) noexcept {
    return _mm512_and_si512(bf16_rounding_sum(_mm512_castps_si512(f)),
                            _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
}

// The index of the high 16-bit word of 32-bit lane j of v (then of w, from lane 16 on) for word j: 2j + 1.
inline __m512i odd_words() noexcept {
    return _mm512_setr_epi32(0x00030001, 0x00070005, 0x000b0009, 0x000f000d, 0x00130011, 0x00170015, 0x001b0019,
                             0x001f001d, 0x00230021, 0x00270025, 0x002b0029, 0x002f002d, 0x00330031, 0x00370035,
                             0x003b0039, 0x003f003d);
}

// The high 16 bits of each 32-bit lane of v, then of w, packed in lane order: one word permute (vpermt2w)
// takes them from both registers, where a shift and a narrowing (vpsrld, vpmovdw) take three uops per register.
inline __m512i high_words(__m512i v, __m512i w) noexcept { return _mm512_permutex2var_epi16(v, odd_words(), w); }

// The high 16 bits of each 32-bit lane of v, packed in lane order (vpermw, which reads an index modulo 32: the
// upper half of the result repeats the lower one and is dropped).
inline __m256i high_words(__m512i v) noexcept {
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(odd_words(), v));
}

// f32 -> bf16 bits rounded to nearest even in integer arithmetic, packed (exact for every input).
inline __m256i f32_to_bf16_by_integers(__m512 f) noexcept { return high_words(bf16_rounded(f)); }

// The same of batches k and k + 1 of b in one register (k the last: batch k alone, in the low half).
template <class T, std::size_t U>
__m512i bf16_pair_by_integers(const std::array<batch<T>, U>& b, std::size_t k) noexcept {
    if (k + 1 < U) return high_words(bf16_rounded(b[k].v), bf16_rounded(b[k + 1].v));
    return _mm512_castsi256_si512(f32_to_bf16_by_integers(b[k].v));
}

// f32 -> bf16 bits rounded to nearest even, packed: with AVX512-BF16 the CPU's conversion, the integer rounding
// for a batch with a subnormal lane (which vcvtneps2bf16 reads as zero; simd::detail::f32x8_to_bf16).
inline __m256i f32_to_bf16(__m512 f) noexcept {
#if MIXT_SIMD_AVX512BF16
    if (__builtin_expect(_mm512_fpclass_ps_mask(f, 0x20) == 0, 1)) // 0x20: denormal
        return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(f));
#endif
    return f32_to_bf16_by_integers(f);
}

// The 16 elements of a batch of f16 or bf16, rounded, in memory order.
template <class T>
__m256i packed_u16(const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, Eigen::half>)
        return _mm512_cvtps_ph(b.v, _MM_FROUND_TO_NEAREST_INT);
    else
        return f32_to_bf16(b.v);
}

} // namespace detail

/// Loads 16 contiguous elements (no alignment needed).
template <class T>
    requires has_batch_v<T>
batch<T> load(const T* p) noexcept {
    if constexpr (::mixt::detail::is_narrow_v<T>) {
        return {narrow::decode<T::value_dtype>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, bool>) {
        // A bool's storage is one byte; any nonzero byte is true.
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return {_mm_test_epi8_mask(bytes, bytes)};
    } else if constexpr (std::is_same_v<T, std::uint8_t>) {
        return {_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::int8_t>) {
        return {_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
        return {_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::int16_t>) {
        return {_mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
    } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>) {
        return {_mm512_loadu_si512(p)};
    } else if constexpr (std::is_same_v<T, Eigen::half>) {
        return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
    } else if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
        return {detail::bf16_high_to_f32(detail::bf16_widened(p))};
    } else {
        return {_mm512_loadu_ps(p)};
    }
}

/// load(p) for an operand of an operation that quiets a signaling NaN itself (+, -, *, / of floats: x86 returns
/// the quiet form of the first NaN operand, the NaN load would have made): bf16 widened without load's quieting
/// (a compare and a masked or per batch), the other types as load.
template <class T>
    requires has_batch_v<T>
batch<T> load_operand(const T* p) noexcept {
    if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return {_mm512_castsi512_ps(detail::bf16_widened(p))};
    else
        return load(p);
}

/// Whether load_quarter(const T*, int) exists: u8 with AVX512-VBMI (vpermb), whose 64 bytes are four batches.
/// (i8's batches are not read that way: its widening from a register takes two instructions, and `i8 + f32`
/// ran slower so, docs/performance-notes.md, "Byte leaves read a block at a time".)
template <class T>
inline constexpr bool has_quarters_v = MIXT_SIMD_AVX512VBMI && std::is_same_v<T, std::uint8_t>;

#if MIXT_SIMD_AVX512VBMI
/// load(block + 16 * q) for q in [0, 4), read as quarter q of the 64 bytes at block: the four batches of a block
/// are then one 64-byte load, which the compiler shares between them where it sees the same block, and one byte
/// permute each that takes the quarter's bytes into the low bytes of the 32-bit lanes and zeroes the others,
/// where load widens each batch's 16 bytes from memory. Reads all 64 bytes.
template <class T>
    requires has_quarters_v<T>
batch<T> load_quarter(const T* block, int q) noexcept {
    // For each quarter, byte 4j of the index is 16 q + j (the other bytes are masked to zero): built at compile time.
    alignas(64) static constexpr auto indices = [] {
        std::array<std::array<std::uint8_t, 64>, 4> t{};
        for (int k = 0; k < 4; ++k)
            for (int j = 0; j < 16; ++j) t[k][4 * j] = static_cast<std::uint8_t>(16 * k + j);
        return t;
    }();
    __m512i bytes = _mm512_loadu_si512(block);
#if defined(__GNUC__) && !defined(__CUDACC__)
    // The block stays one load: without this, GCC may fold it into each of the four permutes, four loads of the
    // same 64 bytes (an empty asm is not volatile: the four calls' loads are still one).
    asm("" : "+v"(bytes));
#endif
    return {_mm512_maskz_permutexvar_epi8(0x1111111111111111ull, _mm512_load_si512(indices[q & 3].data()), bytes)};
}
#endif

/// All 16 lanes equal to x.
template <class T>
    requires has_batch_v<T>
batch<T> broadcast(T x) noexcept {
    if constexpr (std::is_same_v<T, bool>)
        return {static_cast<__mmask16>(x ? 0xffff : 0)};
    else if constexpr (::mixt::is_narrow_int_v<T>)
        return {_mm512_set1_epi32(x.value())};
    else if constexpr (detail::is_int_lane_v<T>)
        return {_mm512_set1_epi32(static_cast<int>(x))};
    else
        return {_mm512_set1_ps(static_cast<float>(x))};
}

/// Stores 16 contiguous elements of f16, bf16 or f32 (rounding f16 and bf16 lanes to nearest even).
template <class T>
    requires detail::is_f32_lane_v<T>
void store(T* p, const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, float>)
        _mm512_storeu_ps(p, b.v);
    else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), detail::packed_u16(b));
}

/// store(p, b) with a streaming (non-temporal) store: p must be aligned to stream_alignment<T>.
template <class T>
    requires detail::is_f32_lane_v<T>
void stream_store(T* p, const batch<T>& b) noexcept {
    if constexpr (std::is_same_v<T, float>)
        _mm512_stream_ps(p, b.v);
    else
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p), detail::packed_u16(b));
}

/// Stores 16 narrow elements, one byte each: their codes (a narrow float's lanes rounded as they are encoded).
template <class T>
    requires ::mixt::detail::is_narrow_v<T>
void store(T* p, const batch<T>& b) noexcept {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), narrow::encode<T::value_dtype>(b.v));
}
template <class T>
    requires ::mixt::detail::is_narrow_v<T>
void stream_store(T* p, const batch<T>& b) noexcept {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), narrow::encode<T::value_dtype>(b.v));
}

namespace detail {

// The bf16 bits of the U batches of b, packed, into p (Stream: by streaming stores, p aligned to
// stream_group_alignment): two batches a 64-byte store, the last one alone where U is odd.
template <bool Stream, std::size_t U, class T, class Fn>
void put_bf16_group(T* p, Fn bits_of_pair) noexcept {
    for (std::size_t k = 0; k < U; k += 2) {
        const __m512i v = bits_of_pair(k);
        if (k + 1 < U) {
            if constexpr (Stream)
                _mm512_stream_si512(reinterpret_cast<__m512i*>(p + k * lanes), v);
            else
                _mm512_storeu_si512(p + k * lanes, v);
        } else if constexpr (Stream) {
            _mm256_stream_si256(reinterpret_cast<__m256i*>(p + k * lanes), _mm512_castsi512_si256(v));
        } else {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + k * lanes), _mm512_castsi512_si256(v));
        }
    }
}

#if MIXT_SIMD_AVX512BF16
// vcvtne2ps2bf16 of batches k + 1 and k of b (k the last: vcvtneps2bf16 of it, in the low half).
template <class T, std::size_t U>
__m512i bf16_pair(const std::array<batch<T>, U>& b, std::size_t k) noexcept {
    if (k + 1 < U) return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b[k + 1].v, b[k].v));
    return _mm512_castsi256_si512(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(b[k].v)));
}

// Whether a lane of a batch of b is subnormal (which vcvtneps2bf16 reads as zero).
template <class T, std::size_t U>
bool any_subnormal(const std::array<batch<T>, U>& b) noexcept {
    unsigned any = 0; // or-ed as integers, not with _kor_mask16 (docs/performance-notes.md)
    for (std::size_t k = 0; k < U; ++k) any |= _mm512_fpclass_ps_mask(b[k].v, 0x20); // 0x20: denormal
    return any != 0;
}
#endif

} // namespace detail

/// store(p + k * lanes, b[k]) for each of the U batches of b (the fused loop's unrolled group), or with Stream
/// stream_store: then p must be aligned to stream_group_alignment. bf16 is stored two batches to a 64-byte store:
/// with AVX512-BF16 the group is classified once: one test for a subnormal lane in any of its batches (which
/// vcvtneps2bf16 reads as zero) chooses the CPU's conversion for all U batches, two batches per instruction
/// (vcvtne2ps2bf16), or the integer rounding for all U: one branch per group instead of one per batch, the bits
/// store's either way (docs/performance-notes.md, "f32 -> bf16 with AVX512-BF16"). The integer rounding packs two
/// batches with one word permute (bf16_pair_by_integers).
inline constexpr std::size_t stream_group_alignment = 64;
template <bool Stream = false, class T, std::size_t U>
void store_group(T* p, const std::array<batch<T>, U>& b) noexcept {
    if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
#if MIXT_SIMD_AVX512BF16
        if (__builtin_expect(!detail::any_subnormal(b), 1)) {
            detail::put_bf16_group<Stream, U>(p, [&](std::size_t k) { return detail::bf16_pair(b, k); });
            return;
        }
#endif
        detail::put_bf16_group<Stream, U>(p, [&](std::size_t k) { return detail::bf16_pair_by_integers(b, k); });
        return;
    }
    for (std::size_t k = 0; k < U; ++k) {
        if constexpr (Stream)
            stream_store(p + k * lanes, b[k]);
        else
            store(p + k * lanes, b[k]);
    }
}

/// Whether store_group_converted stores bf16 groups by another way than store_group's.
template <class T>
inline constexpr bool converts_first_v = MIXT_SIMD_AVX512BF16 && std::is_same_v<T, Eigen::bfloat16>;

/// store_group, with the classification only where the CPU's conversion hints at a subnormal lane: that
/// vfpclassps per batch costs as much as the conversion and the store together, and the conversion writes a
/// subnormal input's lane as ±0, so a group whose result has no ±0 lane is stored as converted. The group is
/// stored first and tested after, and the test is vector arithmetic with one mask at its end (each pair's words
/// doubled, which drops their sign, and their unsigned minimum: zero where any pair has a ±0 lane); a group that
/// had one is then stored again as store_group stores it, from the batches in b. Returns false where it had one (a
/// zero or a subnormal input): a loop over data with zeros would pay a mispredicted branch on many of its groups,
/// so the fused loop stores its later groups with store_group (docs/performance-notes.md, "A zero lane first",
/// "Stored first, tested after").
template <class T, std::size_t U>
    requires converts_first_v<T>
bool store_group_converted(T* p, const std::array<batch<T>, U>& b) noexcept {
#if MIXT_SIMD_AVX512BF16
    __m512i pairs[(U + 1) / 2];
    for (std::size_t k = 0; k < U; k += 2) pairs[k / 2] = detail::bf16_pair(b, k);
    detail::put_bf16_group<false, U>(p, [&](std::size_t k) { return pairs[k / 2]; });
    const auto doubled = [&](std::size_t k) {
        const __m512i d = _mm512_add_epi16(pairs[k / 2], pairs[k / 2]);
        // (A last batch alone: its 16 words, the others all ones.)
        return k + 1 < U ? d : _mm512_mask_mov_epi16(_mm512_set1_epi16(-1), 0xffffu, d);
    };
    __m512i least = doubled(0);
    for (std::size_t k = 2; k < U; k += 2) least = _mm512_min_epu16(least, doubled(k));
    if (__builtin_expect(_mm512_testn_epi16_mask(least, least) == 0, 1)) return true;
#endif
    store_group(p, b);
    return false;
}

/// Lanes 8h .. 8h + 7 of b as an 8-lane batch (h is 0 or 1).
template <class T>
    requires(detail::is_f32_lane_v<T> || detail::is_int_lane_v<T> || ::mixt::detail::is_narrow_v<T>)
simd::batch<T> half_batch(const batch<T>& b, int h) noexcept {
    if constexpr (detail::is_f32_lane_v<T> || ::mixt::is_narrow_float_v<T>)
        return {h == 0 ? _mm512_castps512_ps256(b.v) : _mm512_extractf32x8_ps(b.v, 1)};
    else
        return {h == 0 ? _mm512_castsi512_si256(b.v) : _mm512_extracti32x8_epi32(b.v, 1)};
}

/// The wide batch of bool whose lanes are lo's then hi's.
inline batch<bool> join_bool(const simd::batch<bool>& lo, const simd::batch<bool>& hi) noexcept {
    const unsigned l = _mm256_test_epi32_mask(lo.v, lo.v);
    const unsigned h = _mm256_test_epi32_mask(hi.v, hi.v);
    return {static_cast<__mmask16>(l | (h << 8))};
}

// --- conversions ----------------------------------------------------------------------------------------

/// Whether convert<To>(batch<From>) exists: To is f16, bf16 or f32, and From's value reaches To with one
/// rounding (f32 from any batch type; f16 and bf16 from f16, bf16, f32, bool and integers of up to 16 bits,
/// whose values f32 holds exactly).
/// A narrow float converts to f32 (exactly) and from what f32 holds exactly, through f32; a narrow int to f32.
template <class To, class From>
inline constexpr bool convertible_v =
    has_batch_v<From> && (detail::is_f32_lane_v<To> || ::mixt::is_narrow_float_v<To>) &&
    (std::is_same_v<To, float> || std::is_same_v<To, From> || detail::is_f32_lane_v<From> ||
     ::mixt::is_narrow_float_v<From> || std::is_same_v<From, bool> ||
     ((detail::is_int_lane_v<From> || ::mixt::is_narrow_int_v<From>) && sizeof(From) <= 2));

namespace detail {
// From's value as f32 lanes: exact, except i32 and u32 to f32, rounded to nearest even.
template <class From>
__m512 value_f32(const batch<From>& b) noexcept {
    if constexpr (is_f32_lane_v<From> || ::mixt::is_narrow_float_v<From>)
        return b.v;
    else if constexpr (std::is_same_v<From, bool>)
        return _mm512_maskz_mov_ps(b.m, _mm512_set1_ps(1.0f));
    else if constexpr (std::is_same_v<From, std::uint32_t>)
        return _mm512_cvtepu32_ps(b.v);
    else
        return _mm512_cvtepi32_ps(b.v);
}

// f32 lanes rounded to T (f16, bf16, or float: unchanged), kept as f32 values.
template <class T>
__m512 round_to(__m512 f) noexcept {
    if constexpr (::mixt::is_narrow_float_v<T>)
        return narrow::round_to<T::value_dtype>(f);
    else if constexpr (std::is_same_v<T, Eigen::half>)
        return _mm512_cvtph_ps(_mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return _mm512_castsi512_ps(f32_to_bf16_high(f)); // (the integer rounding: no packing and widening back)
    else
        return f;
}

// An f32 result of arithmetic on batches of T rounded to T, or with Round false left unrounded for a store to
// round.
template <class T, bool Round>
batch<T> result(__m512 f) noexcept {
    if constexpr (!Round)
        return {f};
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return {_mm512_castsi512_ps(arithmetic_to_bf16_high(f))};
    else
        return {round_to<T>(f)};
}
} // namespace detail

/// Converts each lane with mixt::convert's semantics (where convertible_v<To, From>).
template <class To, class From>
    requires convertible_v<To, From>
batch<To> convert(const batch<From>& b) noexcept {
    if constexpr (std::is_same_v<To, From>)
        return b;
    else if constexpr (std::is_same_v<To, float> || (simd::detail::exact_in_half_v<From> && !::mixt::is_narrow_float_v<To>))
        return {detail::value_f32(b)}; // every value of From is one of To's: nothing to round
    else
        return {detail::round_to<To>(detail::value_f32(b))};
}

/// convert<To>(b) for storing only: an f16 or bf16 batch not yet rounded, which store and stream_store round
/// (simd::convert_unrounded). Any other use of such a batch is undefined.
template <class To, class From>
    requires convertible_v<To, From>
batch<To> convert_unrounded(const batch<From>& b) noexcept {
    if constexpr (std::is_same_v<To, From>)
        return b;
    else
        return {detail::value_f32(b)};
}

// --- operations -----------------------------------------------------------------------------------------

namespace detail {

template <class Fn>
inline constexpr bool is_arith_v = ::mixt::simd::detail::is_arith_v<Fn>;
template <class Fn>
inline constexpr bool is_minmax_v = ::mixt::simd::detail::is_minmax_v<Fn>;
template <class Fn>
inline constexpr bool is_compare_v = ::mixt::simd::detail::is_compare_v<Fn>;

template <class Fn>
constexpr int int_predicate() {
    if constexpr (std::is_same_v<Fn, fn::equal_fn>) return _MM_CMPINT_EQ;
    else if constexpr (std::is_same_v<Fn, fn::not_equal_fn>) return _MM_CMPINT_NE;
    else if constexpr (std::is_same_v<Fn, fn::less_fn>) return _MM_CMPINT_LT;
    else if constexpr (std::is_same_v<Fn, fn::less_equal_fn>) return _MM_CMPINT_LE;
    else if constexpr (std::is_same_v<Fn, fn::greater_fn>) return _MM_CMPINT_NLE;
    else return _MM_CMPINT_NLT;
}
// A variable, not a call: at -O0 GCC's intrinsics are macros whose immediate must be a plain constant.
template <class Fn>
inline constexpr int int_predicate_v = int_predicate<Fn>();

template <class Fn>
inline __m512 arith(__m512 a, __m512 b) noexcept {
    if constexpr (std::is_same_v<Fn, fn::add_fn>) return _mm512_add_ps(a, b);
    else if constexpr (std::is_same_v<Fn, fn::sub_fn>) return _mm512_sub_ps(a, b);
    else if constexpr (std::is_same_v<Fn, fn::mul_fn>) return _mm512_mul_ps(a, b);
    else return _mm512_div_ps(a, b);
}

// minimum/maximum in the functors' order of tests (simd::detail::minmax_ps): a NaN operand first, then b < a,
// -0 below +0.
template <class Fn>
inline __m512 minmax(__m512 a, __m512 b) noexcept {
    constexpr bool min = std::is_same_v<Fn, fn::minimum_fn>;
    const __mmask16 take_b = min ? _mm512_cmp_ps_mask(b, a, _CMP_LT_OQ) : _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
    __m512 r = _mm512_mask_blend_ps(take_b, a, b);
    r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), r, min ? _mm512_or_ps(a, b) : _mm512_and_ps(a, b));
    r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), r, b);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), r, a);
}

#if defined(EIGEN_VECTORIZE_AVX) // as the 8-lane version
// exp of a half node: simd::detail::vectorized<Eigen::half, exp_fn, Eigen::half> (ops_avx2.hpp) at 16 lanes,
// the same f32 value before the rounding to half: n = round(t) by VRNDSCALEPS rather than the magic-number
// add (both round to nearest even, |t| <= 39), and p * 2^n by VSCALEFPS rather than by building 2^n's bits
// (both exact: p * 2^n is a normal f32 for p in [0.7, 1.42] and |n| <= 39; a NaN p is returned as it is).
inline __m512 exp_half(__m512 x) noexcept {
    namespace d = ::mixt::simd::detail;
    x = _mm512_min_ps(_mm512_set1_ps(d::exp_clamp), _mm512_max_ps(_mm512_set1_ps(-d::exp_clamp), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 g = _mm512_fnmadd_ps(n, _mm512_set1_ps(d::exp_ln2_hi), x);
    g = _mm512_fnmadd_ps(n, _mm512_set1_ps(d::exp_ln2_lo), g);
    __m512 p = _mm512_set1_ps(d::exp_taylor[6]);
    for (int k = 5; k >= 0; --k) p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(d::exp_taylor[k]));
    return _mm512_scalef_ps(p, n);
}
#endif

// What the fused loop may ask of wide batches: vectorized<R, Fn, Ts...>::value, and apply<Round>(xs...).
template <class R, class Fn, class... Ts>
struct vectorized : std::false_type {};

template <class T, class Fn>
    requires(is_f32_lane_v<T> && (is_arith_v<Fn> || is_minmax_v<Fn>))
struct vectorized<T, Fn, T, T> : std::true_type {
    template <bool Round>
    static batch<T> apply(const batch<T>& a, const batch<T>& b) noexcept {
        if constexpr (is_arith_v<Fn>)
            return result<T, Round>(arith<Fn>(a.v, b.v));
        else
            return {minmax<Fn>(a.v, b.v)}; // picks an operand: already of type T
    }
};
template <class T, class Fn>
    requires((is_f32_lane_v<T> || is_int_lane_v<T>) && is_compare_v<Fn>)
struct vectorized<bool, Fn, T, T> : std::true_type {
    template <bool Round>
    static batch<bool> apply(const batch<T>& a, const batch<T>& b) noexcept {
        if constexpr (is_f32_lane_v<T>)
            return {_mm512_cmp_ps_mask(a.v, b.v, ::mixt::simd::detail::compare_predicate_v<Fn>)};
        else if constexpr (std::is_same_v<T, std::uint32_t>)
            return {_mm512_cmp_epu32_mask(a.v, b.v, int_predicate_v<Fn>)};
        else // the lanes hold the values sign- or zero-extended: a signed compare orders them
            return {_mm512_cmp_epi32_mask(a.v, b.v, int_predicate_v<Fn>)};
    }
};
template <class T>
    requires is_f32_lane_v<T>
struct vectorized<T, fn::neg_fn, T> : std::true_type {
    template <bool Round>
    static batch<T> apply(const batch<T>& a) noexcept {
        return {_mm512_xor_ps(a.v, _mm512_set1_ps(-0.0f))};
    }
};
template <class T>
    requires is_f32_lane_v<T>
struct vectorized<T, fn::abs_fn, T> : std::true_type {
    template <bool Round>
    static batch<T> apply(const batch<T>& a) noexcept {
        return {_mm512_andnot_ps(_mm512_set1_ps(-0.0f), a.v)};
    }
};
template <class T>
    requires is_f32_lane_v<T>
struct vectorized<T, fn::sqrt_fn, T> : std::true_type {
    template <bool Round>
    static batch<T> apply(const batch<T>& a) noexcept {
        return result<T, Round>(_mm512_sqrt_ps(a.v));
    }
};
#if defined(EIGEN_VECTORIZE_AVX)
template <>
struct vectorized<Eigen::half, fn::exp_fn, Eigen::half> : std::true_type {
    template <bool Round>
    static batch<Eigen::half> apply(const batch<Eigen::half>& a) noexcept {
        // Rounded to half here, even for Round false, as simd::detail::rounded_exactly does for 8 lanes (the
        // same test; the lanes it finds near a rounding boundary take the scalar definition).
        namespace d = ::mixt::simd::detail;
        const __m512 r = exp_half(a.v);
        const __m512 h = result<Eigen::half, true>(r).v;
        const __m512i dist = _mm512_abs_epi32(_mm512_sub_epi32(_mm512_castps_si512(r), _mm512_castps_si512(h)));
        const __mmask16 near = _mm512_cmpgt_epi32_mask(dist, _mm512_set1_epi32((1 << 12) - d::exp_half_ulps - 1));
        if (__builtin_expect(near != 0, 0)) {
            const __m256 lo = d::settle_lanes<Eigen::half, d::exp_half_ulps, fn::exp_fn>(
                _mm512_castps512_ps256(r), _mm512_castps512_ps256(h), _mm512_castps512_ps256(a.v));
            const __m256 hi = d::settle_lanes<Eigen::half, d::exp_half_ulps, fn::exp_fn>(
                _mm512_extractf32x8_ps(r, 1), _mm512_extractf32x8_ps(h, 1), _mm512_extractf32x8_ps(a.v, 1));
            return {_mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1)};
        }
        return {h};
    }
};
#endif
template <class T>
    requires is_f32_lane_v<T>
struct vectorized<T, fn::where_fn, bool, T, T> : std::true_type {
    template <bool Round>
    static batch<T> apply(const batch<bool>& c, const batch<T>& x, const batch<T>& y) noexcept {
        return {_mm512_mask_blend_ps(c.m, y.v, x.v)};
    }
};
template <>
struct vectorized<bool, fn::logical_not_fn, bool> : std::true_type {
    template <bool Round>
    static batch<bool> apply(const batch<bool>& a) noexcept {
        return {static_cast<__mmask16>(~a.m)};
    }
};
template <class Fn>
    requires(std::is_same_v<Fn, fn::logical_and_fn> || std::is_same_v<Fn, fn::logical_or_fn>)
struct vectorized<bool, Fn, bool, bool> : std::true_type {
    template <bool Round>
    static batch<bool> apply(const batch<bool>& a, const batch<bool>& b) noexcept {
        return {static_cast<__mmask16>(std::is_same_v<Fn, fn::logical_and_fn> ? (a.m & b.m) : (a.m | b.m))};
    }
};

} // namespace detail

/// Whether apply<R>(fn, batch<Ts>...) exists.
template <class R, class Fn, class... Ts>
inline constexpr bool supported_v = detail::vectorized<R, Fn, Ts...>::value;

/// The per-element functor fn on every lane, the result rounded to R: what simd::apply<R> computes.
template <class R, class Fn, class... Ts>
    requires supported_v<R, Fn, Ts...>
batch<R> apply(const Fn&, const batch<Ts>&... xs) noexcept {
    return detail::vectorized<R, Fn, Ts...>::template apply<true>(xs...);
}

/// apply<R> for storing only: an f16 or bf16 result not yet rounded, which the store rounds.
template <class R, class Fn, class... Ts>
    requires supported_v<R, Fn, Ts...>
batch<R> apply_unrounded(const Fn&, const batch<Ts>&... xs) noexcept {
    return detail::vectorized<R, Fn, Ts...>::template apply<false>(xs...);
}

// --- words: 32 integers of up to 16 bits ----------------------------------------------------------------
//
// For integer expressions whose result is 16 bits wide (`u8 + i8` is i16): one __m512i holds 32 elements,
// each in a 16-bit lane, zero- or sign-extended from its own type. In such a lane a conversion between u8,
// i8, u16 and i16 that does not narrow (to i16 or u16) changes no bit, and the wrapping +, -, * and the
// bitwise operations of 16-bit integers are VPADDW, VPSUBW, VPMULLW and VPANDQ/VPORQ/VPXORQ. An 8-bit leaf
// is widened as it is loaded (VPMOVZXBW/VPMOVSXBW from memory): the compiler's vectorization of the same
// loop loads 64 bytes and widens each half with a shuffle more.

/// The number of elements in a batch of words, and its register.
inline constexpr int word_lanes = 32;
using words = __m512i;

/// Loads 32 contiguous elements, each into a 16-bit lane (no alignment needed).
template <class T>
    requires has_words_v<T>
__m512i load_words(const T* p) noexcept {
    if constexpr (std::is_same_v<T, std::uint8_t>)
        return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    else if constexpr (std::is_same_v<T, std::int8_t>)
        return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    else
        return _mm512_loadu_si512(p);
}

/// All 32 lanes equal to x.
template <class T>
    requires has_words_v<T>
__m512i broadcast_words(T x) noexcept {
    return _mm512_set1_epi16(static_cast<short>(x));
}

/// fn on every lane (see word_supported_v).
template <class Fn>
    requires detail::is_word_op_v<Fn>
__m512i apply_words(const Fn&, __m512i a, __m512i b) noexcept {
    if constexpr (std::is_same_v<Fn, detail::fn::add_fn>) return _mm512_add_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::sub_fn>) return _mm512_sub_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::mul_fn>) return _mm512_mullo_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::bit_and_fn>) return _mm512_and_si512(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::bit_or_fn>) return _mm512_or_si512(a, b);
    else return _mm512_xor_si512(a, b);
}

/// Stores 32 elements of u16 or i16 (no alignment needed).
template <class T>
    requires detail::is_word_v<T>
void store_words(T* p, __m512i v) noexcept {
    _mm512_storeu_si512(p, v);
}

/// store_words with a streaming (non-temporal) store: p must be aligned to 64 bytes.
template <class T>
    requires detail::is_word_v<T>
void stream_store_words(T* p, __m512i v) noexcept {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
}

/// 32 16-bit zeros.
inline __m512i zero_words() noexcept { return _mm512_setzero_si512(); }

/// Adds the 32 16-bit lanes of w, read as signed or unsigned per Signed, to the 32 floats at out (no alignment
/// needed). Every 16-bit value is exact as a float.
template <bool Signed>
void add_widened_words(float* out, __m512i w) noexcept {
    const __m256i half[2] = {_mm512_castsi512_si256(w), _mm512_extracti64x4_epi64(w, 1)};
    for (int h = 0; h < 2; ++h) {
        const __m512i x = Signed ? _mm512_cvtepi16_epi32(half[h]) : _mm512_cvtepu16_epi32(half[h]);
        _mm512_storeu_ps(out + 16 * h, _mm512_add_ps(_mm512_loadu_ps(out + 16 * h), _mm512_cvtepi32_ps(x)));
    }
}

/// add_widened_words into 32 64-bit integers (wrapping, as integer sums do).
template <bool Signed, class I>
    requires(std::is_integral_v<I> && sizeof(I) == 8)
void add_widened_words(I* out, __m512i w) noexcept {
    for (int q = 0; q < 4; ++q) {
        const __m128i part = q == 0   ? _mm512_extracti32x4_epi32(w, 0)
                             : q == 1 ? _mm512_extracti32x4_epi32(w, 1)
                             : q == 2 ? _mm512_extracti32x4_epi32(w, 2)
                                      : _mm512_extracti32x4_epi32(w, 3);
        const __m512i x = Signed ? _mm512_cvtepi16_epi64(part) : _mm512_cvtepu16_epi64(part);
        _mm512_storeu_si512(out + 8 * q, _mm512_add_epi64(_mm512_loadu_si512(out + 8 * q), x));
    }
}

/// The order key of f16 or bf16 bits (sign and magnitude): for values that are not NaN, keys compare as the
/// values do, -0 and +0 both 0, from -inf = -(inf bits) to +inf = inf bits.
inline std::int16_t small_float_key(std::uint16_t bits) noexcept {
    const auto mag = static_cast<std::int16_t>(bits & 0x7fff);
    return (bits & 0x8000) != 0 ? static_cast<std::int16_t>(-mag) : mag;
}

/// What first_extreme_key found: the offset of an element (-1: none), and whether it is a NaN.
struct extreme_key_found {
    std::ptrdiff_t at;
    bool nan;
};

/// argmax (Max) or argmin over n f16 or bf16 values whose bits are at x (n a multiple of 32; inf: the bits of
/// +inf, 0x7c00 or 0x7f80): the first NaN if there is one, else the first element whose key (small_float_key)
/// is the greatest (least) of all, provided it is greater (less) than `bound`; none otherwise.
///
/// One pass over chunks of 256 values, 32 per instruction, with a cheaper key: (magnitude ^ s) where s is 0, or
/// -1 for a negative value, which orders the values as small_float_key does except that -0 comes just below +0.
/// Each of 32 positions keeps its extreme key within the chunk (4 instructions per 32 values, the NaN check
/// included); at a chunk's end, each position keeps its extreme over the chunks so far and the first chunk that
/// reached it. At the end of a segment of up to 2^20 values: the extreme key, the first chunk that holds it, and
/// in that chunk (read again: 256 values, in L1) the first element of that key. Rare cases read from the
/// segment's start again: a NaN (the first one), and an extreme that is a zero, whose first element may be a
/// zero of the other sign.
///
/// The loop asks for the values 16 KiB ahead of those it reads (software prefetch), up to `ahead_end` or x + n,
/// whichever is further (the caller knows whether the memory after x + n is read next): with the few
/// instructions per value of this loop, the hardware prefetcher alone left one core about a third short of the
/// memory bandwidth (docs/performance-notes.md, "R6").
template <bool Max>
extreme_key_found first_extreme_key(const std::uint16_t* x, std::ptrdiff_t n, std::int16_t bound, std::uint16_t inf,
                                    const std::uint16_t* ahead_end = nullptr) noexcept {
    constexpr std::ptrdiff_t chunk = 256, segment = std::ptrdiff_t{1} << 20; // 4096 chunks: an int16 counter
    constexpr std::ptrdiff_t ahead = 8192;                                   // values: 16 KiB
    // Where the last 64 values that may be asked for begin (a prefetch never faults, but it should not fetch
    // what is not read). Addresses as integers: they may lie past the end of the array.
    const auto x_at = reinterpret_cast<std::uintptr_t>(x);
    const std::uintptr_t stop = std::max(x_at + static_cast<std::uintptr_t>(n) * 2, reinterpret_cast<std::uintptr_t>(ahead_end));
    const std::uintptr_t last_ahead = stop - x_at >= 128 ? stop - 128 : x_at;
    const __m512i low15 = _mm512_set1_epi16(0x7fff), zero = _mm512_setzero_si512(), one = _mm512_set1_epi16(1);
    const __m512i low = _mm512_set1_epi16(Max ? INT16_MIN : INT16_MAX), high = _mm512_set1_epi16(Max ? INT16_MAX : INT16_MIN);
    const auto key_of = [&](__m512i v) { // (v & low15) ^ (v >> 15): the magnitude, or -magnitude - 1 where negative
        return _mm512_ternarylogic_epi32(v, low15, _mm512_srai_epi16(v, 15), 0x6a);
    };
    const auto extreme = [](__m512i a, __m512i b) { return Max ? _mm512_max_epi16(a, b) : _mm512_min_epi16(a, b); };
    const auto opposite = [](__m512i a, __m512i b) { return Max ? _mm512_min_epi16(a, b) : _mm512_max_epi16(a, b); };
    const auto load = [&](std::ptrdiff_t j) { return _mm512_loadu_si512(x + j); };
    const auto horizontal = [](__m512i v, bool greatest) { // the greatest or least of 32 int16: halves, in turn
        const auto pick = [greatest](__m128i a, __m128i b) { return greatest ? _mm_max_epi16(a, b) : _mm_min_epi16(a, b); };
        const __m256i h = greatest ? _mm256_max_epi16(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1))
                                   : _mm256_min_epi16(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
        __m128i q = pick(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        q = pick(q, _mm_srli_si128(q, 8));
        q = pick(q, _mm_srli_si128(q, 4));
        q = pick(q, _mm_srli_si128(q, 2));
        return static_cast<std::int16_t>(_mm_extract_epi16(q, 0));
    };
    const auto first_where = [&](std::ptrdiff_t from, const auto& hit) -> std::ptrdiff_t {
        for (std::ptrdiff_t j = from;; j += 32)
            if (const __mmask32 m = hit(load(j)); m != 0) return j + std::countr_zero(m);
    };
    const auto nan_at = [&](__m512i v) { return _mm512_cmpgt_epu16_mask(_mm512_and_si512(v, low15), _mm512_set1_epi16(static_cast<short>(inf))); };
    const auto zero_at = [&](__m512i v) { return _mm512_testn_epi16_mask(v, low15); };
    // The keys of +inf and -inf: beyond them (the other side of ext, or `other`), a NaN.
    const std::int16_t inf_key = static_cast<std::int16_t>(inf), minus_inf_key = static_cast<std::int16_t>(-inf_key - 1);
    extreme_key_found found{-1, false};
    for (std::ptrdiff_t c = 0; c < n; c += segment) {
        const std::ptrdiff_t end = std::min(n, c + segment);
        __m512i run = low, chunk_of = zero, chunk_index = zero, other0 = high, other1 = high;
        for (std::ptrdiff_t cs = c; cs < end; cs += chunk) {
            const std::ptrdiff_t ce = std::min(end, cs + chunk);
            __m512i ext0 = low, ext1 = low;
            std::ptrdiff_t j = cs;
            for (; j + 64 <= ce; j += 64) {
                const auto a = std::min(x_at + static_cast<std::uintptr_t>(j + ahead) * 2, last_ahead);
                _mm_prefetch(reinterpret_cast<const char*>(a), _MM_HINT_T0);
                _mm_prefetch(reinterpret_cast<const char*>(a + 64), _MM_HINT_T0);
                const __m512i k0 = key_of(load(j)), k1 = key_of(load(j + 32));
                ext0 = extreme(ext0, k0), ext1 = extreme(ext1, k1);
                other0 = opposite(other0, k0), other1 = opposite(other1, k1);
            }
            if (j < ce) {
                const __m512i k0 = key_of(load(j));
                ext0 = extreme(ext0, k0), other0 = opposite(other0, k0);
            }
            const __m512i e = extreme(ext0, ext1);
            const __mmask32 better = Max ? _mm512_cmpgt_epi16_mask(e, run) : _mm512_cmplt_epi16_mask(e, run);
            run = extreme(run, e);
            chunk_of = _mm512_mask_mov_epi16(chunk_of, better, chunk_index);
            chunk_index = _mm512_add_epi16(chunk_index, one);
        }
        const std::int16_t best = horizontal(run, Max), far = horizontal(opposite(other0, other1), !Max);
        const std::int16_t top = Max ? best : far, bottom = Max ? far : best;
        if (top > inf_key || bottom < minus_inf_key) return {first_where(c, nan_at), true}; // the first NaN
        const std::int16_t true_best = best < 0 ? static_cast<std::int16_t>(best + 1) : best; // -0 and +0 both 0
        if (!(Max ? true_best > bound : true_best < bound)) continue;
        bound = true_best;
        if (best == (Max ? 0 : -1)) { // the extreme is a zero, and a zero of the other sign may come first
            found.at = first_where(c, zero_at);
            continue;
        }
        const __m512i target = _mm512_set1_epi16(best);
        const std::int16_t first_chunk =
            horizontal(_mm512_mask_mov_epi16(_mm512_set1_epi16(INT16_MAX), _mm512_cmpeq_epi16_mask(run, target), chunk_of), false);
        found.at = first_where(c + std::ptrdiff_t{first_chunk} * chunk,
                               [&](__m512i v) { return _mm512_cmpeq_epi16_mask(key_of(v), target); });
    }
    return found;
}

namespace detail {
// Permutes of 4- or 8-byte lanes (S their bytes) for columns_of_short_rows.
template <std::size_t S>
inline __m512i permute_pair(__m512i a, __m512i at, __m512i b) noexcept {
    if constexpr (S == 4)
        return _mm512_permutex2var_epi32(a, at, b);
    else
        return _mm512_permutex2var_epi64(a, at, b);
}
template <std::size_t S>
inline __m512i permute_one(__m512i at, __m512i a) noexcept {
    if constexpr (S == 4)
        return _mm512_permutexvar_epi32(at, a);
    else
        return _mm512_permutexvar_epi64(at, a);
}
// `picked` where the lane's index in `at` is at least `first`, else c.
template <std::size_t S>
inline __m512i take_from(__m512i at, int first, __m512i c, __m512i picked) noexcept {
    if constexpr (S == 4)
        return _mm512_mask_blend_epi32(_mm512_cmpge_epi32_mask(at, _mm512_set1_epi32(first)), c, picked);
    else
        return _mm512_mask_blend_epi64(_mm512_cmpge_epi64_mask(at, _mm512_set1_epi64(first)), c, picked);
}

// transpose_rows' loads: R rows of `count` lanes of 64 / R bytes, row i at p + i * stride, in r[i]. Plain loads
// wherever a whole vector stays inside the rows' span (from p to the last row's end, one array): every row when the
// rows fill their vectors, else all rows but the last where a row and its stride reach a vector's length (the lanes
// past a row's count hold the next row's values, which the transpose leaves in columns nobody reads); masked loads
// for the others, which read nothing past the row's end. On AMD CPUs masked loads from memory do not keep the
// hardware prefetcher ahead: rows read so from DRAM ran at half the speed of plain loads (docs/performance-notes.md,
// "Masked loads from memory, and rows prefetched").
template <class T, int R>
MIXT_ALWAYS_INLINE void load_rows(const T* p, std::ptrdiff_t stride, int count, __m512i (&r)[R]) noexcept {
    const auto masked = [&](int i) {
        if constexpr (R == 16) return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << count) - 1u), p + i * stride);
        else return _mm512_maskz_loadu_epi64(static_cast<__mmask8>((1u << count) - 1u), p + i * stride);
    };
    if (count == R) {
        MIXT_UNROLLED
        for (int i = 0; i < R; ++i) r[i] = _mm512_loadu_si512(p + i * stride);
    } else if (stride >= R - count) {
        MIXT_UNROLLED
        for (int i = 0; i < R - 1; ++i) r[i] = _mm512_loadu_si512(p + i * stride);
        r[R - 1] = masked(R - 1);
    } else {
        MIXT_UNROLLED
        for (int i = 0; i < R; ++i) r[i] = masked(i);
    }
}

// rows_as_columns' transposes of whole rows: 16 x 16 4-byte lanes, 8 x 8 8-byte ones.
template <class T>
MIXT_ALWAYS_INLINE void transpose_rows(const T* p, std::ptrdiff_t stride, int count, __m512i (&columns)[16]) noexcept {
    __m512i r[16], t[16];
    load_rows(p, stride, count, r);
    MIXT_UNROLLED
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    // r[4g + k], block b: column 4b + k of rows 4g to 4g + 3.
    MIXT_UNROLLED
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    MIXT_UNROLLED
    for (int k = 0; k < 4; ++k) {
        const __m512i v0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x44), v1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xEE);
        const __m512i w0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x44), w1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xEE);
        columns[k] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        columns[4 + k] = _mm512_shuffle_i32x4(v0, w0, 0xDD);
        columns[8 + k] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        columns[12 + k] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
    }
}
template <class T>
MIXT_ALWAYS_INLINE void transpose_rows(const T* p, std::ptrdiff_t stride, int count, __m512i (&columns)[8]) noexcept {
    __m512i r[8], t[8];
    load_rows(p, stride, count, r);
    // t[2g], block b: columns 2b of rows 2g and 2g + 1; t[2g + 1]: columns 2b + 1.
    MIXT_UNROLLED
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi64(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi64(r[i], r[i + 1]);
    }
    // r[h + 2o + e] (h 0 or 4): columns 2e + o and 4 + 2e + o of rows h to h + 3, blocks in row pairs.
    MIXT_UNROLLED
    for (int h = 0; h < 8; h += 4)
        MIXT_UNROLLED
        for (int o = 0; o < 2; ++o) {
            r[h + 2 * o] = _mm512_shuffle_i64x2(t[h + o], t[h + 2 + o], 0x88);
            r[h + 2 * o + 1] = _mm512_shuffle_i64x2(t[h + o], t[h + 2 + o], 0xDD);
        }
    MIXT_UNROLLED
    for (int o = 0; o < 2; ++o)
        MIXT_UNROLLED
        for (int e = 0; e < 2; ++e) {
            const __m512i lo = r[2 * o + e], hi = r[4 + 2 * o + e]; // rows 0-3 and 4-7
            columns[2 * e + o] = _mm512_shuffle_i64x2(lo, hi, 0x88);
            columns[4 + 2 * e + o] = _mm512_shuffle_i64x2(lo, hi, 0xDD);
        }
}
} // namespace detail

/// 64 bytes of lanes of an integer A of 4 or 8 bytes from 64 / sizeof(A) integers S (narrower) at `bytes`, sign-
/// or zero-extended (load widens to 32 bits only).
template <class A, class S>
__m512i widen_to_lanes(const void* bytes) noexcept {
    static_assert(detail::fn::is_int_v<A> && detail::fn::is_int_v<S> && (sizeof(A) == 4 || sizeof(A) == 8) && sizeof(S) < sizeof(A));
    constexpr std::size_t count = 64 / sizeof(A), width = count * sizeof(S);
    constexpr bool sign = std::is_signed_v<S>;
    if constexpr (width <= 16) {
        __m128i b = _mm_setzero_si128();
        std::memcpy(&b, bytes, width);
        if constexpr (sizeof(A) == 8 && sizeof(S) == 1) return sign ? _mm512_cvtepi8_epi64(b) : _mm512_cvtepu8_epi64(b);
        else if constexpr (sizeof(A) == 8) return sign ? _mm512_cvtepi16_epi64(b) : _mm512_cvtepu16_epi64(b);
        else return sign ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    } else {
        __m256i b;
        std::memcpy(&b, bytes, width);
        if constexpr (sizeof(A) == 8) return sign ? _mm512_cvtepi32_epi64(b) : _mm512_cvtepu32_epi64(b);
        else return sign ? _mm512_cvtepi16_epi32(b) : _mm512_cvtepu16_epi32(b);
    }
}

/// The columns of 64 / sizeof(T) rows (16 of 4 bytes, 8 of 8) of N elements one after another, held in N
/// vectors r (element e of the rows in lane e % rows of r[e / rows]): each column picked out of them by permutes
/// (fewer operations than the transpose for so few columns).
template <int N, class T>
MIXT_ALWAYS_INLINE void columns_of_short_rows(const __m512i (&r)[N], __m512i (&columns)[64 / sizeof(T)]) noexcept {
    constexpr int rows = 64 / sizeof(T);
    using index = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
    MIXT_UNROLLED
    for (int j = 0; j < N; ++j) {
        alignas(64) index element[rows]; // lane i: element j + N * i (a constant)
        MIXT_UNROLLED
        for (int i = 0; i < rows; ++i) element[i] = static_cast<index>(j + N * i);
        const __m512i at = _mm512_load_si512(element);
        // Vectors k and k + 1 (k even) hold elements [rows k, rows (k + 2)): a permute of the two takes the index
        // modulo 2 rows.
        __m512i c = detail::permute_pair<sizeof(T)>(r[0], at, r[1]);
        MIXT_UNROLLED
        for (int k = 2; k < N; k += 2) {
            __m512i picked;
            if (k + 1 < N)
                picked = detail::permute_pair<sizeof(T)>(r[k], at, r[k + 1]);
            else
                picked = detail::permute_one<sizeof(T)>(at, r[k]);
            c = detail::take_from<sizeof(T)>(at, rows * k, c, picked);
        }
        columns[j] = c;
    }
}

/// rows_as_columns of 64 / sizeof(T) rows of N elements one after another: N plain loads, then
/// columns_of_short_rows.
template <int N, class T>
MIXT_ALWAYS_INLINE void short_rows_as_columns(const T* p, __m512i (&columns)[64 / sizeof(T)]) noexcept {
    constexpr int rows = 64 / sizeof(T);
    __m512i r[N];
    MIXT_UNROLLED
    for (int k = 0; k < N; ++k) r[k] = _mm512_loadu_si512(p + rows * k);
    columns_of_short_rows<N, T>(r, columns);
}

/// 64 / sizeof(T) rows (16 of a 4-byte type, 8 of an 8-byte one) of `count` (at most that many) elements, row i at
/// p + i * stride, as columns: lane i of columns[j] is p[i * stride + j] for j < count (the other columns are left
/// undefined). Each row is one load, then a transpose in registers (detail::transpose_rows: unpacks within 128-bit
/// blocks, then two rounds of block shuffles); nothing past the last row's end is read, and the memory between the
/// rows must be readable (rows of one array). Rows of 2-6 4-byte
/// elements or 2-4 8-byte ones one after another take short_rows_as_columns instead.
template <class T>
    requires(sizeof(T) == 4 || sizeof(T) == 8)
MIXT_ALWAYS_INLINE void rows_as_columns(const T* p, std::ptrdiff_t stride, int count, __m512i (&columns)[64 / sizeof(T)]) noexcept {
    if (count == 1 && stride == 1) { // one value per row, the rows one after another: one load
        columns[0] = _mm512_loadu_si512(p);
        return;
    }
    if (stride == count && count <= (sizeof(T) == 4 ? 6 : 4)) {
        switch (count) {
        case 2: return short_rows_as_columns<2>(p, columns);
        case 3: return short_rows_as_columns<3>(p, columns);
        case 4: return short_rows_as_columns<4>(p, columns);
        default:
            if constexpr (sizeof(T) == 4) {
                if (count == 5) return short_rows_as_columns<5>(p, columns);
                return short_rows_as_columns<6>(p, columns);
            }
            break; // none (rows of one 8-byte value are one load): the transpose below holds any count
        }
    }
    detail::transpose_rows(p, stride, count, columns);
}

/// Lanes 8H to 8H + 7 of 16 signed 32-bit integers, sign-extended to 64 bits (indices of rows side by side).
template <int H>
inline __m512i widen_half_epi32(__m512i v) noexcept {
    return _mm512_cvtepi32_epi64(H == 0 ? _mm512_castsi512_si256(v) : _mm512_extracti64x4_epi64(v, H));
}

#if defined(MIXT_WIDE_DIAGNOSTICS_PUSHED)
#pragma GCC diagnostic pop
#undef MIXT_WIDE_DIAGNOSTICS_PUSHED
#endif

#else

inline constexpr int lanes = 16;
template <class T>
inline constexpr bool has_batch_v = false;
template <class T>
inline constexpr std::size_t stream_alignment = 0;
inline constexpr std::size_t stream_group_alignment = 64;
template <class To, class From>
inline constexpr bool convertible_v = false;
template <class R, class Fn, class... Ts>
inline constexpr bool supported_v = false;
#if MIXT_SIMD_AVX2_WORDS
// The words of AVX2 builds without AVX-512 (MIXT_SIMD_AVX2_WORDS): the same operations as the 32-lane ones above, on
// 16 lanes of 16 bits in one AVX2 register, so the same bits.
namespace detail {
namespace fn = ::mixt::detail;
} // namespace detail

inline constexpr int word_lanes = 16;
using words = __m256i;

/// Loads 16 contiguous elements, each into a 16-bit lane (no alignment needed): bytes widened from memory.
template <class T>
    requires has_words_v<T>
__m256i load_words(const T* p) noexcept {
    if constexpr (std::is_same_v<T, std::uint8_t>)
        return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    else if constexpr (std::is_same_v<T, std::int8_t>)
        return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    else
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// All 16 lanes equal to x.
template <class T>
    requires has_words_v<T>
__m256i broadcast_words(T x) noexcept {
    return _mm256_set1_epi16(static_cast<short>(x));
}

/// fn on every lane (see word_supported_v).
template <class Fn>
    requires detail::is_word_op_v<Fn>
__m256i apply_words(const Fn&, __m256i a, __m256i b) noexcept {
    if constexpr (std::is_same_v<Fn, detail::fn::add_fn>) return _mm256_add_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::sub_fn>) return _mm256_sub_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::mul_fn>) return _mm256_mullo_epi16(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::bit_and_fn>) return _mm256_and_si256(a, b);
    else if constexpr (std::is_same_v<Fn, detail::fn::bit_or_fn>) return _mm256_or_si256(a, b);
    else return _mm256_xor_si256(a, b);
}

/// Stores 16 elements of u16 or i16 (no alignment needed).
template <class T>
    requires detail::is_word_v<T>
void store_words(T* p, __m256i v) noexcept {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

/// store_words with a streaming (non-temporal) store: p must be aligned to 32 bytes.
template <class T>
    requires detail::is_word_v<T>
void stream_store_words(T* p, __m256i v) noexcept {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
}
#else
inline constexpr int word_lanes = 32;
#endif

#endif // MIXT_SIMD_AVX512

} // namespace mixt::simd::wide

#endif // MIXT_SIMD_WIDE_HPP
