// R1-R6 of the suite: reductions of mixed-dtype expressions, at fixed full sizes (issue 18's rows). The
// variants: mixt (assign into the result), mixt_threads, hand_loop (a straightforward loop with an f32 or f64
// accumulator), eigen_cast (idiomatic Eigen 3.4: `.cast<>()`, `.broadcast()`, then Eigen's reducer) and
// traffic (every input element read once, no arithmetic). GB/s count the inputs' bytes and the result's.
#include "rows.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace mixt_suite {
namespace {

using namespace rows;

template <class T, int R>
using row_major = Eigen::Tensor<T, R, Eigen::RowMajor>;
using a1 = Eigen::array<index_t, 1>;
using a2 = Eigen::array<index_t, 2>;

template <class A>
void fill_all(A& a, std::uint64_t seed) {
    fill_random(a.data(), a.size(), seed);
}

// Quantization scales that are powers of two (2^0 to 2^-7): an i8 times one is exact in f16, the product's
// dtype, so the hand loops and Eigen, which multiply in f32, compute the same products as mixt.
template <class A>
void power_of_two_scales(A& s) {
    for (index_t i = 0; i < s.size(); ++i) s.data()[i] = f16(std::ldexp(1.0f, -static_cast<int>(i % 8)));
}

// R1: a mixed-precision dot product, accumulated in f32.
struct r1 {
    static constexpr const char* id = "R1";
    static constexpr const char* text = "sum(f16 * bf16), 16M";
    using result = float;
    static constexpr double hand_tolerance = 0x1p-12;
    static constexpr double eigen_tolerance = 0x1p-12;
    struct data {
        row_major<f16, 1> a;
        row_major<bf16, 1> b;
        row_major<float, 0> out;
        explicit data(bool small) : a(small ? 4099 : 16777216), b(a.size()) {
            fill_all(a, 71);
            fill_all(b, 72);
        }
        auto expression() const { return mixt::sum(mixt::lazy(a) * b); }
        void hand_loop() {
            float s = 0;
            const index_t n = a.size();
            for (index_t i = 0; i < n; ++i) s += static_cast<float>(a.data()[i]) * static_cast<float>(b.data()[i]);
            out() = s;
        }
        void eigen_cast() { out = (a.cast<float>() * b.cast<float>()).sum(); }
        void traffic() {
            out() = static_cast<float>(read_bytes(a.data(), static_cast<std::size_t>(a.size()) * 2) ^
                                       read_bytes(b.data(), static_cast<std::size_t>(b.size()) * 2));
        }
        std::int64_t bytes() const { return a.size() * 2 + b.size() * 2 + 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return 1; }
    };
};

// R2: the mean colour of an image, over its outer axes (channel last).
struct r2 {
    static constexpr const char* id = "R2";
    static constexpr const char* text = "mean(u8 image, axes {0, 1}), [1080, 1920, 3]";
    using result = float;
    static constexpr double hand_tolerance = 0x1p-20;
    static constexpr double eigen_tolerance = 0x1p-12;
    struct data {
        index_t h, w;
        row_major<u8, 3> image;
        row_major<float, 1> out;
        explicit data(bool small) : h(small ? 17 : 1080), w(small ? 23 : 1920), image(h, w, 3), out(3) {
            fill_all(image, 81);
        }
        auto expression() const { return mixt::mean(image, {0, 1}); }
        void hand_loop() {
            double s[3] = {};
            const u8* p = image.data();
            const index_t pixels = h * w;
            for (index_t i = 0; i < pixels; ++i)
                for (int c = 0; c < 3; ++c) s[c] += p[i * 3 + c];
            for (int c = 0; c < 3; ++c) out(c) = static_cast<float>(s[c] / static_cast<double>(pixels));
        }
        void eigen_cast() { out = image.cast<float>().mean(a2{0, 1}); }
        void traffic() { out(0) = static_cast<float>(read_bytes(image.data(), static_cast<std::size_t>(image.size()))); }
        std::int64_t bytes() const { return image.size() + 3 * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return 3; }
    };
};

#if MIXT_SIMD_AVX512 || (MIXT_SIMD_AVX2 && MIXT_SIMD_F16C)
// The compute floors of R3 and R4 (issue 43): the sum of f16(q[j] * s) (times x[j] where x is given) over a row of
// n int8 values, in f32, four chains of 16 lanes; the last n % 64 one at a time.
inline float rounded_product_sum(const i8* q, index_t n, float s, const float* x) {
#if MIXT_SIMD_AVX512 && defined(__AVX512FP16__)
    // Where the target has AVX512-FP16 the product is made in f16 arithmetic, 32 at a time: the i8 widened to i16
    // (vpmovsxbw) and converted to f16 (vcvtw2ph, exact), times the scale in f16 (vmulph: the product rounded to
    // f16 as JAX rounds `i8 * f16`), each half of the 32 products widened to f32 (vcvtph2psx) and added into a
    // chain. The same bits as the f32 product rounded to f16 (an i8 times an f16 is exact in f32).
    const __m512h sh = _mm512_set1_ph(static_cast<_Float16>(s));
    const auto products = [&](index_t j, __m512& lo, __m512& hi) {
        const __m512i w = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + j)));
        const __m512h p = _mm512_mul_ph(_mm512_cvtepi16_ph(w), sh);
        lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(p));
        hi = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(p), 1)));
        if (x) {
            lo = _mm512_mul_ps(lo, _mm512_loadu_ps(x + j));
            hi = _mm512_mul_ps(hi, _mm512_loadu_ps(x + j + 16));
        }
    };
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    index_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m512 a, b, c, d;
        products(j, a, b);
        products(j + 32, c, d);
        c0 = _mm512_add_ps(c0, a);
        c1 = _mm512_add_ps(c1, b);
        c2 = _mm512_add_ps(c2, c);
        c3 = _mm512_add_ps(c3, d);
    }
