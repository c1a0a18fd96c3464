// mixt::simd batches against the scalar mixt::convert (itself tested against an exact reference in
// test/dtype/convert_test.cpp): for every (From, To) pair of the 15 dtypes, every lane of
// convert<To>(load(p)) must have the bits of mixt::convert<To>(p[i]); 8- and 16-bit sources exhaustively,
// wider ones on edges, rounding ties and random values. Loads and stores, full and partial, are checked for
// values and for touching nothing outside [p, p + n): the buffers end (or start) at a page whose access
// faults, and stores are surrounded by sentinel bytes.
//
// One documented deviation from bit-identity with the stored element: loading an f16/bf16 signaling NaN
// yields its quiet form (the widening conversion to f32 quiets it); `canonical` below spells that out
// independently of the library.

#include <mixt/simd/batch.hpp>
#include <mixt/simd/convert.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#define MIXT_TEST_HAVE_GUARD_PAGES 1
#endif

namespace {

namespace simd = mixt::simd;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T>
struct tag {
    using type = T;
};
using all_dtypes = std::tuple<tag<bool>, tag<std::uint8_t>, tag<std::uint16_t>, tag<std::uint32_t>, tag<std::uint64_t>,
                              tag<std::int8_t>, tag<std::int16_t>, tag<std::int32_t>, tag<std::int64_t>,
                              tag<Eigen::bfloat16>, tag<Eigen::half>, tag<float>, tag<double>, tag<c64>, tag<c128>>;

template <class F>
void for_each_dtype(F&& f) {
    std::apply([&](auto... t) { (f(t), ...); }, all_dtypes{});
}

template <class T>
std::string dtype_name() {
    if constexpr (std::is_same_v<T, bool>)
        return "bool";
    else if constexpr (std::is_same_v<T, std::uint8_t>)
        return "u8";
    else if constexpr (std::is_same_v<T, std::uint16_t>)
        return "u16";
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        return "u32";
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return "u64";
    else if constexpr (std::is_same_v<T, std::int8_t>)
        return "i8";
    else if constexpr (std::is_same_v<T, std::int16_t>)
        return "i16";
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return "i32";
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return "i64";
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return "bf16";
    else if constexpr (std::is_same_v<T, Eigen::half>)
        return "f16";
    else if constexpr (std::is_same_v<T, float>)
        return "f32";
    else if constexpr (std::is_same_v<T, double>)
        return "f64";
    else if constexpr (std::is_same_v<T, c64>)
        return "c64";
    else
        return "c128";
}

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

template <class T>
std::uint64_t raw_bits(T x) {
    if constexpr (sizeof(T) == 1)
        return std::bit_cast<std::uint8_t>(x);
    else if constexpr (sizeof(T) == 2)
        return std::bit_cast<std::uint16_t>(x);
    else if constexpr (sizeof(T) == 4)
        return std::bit_cast<std::uint32_t>(x);
    else
        return std::bit_cast<std::uint64_t>(x);
}

template <class T>
T from_raw_bits(std::uint64_t b) {
    if constexpr (sizeof(T) == 1)
        return std::bit_cast<T>(static_cast<std::uint8_t>(b));
    else if constexpr (sizeof(T) == 2)
        return std::bit_cast<T>(static_cast<std::uint16_t>(b));
    else if constexpr (sizeof(T) == 4)
        return std::bit_cast<T>(static_cast<std::uint32_t>(b));
    else
        return std::bit_cast<T>(b);
}

template <class T>
bool same_bits(T a, T b) {
    if constexpr (is_complex_v<T>)
        return same_bits(a.real(), b.real()) && same_bits(a.imag(), b.imag());
    else
        return raw_bits(a) == raw_bits(b);
}

template <class T>
std::string show(T x) {
    std::ostringstream os;
    if constexpr (is_complex_v<T>)
        os << "(" << show(x.real()) << ", " << show(x.imag()) << ")";
    else
        os << "0x" << std::hex << raw_bits(x);
    return os.str();
}

// The element a batch holds after loading x: x, except that f16/bf16 signaling NaNs arrive quiet.
template <class T>
T canonical(T x) {
    if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
        const auto b = static_cast<std::uint16_t>(raw_bits(x));
        const std::uint16_t exp = std::is_same_v<T, Eigen::half> ? 0x7c00 : 0x7f80;
        const std::uint16_t quiet = std::is_same_v<T, Eigen::half> ? 0x0200 : 0x0040;
        if ((b & exp) == exp && (b & (exp ^ 0x7fff)) != 0) return from_raw_bits<T>(b | quiet);
    }
    return x;
}

