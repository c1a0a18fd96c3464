// The fused loop's streaming stores (mixt/eval/fused.hpp, mixt/simd/stream.hpp), which a program gets for
// passes of 32 MiB and more. This test lowers the threshold to one byte (the macro is per program, and this
// file is a program of its own), so that every assignment below streams: the results must be the ones of the
// per-element definition at every size and every destination offset (the head before the first aligned
// address, the streamed batches or the whole lines through the buffer, the tail), for every width of result,
// nothing outside the destination may be written, and the thread pool, which streams each thread's range,
// must agree.

#define MIXT_STREAMING_THRESHOLD_BYTES 1
// Passes of 1 KiB and more prefetch too, whatever the CPU (on AMD CPUs a program would not): their stores up to
// 4 KiB, their inputs too from there: the loops that stream and prefetch run here as well as those that only
// stream.
#define MIXT_SOFTWARE_PREFETCH 1
#define MIXT_STORE_PREFETCH_THRESHOLD_BYTES 1024
#define MIXT_PREFETCH_THRESHOLD_BYTES 4096
#define EIGEN_USE_THREADS

#include <mixt/mixt.hpp>

#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace d = mixt::detail;
using i8 = std::int8_t;
using u8 = std::uint8_t;
using i16 = std::int16_t;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T>
Eigen::Tensor<T, 1> random_tensor(Eigen::Index n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(-100, 100);
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        if constexpr (d::is_complex_v<T>)
            t(i) = T(static_cast<typename T::value_type>(dist(gen)) / 4, static_cast<typename T::value_type>(dist(gen)) / 8);
        else
            t(i) = static_cast<T>(dist(gen));
    }
    return t;
}

// Lengths around the chunk (1024 bytes), the block (64 elements) and the batch (8) for every element width.
constexpr Eigen::Index lengths[] = {0, 1, 7, 8, 9, 63, 64, 65, 127, 255, 256, 257, 511, 1023, 1024, 1025, 2100, 4099};

// Assigns `make(lengths)` into a map at every element offset of a larger buffer (so the destination starts
// at every position relative to a cache line) and compares with `want(i)`; the guard elements around it must
// keep their bytes.
template <class R, class Make, class Want, class Device>
void check_offsets(Make&& make, Want&& want, const Device& device) {
    constexpr std::size_t guard = 64 / sizeof(R) + 1;
    for (const Eigen::Index n : lengths) {
        for (std::size_t offset = 0; offset < 64 / sizeof(R) + 1; ++offset) {
            const std::size_t total = static_cast<std::size_t>(n) + offset + 2 * guard;
            std::vector<unsigned char> raw(total * sizeof(R) + 64, 0xA5);
            // 64-byte aligned base, then `offset` elements further.
            const auto base = (reinterpret_cast<std::uintptr_t>(raw.data()) + 63) & ~std::uintptr_t{63};
            R* dst = reinterpret_cast<R*>(base) + guard + offset;
            std::vector<unsigned char> before(raw);
            Eigen::TensorMap<Eigen::Tensor<R, 1>> map(dst, n);
            const auto e = make(n);
            mixt::assign(map, e.expr, device);
            for (Eigen::Index i = 0; i < n; ++i) {
                const R w = want(e, i);
                ASSERT_EQ(std::memcmp(&dst[i], &w, sizeof(R)), 0) << "n=" << n << " offset=" << offset << " i=" << i;
            }
            const auto* first = reinterpret_cast<const unsigned char*>(dst);
            const auto* last = reinterpret_cast<const unsigned char*>(dst + n);
            for (std::size_t b = 0; b < raw.size(); ++b) {
                const unsigned char* p = raw.data() + b;
                if (p < first || p >= last) {
                    ASSERT_EQ(raw[b], before[b]) << "byte " << b << " outside the destination, n=" << n;
                }
            }
        }
    }
}