#elif MIXT_SIMD_AVX512
    const __m512 sv = _mm512_set1_ps(s);
    const auto product = [&](index_t j) {
        const __m512 p = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + j)))), sv);
        const __m512 r = _mm512_cvtph_ps(_mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        return x ? _mm512_mul_ps(r, _mm512_loadu_ps(x + j)) : r;
    };
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    index_t j = 0;
    for (; j + 64 <= n; j += 64) {
        c0 = _mm512_add_ps(c0, product(j));
        c1 = _mm512_add_ps(c1, product(j + 16));
        c2 = _mm512_add_ps(c2, product(j + 32));
        c3 = _mm512_add_ps(c3, product(j + 48));
    }
#else
    // Without AVX-512: the same, four chains of 8 lanes (the last n % 32 one at a time).
    const __m256 sv = _mm256_set1_ps(s);
    const auto product = [&](index_t j) {
        const __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j)))), sv);
        const __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        return x ? _mm256_mul_ps(r, _mm256_loadu_ps(x + j)) : r;
    };
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    index_t j = 0;
    for (; j + 32 <= n; j += 32) {
        c0 = _mm256_add_ps(c0, product(j));
        c1 = _mm256_add_ps(c1, product(j + 8));
        c2 = _mm256_add_ps(c2, product(j + 16));
        c3 = _mm256_add_ps(c3, product(j + 24));
    }
    const __m256 c = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float acc = _mm_cvtss_f32(h);
#endif
#if MIXT_SIMD_AVX512
    float acc = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)));
#endif
    for (; j < n; ++j) {
        const float r = static_cast<float>(f16(static_cast<float>(q[j]) * s));
        acc += x ? r * x[j] : r;
    }
    return acc;
}
#endif

// R3: a dequantized row sum, the result in f16.
struct r3 {
    static constexpr const char* id = "R3";
    static constexpr const char* text = "sum(i8 * f16 scale, axis 1), [4096, 4096] * [4096, 1]";
    using result = f16;
    // The f32 sums differ in their order; mixt rounds the result to f16.
    static constexpr double hand_tolerance = 0x1p-10;
    static constexpr double eigen_tolerance = 0x1p-10;
    struct data {
        index_t n;
        row_major<i8, 2> q;
        row_major<f16, 2> scale;
        row_major<f16, 1> out;
        explicit data(bool small) : n(small ? 45 : 4096), q(n, n), scale(n, 1), out(n) {
            fill_all(q, 91);
            power_of_two_scales(scale);
        }
        auto expression() const { return mixt::sum(mixt::lazy(q) * scale, 1); }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const i8* x = q.data() + i * n;
                const float s = static_cast<float>(scale.data()[i]);
                float acc = 0;
                for (index_t j = 0; j < n; ++j) acc += static_cast<float>(x[j]) * s;
                out(i) = f16(acc);
            }
        }
        void eigen_cast() { out = (q.cast<float>() * scale.cast<float>().broadcast(a2{1, n})).sum(a1{1}).cast<f16>(); }
