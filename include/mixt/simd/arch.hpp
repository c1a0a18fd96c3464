#ifndef MIXT_SIMD_ARCH_HPP
#define MIXT_SIMD_ARCH_HPP

// Which implementation of mixt::simd this translation unit gets, decided once from the compiler's target
// flags: MIXT_SIMD_AVX2 is 1 for AVX2 builds (-mavx2, -march=x86-64-v3, -march=native on Haswell or
// later; AVX-512 builds use the same code), else 0 (SSE2-only x86-64, ARM, ...: portable scalar loops).
// MIXT_SIMD_F16C is 1 when F16C's half <-> float instructions may be used as well.
//
// Define MIXT_SIMD_NO_AVX2 to get the portable batches in an AVX2 build. As with Eigen's own vectorization
// switches, every translation unit of a program must see the same setting: the batch layouts differ.
//
//   #if MIXT_SIMD_AVX2
//   static_assert(sizeof(mixt::simd::batch<std::int8_t>) == 32);  // one __m256i of 8 x 32-bit lanes
//   #endif

#if defined(__AVX2__) && !defined(MIXT_SIMD_NO_AVX2)
#define MIXT_SIMD_AVX2 1
#else
#define MIXT_SIMD_AVX2 0
#endif

#if MIXT_SIMD_AVX2 && defined(__F16C__)
#define MIXT_SIMD_F16C 1
#else
#define MIXT_SIMD_F16C 0
#endif

// MIXT_SIMD_AVX512 is 1 where the AVX2 batches are on and the target has AVX-512 F, BW, DQ and VL (x86-64-v4,
// or -march=native on a CPU that has them): the fused loop then runs 16-lane batches (mixt/simd/wide.hpp)
// for the expressions they cover. Define MIXT_SIMD_NO_AVX512 to keep to the 8-lane batches.
#if MIXT_SIMD_AVX2 && MIXT_SIMD_F16C && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__) && !defined(MIXT_SIMD_NO_AVX512)
#define MIXT_SIMD_AVX512 1
#else
#define MIXT_SIMD_AVX512 0
#endif

// MIXT_SIMD_AVX512BF16 is 1 where the 16-lane batches are on and the target has AVX512-BF16: f32 -> bf16 rounding
// then uses the CPU's vcvtneps2bf16, with the lanes it gets wrong (subnormal inputs, which it reads as zero) redone
// in integer arithmetic, so the bits stay those of mixt::convert. Define MIXT_SIMD_NO_AVX512BF16 to keep to the
// integer rounding.
#if MIXT_SIMD_AVX512 && defined(__AVX512BF16__) && !defined(MIXT_SIMD_NO_AVX512BF16)
#define MIXT_SIMD_AVX512BF16 1
#else
#define MIXT_SIMD_AVX512BF16 0
#endif

// MIXT_SIMD_AVX512VBMI is 1 where the 16-lane batches are on and the target has AVX512-VBMI (byte permutes): a u8
// leaf's four batches of a block of 64 are then one load (simd::wide::load_quarter). Define MIXT_SIMD_NO_AVX512VBMI
// to load each batch on its own.
#if MIXT_SIMD_AVX512 && defined(__AVX512VBMI__) && !defined(MIXT_SIMD_NO_AVX512VBMI)
#define MIXT_SIMD_AVX512VBMI 1
#else
#define MIXT_SIMD_AVX512VBMI 0
#endif

// MIXT_SIMD_BLEND_BF16 is 1 in AVX2 builds for AMD's Zen 3 (-march=znver3, or -march=native on one: the compilers
// define __znver3__): the 8-lane f32 -> bf16 rounding then makes a NaN's lane with one variable blend, a single
// instruction on that CPU (simd/batch.hpp, bf16x8_rounded; measured: docs/performance-notes.md, "bf16 results in
// pairs"). Elsewhere a variable blend is several uops (Intel) or not measured, and the rounding keeps to ands and ors. Per element, so decided by the build's target,
// not at run time. Define MIXT_SIMD_NO_BLEND_BF16 to keep to the ands and ors.
#if MIXT_SIMD_AVX2 && defined(__znver3__) && !defined(MIXT_SIMD_NO_BLEND_BF16)
#define MIXT_SIMD_BLEND_BF16 1
#else
#define MIXT_SIMD_BLEND_BF16 0
#endif

