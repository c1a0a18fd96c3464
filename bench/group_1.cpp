// E1-E4 of the suite (bench/suite.hpp says what each member is for).
#include "suite.hpp"

namespace mixt_suite {
namespace {

struct e1 {
    static constexpr const char* id = "E1";
    static constexpr const char* text = "i8 + f32";
    using inputs = std::tuple<i8, float>;
    using result = float;
    struct temps {
        tensor<float> a;
    };
    static auto expression(const vec<i8>& a, const vec<float>& b) { return mixt::lazy(a) + b; }
    static void hand_loop(index_t n, float* r, const i8* a, const float* b) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<float>(a[i]) + b[i];
    }
    static void eigen_cast(vec<float>& r, const vec<i8>& a, const vec<float>& b) { r = a.cast<float>() + b; }
    static void eigen_unfused(temps& t, vec<float>& r, const vec<i8>& a, const vec<float>& b) {
        t.a = a.cast<float>();
        r = t.a + b;
    }
};

struct e2 {
    static constexpr const char* id = "E2";
    static constexpr const char* text = "u8 * f32 + f32";
    using inputs = std::tuple<u8, float, float>;
    using result = float;
    struct temps {
        tensor<float> a, ab;
    };
    static auto expression(const vec<u8>& a, const vec<float>& b, const vec<float>& c) {
        return mixt::lazy(a) * b + c;
    }
    static void hand_loop(index_t n, float* r, const u8* a, const float* b, const float* c) {
        for (index_t i = 0; i < n; ++i) {
            const float ab = static_cast<float>(a[i]) * b[i];
            r[i] = ab + c[i];
        }
    }
    static void eigen_cast(vec<float>& r, const vec<u8>& a, const vec<float>& b, const vec<float>& c) {
        r = a.cast<float>() * b + c;
    }
    static void eigen_unfused(temps& t, vec<float>& r, const vec<u8>& a, const vec<float>& b, const vec<float>& c) {
        t.a = a.cast<float>();
        t.ab = t.a * b;
        r = t.ab + c;
    }
};

struct e3 {
    static constexpr const char* id = "E3";
    static constexpr const char* text = "i8 + f16 * f32";
    using inputs = std::tuple<i8, f16, float>;
    using result = float;
    struct temps {
        tensor<float> b, bc, a;
    };
    static auto expression(const vec<i8>& a, const vec<f16>& b, const vec<float>& c) {
        return mixt::lazy(a) + mixt::lazy(b) * c;
    }
    static void hand_loop(index_t n, float* r, const i8* a, const f16* b, const float* c) {
        for (index_t i = 0; i < n; ++i) {
            const float bc = static_cast<float>(b[i]) * c[i];
            r[i] = static_cast<float>(a[i]) + bc;
        }
    }
    static void eigen_cast(vec<float>& r, const vec<i8>& a, const vec<f16>& b, const vec<float>& c) {
        r = a.cast<float>() + b.cast<float>() * c;
    }
    static void eigen_unfused(temps& t, vec<float>& r, const vec<i8>& a, const vec<f16>& b, const vec<float>& c) {
        t.b = b.cast<float>();
        t.bc = t.b * c;
        t.a = a.cast<float>();
        r = t.a + t.bc;
    }
};

// bf16 * bf16 is bf16: computed in f32, rounded to bf16, then converted to f32 for the sum.
struct e4 {
    static constexpr const char* id = "E4";
    static constexpr const char* text = "bf16 * bf16 + f32";
    using inputs = std::tuple<bf16, bf16, float>;
    using result = float;
    struct temps {
        tensor<bf16> ab;
        tensor<float> ab32;
    };
    static auto expression(const vec<bf16>& a, const vec<bf16>& b, const vec<float>& c) {
        return mixt::lazy(a) * b + c;
    }
    static void hand_loop(index_t n, float* r, const bf16* a, const bf16* b, const float* c) {
        for (index_t i = 0; i < n; ++i) {
            const bf16 ab = static_cast<bf16>(static_cast<float>(a[i]) * static_cast<float>(b[i]));
            r[i] = static_cast<float>(ab) + c[i];
        }
    }
    static void eigen_cast(vec<float>& r, const vec<bf16>& a, const vec<bf16>& b, const vec<float>& c) {
        r = (a * b).cast<float>() + c;
    }
#if MIXT_SIMD_AVX512
    // Only the work with mixt's bits (issue 43's compute floor), 16 elements at a time: both bf16 operands
    // widened (vpmovzxwd, vpslld), the product, rounded to bf16 in integer arithmetic as f32 bits (0x7fff added,
    // or 0x8000 where the bit that becomes bf16's last is set, the low half cleared: a product of bf16 values
    // that is NaN has a zero low half, which the addition leaves as it is), the sum and a 64-byte store. Eigen's
    // loop rounds with vcvtneps2bf16 instead, which reads a subnormal product as zero (wrong bits); the CPU's
    // conversion with a test for such a lane was slower than this (docs/performance-notes.md). Streamed stores
    // where mixt streams; no plan.
    static void compute_floor(index_t n, float* r, const bf16* a, const bf16* b, const float* c) {
        const bool stream = mixt::detail::use_streaming(n, 12) && reinterpret_cast<std::uintptr_t>(r) % 64 == 0;
        const auto widen = [](const bf16* p) {
            const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
        };
        const auto round_to_bf16 = [](__m512 x) {
            const __m512i bits = _mm512_castps_si512(x);
            const __m512i up = _mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff));
            const __m512i even = _mm512_mask_add_epi32(
                up, _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x10000)), bits, _mm512_set1_epi32(0x8000));
            return _mm512_castsi512_ps(_mm512_and_si512(even, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
        };
        index_t i = 0;
        for (; i + 16 <= n; i += 16) {
            const __m512 sum = _mm512_add_ps(round_to_bf16(_mm512_mul_ps(widen(a + i), widen(b + i))), _mm512_loadu_ps(c + i));
            if (stream)
                _mm512_stream_ps(r + i, sum);
            else
                _mm512_storeu_ps(r + i, sum);
        }
        hand_loop(n - i, r + i, a + i, b + i, c + i);
        if (stream) _mm_sfence();
    }
#endif
    static void eigen_unfused(temps& t, vec<float>& r, const vec<bf16>& a, const vec<bf16>& b, const vec<float>& c) {
        t.ab = a * b;
        t.ab32 = t.ab.cast<float>();
        r = t.ab32 + c;
    }
};

} // namespace

bool group_1(action a, index_t n) { return run_group<e1, e2, e3, e4>(a, n); }

} // namespace mixt_suite