template <class Device>
void check_all(const Device& device) {
    // i8 + f32: the batch loop, 4-byte results.
    struct e1 {
        Eigen::Tensor<i8, 1> a;
        Eigen::Tensor<float, 1> b;
        decltype(mixt::lazy(a) + b) expr;
        explicit e1(Eigen::Index n) : a(random_tensor<i8>(n, 1)), b(random_tensor<float>(n, 2)), expr(mixt::lazy(a) + b) {}
    };
    check_offsets<float>([](Eigen::Index n) { return e1(n); },
                         [](const e1& e, Eigen::Index i) { return d::add_fn{}(mixt::convert<float>(e.a(i)), e.b(i)); },
                         device);
    // u8 + i8: the block loop through the buffer, 2-byte results (on AVX-512: the loop on words, streamed straight).
    struct e8 {
        Eigen::Tensor<u8, 1> a;
        Eigen::Tensor<i8, 1> b;
        decltype(mixt::lazy(a) + b) expr;
        explicit e8(Eigen::Index n) : a(random_tensor<u8>(n, 3)), b(random_tensor<i8>(n, 4)), expr(mixt::lazy(a) + b) {}
    };
    static_assert(!mixt::simd::avx512 ||
                  d::word_loop_v<i16, std::remove_const_t<decltype(d::make_kernel<i16>(std::declval<const e8&>().expr))>>);
    check_offsets<i16>([](Eigen::Index n) { return e8(n); },
                       [](const e8& e, Eigen::Index i) {
                           return d::add_fn{}(mixt::convert<i16>(e.a(i)), mixt::convert<i16>(e.b(i)));
                       },
                       device);
    // f16 + f16: 2-byte results from the batch loop.
    struct e5 {
        Eigen::Tensor<Eigen::half, 1> a, b;
        decltype(mixt::lazy(a) + b) expr;
        explicit e5(Eigen::Index n)
            : a(random_tensor<Eigen::half>(n, 5)), b(random_tensor<Eigen::half>(n, 6)), expr(mixt::lazy(a) + b) {}
    };
    check_offsets<Eigen::half>([](Eigen::Index n) { return e5(n); },
                               [](const e5& e, Eigen::Index i) { return d::add_fn{}(e.a(i), e.b(i)); }, device);
    // f32 > 0: 1-byte bool results.
    struct positive {
        Eigen::Tensor<float, 1> a;
        decltype(mixt::lazy(a) > 0) expr;
        explicit positive(Eigen::Index n) : a(random_tensor<float>(n, 7)), expr(mixt::lazy(a) > 0) {}
    };
    check_offsets<bool>([](Eigen::Index n) { return positive(n); },
                        [](const positive& e, Eigen::Index i) { return e.a(i) > 0.0f; }, device);
    // i64 + u32: 8-byte integer results (two registers per batch).
    struct e12 {
        Eigen::Tensor<std::int64_t, 1> a;
        Eigen::Tensor<std::uint32_t, 1> b;
        decltype(mixt::lazy(a) + b) expr;
        explicit e12(Eigen::Index n)
            : a(random_tensor<std::int64_t>(n, 11)), b(random_tensor<std::uint32_t>(n, 12)), expr(mixt::lazy(a) + b) {}
    };
    check_offsets<std::int64_t>([](Eigen::Index n) { return e12(n); },
                                [](const e12& e, Eigen::Index i) {
                                    return d::add_fn{}(e.a(i), mixt::convert<std::int64_t>(e.b(i)));
                                },
                                device);
    // bf16 * bf16: 2-byte results rounded from f32 lanes.
    struct bf16_product {
        Eigen::Tensor<Eigen::bfloat16, 1> a, b;
        decltype(mixt::lazy(a) * b) expr;
        explicit bf16_product(Eigen::Index n)
            : a(random_tensor<Eigen::bfloat16>(n, 13)), b(random_tensor<Eigen::bfloat16>(n, 14)), expr(mixt::lazy(a) * b) {}
    };
    check_offsets<Eigen::bfloat16>([](Eigen::Index n) { return bf16_product(n); },
                                   [](const bf16_product& e, Eigen::Index i) { return d::mul_fn{}(e.a(i), e.b(i)); },
                                   device);
    // i32 + f64: 8-byte float results.
    struct e6 {
        Eigen::Tensor<std::int32_t, 1> a;
        Eigen::Tensor<double, 1> b;
        decltype(mixt::lazy(a) + b) expr;
        explicit e6(Eigen::Index n)
            : a(random_tensor<std::int32_t>(n, 15)), b(random_tensor<double>(n, 16)), expr(mixt::lazy(a) + b) {}
    };
    check_offsets<double>([](Eigen::Index n) { return e6(n); },
                          [](const e6& e, Eigen::Index i) { return d::add_fn{}(mixt::convert<double>(e.a(i)), e.b(i)); },
                          device);
    // c64 * f32: 8-byte complex results.
    struct complex_product {
        Eigen::Tensor<c64, 1> a;
        Eigen::Tensor<float, 1> b;
        decltype(mixt::lazy(a) * b) expr;
        explicit complex_product(Eigen::Index n)
            : a(random_tensor<c64>(n, 17)), b(random_tensor<float>(n, 18)), expr(mixt::lazy(a) * b) {}
    };
    check_offsets<c64>([](Eigen::Index n) { return complex_product(n); },
                       [](const complex_product& e, Eigen::Index i) { return d::mul_fn{}(e.a(i), mixt::convert<c64>(e.b(i))); },
                       device);
    // i8 * i8: 1-byte integer results (the block loop, through the buffer).
    struct i8_product {
        Eigen::Tensor<i8, 1> a, b;
        decltype(mixt::lazy(a) * b) expr;
        explicit i8_product(Eigen::Index n) : a(random_tensor<i8>(n, 19)), b(random_tensor<i8>(n, 20)), expr(mixt::lazy(a) * b) {}
    };
    check_offsets<i8>([](Eigen::Index n) { return i8_product(n); },
                      [](const i8_product& e, Eigen::Index i) { return d::mul_fn{}(e.a(i), e.b(i)); }, device);
    // c64 * f32 + c128: 16-byte results; at odd offsets the destination is 8 but not 16-byte aligned and is
    // written without streaming.
    struct e11 {
        Eigen::Tensor<c64, 1> a;
        Eigen::Tensor<float, 1> b;
        Eigen::Tensor<c128, 1> c;
        decltype(mixt::lazy(a) * b + c) expr;
        explicit e11(Eigen::Index n)
            : a(random_tensor<c64>(n, 8)), b(random_tensor<float>(n, 9)), c(random_tensor<c128>(n, 10)),
              expr(mixt::lazy(a) * b + c) {}
    };
    check_offsets<c128>([](Eigen::Index n) { return e11(n); },
                        [](const e11& e, Eigen::Index i) {
                            const c64 ab = d::mul_fn{}(e.a(i), mixt::convert<c64>(e.b(i)));
                            return d::add_fn{}(mixt::convert<c128>(ab), e.c(i));
                        },
                        device);
}

