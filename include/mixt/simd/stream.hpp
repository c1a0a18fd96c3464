#ifndef MIXT_SIMD_STREAM_HPP
#define MIXT_SIMD_STREAM_HPP

// Streaming (non-temporal) stores: writes that go to memory without first reading the destination's cache
// lines into the cache (the "read for ownership" an ordinary store pays) and without evicting the data the
// loop is reading. For a pass over arrays much larger than the caches this removes a third or more of the
// memory traffic of a fused loop (E1 `i8 + f32` moves 9 bytes per element, 13 with the read for ownership).
// The fused loop uses them above a size (eval/fused.hpp): its batch loop with simd::stream_store, straight from
// the registers (mixt/simd/batch.hpp), its block loop through a buffer with stream_copy.
//
//   alignas(64) float block[256];                     // computed in the cache ...
//   mixt::simd::stream_copy(dst, block, sizeof block); // ... then written around it (dst 64-byte aligned)
//   mixt::simd::stream_fence();                        // before another thread may read dst

#include <cstddef>
#include <cstring>

#include "mixt/simd/arch.hpp"

// SSE2's stores need only <emmintrin.h>, which Eigen includes anyway: <immintrin.h> costs an SSE2-only
// translation unit 0.3-0.4 s of g++'s time (docs/performance-notes.md, "Include cost of the policies").
#if MIXT_SIMD_AVX2
#define MIXT_SIMD_STREAM 1
#include <immintrin.h>
#elif defined(__SSE2__)
#define MIXT_SIMD_STREAM 1
#include <emmintrin.h>
#else
#define MIXT_SIMD_STREAM 0
#endif

namespace mixt::simd {

/// Whether stream_copy really bypasses the cache on this target (x86-64: AVX or SSE2 stores; else it is
/// std::memcpy, and the fused loop never streams).
inline constexpr bool streaming_stores = MIXT_SIMD_STREAM != 0;

/// The alignment stream_copy needs of its destination, and the granule of its size: one cache line.
inline constexpr std::size_t stream_alignment = 64;

/// Copies `bytes` (a multiple of stream_alignment) from `src` to `dst` (aligned to stream_alignment) with
/// non-temporal stores. The stores are weakly ordered: call stream_fence() before the data is published.
inline void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept {
#if MIXT_SIMD_AVX2
    auto* d = static_cast<__m256i*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t i = 0; i < bytes / sizeof(__m256i); ++i)
        _mm256_stream_si256(d + i, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i * sizeof(__m256i))));
#elif MIXT_SIMD_STREAM
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t i = 0; i < bytes / sizeof(__m128i); ++i)
        _mm_stream_si128(d + i, _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * sizeof(__m128i))));
#else
    std::memcpy(dst, src, bytes);
#endif
}

/// Orders the streaming stores before every later store (what a thread does before it signals completion).
inline void stream_fence() noexcept {
#if MIXT_SIMD_STREAM
    _mm_sfence();
#endif
}

} // namespace mixt::simd

#endif // MIXT_SIMD_STREAM_HPP