// MIXT_SIMD_AVX2_WORDS is 1 in AVX2 builds without AVX-512 for AMD's Zen 3 (the compilers' __znver3__): the fused
// loop then runs u16 and i16 results whose every node has a version on 16-bit lanes (`u8 + i8`) 16 lanes of 16 bits
// at a time (simd::wide's words in AVX2 registers, simd/wide.hpp), each byte leaf widened straight from memory, as
// AVX-512 builds do at 32 lanes (measured: docs/performance-notes.md, "A CPU of family 19h without AVX-512");
// elsewhere, where it is not measured, they take the compiler's vectorization of the block loop. Define MIXT_SIMD_NO_AVX2_WORDS to keep to the block loop, or MIXT_SIMD_AVX2_WORDS=1 to take the
// words in any AVX2 build without AVX-512 (the tests do, so that every CI machine runs them).
#if !defined(MIXT_SIMD_AVX2_WORDS)
#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && defined(__znver3__) && !defined(__CUDACC__) && !defined(MIXT_SIMD_NO_AVX2_WORDS)
#define MIXT_SIMD_AVX2_WORDS 1
#else
#define MIXT_SIMD_AVX2_WORDS 0
#endif
#elif MIXT_SIMD_AVX2_WORDS && (!MIXT_SIMD_AVX2 || MIXT_SIMD_AVX512 || defined(__CUDACC__))
#undef MIXT_SIMD_AVX2_WORDS
#define MIXT_SIMD_AVX2_WORDS 0
#endif

// MIXT_SIMD_AVX512FP16 is 1 where the 16-lane batches are on and the target has AVX512-FP16: the f16 products of a
// reduction's rows are then made 32 at a time in f16 arithmetic (mixt/simd/halves.hpp), the same bits as through f32;
// not in code nvcc compiles. Define MIXT_SIMD_NO_AVX512FP16 to keep to f32 lanes.
#if MIXT_SIMD_AVX512 && defined(__AVX512FP16__) && !defined(__CUDACC__) && !defined(MIXT_SIMD_NO_AVX512FP16)
#define MIXT_SIMD_AVX512FP16 1
#else
#define MIXT_SIMD_AVX512FP16 0
#endif

// MIXT_COLD marks a function that runs rarely (the complex product's scalar fallback, simd/ops_avx2.hpp; a
// comparison with a literal that does not fit, and the error paths of the checks before a write): never
// inlined and laid out away from the hot code, so that the code calling it stays small.
// MIXT_NOINLINE marks a helper that every expression type calls with the same arguments (the strided copies
// of eval/strided.hpp): one out-of-line copy per translation unit instead of one inlined into every pass.
// MIXT_FLATTEN marks the fused loop (eval/fused.hpp, run_range_of): everything it calls is inlined into it, down
// to the intrinsics, except what is MIXT_COLD, whatever the compiler's heuristics make of the rest of the
// translation unit: left to them, GCC's inlining of the kernels into the loop changed with unrelated code of
// the same translation unit (docs/performance-notes.md, "Fused loop: measurements behind the code"). It also
// starts on a 64-byte boundary, so that where its loop falls in the fetch blocks does not move with whatever code
// the linker put before it (docs/performance-notes.md, "The plan's cost on the flat path"). Under GCC the loop is also
// compiled with -ffp-contract=off whatever the translation unit's flags: each node of an expression rounds once,
// and GCC's default (-ffp-contract=fast outside strict ISO modes, i.e. for -std=gnu++20, CMake's default) would
// fuse a product with the sum that consumes it into one multiply-add, in the vectorized loop as in the scalar
// one. Clang's default contracts within one source expression only, which the loop's code never writes. And
// under GCC its loops over a fixed count of registers are unrolled whole at -O2 as at -O3 (-fpeel-loops, which
// -O3 turns on): left as loops, their arrays of vectors go through the stack. The reductions' loops over short
// rows are MIXT_FLATTEN for the same reasons (eval/reduce_rows.hpp). (GCC never inlines a function whose
// optimization options differ from its caller's: each MIXT_FLATTEN function stays one call, made once per range,
// run or batch of rows.)
// MIXT_ALWAYS_INLINE marks a small function of the per-call plan that must not stay a call (eval/plan.hpp,
// decide_pass, says why), the kernel's construction (eval/kernel.hpp, eval/fused.hpp: make_kernel_tree,
// cpu_binder), whose trees would otherwise be returned through memory on every call, and the transposes in
// registers (simd/wide.hpp, rows_as_columns), whose arrays of vectors would otherwise be passed through memory.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define MIXT_COLD __attribute__((cold, noinline))
#define MIXT_NOINLINE __attribute__((noinline))
#define MIXT_FLATTEN __attribute__((flatten, aligned(64), optimize("fp-contract=off", "peel-loops")))
#define MIXT_ALWAYS_INLINE __attribute__((always_inline)) inline
#elif defined(__GNUC__)
#define MIXT_COLD __attribute__((cold, noinline))
#define MIXT_NOINLINE __attribute__((noinline))
#define MIXT_FLATTEN __attribute__((flatten, aligned(64)))
#define MIXT_ALWAYS_INLINE __attribute__((always_inline)) inline
#elif defined(_MSC_VER)
#define MIXT_COLD __declspec(noinline)
#define MIXT_NOINLINE __declspec(noinline)
#define MIXT_FLATTEN
#define MIXT_ALWAYS_INLINE __forceinline
#else
#define MIXT_COLD
#define MIXT_NOINLINE
#define MIXT_FLATTEN
#define MIXT_ALWAYS_INLINE inline
#endif