TEST(streaming, the_threshold_applies) {
    EXPECT_EQ(d::streaming_threshold_bytes, 1u);
    EXPECT_EQ(d::use_streaming(1, 1), mixt::simd::streaming_stores);
#if defined(__x86_64__)
    EXPECT_TRUE(mixt::simd::streaming_stores); // so that the tests below do stream
#endif
    EXPECT_FALSE(d::use_streaming(0, 16));
}

TEST(streaming, every_length_and_offset_on_the_default_device) { check_all(Eigen::DefaultDevice{}); }

TEST(streaming, every_length_and_offset_on_a_thread_pool) {
    Eigen::ThreadPool pool(2);
    const Eigen::ThreadPoolDevice device(&pool, 2);
    check_all(device);
}

// Runs of short rows whose scale is read once per row (run_rows_of), streamed where every row starts on a
// 64-byte boundary: the destination at every element offset (so some stream and some do not), rows of one, two
// and three batches (and of 64 elements, no longer short: runs of one row), the guard bytes around it kept.
template <class R, class Make, class Want>
void check_rows(Make&& make, Want&& want) {
    constexpr Eigen::Index rows = 37;
    constexpr std::size_t guard = 64 / sizeof(R) + 1;
    for (const Eigen::Index n : {16, 32, 48, 64}) {
        const auto e = make(rows, n);
        if (mixt::simd::avx512 && n < d::short_run) {
            Eigen::Tensor<R, 2, Eigen::RowMajor> probe(rows, n);
            EXPECT_NE(mixt::explain(probe, e.expr).find("operands read once per row 1\n"), std::string::npos);
        }
        for (std::size_t offset = 0; offset < 64 / sizeof(R) + 1; ++offset) {
            const std::size_t total = static_cast<std::size_t>(rows * n) + offset + 2 * guard;
            std::vector<unsigned char> raw(total * sizeof(R) + 64, 0xA5);
            const auto base = (reinterpret_cast<std::uintptr_t>(raw.data()) + 63) & ~std::uintptr_t{63};
            R* dst = reinterpret_cast<R*>(base) + guard + offset;
            const std::vector<unsigned char> before(raw);
            Eigen::TensorMap<Eigen::Tensor<R, 2, Eigen::RowMajor>> map(dst, rows, n);
            mixt::assign(map, e.expr);
            for (Eigen::Index r = 0; r < rows; ++r)
                for (Eigen::Index j = 0; j < n; ++j) {
                    const R w = want(e, r, j);
                    ASSERT_EQ(std::memcmp(&dst[r * n + j], &w, sizeof(R)), 0) << "n=" << n << " offset=" << offset << " at " << r << ", " << j;
                }
            const auto* first = reinterpret_cast<const unsigned char*>(dst);
            const auto* last = reinterpret_cast<const unsigned char*>(dst + rows * n);
            for (std::size_t b = 0; b < raw.size(); ++b) {
                if (raw.data() + b < first || raw.data() + b >= last) {
                    ASSERT_EQ(raw[b], before[b]) << "byte " << b << ", n=" << n;
                }
            }
        }
    }
}

