// Q1-Q5 of the suite: the narrow dtypes in expressions (issue 41's rows), at fixed full sizes; Q3 and Q4 read
// packed sub-byte arrays (mixt::packed: two 4-bit elements a byte, the first in the low bits). The variants are those of B1-B6 (rows.hpp): mixt, mixt_threads,
// hand_loop (what a user writes by hand: a 256-entry table to decode, a scalar loop calling the type's
// constructor to encode), eigen_cast (Eigen 3.4's unaryExpr/binaryExpr with a scalar conversion functor:
// decode by static_cast<float>, encode by T(float)) and traffic (every input element read once, the result
// written once, no conversion). Every variant must produce mixt's bytes exactly (`bit_exact`).
#include "rows.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace mixt_suite {
namespace {

using namespace rows;

using e4m3fn = mixt::float8_e4m3fn;
using e5m2 = mixt::float8_e5m2;
using e2m1 = mixt::float4_e2m1fn;
using a1 = Eigen::array<index_t, 1>;
using a3 = Eigen::array<index_t, 3>;
using e8m0 = mixt::float8_e8m0fnu;

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
#if MIXT_SIMD_AVX512
        // Only the work, 16 at a time: the codes decoded in registers by mixt's decode (simd/narrow.hpp: vpmovsxbd,
        // vpslld, vpandd, vpaddd, vptestnmd, a masked vpermps for the subnormals and NaN, vpternlogd for the sign),
        // times the row's scale (a register per row), a 64-byte streaming store; no plan, no runs.
        void compute_floor() {
            namespace nw = mixt::simd::wide::narrow;
            constexpr auto D = mixt::dtype::float8_e4m3fn;
            // (The report's small check, rows of 45: plain stores, and the last elements of a row by the table.)
            const bool stream = n % 16 == 0 && reinterpret_cast<std::uintptr_t>(out.data()) % 64 == 0;
            for (index_t i = 0; i < n; ++i) {
                const __m512 si = _mm512_set1_ps(s.data()[i]);
                const auto* x = reinterpret_cast<const __m128i*>(w.data() + i * n);
                float* r = out.data() + i * n;
                for (index_t j = 0; j < n / 16; ++j) {
                    const __m512 v = _mm512_mul_ps(nw::decode<D>(_mm_loadu_si128(x + j)), si);
                    if (stream)
                        _mm512_stream_ps(r + 16 * j, v);
                    else
                        _mm512_storeu_ps(r + 16 * j, v);
                }
                for (index_t j = n / 16 * 16; j < n; ++j) r[j] = table[w.data()[i * n + j].bits()] * s.data()[i];
            }
            _mm_sfence();
        }
#endif
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

// The table a hand-written dequantizer of packed 4-bit elements indexes with each byte: its two values, the
// low nibble first.
template <class T>
std::array<std::array<float, 2>, 256> pair_table() {
    std::array<std::array<float, 2>, 256> t{};
    for (unsigned c = 0; c < 256; ++c)
        t[c] = {static_cast<float>(T::from_bits(static_cast<std::uint8_t>(c & 15))),
                static_cast<float>(T::from_bits(static_cast<std::uint8_t>(c >> 4)))};
    return t;
}

// Q3: a GEMV of packed int4 weights, a scale per row (f16) and the input vector x, accumulated in f32.
struct q3 {
    static constexpr const char* id = "Q3";
    static constexpr const char* text = "sum(cast<f32>(W_int4 packed) * s_f16 * x_f32, axis 1), [4096, 4096]";
    using result = float;
    // The f32 sums differ in their order.
    static constexpr double hand_tolerance = 0x1p-12;
    static constexpr double eigen_tolerance = 0x1p-12;
    struct data {
        index_t n;
        std::vector<std::uint8_t> packed_w;
        mixt::packed_map<const mixt::int4, 2, Eigen::RowMajor> w;
        row_major<f16, 2> s;
        row_major<float, 2> x;
        row_major<float, 1> out;
        std::array<std::array<float, 2>, 256> table = pair_table<mixt::int4>();
        explicit data(bool small)
            : n(small ? 46 : 4096), packed_w(static_cast<std::size_t>(n * n / 2)), w(packed_w.data(), n, n), s(n, 1),
              x(1, n), out(n) {
            random_bits g{181};
            for (auto& b : packed_w) b = static_cast<std::uint8_t>(g());
            for (index_t i = 0; i < n; ++i) s.data()[i] = f16((1.0f + std::abs(g.real())) * 0x1p-4f);
            fill<float>(x, 182);
        }
        auto expression() const { return mixt::sum(mixt::cast<float>(mixt::lazy(w)) * s * x, 1); }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const std::uint8_t* row = packed_w.data() + i * n / 2;
                const float si = static_cast<float>(s.data()[i]);
                const float* xv = x.data();
                float acc = 0;
                for (index_t j = 0; j < n / 2; ++j) {
                    const auto& v = table[row[j]];
                    acc += v[0] * si * xv[2 * j];
                    acc += v[1] * si * xv[2 * j + 1];
                }
                out.data()[i] = acc;
            }
        }
        void eigen_cast() {
            out = (w.unaryExpr(decode<mixt::int4>{}) * s.cast<float>().broadcast(a2{1, n}) * x.broadcast(a2{n, 1}))
                      .sum(a1{1});
        }
#if MIXT_SIMD_AVX512
        // Only the work: 8 packed bytes unpacked in registers into 16 sign-extended i32 lanes, converted, times s
        // and x, into two chains of 16 lanes (the fold's 32), per row; no stage, no blocks.
        void compute_floor() {
            const __m128i m = _mm_set1_epi16(0x0F0F);
            for (index_t i = 0; i < n; ++i) {
                const std::uint8_t* row = packed_w.data() + i * n / 2;
                const __m512 si = _mm512_set1_ps(static_cast<float>(s.data()[i]));
                const float* xv = x.data();
                __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
                index_t j = 0;
                for (; j + 32 <= n; j += 32) {
                    for (int h = 0; h < 2; ++h) {
                        const __m128i w16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + (j + 16 * h) / 2)));
                        const __m128i codes = _mm_and_si128(_mm_or_si128(w16, _mm_slli_epi16(w16, 4)), m);
                        const __m512i v = _mm512_srai_epi32(_mm512_slli_epi32(_mm512_cvtepu8_epi32(codes), 28), 28);
                        const __m512 p = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), si), _mm512_loadu_ps(xv + j + 16 * h));
                        acc[h] = _mm512_add_ps(acc[h], p);
                    }
                }
                float t = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1]));
                for (; j < n; ++j) {
                    const int c = (row[j / 2] >> (j % 2 * 4)) & 15;
                    t += static_cast<float>(c >= 8 ? c - 16 : c) * static_cast<float>(s.data()[i]) * xv[j];
                }
                out.data()[i] = t;
            }
        }
