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
    static void eigen_unfused(temps& t, vec<float>& r, const vec<bf16>& a, const vec<bf16>& b, const vec<float>& c) {
        t.ab = a * b;
        t.ab32 = t.ab.cast<float>();
        r = t.ab32 + c;
    }
};

} // namespace

bool group_1(action a, index_t n) { return run_group<e1, e2, e3, e4>(a, n); }

} // namespace mixt_suite