#if MIXT_SIMD_AVX512 || (MIXT_SIMD_AVX2 && MIXT_SIMD_F16C)
        // Only the work (issue 43's compute floor), 64 products at a time: 16 i8 widened (vpmovsxbd) and converted
        // (vcvtdq2ps), times the row's scale, each product rounded to f16 and widened back (vcvtps2ph, vcvtph2ps:
        // `i8 * f16` is f16), added into one of four f32 chains; the row's sum rounded to f16. No plan, no blocks.
        // Where the target has AVX512-FP16, the products are made in f16 instead; without AVX-512, 32 at a time in
        // four chains of 8 lanes (rounded_product_sum).
        void compute_floor() {
            for (index_t i = 0; i < n; ++i) {
                const float s = static_cast<float>(scale.data()[i]);
                out(i) = f16(rounded_product_sum(q.data() + i * n, n, s, nullptr));
            }
        }
#endif
        void traffic() {
            out(0) = f16(static_cast<float>(read_bytes(q.data(), static_cast<std::size_t>(q.size())) ^
                                            read_bytes(scale.data(), static_cast<std::size_t>(n) * 2)));
        }
        std::int64_t bytes() const { return q.size() + n * 2 + n * 2; }
        const f16* result_data() const { return out.data(); }
        index_t elements() const { return n; }
    };
};

// R4: a dequantized GEMV: int8 weights, a half scale per row, a float vector.
struct r4 {
    static constexpr const char* id = "R4";
    static constexpr const char* text = "sum(W_i8 * s_f16 * x_f32, axis 1), [4096, 4096], [4096, 1], [1, 4096]";
    using result = float;
    static constexpr double hand_tolerance = 0x1p-12;
    static constexpr double eigen_tolerance = 0x1p-12;
    struct data {
        index_t n;
        row_major<i8, 2> w;
        row_major<f16, 2> scale;
        row_major<float, 2> x;
        row_major<float, 1> out;
        explicit data(bool small) : n(small ? 45 : 4096), w(n, n), scale(n, 1), x(1, n), out(n) {
            fill_all(w, 101);
            power_of_two_scales(scale);
            fill_all(x, 103);
        }
        auto expression() const { return mixt::sum(mixt::lazy(w) * scale * x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const i8* r = w.data() + i * n;
                const float s = static_cast<float>(scale.data()[i]);
                float acc = 0;
                for (index_t j = 0; j < n; ++j) acc += static_cast<float>(r[j]) * s * x.data()[j];
                out(i) = acc;
            }
        }
        void eigen_cast() {
            out = (w.cast<float>() * scale.cast<float>().broadcast(a2{1, n}) * x.broadcast(a2{n, 1})).sum(a1{1});
        }
#if MIXT_SIMD_AVX512 || (MIXT_SIMD_AVX2 && MIXT_SIMD_F16C)
        // Only the work: R3's floor with each rounded product times x (from L1/L2) before the sum.
        void compute_floor() {
            for (index_t i = 0; i < n; ++i)
                out(i) = rounded_product_sum(w.data() + i * n, n, static_cast<float>(scale.data()[i]), x.data());
        }
#endif
        void traffic() {
            out(0) = static_cast<float>(read_bytes(w.data(), static_cast<std::size_t>(w.size())) ^
                                        read_bytes(scale.data(), static_cast<std::size_t>(n) * 2) ^
                                        read_bytes(x.data(), static_cast<std::size_t>(n) * 4));
        }
        std::int64_t bytes() const { return w.size() + n * 2 + n * 4 + n * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return n; }
    };
};

