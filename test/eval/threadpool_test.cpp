// `mixt::assign(dst, e, thread_pool_device)` gives the same bits as the DefaultDevice, for expressions over
// every dtype and mixed ones, at sizes that are not multiples of the vector width (so every thread's block
// and the final tail are exercised), on the fused loop (plain tensors) and on the lowering to Eigen
// (expression leaves), which Eigen's own ThreadPoolDevice executor runs.

#define EIGEN_USE_THREADS
// A pass takes a thread per 4 KiB it moves here (512 KiB by default), so that the small sizes below are split
// over the pool's threads and every piece boundary is exercised.
#define MIXT_MIN_BYTES_PER_THREAD 4096

#include <mixt/eval/assign.hpp>
#include <mixt/eval/explain.hpp>
#include <mixt/expr/operators.hpp>

#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace {

namespace mp = boost::mp11;

using all_types = mp::mp_list<bool, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t,
                              std::int16_t, std::int32_t, std::int64_t, Eigen::bfloat16, Eigen::half, float, double,
                              std::complex<float>, std::complex<double>>;
constexpr Eigen::Index sizes[] = {1, 7, 9, 1001, 100003};

// Deterministic values of every magnitude, special values included.
template <class T>
T value(std::uint64_t k) {
    std::uint64_t x = k * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    if constexpr (std::is_same_v<T, bool>) {
        return (x & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(x);
    } else if constexpr (mixt::detail::is_complex_v<T>) {
        using R = typename T::value_type;
        return T(static_cast<R>(static_cast<std::int32_t>(x) % 1000) / R(8), static_cast<R>(static_cast<std::int16_t>(x >> 32)) / R(64));
    } else {
        if (x % 97 == 0) return std::numeric_limits<T>::quiet_NaN();
        if (x % 89 == 0) return std::numeric_limits<T>::infinity();
        return static_cast<T>(static_cast<float>(static_cast<std::int32_t>(x) % 100000) / 64.0f);
    }
}

template <class T>
Eigen::Tensor<T, 1> make(Eigen::Index n, std::uint64_t seed) {
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) t(i) = value<T>(seed * 1000003 + static_cast<std::uint64_t>(i));
    return t;
}

template <class T>
bool same_bits(const Eigen::Tensor<T, 1>& a, const Eigen::Tensor<T, 1>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(T) * static_cast<std::size_t>(a.size())) == 0;
}

class threadpool : public ::testing::Test {
  protected:
    Eigen::ThreadPool pool{4};
    Eigen::ThreadPoolDevice device{&pool, 4};

    // Assigns `e` (built by `build` from the leaves) on both devices into sentinel-free fresh tensors and
    // compares the bits.
    template <class Build, class... Ts>
    void check(const std::string& what, Build build, const Eigen::Tensor<Ts, 1>&... leaves) {
        using E = decltype(build(leaves...));
        using R = mixt::value_t<E>;
        const Eigen::Index n = std::get<0>(std::tie(leaves...)).size();
        Eigen::Tensor<R, 1> serial(n), parallel(n);
        serial.setZero();
        parallel.setConstant(R(1));
        mixt::assign(serial, build(leaves...));
        mixt::assign(parallel, build(leaves...), device);
        EXPECT_TRUE(same_bits(serial, parallel)) << what << ", " << n << " elements";
    }
};

template <class T>
std::string name() {
    return std::string(mixt::short_name(mixt::dtype_of_v<T>));
}

// The pool's tasks take pieces of the pass in turn; a task that starts after the last piece was taken must
// touch nothing of the pass (the caller has returned, and its tensors may be gone: under AddressSanitizer a
// late task reading them fails this test). Eight pool threads on fewer cores start late often; every pass must
// still be complete.
TEST_F(threadpool, pieces_taken_in_turn_leave_nothing_behind) {
    Eigen::ThreadPool busy_pool(8);
    const Eigen::ThreadPoolDevice busy(&busy_pool, 9);
    for (int round = 0; round < 300; ++round) {
        const Eigen::Index n = 20000 + 64 * round;
        auto a = std::make_unique<Eigen::Tensor<std::int8_t, 1>>(make<std::int8_t>(n, 1));
        auto b = std::make_unique<Eigen::Tensor<float, 1>>(make<float>(n, 2));
        auto r = std::make_unique<Eigen::Tensor<float, 1>>(n);
        r->setConstant(-1.0f);
        mixt::assign(*r, mixt::lazy(*a) * *b, busy);
        for (Eigen::Index i = 0; i < n; ++i) {
            const float want = mixt::detail::mul_fn{}(mixt::convert<float>((*a)(i)), (*b)(i));
            ASSERT_EQ(std::memcmp(&(*r)(i), &want, sizeof want), 0) << "round " << round << ", element " << i;
        }
        a.reset();
        b.reset();
        r.reset();
    }
}