#endif
        void traffic() {
            out.data()[0] = static_cast<float>(read_bytes(packed_w.data(), packed_w.size()) ^
                                               read_bytes(s.data(), static_cast<std::size_t>(n) * 2) ^
                                               read_bytes(x.data(), static_cast<std::size_t>(n) * 4));
        }
        std::int64_t bytes() const { return n * n / 2 + n * 2 + n * 4 + n * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// Q4: MXFP4 weights dequantized to bf16: float4 e2m1 elements packed two a byte, a shared e8m0 scale (a power of
// two) per block of 32.
struct q4 {
    static constexpr const char* id = "Q4";
    static constexpr const char* text =
        "cast<bf16>(cast<f32>(W_f4_e2m1fn packed) * cast<f32>(scale_e8m0)), [4096, 128, 32] * [4096, 128, 1]";
    using result = bf16;
    static constexpr double eigen_tolerance = 0;
    static constexpr bool bit_exact = true;
    struct data {
        index_t rows;
        std::vector<std::uint8_t> packed_w;
        mixt::packed_map<const e2m1, 3, Eigen::RowMajor> w;
        row_major<e8m0, 3> scale;
        row_major<bf16, 3> out;
        std::array<std::array<float, 2>, 256> table = pair_table<e2m1>();
        std::array<float, 256> scales = decode_table<e8m0>();
        explicit data(bool small)
            : rows(small ? 7 : 4096), packed_w(static_cast<std::size_t>(rows * 128 * 16)), w(packed_w.data(), rows, 128, 32),
              scale(rows, 128, 1), out(rows, 128, 32) {
            random_bits g{191};
            for (auto& b : packed_w) b = static_cast<std::uint8_t>(g());
            // Block scales 2^-12 .. 2^3 (codes 115 .. 130), as a quantizer of weights of magnitude around 1 makes.
            for (index_t i = 0; i < scale.size(); ++i)
                scale.data()[i] = e8m0::from_bits(static_cast<std::uint8_t>(115 + g() % 16));
        }
        auto expression() const {
            return mixt::cast<bf16>(mixt::cast<float>(mixt::lazy(w)) * mixt::cast<float>(mixt::lazy(scale)));
        }
        void hand_loop() {
            const index_t blocks = rows * 128;
            for (index_t b = 0; b < blocks; ++b) {
                const float sc = scales[scale.data()[b].bits()];
                const std::uint8_t* in = packed_w.data() + b * 16;
                bf16* r = out.data() + b * 32;
                for (index_t j = 0; j < 16; ++j) {
                    const auto& v = table[in[j]];
                    r[2 * j] = bf16(v[0] * sc);
                    r[2 * j + 1] = bf16(v[1] * sc);
                }
            }
        }
        void eigen_cast() {
            out = (w.unaryExpr(decode<e2m1>{}) * scale.unaryExpr(decode<e8m0>{}).broadcast(a3{1, 1, 32})).cast<bf16>();
        }
#if MIXT_SIMD_AVX512BF16
        // Only the work, a block of 32 at a time: 16 packed bytes unpacked in registers, each half's 16 codes decoded
        // by one vpermps from their 16 values, times the block's scale (decoded once), rounded to bf16 by the CPU's
        // vcvtne2ps2bf16 (exact here: the products are bf16 values and never subnormal), streamed out.
        void compute_floor() {
            alignas(64) float values[16];
            for (unsigned c = 0; c < 16; ++c) values[c] = static_cast<float>(e2m1::from_bits(static_cast<std::uint8_t>(c)));
            const __m512 codes16 = _mm512_load_ps(values);
            const __m256i m = _mm256_set1_epi16(0x0F0F);
            const index_t blocks = rows * 128;
            for (index_t b = 0; b < blocks; ++b) {
                const __m512 sc = _mm512_set1_ps(scales[scale.data()[b].bits()]);
                const __m256i w16 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(packed_w.data() + b * 16)));
                const __m256i codes = _mm256_and_si256(_mm256_or_si256(w16, _mm256_slli_epi16(w16, 4)), m);
                const __m512 lo = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(codes)), codes16), sc);
                const __m512 hi = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(codes, 1)), codes16), sc);
                _mm512_stream_si512(reinterpret_cast<__m512i*>(out.data() + b * 32), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            }
            _mm_sfence();
        }