// R5: the largest difference between a float array and its bfloat16 copy.
struct r5 {
    static constexpr const char* id = "R5";
    static constexpr const char* text = "max(abs(f32 - bf16)), 16M";
    using result = float;
    struct data {
        row_major<float, 1> a;
        row_major<bf16, 1> b;
        row_major<float, 0> out;
        explicit data(bool small) : a(small ? 4099 : 16777216), b(a.size()) {
            fill_all(a, 111);
            fill_all(b, 112);
        }
        auto expression() const { return mixt::max(mixt::abs(mixt::lazy(a) - b)); }
        void hand_loop() {
            float m = -std::numeric_limits<float>::infinity();
            const index_t n = a.size();
            for (index_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a.data()[i] - static_cast<float>(b.data()[i])));
            out() = m;
        }
        void eigen_cast() { out = (a - b.cast<float>()).abs().maximum(); }
        void traffic() {
            out() = static_cast<float>(read_bytes(a.data(), static_cast<std::size_t>(a.size()) * 4) ^
                                       read_bytes(b.data(), static_cast<std::size_t>(b.size()) * 2));
        }
        std::int64_t bytes() const { return a.size() * 6 + 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return 1; }
    };
};

// The hand loops' argmax of a row r[0, n): the index of its first greatest value, compared in f32.
template <class T>
index_t first_max_index(const T* r, index_t n) {
    float best = static_cast<float>(r[0]);
    index_t at = 0;
    for (index_t j = 1; j < n; ++j) {
        const float v = static_cast<float>(r[j]);
        if (v > best) {
            best = v;
            at = j;
        }
    }
    return at;
}

// R6: the most likely class of each row of half logits.
struct r6 {
    static constexpr const char* id = "R6";
    static constexpr const char* text = "argmax(f16 logits, axis 1), [4096, 4096]";
    using result = std::int64_t;
    struct data {
        index_t n;
        row_major<f16, 2> logits;
        row_major<std::int64_t, 1> out;
        explicit data(bool small) : n(small ? 45 : 4096), logits(n, n), out(n) { fill_all(logits, 121); }
        auto expression() const { return mixt::argmax(logits, 1); }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) out(i) = first_max_index(logits.data() + i * n, n);
        }
        void eigen_cast() { out = logits.cast<float>().argmax(1).cast<std::int64_t>(); }
        void traffic() {
            out(0) = static_cast<std::int64_t>(read_bytes(logits.data(), static_cast<std::size_t>(logits.size()) * 2));
        }
        std::int64_t bytes() const { return logits.size() * 2 + n * 8; }
        const std::int64_t* result_data() const { return out.data(); }
        index_t elements() const { return n; }
    };
};

// S1-S5: reductions along short rows (not issue 18's rows: marks of their own, report.py), where the work
// per row, not the bytes, sets the speed.
// S1: row sums of 16 floats each.
struct s1 {
    static constexpr const char* id = "S1";
    static constexpr const char* text = "sum(f32, axis 1), [1048576, 16]";
    using result = float;
    static constexpr double eigen_tolerance = 0x1p-20; // Eigen adds in another order
    struct data {
        index_t rows, n = 16;
        row_major<float, 2> x;
        row_major<float, 1> out;
        explicit data(bool small) : rows(small ? 1001 : 1048576), x(rows, n), out(rows) { fill_all(x, 131); }
        auto expression() const { return mixt::sum(x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < rows; ++i) {
                const float* r = x.data() + i * n;
                float s = 0;
                for (index_t j = 0; j < n; ++j) s += r[j];
                out(i) = s;
            }
        }
        void eigen_cast() { out = x.sum(a1{1}); }
        void traffic() { out(0) = static_cast<float>(read_bytes(x.data(), static_cast<std::size_t>(x.size()) * 4)); }
        std::int64_t bytes() const { return x.size() * 4 + rows * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return rows; }
    };
};

// S2: the row maxima of softmax's first step over 64 classes, in f16 (compared in f32 by the hand loop and Eigen).
struct s2 {
    static constexpr const char* id = "S2";
    static constexpr const char* text = "max(f16 logits, axis 1), [262144, 64]";
    using result = f16;
    struct data {
        index_t rows, n = 64;
        row_major<f16, 2> x;
        row_major<f16, 1> out;
        explicit data(bool small) : rows(small ? 1001 : 262144), x(rows, n), out(rows) { fill_all(x, 141); }
        auto expression() const { return mixt::max(x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < rows; ++i) {
                const f16* r = x.data() + i * n;
                float m = -std::numeric_limits<float>::infinity();
                for (index_t j = 0; j < n; ++j) m = std::max(m, static_cast<float>(r[j]));
                out(i) = f16(m);
            }
        }
        void eigen_cast() { out = x.cast<float>().maximum(a1{1}).cast<f16>(); }
        void traffic() { out(0) = f16(static_cast<float>(read_bytes(x.data(), static_cast<std::size_t>(x.size()) * 2) & 1)); }
        std::int64_t bytes() const { return x.size() * 2 + rows * 2; }
        const f16* result_data() const { return out.data(); }
        index_t elements() const { return rows; }
    };
};

