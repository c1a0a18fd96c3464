// Q1, Q2 and Q5 of the suite: the narrow floats in expressions (issue 41's rows; Q3 and Q4 wait for packed
// sub-byte storage), at fixed full sizes. The variants are those of B1-B6 (rows.hpp): mixt, mixt_threads,
// hand_loop (what a user writes by hand: a 256-entry table to decode, a scalar loop calling the type's
// constructor to encode), eigen_cast (Eigen 3.4's unaryExpr/binaryExpr with a scalar conversion functor:
// decode by static_cast<float>, encode by T(float)) and traffic (every input element read once, the result
// written once, no conversion). Every variant must produce mixt's bytes exactly (`bit_exact`).
#include "rows.hpp"

#include <array>
#include <cstdint>

namespace mixt_suite {
namespace {

using namespace rows;

using e4m3fn = mixt::float8_e4m3fn;
using e5m2 = mixt::float8_e5m2;

// The table a hand-written dequantizer indexes with each code.
template <class T>
std::array<float, 256> decode_table() {
    std::array<float, 256> t{};
    for (unsigned c = 0; c < 256; ++c) t[c] = static_cast<float>(T::from_bits(static_cast<std::uint8_t>(c)));
    return t;
}

// Eigen's functors: one conversion per call, as a user writes them for unaryExpr and binaryExpr.
template <class T>
struct decode {
    float operator()(T x) const { return static_cast<float>(x); }
};
template <class T>
struct encode {
    T operator()(float x) const { return T(x); }
};
template <class T>
struct multiply {
    T operator()(T x, T y) const { return T(static_cast<float>(x) * static_cast<float>(y)); }
};
template <class T>
struct add {
    T operator()(T x, T y) const { return T(static_cast<float>(x) + static_cast<float>(y)); }
};

// Q1: FP8 weights dequantized with a scale per row (as B3's [4096, 1] scale).
struct q1 {
    static constexpr const char* id = "Q1";
    static constexpr const char* text = "cast<f32>(W_f8_e4m3fn) * s_f32, [4096, 4096] * [4096, 1]";
    using result = float;
    static constexpr double eigen_tolerance = 0;
    static constexpr bool bit_exact = true;
    struct data {
        index_t n;
        row_major<e4m3fn, 2> w;
        row_major<float, 2> s;
        row_major<float, 2> out;
        std::array<float, 256> table = decode_table<e4m3fn>();
        explicit data(bool small) : n(small ? 45 : 4096), w(n, n), s(n, 1), out(n, n) {
            // Every code but the two NaNs (S.1111.111), subnormals included: weights as a quantizer leaves them.
            random_bits g{151};
            for (index_t i = 0; i < w.size(); ++i) {
                const auto c = static_cast<std::uint8_t>(g());
                w.data()[i] = e4m3fn::from_bits((c & 0x7f) == 0x7f ? static_cast<std::uint8_t>(c ^ 1) : c);
            }
            // Scales of the size amax / 448 gives for weights of magnitude around 1.
            for (index_t i = 0; i < n; ++i) s.data()[i] = (1.0f + std::abs(g.real())) * 0x1p-9f;
        }
        auto expression() const { return mixt::cast<float>(mixt::lazy(w)) * s; }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const e4m3fn* x = w.data() + i * n;
                float* r = out.data() + i * n;
                const float si = s.data()[i];
                for (index_t j = 0; j < n; ++j) r[j] = table[x[j].bits()] * si;
            }
        }
        void eigen_cast() { out = w.unaryExpr(decode<e4m3fn>{}) * s.broadcast(a2{1, n}); }
        void traffic() {
            benchmark::DoNotOptimize(read_all(s.data(), n));
            floor_run(out.data(), out.size(), w.data());
        }
        std::int64_t bytes() const { return w.size() * 1 + s.size() * 4 + out.size() * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// The floor of a pass that reads n floats and writes n bytes. floor_run's generic loop gathers a float leaf
// under a 1-byte result element by element (bench.hpp, leaf_words), slower than the memory it should
// measure; this one folds 128 bytes read into 32 bytes written with xors and streams them.
inline void floor_f32_to_bytes(e4m3fn* dst, index_t n, const float* src) {
#if MIXT_BENCH_VECTOR_FLOOR
    index_t i = 0;
    const auto fold = [&](index_t k) { dst[k] = e4m3fn::from_bits(bits_of<std::uint8_t>(src[k])); };
    for (; i < n && reinterpret_cast<std::uintptr_t>(dst + i) % 32 != 0; ++i) fold(i);
    for (; i + 32 <= n; i += 32) {
        const auto* p = reinterpret_cast<const __m256i*>(src + i);
        const __m256i w = _mm256_xor_si256(_mm256_xor_si256(_mm256_loadu_si256(p), _mm256_loadu_si256(p + 1)),
                                           _mm256_xor_si256(_mm256_loadu_si256(p + 2), _mm256_loadu_si256(p + 3)));
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), w);
    }
    for (; i < n; ++i) fold(i);
    mixt::simd::stream_fence();
#else
    floor_run(dst, n, src);
#endif
}

// Q2: activations quantized to FP8 with a per-tensor scale, written as a user writes it (a float variable:
// weak, so the product is f32).
struct q2 {
    static constexpr const char* id = "Q2";
    static constexpr const char* text = "cast<f8_e4m3fn>(x_f32 * inv_scale), 16M";
    using result = e4m3fn;
    static constexpr double eigen_tolerance = 0;
    static constexpr bool bit_exact = true;
    struct data {
        row_major<float, 1> x;
        row_major<e4m3fn, 1> out;
        // 448 / amax for x in [-4, 4): every product in e4m3fn's range, its subnormals included.
        float inv_scale = 112.0f;
        explicit data(bool small) : x(small ? 1003 : 16777216), out(x.size()) { fill<float>(x, 161); }
        auto expression() const { return mixt::cast<e4m3fn>(mixt::lazy(x) * inv_scale); }
        void hand_loop() {
            const index_t n = x.size();
            const float* a = x.data();
            e4m3fn* r = out.data();
            for (index_t i = 0; i < n; ++i) r[i] = e4m3fn(a[i] * inv_scale);
        }
        void eigen_cast() { out = (x * inv_scale).unaryExpr(encode<e4m3fn>{}); }
        void traffic() { floor_f32_to_bytes(out.data(), out.size(), x.data()); }
        std::int64_t bytes() const { return x.size() * 4 + out.size() * 1; }
        const e4m3fn* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// Q5: arithmetic on FP8 e5m2, each operation computed in f32 and rounded once to e5m2 (the product too).
struct q5 {
    static constexpr const char* id = "Q5";
    static constexpr const char* text = "a_f8_e5m2 * b_f8_e5m2 + c_f8_e5m2, 16M";
    using result = e5m2;
    static constexpr double eigen_tolerance = 0;
    static constexpr bool bit_exact = true;
    struct data {
        row_major<e5m2, 1> a, b, c;
        row_major<e5m2, 1> out;
        std::array<float, 256> table = decode_table<e5m2>();
        explicit data(bool small) : a(small ? 1003 : 16777216), b(a.size()), c(a.size()), out(a.size()) {
            fill<e5m2>(a, 171);
            fill<e5m2>(b, 172);
            fill<e5m2>(c, 173);
        }
        auto expression() const { return mixt::lazy(a) * b + c; }
        void hand_loop() {
            const index_t n = a.size();
            const e5m2* x = a.data();
            const e5m2* y = b.data();
            const e5m2* z = c.data();
            e5m2* r = out.data();
            for (index_t i = 0; i < n; ++i) {
                const e5m2 p(table[x[i].bits()] * table[y[i].bits()]);
                r[i] = e5m2(table[p.bits()] + table[z[i].bits()]);
            }
        }
        void eigen_cast() { out = a.binaryExpr(b, multiply<e5m2>{}).binaryExpr(c, add<e5m2>{}); }
        void traffic() { floor_run(out.data(), out.size(), a.data(), b.data(), c.data()); }
        std::int64_t bytes() const { return a.size() * 3 + out.size() * 1; }
        const e5m2* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

} // namespace

bool narrow(action a, index_t n) {
    return rows_action<sized<q1, 4096 * 4096>, sized<q2, 16777216>, sized<q5, 16777216>>(a, n != 0);
}

} // namespace mixt_suite