TEST(streaming, runs_of_rows_with_a_value_per_row) {
    using e2m1 = mixt::float4_e2m1fn;
    using e8m0 = mixt::float8_e8m0fnu;
    using bf16 = Eigen::bfloat16;
    // MXFP4 blocks dequantized to bf16: every code of both types among the values.
    struct mx {
        Eigen::Tensor<e2m1, 2, Eigen::RowMajor> w;
        Eigen::Tensor<e8m0, 2, Eigen::RowMajor> s;
        decltype(mixt::cast<bf16>(mixt::cast<float>(mixt::lazy(w)) * mixt::cast<float>(mixt::lazy(s)))) expr;
        mx(Eigen::Index rows, Eigen::Index n)
            : w(rows, n), s(rows, 1), expr(mixt::cast<bf16>(mixt::cast<float>(mixt::lazy(w)) * mixt::cast<float>(mixt::lazy(s)))) {
            std::mt19937 g(21);
            for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = e2m1::from_bits(static_cast<std::uint8_t>(g() % 16));
            for (Eigen::Index i = 0; i < s.size(); ++i) s.data()[i] = e8m0::from_bits(static_cast<std::uint8_t>(g()));
        }
    };
    check_rows<bf16>([](Eigen::Index rows, Eigen::Index n) { return mx(rows, n); },
                     [](const mx& e, Eigen::Index r, Eigen::Index j) {
                         return mixt::convert<bf16>(d::mul_fn{}(static_cast<float>(e.w(r, j)), static_cast<float>(e.s(r, 0))));
                     });
    // f32 values times an f16 scale per row.
    struct scaled {
        Eigen::Tensor<float, 2, Eigen::RowMajor> x;
        Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s;
        decltype(mixt::lazy(x) * s) expr;
        scaled(Eigen::Index rows, Eigen::Index n) : x(rows, n), s(rows, 1), expr(mixt::lazy(x) * s) {
            std::mt19937 g(22);
            for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(static_cast<int>(g() % 201) - 100) / 8;
            for (Eigen::Index i = 0; i < s.size(); ++i) s.data()[i] = Eigen::half(static_cast<float>(g() % 64) / 16);
        }
    };
    check_rows<float>([](Eigen::Index rows, Eigen::Index n) { return scaled(rows, n); },
                      [](const scaled& e, Eigen::Index r, Eigen::Index j) {
                          return d::mul_fn{}(e.x(r, j), mixt::convert<float>(e.s(r, 0)));
                      });
}

// In place (the destination is a leaf), through the buffer: each chunk is read before it is overwritten.
TEST(streaming, in_place) {
    const Eigen::Index n = 5000;
    auto x = random_tensor<float>(n, 11);
    const auto y = random_tensor<i8>(n, 12);
    const Eigen::Tensor<float, 1> x0 = x;
    mixt::assign(x, mixt::lazy(x) * y + x);
    for (Eigen::Index i = 0; i < n; ++i)
        ASSERT_EQ(x(i), d::add_fn{}(d::mul_fn{}(x0(i), mixt::convert<float>(y(i))), x0(i))) << i;
}

} // namespace
