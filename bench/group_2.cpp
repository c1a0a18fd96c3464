// E5-E8 of the suite (bench/suite.hpp says what each member is for).
#include "suite.hpp"

namespace mixt_suite {
namespace {

// f16 + f16 is f16, computed in f32 and rounded. Eigen adds half tensors directly, so eigen_cast and
// eigen_unfused are the same code: there is no cast to materialize.
struct e5 {
    static constexpr const char* id = "E5";
    static constexpr const char* text = "f16 + f16";
    using inputs = std::tuple<f16, f16>;
    using result = f16;
    struct temps {};
    static auto expression(const vec<f16>& a, const vec<f16>& b) { return mixt::lazy(a) + b; }
    static void hand_loop(index_t n, f16* r, const f16* a, const f16* b) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<f16>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
    }
    static void eigen_cast(vec<f16>& r, const vec<f16>& a, const vec<f16>& b) { r = a + b; }
    static void eigen_unfused(temps&, vec<f16>& r, const vec<f16>& a, const vec<f16>& b) { r = a + b; }
};

struct e6 {
    static constexpr const char* id = "E6";
    static constexpr const char* text = "i32 + f64";
    using inputs = std::tuple<i32, double>;
    using result = double;
    struct temps {
        tensor<double> a;
    };
    static auto expression(const vec<i32>& a, const vec<double>& b) { return mixt::lazy(a) + b; }
    static void hand_loop(index_t n, double* r, const i32* a, const double* b) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<double>(a[i]) + b[i];
    }
    static void eigen_cast(vec<double>& r, const vec<i32>& a, const vec<double>& b) { r = a.cast<double>() + b; }
    static void eigen_unfused(temps& t, vec<double>& r, const vec<i32>& a, const vec<double>& b) {
        t.a = a.cast<double>();
        r = t.a + b;
    }
};

// The weak literal 0.5 takes the array's dtype: f32 * 0.5 is f32.
struct e7 {
    static constexpr const char* id = "E7";
    static constexpr const char* text = "f32 * 0.5 + i16";
    using inputs = std::tuple<float, i16>;
    using result = float;
    struct temps {
        tensor<float> half_a, c;
    };
    static auto expression(const vec<float>& a, const vec<i16>& c) { return mixt::lazy(a) * 0.5 + c; }
    static void hand_loop(index_t n, float* r, const float* a, const i16* c) {
        for (index_t i = 0; i < n; ++i) {
            const float half_a = a[i] * 0.5f;
            r[i] = half_a + static_cast<float>(c[i]);
        }
    }
    static void eigen_cast(vec<float>& r, const vec<float>& a, const vec<i16>& c) { r = a * 0.5f + c.cast<float>(); }
    static void eigen_unfused(temps& t, vec<float>& r, const vec<float>& a, const vec<i16>& c) {
        t.half_a = a * 0.5f;
        t.c = c.cast<float>();
        r = t.half_a + t.c;
    }
};

struct e8 {
    static constexpr const char* id = "E8";
    static constexpr const char* text = "u8 + i8";
    using inputs = std::tuple<u8, i8>;
    using result = i16;
    struct temps {
        tensor<i16> a, b;
    };
    static auto expression(const vec<u8>& a, const vec<i8>& b) { return mixt::lazy(a) + b; }
    static void hand_loop(index_t n, i16* r, const u8* a, const i8* b) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<i16>(static_cast<i16>(a[i]) + static_cast<i16>(b[i]));
    }
    static void eigen_cast(vec<i16>& r, const vec<u8>& a, const vec<i8>& b) { r = a.cast<i16>() + b.cast<i16>(); }
    static void eigen_unfused(temps& t, vec<i16>& r, const vec<u8>& a, const vec<i8>& b) {
        t.a = a.cast<i16>();
        t.b = b.cast<i16>();
        r = t.a + t.b;
    }
};

} // namespace

bool group_2(action a, index_t n) { return run_group<e5, e6, e7, e8>(a, n); }

} // namespace mixt_suite