// A growable array that, unlike std::vector<bool>, stores bools as bools (so &xs[i] is a bool*).
template <class T>
class elements {
  public:
    void push_back(T x) {
        if (size_ == capacity_) {
            capacity_ = capacity_ == 0 ? 64 : 2 * capacity_;
            auto bigger = std::make_unique<T[]>(capacity_);
            std::copy(data_.get(), data_.get() + size_, bigger.get());
            data_ = std::move(bigger);
        }
        data_[size_++] = x;
    }
    template <class... A>
    void emplace_back(A... a) {
        push_back(T(a...));
    }
    std::size_t size() const { return size_; }
    const T& operator[](std::size_t i) const { return data_[i]; }

  private:
    std::unique_ptr<T[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

// ---------------------------------------------------------------------------------------------------------
// Inputs: every bit pattern of the narrow types; edges, ties and random values of the wide ones.

template <class T>
elements<T> inputs() {
    elements<T> xs;
    std::mt19937_64 rng(2024);
    if constexpr (std::is_same_v<T, bool>) {
        for (int m = 0; m < 256; ++m)
            for (int i = 0; i < 8; ++i) xs.push_back(((m >> i) & 1) != 0);
    } else if constexpr (sizeof(T) <= 2) {
        for (std::uint64_t b = 0; b < (std::uint64_t{1} << (8 * sizeof(T))); ++b) xs.push_back(from_raw_bits<T>(b));
    } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        constexpr int n = 8 * sizeof(T);
        for (int k = 0; k < n; ++k)
            for (int d = -3; d <= 3; ++d) {
                const U u = static_cast<U>((U{1} << k) + static_cast<U>(d));
                xs.push_back(static_cast<T>(u));
                xs.push_back(static_cast<T>(U{0} - u));
            }
        for (std::uint64_t x :
             {0ull, 65504ull, 65519ull, 65520ull, 65535ull, (1ull << 24) + 1, (1ull << 53) + 1, 0x01018000ull,
              0x01008000ull, 0xffffff80ull, 0xffffff7full, 0x7fffff8000000000ull, 0xffffff8000000000ull,
              0x7ffffffffffffe00ull, 0xfffffffffffffc00ull, 0x8000000000000400ull, 0x8000000000000401ull})
            xs.push_back(static_cast<T>(static_cast<U>(x)));
        for (int i = 0; i < 12000; ++i) {
            static constexpr int widths[] = {9, 12, 25, 54, 64};
            const int w = std::min(widths[rng() % 5], n);
            U m = static_cast<U>(static_cast<U>(rng()) >> (n - w)) | static_cast<U>(U{1} << (w - 1));
            if (rng() % 2) m |= 1;
            const U x =
                static_cast<U>((m << (rng() % static_cast<unsigned>(n - w + 1))) + static_cast<U>(rng() % 3) - 1);
            xs.push_back(static_cast<T>(rng() % 2 ? x : static_cast<U>(U{0} - x)));
            xs.push_back(static_cast<T>(static_cast<U>(rng()) >> (rng() % n)));
        }
    } else if constexpr (std::is_floating_point_v<T>) {
        using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        constexpr int fb = std::numeric_limits<T>::digits - 1;
        constexpr U sign = U{1} << (sizeof(T) * 8 - 1);
        constexpr U exp_all = static_cast<U>(~U{0} >> 1) & static_cast<U>(~((U{1} << fb) - 1));
        auto add = [&](T x) {
            xs.push_back(x);
            xs.push_back(-x);
        };
        for (U b :
             {U{0}, U{1}, static_cast<U>((U{1} << fb) - 1), static_cast<U>(U{1} << fb), exp_all,
              static_cast<U>(exp_all - 1), static_cast<U>(exp_all | 1), static_cast<U>(exp_all | (U{1} << (fb - 1))),
              static_cast<U>(exp_all | (U{0x2a5} << (fb - 10))), static_cast<U>(exp_all | ((U{1} << fb) - 1))}) {
            xs.push_back(std::bit_cast<T>(b));
            xs.push_back(std::bit_cast<T>(static_cast<U>(b | sign)));
        }
        for (int k = -155; k <= 135; ++k) {
            const T p = std::ldexp(T(1), k);
            for (T x : {p, std::nextafter(p, T(0)), std::nextafter(p, T(4) * p), p * T(1.5)}) add(x);
        }
        for (double x : {0.5,
                         1.5,
                         2.5,
                         127.5,
                         128.5,
                         255.5,
                         32767.5,
                         32768.5,
                         65535.5,
                         65519.99,
                         65520.0,
                         2147483647.5,
                         2147483648.0,
                         2147483649.0,
                         4294967295.5,
                         4294967296.0,
                         9223372036854774784.0,
                         9223372036854775808.0,
                         18446744073709549568.0,
                         18446744073709551616.0,
                         1e30,
                         1e300})
            add(static_cast<T>(x));
        for (int i = 0; i < 12000; ++i) {
            xs.push_back(std::bit_cast<T>(static_cast<U>(rng())));
            for (int w : {8, 11, 24}) { // ties of bf16, f16 and f32 significands, nudged by one ulp either way
                if (w > fb) continue;
                const U keep = static_cast<U>(static_cast<U>(rng()) & ~((U{1} << (fb - w + 1)) - 1));
                xs.push_back(
                    std::bit_cast<T>(static_cast<U>((keep | (U{1} << (fb - w))) + static_cast<U>(rng() % 3) - 1)));
            }
            add(static_cast<T>(std::ldexp(static_cast<double>(rng() >> 11), -93 + static_cast<int>(rng() % 160))));
        }
    } else {
        using C = typename T::value_type;
        std::vector<C> parts = {C(0),
                                -C(0),
                                C(1),
                                C(-1.5),
                                C(65520),
                                C(3e9),
                                C(-3e9),
                                C(1e20),
                                std::numeric_limits<C>::infinity(),
                                -std::numeric_limits<C>::infinity(),
                                std::numeric_limits<C>::quiet_NaN(),
                                std::numeric_limits<C>::signaling_NaN(),
                                std::numeric_limits<C>::denorm_min()};
        for (int i = 0; i < 30; ++i) parts.push_back(static_cast<C>(std::ldexp(static_cast<double>(rng() >> 11), -40)));
        for (C re : parts)
            for (C im : parts) xs.emplace_back(re, im);
    }
    while (xs.size() % simd::lanes != 0) xs.push_back(xs[xs.size() % 7]);
    return xs;
}

// ---------------------------------------------------------------------------------------------------------
// Conversions.

// Per (From, To) pair only the two conversion loops are instantiated; comparing and reporting are
// untemplated (or per type), which keeps the 225 pairs cheap to compile.
template <class To, class From>
void convert_both_ways(const elements<From>& xs, To* by_batch, To* by_scalar) {
    for (std::size_t i = 0; i < xs.size(); i += simd::lanes) {
        simd::store(by_batch + i, simd::convert<To>(simd::load(&xs[i])));
        // Every third batch again through the partial path, as a loop's tail would: the first n lanes are
        // rewritten with the same values, the rest must keep those of the full conversion.
        if (const int n = static_cast<int>(i / simd::lanes % simd::lanes); i / simd::lanes % 3 == 0)
            simd::store_partial(by_batch + i, simd::convert<To>(simd::load_partial(&xs[i], n)), n);
    }
    for (std::size_t i = 0; i < xs.size(); ++i) by_scalar[i] = mixt::convert<To>(canonical(xs[i]));
}

// What the fused loop stores for a conversion at the root (to f16 or bf16 the lanes are left unrounded, and the
// store rounds them): must be what storing convert<To> writes.
template <class To, class From>
void convert_unrounded_stored(const elements<From>& xs, To* out) {
    for (std::size_t i = 0; i < xs.size(); i += simd::lanes)
        simd::store(out + i, simd::convert_unrounded<To>(simd::load(&xs[i])));
}

template <class T>
std::string show_element(const void* p, std::size_t i) {
    return show(static_cast<const T*>(p)[i]);
}

using shower = std::string (*)(const void*, std::size_t);

int compare_lanes(const std::string& what, const void* in, shower show_in, const void* got, const void* want,
                  shower show_out, std::size_t n, std::size_t out_size) {
    int failures = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto* g = static_cast<const unsigned char*>(got) + i * out_size;
        const auto* w = static_cast<const unsigned char*>(want) + i * out_size;
        if (std::memcmp(g, w, out_size) != 0 && ++failures <= 8) {
            ADD_FAILURE() << what << ", lane " << i % simd::lanes << ": input " << show_in(in, i) << " gave "
                          << show_out(got, i) << ", scalar " << show_out(want, i);
        }
    }
    return failures;
}

