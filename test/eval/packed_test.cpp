// Packed sub-byte arrays (dtype/packed.hpp): int4, uint4, float4_e2m1fn two to a byte and int2, uint2 four to a
// byte, the first element in the low bits. Each case builds the same values twice, packed and one per byte (an
// Eigen::Tensor of the element type), evaluates the same expression over both, and compares bit for bit: as an
// operand (contiguous, every offset inside a byte, broadcast, chips, slices and strides, both layouts, the thread
// pool, Eigen's evaluator), in reductions, and as a destination (the bits outside the written elements kept, runs
// shared by threads at a byte).

#define EIGEN_USE_THREADS
#define MIXT_MIN_BYTES_PER_THREAD 64

#include <mixt/mixt.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace {

using Eigen::Index;

template <class T>
using packed_types_t = T;

template <class T>
class packed_test : public ::testing::Test {};
using packed_types = ::testing::Types<mixt::int4, mixt::uint4, mixt::float4_e2m1fn, mixt::int2, mixt::uint2>;
TYPED_TEST_SUITE(packed_test, packed_types);

template <class T>
constexpr int per_byte = mixt::per_byte_v<T>;
template <class T>
constexpr unsigned code_mask = (1u << (8 / per_byte<T>)) - 1u;

/// Random bytes for a packed array of n elements of T (every bit random, the unused bits of the last byte too).
template <class T>
std::vector<std::uint8_t> random_bytes(Index n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> b(static_cast<std::size_t>(mixt::packed_bytes<T>(n)) + 1);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    return b;
}

/// The element k of packed bytes, read here from the convention (the first element in the low bits).
template <class T>
T element(const std::vector<std::uint8_t>& b, Index k) {
    const int bits = 8 / per_byte<T>;
    const auto byte = b[static_cast<std::size_t>(k / per_byte<T>)];
    return T::from_bits(static_cast<std::uint8_t>((byte >> ((k % per_byte<T>) * bits)) & code_mask<T>));
}

/// The tensor of the elements of packed bytes, one per byte, of the given shape and layout.
template <class T, int L, class... I>
Eigen::Tensor<T, sizeof...(I), L> unpacked(const std::vector<std::uint8_t>& b, I... dims) {
    Eigen::Tensor<T, sizeof...(I), L> t(static_cast<Index>(dims)...);
    for (Index k = 0; k < t.size(); ++k) t.data()[k] = element<T>(b, k);
    return t;
}

template <class A, class B>
void expect_same_bits(const A& got, const B& want) {
    ASSERT_EQ(got.size(), want.size());
    for (Index k = 0; k < got.size(); ++k) {
        const auto g = got.data()[k], w = want.data()[k];
        std::uint64_t gb = 0, wb = 0;
        std::memcpy(&gb, &g, sizeof(g));
        std::memcpy(&wb, &w, sizeof(w));
        ASSERT_EQ(gb, wb) << "element " << k;
    }
}

TYPED_TEST(packed_test, the_first_element_is_in_the_low_bits) {
    using T = TypeParam;
    std::vector<std::uint8_t> b = {0x00, 0x00};
    const int bits = 8 / per_byte<T>;
    b[0] = static_cast<std::uint8_t>(1u | (code_mask<T> << bits)); // element 0: code 1, element 1: all ones
    const auto p = mixt::packed<T>(b.data(), 2 * per_byte<T>);
    EXPECT_EQ(p(0).bits(), 1u);
    EXPECT_EQ(p(1).bits(), code_mask<T>);
    EXPECT_EQ(p(per_byte<T>).bits(), 0u);
}

TYPED_TEST(packed_test, operand_of_every_length_and_offset) {
    using T = TypeParam;
    for (const Index n : {Index{1}, Index{3}, Index{31}, Index{64}, Index{65}, Index{127}, Index{1000}, Index{4099}}) {
        const auto b = random_bytes<T>(n + 8, static_cast<unsigned>(n));
        for (Index first = 0; first < 5; ++first) {
            // A slice starting `first` elements in: runs that start inside a byte.
            Eigen::array<Index, 1> start{first}, size{n};
            const auto p = mixt::packed<const T>(static_cast<const std::uint8_t*>(b.data()), n + 8).slice(start, size);
            const Eigen::Tensor<T, 1> all = unpacked<T, Eigen::ColMajor>(b, n + 8);
            const Eigen::Tensor<T, 1> u = all.slice(start, size);
            Eigen::Tensor<float, 1> x(n);
            x.setRandom();
            const Eigen::Tensor<float, 1> got = mixt::eval(mixt::cast<float>(mixt::lazy(p)) * x);
            const Eigen::Tensor<float, 1> want = mixt::eval(mixt::cast<float>(mixt::lazy(u)) * x);
            expect_same_bits(got, want);
            const Eigen::Tensor<T, 1> same = mixt::eval(mixt::lazy(p));
            expect_same_bits(same, u);
        }
    }
}