// S3: the most likely of 16 classes in each row of f32 scores.
struct s3 {
    static constexpr const char* id = "S3";
    static constexpr const char* text = "argmax(f32, axis 1), [1048576, 16]";
    using result = std::int64_t;
    struct data {
        index_t rows, n = 16;
        row_major<float, 2> x;
        row_major<std::int64_t, 1> out;
        explicit data(bool small) : rows(small ? 1001 : 1048576), x(rows, n), out(rows) { fill_all(x, 151); }
        auto expression() const { return mixt::argmax(x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < rows; ++i) out(i) = first_max_index(x.data() + i * n, n);
        }
        void eigen_cast() { out = x.argmax(1).cast<std::int64_t>(); }
        void traffic() { out(0) = static_cast<std::int64_t>(read_bytes(x.data(), static_cast<std::size_t>(x.size()) * 4)); }
        std::int64_t bytes() const { return x.size() * 4 + rows * 8; }
        const std::int64_t* result_data() const { return out.data(); }
        index_t elements() const { return rows; }
    };
};

// S4: the row sums of int8 weights (a quantized matrix's zero-point correction), in int64 as JAX sums int8.
struct s4 {
    static constexpr const char* id = "S4";
    static constexpr const char* text = "sum(i8, axis 1), [524288, 32]";
    using result = std::int64_t;
    struct data {
        index_t rows, n = 32;
        row_major<std::int8_t, 2> x;
        row_major<std::int64_t, 1> out;
        explicit data(bool small) : rows(small ? 1001 : 524288), x(rows, n), out(rows) { fill_all(x, 161); }
        auto expression() const { return mixt::sum(x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < rows; ++i) {
                const std::int8_t* r = x.data() + i * n;
                std::int64_t s = 0;
                for (index_t j = 0; j < n; ++j) s += r[j];
                out(i) = s;
            }
        }
        void eigen_cast() { out = x.cast<std::int64_t>().sum(a1{1}); }
        void traffic() { out(0) = static_cast<std::int64_t>(read_bytes(x.data(), static_cast<std::size_t>(x.size()))); }
        std::int64_t bytes() const { return x.size() + rows * 8; }
        const std::int64_t* result_data() const { return out.data(); }
        index_t elements() const { return rows; }
    };
};

// S5: the largest of each row of 4 f64 values (a box's extent, a quaternion's component).
struct s5 {
    static constexpr const char* id = "S5";
    static constexpr const char* text = "max(f64, axis 1), [2097152, 4]";
    using result = double;
    struct data {
        index_t rows, n = 4;
        row_major<double, 2> x;
        row_major<double, 1> out;
        explicit data(bool small) : rows(small ? 1001 : 2097152), x(rows, n), out(rows) { fill_all(x, 171); }
        auto expression() const { return mixt::max(x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < rows; ++i) {
                const double* r = x.data() + i * n;
                double m = -std::numeric_limits<double>::infinity();
                for (index_t j = 0; j < n; ++j) m = std::max(m, r[j]);
                out(i) = m;
            }
        }
        void eigen_cast() { out = x.maximum(a1{1}); }
        void traffic() { out(0) = static_cast<double>(read_bytes(x.data(), static_cast<std::size_t>(x.size()) * 8) & 1); }
        std::int64_t bytes() const { return x.size() * 8 + rows * 8; }
        const double* result_data() const { return out.data(); }
        index_t elements() const { return rows; }
    };
};

} // namespace

bool short_rows(action a, index_t n) {
    return rows_action<sized<s1, 16777216>, sized<s2, 16777216>, sized<s3, 16777216>, sized<s4, 16777216>,
                       sized<s5, 16777216>>(a, n != 0);
}

bool reductions(action a, index_t n) {
    return rows_action<sized<r1, 16777216>, sized<r2, 1080 * 1920 * 3>, sized<r3, 4096 * 4096>, sized<r4, 4096 * 4096>,
                       sized<r5, 16777216>, sized<r6, 4096 * 4096>>(a, n != 0);
}

} // namespace mixt_suite
