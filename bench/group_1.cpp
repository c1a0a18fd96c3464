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
#if MIXT_SIMD_AVX512BF16
    // Only the work with mixt's bits (issue 43's compute floor), 64 elements at a time: both bf16 operands
    // widened (vpmovzxwd, vpslld), the product, rounded to bf16 by the CPU's vcvtneps2bf16 and widened back, the
    // sum and a 64-byte store; one test per 4 batches for a ±0 lane in the rounded products (vptestnmw on two
    // batches at a time), the only sign of a subnormal product, which vcvtneps2bf16 reads as zero (such a group
    // is classified and, where one is subnormal, rounded in integer arithmetic). Eigen's loop is the same without
    // that test, and with wrong bits for subnormal products. Streamed stores where mixt streams; no plan.
    static void compute_floor(index_t n, float* r, const bf16* a, const bf16* b, const float* c) {
        const bool stream = mixt::detail::use_streaming(n, 12) && reinterpret_cast<std::uintptr_t>(r) % 64 == 0;
        const auto widen = [](__m256i bits) {
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
        };
        const auto load = [](const bf16* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
        index_t i = 0;
        for (; i + 64 <= n; i += 64) {
            __m512 product[4];
            __m256i rounded[4];
            for (int j = 0; j < 4; ++j) {
                product[j] = _mm512_mul_ps(widen(load(a + i + 16 * j)), widen(load(b + i + 16 * j)));
                rounded[j] = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(product[j]));
            }
            unsigned zero = 0;
            for (int j = 0; j < 4; j += 2)
                zero |= _mm512_testn_epi16_mask(_mm512_inserti64x4(_mm512_castsi256_si512(rounded[j]), rounded[j + 1], 1),
                                                _mm512_set1_epi16(0x7fff));
            if (__builtin_expect(zero != 0, 0)) {
                unsigned subnormal = 0;
                for (int j = 0; j < 4; ++j) subnormal |= _mm512_fpclass_ps_mask(product[j], 0x20); // 0x20: denormal
                if (subnormal != 0)
                    for (int j = 0; j < 4; ++j)
                        rounded[j] = mixt::simd::wide::detail::f32_to_bf16_by_integers(product[j]);
            }
            for (int j = 0; j < 4; ++j) {
                const __m512 sum = _mm512_add_ps(widen(rounded[j]), _mm512_loadu_ps(c + i + 16 * j));
                if (stream)
                    _mm512_stream_ps(r + i + 16 * j, sum);
                else
                    _mm512_storeu_ps(r + i + 16 * j, sum);
            }
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
