// E13-E14 of the suite (bench/suite.hpp says what each member is for): explicit conversions to the 16-bit
// floats, which a user writes to quantize or to feed a half-precision kernel.
#include "suite.hpp"

namespace mixt_suite {
namespace {

// f32 -> bf16, rounded to nearest even (NaN kept NaN, subnormals rounded, as mixt::convert). The inputs are
// normal numbers, where Eigen's conversion rounds the same way.
struct e13 {
    static constexpr const char* id = "E13";
    static constexpr const char* text = "cast<bf16>(f32)";
    using inputs = std::tuple<float>;
    using result = bf16;
    struct temps {};
    static auto expression(const vec<float>& a) { return mixt::cast<bf16>(mixt::lazy(a)); }
    static void hand_loop(index_t n, bf16* r, const float* a) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<bf16>(a[i]);
    }
    static void eigen_cast(vec<bf16>& r, const vec<float>& a) { r = a.cast<bf16>(); }
    static void eigen_unfused(temps&, vec<bf16>& r, const vec<float>& a) { r = a.cast<bf16>(); }
};

// i8 -> f16: every int8 value is an f16, so the conversion rounds nothing.
struct e14 {
    static constexpr const char* id = "E14";
    static constexpr const char* text = "cast<f16>(i8)";
    using inputs = std::tuple<i8>;
    using result = f16;
    struct temps {};
    static auto expression(const vec<i8>& a) { return mixt::cast<f16>(mixt::lazy(a)); }
    static void hand_loop(index_t n, f16* r, const i8* a) {
        for (index_t i = 0; i < n; ++i) r[i] = static_cast<f16>(static_cast<float>(a[i]));
    }
    static void eigen_cast(vec<f16>& r, const vec<i8>& a) { r = a.cast<f16>(); }
    static void eigen_unfused(temps&, vec<f16>& r, const vec<i8>& a) { r = a.cast<f16>(); }
};

} // namespace

bool group_4(action a, index_t n) { return run_group<e13, e14>(a, n); }

} // namespace mixt_suite
