// E9-E12 of the suite (bench/suite.hpp says what each member is for).
#include "suite.hpp"

namespace mixt_suite {
namespace {

// The branches join to f32 (f16 and bf16 have no common 16-bit type); the condition is a bool per element.
struct e9 {
    static constexpr const char* id = "E9";
    static constexpr const char* text = "where(f32 > 0, f16, bf16)";
    using inputs = std::tuple<float, f16, bf16>;
    using result = float;
    struct temps {
        tensor<bool> positive;
        tensor<float> b, c;
    };
    static auto expression(const vec<float>& a, const vec<f16>& b, const vec<bf16>& c) {
        return mixt::where(mixt::lazy(a) > 0, b, c);
    }
    static void hand_loop(index_t n, float* r, const float* a, const f16* b, const bf16* c) {
        for (index_t i = 0; i < n; ++i) r[i] = a[i] > 0.0f ? static_cast<float>(b[i]) : static_cast<float>(c[i]);
    }
    static void eigen_cast(vec<float>& r, const vec<float>& a, const vec<f16>& b, const vec<bf16>& c) {
        r = (a > 0.0f).select(b.cast<float>(), c.cast<float>());
    }
    static void eigen_unfused(temps& t, vec<float>& r, const vec<float>& a, const vec<f16>& b, const vec<bf16>& c) {
        t.positive = a > 0.0f;
        t.b = b.cast<float>();
        t.c = c.cast<float>();
        r = t.positive.select(t.b, t.c);
    }
};

// exp(f16) is f16 (computed in f32, rounded); times bf16 the join is f32.
struct e10 {
    static constexpr const char* id = "E10";
    static constexpr const char* text = "exp(f16) * bf16";
    using inputs = std::tuple<f16, bf16>;
    using result = float;
    struct temps {
        tensor<f16> exp_a;
        tensor<float> exp_a32, b;
    };
    static auto expression(const vec<f16>& a, const vec<bf16>& b) { return mixt::exp(mixt::lazy(a)) * b; }
    static void hand_loop(index_t n, float* r, const f16* a, const bf16* b) {
        for (index_t i = 0; i < n; ++i) {
            const f16 exp_a = static_cast<f16>(std::exp(static_cast<float>(a[i])));
            r[i] = static_cast<float>(exp_a) * static_cast<float>(b[i]);
        }
    }
    static void eigen_cast(vec<float>& r, const vec<f16>& a, const vec<bf16>& b) {
        r = a.exp().cast<float>() * b.cast<float>();
    }
#if (MIXT_SIMD_AVX512 || (MIXT_SIMD_AVX2 && MIXT_SIMD_F16C)) && defined(EIGEN_VECTORIZE_AVX)
    // Only the work (issue 43's compute floor), in the batches of mixt's loop (16 lanes with AVX-512, else 8): the
    // f16 widened (vcvtph2ps), mixt's exp of a half node (simd/wide.hpp: clamp, vrndscaleps, the polynomial's 7 FMAs
    // and 2 for the reduction, vscalefps, the rounding to f16 and back with its test for lanes near a rounding
    // boundary; simd/ops_avx2.hpp: the same steps, vscalefps's work done by a shift into the exponent), the bf16
    // widened, the product, a store (streamed where mixt streams); no plan.
    static void compute_floor(index_t n, float* r, const f16* a, const bf16* b) {
#if MIXT_SIMD_AVX512
        namespace s = mixt::simd::wide;
        const auto exp_of = [](const auto& x) { return s::detail::vectorized<f16, mixt::detail::exp_fn, f16>::apply<true>(x); };
#else
        namespace s = mixt::simd;
        const auto exp_of = [](const auto& x) {
            return s::detail::vectorized<f16, mixt::detail::exp_fn, f16>::apply<true>(mixt::detail::exp_fn{}, x);
        };
#endif
        constexpr index_t width = s::lanes;
        const bool stream = mixt::detail::use_streaming(n, 8) && reinterpret_cast<std::uintptr_t>(r) % (4 * width) == 0;
        index_t i = 0;
        for (; i + width <= n; i += width) {
            const s::batch<float> v{exp_of(s::load(a + i)).v * s::load(b + i).v};
            if (stream)
                s::stream_store(r + i, v);
            else
                s::store(r + i, v);
        }
        hand_loop(n - i, r + i, a + i, b + i);
        if (stream) _mm_sfence();
    }
#endif
    static void eigen_unfused(temps& t, vec<float>& r, const vec<f16>& a, const vec<bf16>& b) {
        t.exp_a = a.exp();
        t.exp_a32 = t.exp_a.cast<float>();
        t.b = b.cast<float>();
        r = t.exp_a32 * t.b;
    }
};

// c64 * f32 is c64 (the f32 operand becomes a complex with zero imaginary part), then + c128 is c128. The hand
// loop multiplies by the real number directly: the same values for finite inputs, and what one writes by hand.
struct e11 {
    static constexpr const char* id = "E11";
    static constexpr const char* text = "c64 * f32 + c128";
    using inputs = std::tuple<c64, float, c128>;
    using result = c128;
    struct temps {
        tensor<c64> b, ab;
        tensor<c128> ab128;
    };
    static auto expression(const vec<c64>& a, const vec<float>& b, const vec<c128>& c) {
        return mixt::lazy(a) * b + c;
    }
    static void hand_loop(index_t n, c128* r, const c64* a, const float* b, const c128* c) {
        for (index_t i = 0; i < n; ++i) {
            const c64 ab = a[i] * b[i];
            r[i] = static_cast<c128>(ab) + c[i];
        }
    }
    static void eigen_cast(vec<c128>& r, const vec<c64>& a, const vec<float>& b, const vec<c128>& c) {
        r = (a * b.cast<c64>()).cast<c128>() + c;
    }
    static void eigen_unfused(temps& t, vec<c128>& r, const vec<c64>& a, const vec<float>& b, const vec<c128>& c) {
        t.b = b.cast<c64>();
        t.ab = a * t.b;
        t.ab128 = t.ab.cast<c128>();
        r = t.ab128 + c;
    }
};

struct e12 {
    static constexpr const char* id = "E12";
    static constexpr const char* text = "i64 + u32";
    using inputs = std::tuple<i64, u32>;
    using result = i64;
    struct temps {
        tensor<i64> b;
    };
    static auto expression(const vec<i64>& a, const vec<u32>& b) { return mixt::lazy(a) + b; }
    static void hand_loop(index_t n, i64* r, const i64* a, const u32* b) {
        for (index_t i = 0; i < n; ++i) r[i] = a[i] + static_cast<i64>(b[i]);
    }
    static void eigen_cast(vec<i64>& r, const vec<i64>& a, const vec<u32>& b) { r = a + b.cast<i64>(); }
    static void eigen_unfused(temps& t, vec<i64>& r, const vec<i64>& a, const vec<u32>& b) {
        t.b = b.cast<i64>();
        r = a + t.b;
    }
};

} // namespace

bool group_3(action a, index_t n) { return run_group<e9, e10, e11, e12>(a, n); }

} // namespace mixt_suite