#endif
        void traffic() {
            benchmark::DoNotOptimize(read_bytes(scale.data(), static_cast<std::size_t>(scale.size())));
            // The result as 8-byte words, each from the two packed bytes of its four elements.
            floor_run(reinterpret_cast<std::uint64_t*>(out.data()), out.size() / 4,
                      reinterpret_cast<const std::uint16_t*>(packed_w.data()));
        }
        std::int64_t bytes() const { return rows * 128 * 16 + scale.size() + out.size() * 2; }
        const bf16* result_data() const { return out.data(); }
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
#if MIXT_SIMD_AVX512
        // Only the work, 16 at a time, with mixt's conversions in registers (simd/narrow.hpp): decode a, b and c,
        // the product rounded to e5m2, the sum encoded; no plan, no runs.
        void compute_floor() {
            namespace nw = mixt::simd::wide::narrow;
            constexpr auto D = mixt::dtype::float8_e5m2;
            const index_t n = a.size();
            const auto* x = reinterpret_cast<const __m128i*>(a.data());
            const auto* y = reinterpret_cast<const __m128i*>(b.data());
            const auto* z = reinterpret_cast<const __m128i*>(c.data());
            auto* r = reinterpret_cast<__m128i*>(out.data());
            for (index_t i = 0; i < n / 16; ++i) {
                const __m512 p = nw::round_to<D>(_mm512_mul_ps(nw::decode<D>(_mm_loadu_si128(x + i)), nw::decode<D>(_mm_loadu_si128(y + i))));
                _mm_stream_si128(r + i, nw::encode<D>(_mm512_add_ps(p, nw::decode<D>(_mm_loadu_si128(z + i)))));
            }
            _mm_sfence();
            for (index_t i = n / 16 * 16; i < n; ++i) {
                const e5m2 p(static_cast<float>(a.data()[i]) * static_cast<float>(b.data()[i]));
                out.data()[i] = e5m2(static_cast<float>(p) + static_cast<float>(c.data()[i]));
            }
        }
#endif
        void traffic() { floor_run(out.data(), out.size(), a.data(), b.data(), c.data()); }
        std::int64_t bytes() const { return a.size() * 3 + out.size() * 1; }
        const e5m2* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

} // namespace

bool narrow(action a, index_t n) {
    return rows_action<sized<q1, 4096 * 4096>, sized<q2, 16777216>, sized<q3, 4096 * 4096>,
                       sized<q4, 4096 * 128 * 32>, sized<q5, 16777216>>(a, n != 0);
}

} // namespace mixt_suite