template <class T, int L>
void check_2d_operand() {
    const Index rows = 37, cols = 45; // odd: every row but one starts inside a byte
    const auto b = random_bytes<T>(rows * cols, 7);
    const auto p = mixt::packed<const T, L>(static_cast<const std::uint8_t*>(b.data()), rows, cols);
    const auto u = unpacked<T, L>(b, rows, cols);
    Eigen::Tensor<float, 2, L> m(rows, cols);
    m.setRandom();
    Eigen::Tensor<float, 1, L> row_scale(cols);
    row_scale.setRandom();
    Eigen::Tensor<float, 2, L> col_scale(rows, 1);
    col_scale.setRandom();
    Eigen::ThreadPool pool(4);
    Eigen::ThreadPoolDevice device(&pool, 4);
    // Same shape, a broadcast row, a broadcast column, on one thread and on four.
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(p)) * m)), Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(u)) * m)));
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(p)) * row_scale, device)),
                     Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(u)) * row_scale)));
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(p)) * col_scale + 1.0f, device)),
                     Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(u)) * col_scale + 1.0f)));
    // The packed array broadcast itself: a packed column against a matrix.
    const auto pc = mixt::packed<const T, L>(static_cast<const std::uint8_t*>(b.data()), rows, Index{1});
    const auto uc = unpacked<T, L>(b, rows, 1);
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(pc)) + m)), Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(uc)) + m)));
    // A chip, a stride.
    expect_same_bits(mixt::eval(mixt::lazy(p.chip(3, 0))), Eigen::Tensor<T, 1, L>(u.chip(3, 0)));
    expect_same_bits(mixt::eval(mixt::lazy(p.chip(4, 1))), Eigen::Tensor<T, 1, L>(u.chip(4, 1)));
    Eigen::array<Index, 2> every{2, 3};
    expect_same_bits(Eigen::Tensor<T, 2, L>(mixt::eval(mixt::lazy(p.stride(every)))), Eigen::Tensor<T, 2, L>(u.stride(every)));
    // Eigen's own evaluator, and an expression mixt lowers to Eigen (an Eigen expression leaf beside it).
    expect_same_bits(Eigen::Tensor<T, 2, L>(p), u);
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(p)) * (m * 2.0f))),
                     Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(u)) * (m * 2.0f))));
    expect_same_bits(Eigen::Tensor<float, 2, L>(mixt::to_eigen(mixt::cast<float>(mixt::lazy(p)) * row_scale + 0.5f)),
                     Eigen::Tensor<float, 2, L>(mixt::eval(mixt::cast<float>(mixt::lazy(u)) * row_scale + 0.5f)));
}

TYPED_TEST(packed_test, operand_of_two_dimensions) {
    check_2d_operand<TypeParam, Eigen::RowMajor>();
    check_2d_operand<TypeParam, Eigen::ColMajor>();
}

TYPED_TEST(packed_test, reductions) {
    using T = TypeParam;
    using L = std::integral_constant<int, Eigen::RowMajor>;
    for (const Index cols : {Index{1}, Index{3}, Index{16}, Index{45}, Index{300}}) {
        const Index rows = 67;
        const auto b = random_bytes<T>(rows * cols, 11);
        const auto p = mixt::packed<const T, L::value>(static_cast<const std::uint8_t*>(b.data()), rows, cols);
        const auto u = unpacked<T, L::value>(b, rows, cols);
        Eigen::Tensor<float, 2, L::value> x(1, cols);
        x.setRandom();
        Eigen::ThreadPool pool(3);
        Eigen::ThreadPoolDevice device(&pool, 3);
        for (int axis = 0; axis < 2; ++axis) {
            expect_same_bits(Eigen::Tensor<float, 1, Eigen::ColMajor>(mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(p)) * x, axis))),
                             Eigen::Tensor<float, 1, Eigen::ColMajor>(mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(u)) * x, axis))));
            expect_same_bits(Eigen::Tensor<float, 1, Eigen::ColMajor>(mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(p)) * x, axis), device)),
                             Eigen::Tensor<float, 1, Eigen::ColMajor>(mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(u)) * x, axis))));
            auto got = mixt::eval(mixt::sum(mixt::lazy(p), axis));
            auto want = mixt::eval(mixt::sum(mixt::lazy(u), axis));
            expect_same_bits(got, want);
            expect_same_bits(mixt::eval(mixt::max(mixt::lazy(p), axis)), mixt::eval(mixt::max(mixt::lazy(u), axis)));
        }
    }
}

TYPED_TEST(packed_test, destination_keeps_the_bits_it_does_not_write) {
    using T = TypeParam;
    for (const Index n : {Index{1}, Index{2}, Index{5}, Index{63}, Index{64}, Index{129}, Index{5000}}) {
        auto b = random_bytes<T>(n + 9, static_cast<unsigned>(n) + 1);
        const auto before = b;
        Eigen::Tensor<float, 1> x(n);
        x.setRandom();
        x = x * 8.0f;
        for (Index first = 0; first < 4; ++first) {
            b = before;
            Eigen::array<Index, 1> start{first}, size{n};
            auto dst = mixt::packed<T>(b.data(), n + 9).slice(start, size);
            mixt::assign(dst, mixt::cast<T>(mixt::lazy(x) * 0.5f));
            const Eigen::Tensor<T, 1> want = mixt::eval(mixt::cast<T>(mixt::lazy(x) * 0.5f));
            for (Index k = 0; k < n + 9; ++k) {
                const bool written = k >= first && k < first + n;
                const auto got = element<T>(b, k).bits();
                const auto expect = written ? want(k - first).bits() : element<T>(before, k).bits();
                ASSERT_EQ(got, expect) << "n " << n << " first " << first << " element " << k;
            }
            // The bits past the last element of the array are untouched too.
            ASSERT_EQ(b.back(), before.back());
        }
    }
}