template <class From>
void check_convert_to_all() {
    const elements<From> xs = inputs<From>();
    for_each_dtype([&](auto to) {
        using To = typename decltype(to)::type;
        const auto by_batch = std::make_unique<To[]>(xs.size());
        const auto by_scalar = std::make_unique<To[]>(xs.size());
        convert_both_ways<To>(xs, by_batch.get(), by_scalar.get());
        const std::string what = "simd::convert<" + dtype_name<To>() + ">(batch<" + dtype_name<From>() + ">)";
        EXPECT_EQ(compare_lanes(what, &xs[0], &show_element<From>, by_batch.get(), by_scalar.get(), &show_element<To>,
                                xs.size(), sizeof(To)),
                  0)
            << what << " over " << xs.size() << " lanes";
        convert_unrounded_stored<To>(xs, by_batch.get());
        const std::string stored = "storing simd::convert_unrounded<" + dtype_name<To>() + ">(batch<" +
                                   dtype_name<From>() + ">)";
        EXPECT_EQ(compare_lanes(stored, &xs[0], &show_element<From>, by_batch.get(), by_scalar.get(),
                                &show_element<To>, xs.size(), sizeof(To)),
                  0)
            << stored << " over " << xs.size() << " lanes";
    });
}

TEST(simd_convert, from_bool) { check_convert_to_all<bool>(); }
TEST(simd_convert, from_u8) { check_convert_to_all<std::uint8_t>(); }
TEST(simd_convert, from_u16) { check_convert_to_all<std::uint16_t>(); }
TEST(simd_convert, from_u32) { check_convert_to_all<std::uint32_t>(); }
TEST(simd_convert, from_u64) { check_convert_to_all<std::uint64_t>(); }
TEST(simd_convert, from_i8) { check_convert_to_all<std::int8_t>(); }
TEST(simd_convert, from_i16) { check_convert_to_all<std::int16_t>(); }
TEST(simd_convert, from_i32) { check_convert_to_all<std::int32_t>(); }
TEST(simd_convert, from_i64) { check_convert_to_all<std::int64_t>(); }
TEST(simd_convert, from_bf16) { check_convert_to_all<Eigen::bfloat16>(); }
TEST(simd_convert, from_f16) { check_convert_to_all<Eigen::half>(); }
TEST(simd_convert, from_f32) { check_convert_to_all<float>(); }
TEST(simd_convert, from_f64) { check_convert_to_all<double>(); }
TEST(simd_convert, from_c64) { check_convert_to_all<c64>(); }
TEST(simd_convert, from_c128) { check_convert_to_all<c128>(); }