TEST_F(threadpool, every_dtype_on_the_fused_loop) {
    mp::mp_for_each<all_types>([&](auto t) {
        using T = decltype(t);
        for (const Eigen::Index n : sizes) {
            const auto a = make<T>(n, 1), b = make<T>(n, 2);
            const auto i8 = make<std::int8_t>(n, 3);
            check(name<T>() + ": a * b + a", [](const auto& x, const auto& y) { return mixt::lazy(x) * y + x; }, a, b);
            check(name<T>() + ": where(a == b, a, i8) + 1", [](const auto& x, const auto& y, const auto& z) {
                return mixt::where(mixt::lazy(x) == y, x, z) + 1;
            }, a, b, i8);
        }
    });
}

TEST_F(threadpool, mixed_expressions) {
    for (const Eigen::Index n : sizes) {
        const auto i8 = make<std::int8_t>(n, 4);
        const auto u8 = make<std::uint8_t>(n, 5);
        const auto f16 = make<Eigen::half>(n, 6);
        const auto f32 = make<float>(n, 7);
        const auto u64 = make<std::uint64_t>(n, 8);
        const auto i64 = make<std::int64_t>(n, 9);
        const auto c64 = make<std::complex<float>>(n, 10);
        check("(i8 + u8) * f16 - f32 / 3", [](const auto& a, const auto& b, const auto& c, const auto& d) {
            return (mixt::lazy(a) + b) * c - mixt::lazy(d) / 3;
        }, i8, u8, f16, f32);
        check("floor_divide(u64, i64) % 7 + (u64 >> 3)", [](const auto& a, const auto& b) {
            return mixt::floor_divide(mixt::lazy(a), b) + (mixt::lazy(a) >> 3);
        }, u64, i64);
        check("clip(f16 * i8, -1, 1) < u8", [](const auto& a, const auto& b, const auto& c) {
            return mixt::clip(mixt::lazy(a) * b, -1, 1) < c;
        }, f16, i8, u8);
        check("c64 * f32 + conj(c64)", [](const auto& a, const auto& b) {
            return mixt::lazy(a) * b + mixt::conj(a);
        }, c64, f32);
        check("pow(f32, i8 % 5) + sqrt(abs(f32))", [](const auto& a, const auto& b) {
            return mixt::pow(a, mixt::lazy(b) % 5) + mixt::sqrt(mixt::abs(a));
        }, f32, i8);
    }
}

TEST_F(threadpool, lowered_to_eigen) {
    for (const Eigen::Index n : sizes) {
        const auto i8 = make<std::int8_t>(n, 11);
        const auto f16 = make<Eigen::half>(n, 12);
        const auto u64 = make<std::uint64_t>(n, 13);
        // Whole-tensor slices: Eigen expressions, not memory mixt can loop over, so assign lowers them. (A
        // TensorRef leaf would do on the DefaultDevice, but Eigen 3.4 cannot evaluate a TensorRef on a pool.)
        const Eigen::array<Eigen::Index, 1> off{0}, ext{n};
        Eigen::Tensor<Eigen::half, 1> serial(n), parallel(n), fused(n);
        mixt::assign(serial, mixt::lazy(i8.slice(off, ext)) * f16.slice(off, ext) - 2);
        mixt::assign(parallel, mixt::lazy(i8.slice(off, ext)) * f16.slice(off, ext) - 2, device);
        mixt::assign(fused, mixt::lazy(i8) * f16 - 2, device);
        EXPECT_TRUE(same_bits(serial, parallel)) << n;
        EXPECT_TRUE(same_bits(serial, fused)) << n;
        // mixt::to_eigen evaluated on the pool by Eigen.
        Eigen::Tensor<double, 1> s(n), p(n);
        mixt::assign(s, mixt::lazy(u64.slice(off, ext)) + i8);
        p.device(device) = mixt::to_eigen(mixt::lazy(u64.slice(off, ext)) + i8);
        EXPECT_TRUE(same_bits(s, p)) << n;
    }
}