/// How many times the threaded write below is repeated: 20, so that a lost update would show; 3 under the
/// sanitizers, whose unoptimized builds are there to check the memory each write touches (the repeats run in the
/// optimized configurations).
#if defined(__SANITIZE_ADDRESS__)
constexpr int threaded_rounds = 3;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int threaded_rounds = 3;
#else
constexpr int threaded_rounds = 20;
#endif
#else
constexpr int threaded_rounds = 20;
#endif

TYPED_TEST(packed_test, destination_written_by_several_threads_loses_no_neighbour) {
    using T = TypeParam;
    // Rows of an odd number of elements written by different threads: most rows start and end inside a byte
    // that a neighbouring row (another thread's run) shares. Repeated, so that a lost update would show.
    Eigen::ThreadPool pool(4);
    Eigen::ThreadPoolDevice device(&pool, 4);
    for (const Index cols : {Index{1}, Index{3}, Index{5}, Index{67}, Index{257}}) {
        const Index rows = 4099;
        std::vector<std::uint8_t> b(static_cast<std::size_t>(mixt::packed_bytes<T>(rows * cols)));
        Eigen::Tensor<std::int32_t, 2, Eigen::RowMajor> v(rows, cols);
        for (int round = 0; round < threaded_rounds; ++round) {
            for (Index r = 0; r < rows; ++r)
                for (Index c = 0; c < cols; ++c) v(r, c) = static_cast<std::int32_t>((r * 7 + c * 3 + round) % 3);
            auto dst = mixt::packed<T, Eigen::RowMajor>(b.data(), rows, cols);
            // One element per row from a broadcast column, so that runs are rows (the column is staged per row).
            Eigen::Tensor<std::int32_t, 2, Eigen::RowMajor> shift(rows, 1);
            shift.setConstant(0);
            mixt::assign(dst, mixt::cast<T>(mixt::lazy(v) + shift), device);
            const Eigen::Tensor<T, 2, Eigen::RowMajor> want = mixt::eval(mixt::cast<T>(mixt::lazy(v)));
            for (Index k = 0; k < rows * cols; ++k)
                ASSERT_EQ(element<T>(b, k).bits(), want.data()[k].bits()) << "cols " << cols << " round " << round << " element " << k;
        }
    }
}

TYPED_TEST(packed_test, in_place_and_overlap) {
    using T = TypeParam;
    const Index n = 301;
    auto b = random_bytes<T>(n, 5);
    const auto u = unpacked<T, Eigen::ColMajor>(b, n);
    auto p = mixt::packed<T>(b.data(), n);
    if constexpr (mixt::is_narrow_int_v<T>) {
        mixt::assign(p, mixt::lazy(p) + 1); // the same view in place: wraps
        const Eigen::Tensor<T, 1> want = mixt::eval(mixt::lazy(u) + 1);
        for (Index k = 0; k < n; ++k) ASSERT_EQ(element<T>(b, k).bits(), want(k).bits()) << k;
    }
    // A view one element further: a partial overlap, refused before anything is written.
    const auto saved = b;
    Eigen::array<Index, 1> s0{0}, s1{1}, size{n - 1};
    auto dst = p.slice(s0, size);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(p.slice(s1, size))), mixt::aliasing_error);
    EXPECT_EQ(b, saved);
}

TEST(packed, int4_dequantize_and_reduce_in_one_pass) {
    // W int4 [rows, cols] packed, a scale per row (f16), x per column: sum(cast<f32>(W) * s * x, axis 1).
    const Index rows = 128, cols = 512;
    const auto b = random_bytes<mixt::int4>(rows * cols, 3);
    const auto w = mixt::packed<const mixt::int4, Eigen::RowMajor>(static_cast<const std::uint8_t*>(b.data()), rows, cols);
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(rows, 1);
    for (Index r = 0; r < rows; ++r) s(r, 0) = Eigen::half(0.01f * static_cast<float>(r + 1));
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, cols);
    x.setRandom();
    const Eigen::Tensor<float, 1> y = mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(w)) * s * x, 1));
    for (Index r = 0; r < rows; ++r) {
        double exact = 0;
        for (Index c = 0; c < cols; ++c)
            exact += static_cast<double>(static_cast<float>(w(r, c).value()) * static_cast<float>(s(r, 0)) * x(0, c));
        EXPECT_NEAR(y(r), exact, 1e-4 * (1 + std::abs(exact))) << r;
    }
}

} // namespace