// ---------------------------------------------------------------------------------------------------------
// Memory operations.

#if defined(MIXT_TEST_HAVE_GUARD_PAGES)
// One read-write page between two pages whose access faults: data placed flush against either end shows
// any access outside [p, p + n) as a crash.
class guarded_page {
  public:
    guarded_page() : size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
        void* m = mmap(nullptr, 3 * size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
        base_ = static_cast<char*>(m);
        mprotect(base_, size_, PROT_NONE);
        mprotect(base_ + 2 * size_, size_, PROT_NONE);
    }
    ~guarded_page() { munmap(base_, 3 * size_); }
    guarded_page(const guarded_page&) = delete;
    guarded_page& operator=(const guarded_page&) = delete;

    template <class T>
    T* at_start() const {
        return reinterpret_cast<T*>(base_ + size_);
    }
    template <class T>
    T* ending_at_end(int n) const {
        return reinterpret_cast<T*>(base_ + 2 * size_ - static_cast<std::size_t>(n) * sizeof(T));
    }

  private:
    std::size_t size_;
    char* base_ = nullptr;
};
#endif

template <class T>
void check_memory_ops() {
    const elements<T> xs = inputs<T>();
    std::mt19937 rng(7);
    const T zero{};
    constexpr int guard = 16; // elements of sentinel on each side of a store
    for (int round = 0; round < 64; ++round) {
        const std::size_t at = (rng() % (xs.size() / simd::lanes)) * simd::lanes;
        const T* src = &xs[at];

        // Full load and store.
        std::vector<unsigned char> dst((guard * 2 + simd::lanes) * sizeof(T), 0xa5);
        T* p = reinterpret_cast<T*>(dst.data()) + guard;
        simd::store(p, simd::load(src));
        for (int j = 0; j < simd::lanes; ++j)
            ASSERT_TRUE(same_bits(p[j], canonical(src[j]))) << dtype_name<T>() << " store(load) lane " << j;
        for (std::size_t k = 0; k < dst.size(); ++k) {
            if (k < guard * sizeof(T) || k >= (guard + simd::lanes) * sizeof(T)) {
                ASSERT_EQ(dst[k], 0xa5) << dtype_name<T>() << " store wrote outside its 8 elements";
            }
        }

        for (int n = 0; n < simd::lanes; ++n) {
            // Partial load: lanes below n are the elements, the rest zero.
            T out[simd::lanes];
            simd::to_array(simd::load_partial(src, n), out);
            for (int j = 0; j < simd::lanes; ++j) {
                const T want = j < n ? canonical(src[j]) : zero;
                ASSERT_TRUE(same_bits(out[j], want)) << dtype_name<T>() << " load_partial n=" << n << " lane " << j;
            }
            // Partial store: exactly n elements written.
            std::fill(dst.begin(), dst.end(), static_cast<unsigned char>(0x5a));
            simd::store_partial(p, simd::load(src), n);
            for (int j = 0; j < n; ++j)
                ASSERT_TRUE(same_bits(p[j], canonical(src[j]))) << dtype_name<T>() << " store_partial n=" << n;
            for (std::size_t k = 0; k < dst.size(); ++k) {
                if (k < guard * sizeof(T) || k >= (guard + static_cast<std::size_t>(n)) * sizeof(T)) {
                    ASSERT_EQ(dst[k], 0x5a) << dtype_name<T>() << " store_partial n=" << n << " wrote byte " << k;
                }
            }
        }
    }

#if defined(MIXT_TEST_HAVE_GUARD_PAGES)
    // Flush against faulting pages: a read or write outside [p, p + n) would crash the test.
    guarded_page page;
    for (int n = 0; n <= simd::lanes; ++n) {
        for (T* q : {page.ending_at_end<T>(n), page.at_start<T>()}) {
            for (int j = 0; j < n; ++j) q[j] = xs[static_cast<std::size_t>(j)];
            T out[simd::lanes];
            if (n == simd::lanes) {
                simd::to_array(simd::load(q), out);
                simd::store(q, simd::load(q));
            } else {
                simd::to_array(simd::load_partial(q, n), out);
                simd::store_partial(q, simd::broadcast(xs[1]), n);
            }
            for (int j = 0; j < n; ++j) ASSERT_TRUE(same_bits(out[j], canonical(xs[static_cast<std::size_t>(j)])));
        }
    }
#endif

    // Broadcast.
    for (std::size_t i = 0; i < xs.size(); i += xs.size() / 97 + 1) {
        T out[simd::lanes];
        simd::to_array(simd::broadcast(xs[i]), out);
        for (int j = 0; j < simd::lanes; ++j)
            ASSERT_TRUE(same_bits(out[j], canonical(xs[i]))) << dtype_name<T>() << " broadcast " << show(xs[i]);
    }
}