// MIXT_UNROLLED: the next loop, over a fixed count of registers, unrolled whole, so that its arrays of vectors live
// in registers at -O2 as at -O3 (GCC unrolls such loops whole only at -O3, and left as loops their arrays go
// through the stack: docs/performance-notes.md, "Loops over registers at -O2").
#if defined(__GNUC__) && !defined(__CUDACC__)
#define MIXT_UNROLLED _Pragma("GCC unroll 16")
#else
#define MIXT_UNROLLED
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#include <cstring>
#endif

namespace mixt::simd {

/// Whether batches are AVX2 registers (true) or arrays converted lane by lane (false).
inline constexpr bool avx2 = MIXT_SIMD_AVX2 != 0;

/// Whether the fused loop has 16-lane AVX-512 batches (mixt/simd/wide.hpp) besides the 8-lane ones.
inline constexpr bool avx512 = MIXT_SIMD_AVX512 != 0;

/// Whether the CPU running the program is an AMD one (CPUID's vendor string "AuthenticAMD"); false where the
/// compiler offers no CPUID (and off x86). Cold: asked once per program (running_on_amd keeps the answer), so that
/// the code asking stays small enough to inline into every pass's plan.
MIXT_COLD inline bool cpu_is_amd() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
    char vendor[12];
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    return std::memcmp(vendor, "AuthenticAMD", 12) == 0;
#else
    return false;
#endif
}

/// cpu_is_amd, asked once per program: what the per-family rules (software_prefetch_pays,
/// division_by_reciprocal_pays, long_rows_transposed) are decided from.
inline bool running_on_amd() noexcept {
    static const bool amd = cpu_is_amd();
    return amd;
}

/// The CPUID family of the CPU running the program where it is an AMD one (0x17: Zen and Zen 2, 0x19: Zen 3 and
/// Zen 4, 0x1a: Zen 5), else 0. Cold, as cpu_is_amd.
MIXT_COLD inline unsigned cpu_amd_family() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!running_on_amd() || __get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return 0;
    const unsigned base = (eax >> 8) & 0xf;
    return base == 0xf ? base + ((eax >> 20) & 0xff) : base;
#else
    return 0;
#endif
}

/// cpu_amd_family, asked once per program: what the rules measured on one AMD family only (short_rows_transposed,
/// eval/reduce_rows.hpp) are decided from.
inline unsigned running_amd_family() noexcept {
    static const unsigned family = cpu_amd_family();
    return family;
}

} // namespace mixt::simd

#endif // MIXT_SIMD_ARCH_HPP