TEST_F(threadpool, errors_are_thrown_before_any_thread_writes) {
    const auto u8 = make<std::uint8_t>(100003, 14);
    Eigen::Tensor<std::uint8_t, 1> dst(100003);
    dst.setConstant(0xAB);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(u8) + 300, device), mixt::overflow_error);
    Eigen::Tensor<std::uint8_t, 1> shorter(100002);
    EXPECT_THROW(mixt::assign(shorter, mixt::lazy(u8) + 3, device), mixt::shape_error);
    for (Eigen::Index i = 0; i < dst.size(); ++i) ASSERT_EQ(dst(i), 0xAB);
}

// An Eigen thread pool that counts the tasks it is given.
class counting_pool : public Eigen::ThreadPoolInterface {
  public:
    explicit counting_pool(int threads) : pool_(threads) {}
    void Schedule(std::function<void()> fn) override {
        ++scheduled;
        pool_.Schedule(std::move(fn));
    }
    int NumThreads() const override { return pool_.NumThreads(); }
    int CurrentThreadId() const override { return pool_.CurrentThreadId(); }
    std::atomic<int> scheduled{0};

  private:
    Eigen::ThreadPool pool_;
};

// A pass takes threads_for(bytes moved, device threads) threads, the caller being one: it hands that many
// minus one tasks to the pool, none for a pass too small to be worth a second thread.
TEST(threadpool_threads, a_pass_wakes_the_threads_its_bytes_are_worth) {
    static_assert(mixt::detail::min_bytes_per_thread == 4096);
    counting_pool pool(3);
    const Eigen::ThreadPoolDevice device(&pool, 4);
    const auto tasks_for = [&](Eigen::Index n) {
        const auto a = make<std::uint8_t>(n, 21), b = make<std::uint8_t>(n, 22);
        Eigen::Tensor<std::uint8_t, 1> r(n);
        const int before = pool.scheduled.load();
        mixt::assign(r, mixt::lazy(a) + b, device); // 3 bytes per element
        const int tasks = pool.scheduled.load() - before;
        Eigen::Tensor<std::uint8_t, 1> serial(n);
        mixt::assign(serial, mixt::lazy(a) + b);
        EXPECT_TRUE(same_bits(r, serial)) << n;
        return tasks;
    };
    const auto expected = [](Eigen::Index n) {
        return mixt::detail::threads_for(static_cast<std::size_t>(n) * 3, 4) - 1;
    };
    EXPECT_EQ(tasks_for(1000), 0);  // 3000 bytes: one thread
    EXPECT_EQ(tasks_for(2730), 0);  // 8190 bytes: still one
    EXPECT_EQ(tasks_for(2731), 1);  // 8193 bytes: two
    EXPECT_EQ(tasks_for(4100), 2);  // 12300 bytes: three
    EXPECT_EQ(tasks_for(100000), 3); // the device's four
    for (const Eigen::Index n : {1000, 2731, 4100, 5462, 100000}) EXPECT_EQ(tasks_for(n), expected(n)) << n;
}

// The plan decides the threads once (decide_pass), and explain prints what the pass takes: here a thread per
// 4096 bytes moved (MIXT_MIN_BYTES_PER_THREAD above), at most the device's.
TEST(threadpool_plan, explain_shows_the_threads_the_plan_gives) {
    Eigen::ThreadPool pool(2);
    Eigen::ThreadPoolDevice device(&pool, 3);
    Eigen::Tensor<float, 1> big(1 << 16), small(256), out_big(1 << 16), out_small(256);
    EXPECT_NE(mixt::explain(out_big, mixt::lazy(big) * 2, device).find("\nthreads: 3\n"), std::string::npos);
    // 256 floats read and written: 2048 bytes, under one thread's share.
    EXPECT_NE(mixt::explain(out_small, mixt::lazy(small) * 2, device).find("\nthreads: 1\n"), std::string::npos);
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(64, 512);
    Eigen::Tensor<float, 1> sums(64);
    EXPECT_NE(mixt::explain(sums, mixt::sum(mixt::lazy(x), 1), device).find("\nthreads: 3\n"), std::string::npos);
}

} // namespace