TEST(simd_memory, load_store_partial_broadcast_every_dtype) {
    for_each_dtype([](auto t) {
        SCOPED_TRACE(dtype_name<typename decltype(t)::type>());
        check_memory_ops<typename decltype(t)::type>();
    });
}

TEST(simd_memory, layout_matches_the_documented_representation) {
    EXPECT_EQ(simd::lanes, 8);
    if constexpr (simd::avx2) {
        EXPECT_EQ(sizeof(simd::batch<bool>), 32u);
        EXPECT_EQ(sizeof(simd::batch<std::int8_t>), 32u);
        EXPECT_EQ(sizeof(simd::batch<std::uint64_t>), 64u);
        EXPECT_EQ(sizeof(simd::batch<Eigen::half>), 32u);
        EXPECT_EQ(sizeof(simd::batch<double>), 64u);
        EXPECT_EQ(sizeof(simd::batch<c64>), 64u);
        EXPECT_EQ(sizeof(simd::batch<c128>), 128u);
    } else {
        EXPECT_EQ(sizeof(simd::batch<std::int8_t>), 8u);
        EXPECT_EQ(sizeof(simd::batch<Eigen::half>), 16u);
    }
}

#if MIXT_SIMD_AVX2
// The fused loop computes f16/bf16 nodes in f32 and may store the f32 result straight into a half/bfloat16
// batch: storing rounds each lane to nearest even, as convert would.
TEST(simd_memory, storing_f16_and_bf16_batches_rounds_arbitrary_f32_lanes) {
    const elements<float> xs = inputs<float>();
    for (std::size_t i = 0; i < xs.size(); i += simd::lanes) {
        const __m256 v = _mm256_loadu_ps(&xs[i]);
        Eigen::half h[simd::lanes];
        Eigen::bfloat16 b[simd::lanes];
        simd::store(h, simd::batch<Eigen::half>{v});
        simd::store(b, simd::batch<Eigen::bfloat16>{v});
        for (int j = 0; j < simd::lanes; ++j) {
            ASSERT_TRUE(same_bits(h[j], mixt::convert<Eigen::half>(xs[i + static_cast<std::size_t>(j)])))
                << show(xs[i]);
            ASSERT_TRUE(same_bits(b[j], mixt::convert<Eigen::bfloat16>(xs[i + static_cast<std::size_t>(j)])));
        }
    }
}
#endif

} // namespace
