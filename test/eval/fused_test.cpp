// mixt/eval/fused.hpp: the fused CPU loop. Which kernels take the scalar block loop (compiler-vectorized)
// and which the simd::batch loop, and that both give the per-element results at every size around their
// block, unroll and vector boundaries, in place too; and that a complex + or - of a leaf, whose leaf is
// combined straight from memory (store_batch), gives them bit for bit, also where the other operand is a
// complex<float> leaf times a float computed in memory order (`c64 * f32 + c128`); that the leaf pointers
// handed to the loop as arguments follow the kernel's order; and which passes prefetch, and that every loop gives
// the same results when it prefetches its stores.

#include <mixt/mixt.hpp>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace d = mixt::detail;
using i8 = std::int8_t;
using u8 = std::uint8_t;
using i16 = std::int16_t;
using i64 = std::int64_t;
using u32 = std::uint32_t;

template <class E>
using kernel_t = decltype(d::make_kernel<mixt::value_t<E>>(std::declval<const E&>()));

template <class T>
Eigen::Tensor<T, 1> random_tensor(Eigen::Index n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(-100, 100);
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) t(i) = static_cast<T>(dist(gen));
    return t;
}

TEST(fused, which_kernels_take_the_block_loop) {
    using T8 = Eigen::Tensor<i8, 1>;
    using TU8 = Eigen::Tensor<u8, 1>;
    using TF = Eigen::Tensor<float, 1>;
    using TH = Eigen::Tensor<Eigen::half, 1>;
    using TC = Eigen::Tensor<std::complex<float>, 1>;
    using TI64 = Eigen::Tensor<i64, 1>;
    using TU32 = Eigen::Tensor<u32, 1>;
    // Integer arithmetic and conversions, integers to float, float arithmetic: the block loop.
    static_assert(d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TU8&>()) + std::declval<const T8&>())>>);
    static_assert(d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const T8&>()) + std::declval<const TF&>())>>);
    static_assert(d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TF&>()) * 0.5 + std::declval<const T8&>())>>);
    static_assert(d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TI64&>()) + std::declval<const TU32&>())>>);
    // f16, complex, division, and 64-bit integers to float: simd::batch.
    static_assert(!d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TH&>()) + std::declval<const TF&>())>>);
    static_assert(!d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TC&>()) * std::declval<const TF&>())>>);
    static_assert(!d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TF&>()) / std::declval<const TF&>())>>);
    static_assert(!d::block_kernel_v<kernel_t<decltype(mixt::lazy(std::declval<const TI64&>()) + std::declval<const TF&>())>>);
    // Of the eligible kernels, those with a node narrower than 32 bits run the block loop (16 x i16 per AVX2
    // register); where every node is 32 or 64 bits wide the batch loop widens narrow leaves as it loads them.
    using KU8I8 = kernel_t<decltype(mixt::lazy(std::declval<const TU8&>()) + std::declval<const T8&>())>;
    using KI8F = kernel_t<decltype(mixt::lazy(std::declval<const T8&>()) + std::declval<const TF&>())>;
    using KI64 = kernel_t<decltype(mixt::lazy(std::declval<const TI64&>()) + std::declval<const TU32&>())>;
    static_assert(d::use_block_loop_v<i16, KU8I8>);
    static_assert(!d::use_block_loop_v<float, KI8F>);
    static_assert(!d::use_block_loop_v<i64, KI64>);
    static_assert(d::use_block_loop_v<i8, kernel_t<decltype(mixt::lazy(std::declval<const T8&>()))>>);
    // Of those, the u16 and i16 results whose every node has a version on 16-bit lanes take the loop on words where
    // the target has them: AVX-512, and AVX2 with MIXT_SIMD_AVX2_WORDS (every test build with AVX2).
    static_assert(d::word_loop_v<i16, KU8I8> == (mixt::simd::avx512 || MIXT_SIMD_AVX2_WORDS != 0));
    static_assert(!d::word_loop_v<i8, kernel_t<decltype(mixt::lazy(std::declval<const T8&>()))>>);
    SUCCEED();
}

// Software prefetch (of the destination beyond L1's size, of the inputs too above the larger threshold) only
// where it pays: not on AMD CPUs. The vendor is read here from /proc/cpuinfo, independently of the CPUID
// instruction that mixt asks.
TEST(fused, prefetch_and_division_by_reciprocal_follow_the_cpu_vendor) {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, vendor;
    while (vendor.empty() && std::getline(cpuinfo, line))
        if (line.rfind("vendor_id", 0) == 0) vendor = line.substr(line.find(':') + 1);
    if (vendor.empty()) GTEST_SKIP() << "no vendor_id in /proc/cpuinfo";
    const bool amd = vendor.find("AuthenticAMD") != std::string::npos;
    EXPECT_EQ(mixt::simd::cpu_is_amd(), amd) << vendor;
    EXPECT_EQ(d::software_prefetch_pays(), !amd) << vendor;
    EXPECT_EQ(d::division_by_reciprocal_pays(), !amd) << vendor;
    EXPECT_EQ(d::const_kernel<float>::of(255.0f).divisor.by_reciprocal, !amd && mixt::simd::avx512); // (16 lanes only)
    using enum d::prefetch_kind;
    const auto big = static_cast<Eigen::Index>(d::prefetch_threshold_bytes);
    const auto beyond_l1 = static_cast<Eigen::Index>(d::store_prefetch_threshold_bytes);
    EXPECT_EQ(d::options_for(big, 1).prefetch, amd ? none : loads_and_stores);
    EXPECT_EQ(d::options_for(big - 1, 1).prefetch, amd ? none : stores);
    EXPECT_EQ(d::options_for(beyond_l1, 1).prefetch, amd ? none : stores);
    EXPECT_EQ(d::options_for(beyond_l1 - 1, 1).prefetch, none);
    EXPECT_EQ(d::into_buffer(stores), none);
    EXPECT_EQ(d::into_buffer(loads_and_stores), loads_and_stores);
}

// Every size from 0 to past two blocks and a few unrolled iterations: the block loop, the unrolled loop, the
// one-batch loop and the partial tail each start and stop at every offset.
TEST(fused, every_size_matches_the_per_element_definition) {
    for (Eigen::Index n = 0; n <= 2 * d::block_length + 3 * d::unroll_v<float> * 8 + 9; ++n) {
        const auto a = random_tensor<u8>(n, 1);
        const auto b = random_tensor<i8>(n, 2);
        const auto c = random_tensor<Eigen::half>(n, 3);
        const auto f = random_tensor<float>(n, 4);
        const Eigen::Tensor<i16, 1> sum = mixt::eval(mixt::lazy(a) + b); // block loop (on AVX-512: the loop on words)
        const Eigen::Tensor<float, 1> mixed = mixt::eval(mixt::lazy(c) * f + b); // simd::batch, unrolled
        const Eigen::Tensor<float, 1> widened = mixt::eval(mixt::lazy(b) * f + a); // eligible, on simd::batch
        for (Eigen::Index i = 0; i < n; ++i) {
            ASSERT_EQ(sum(i), d::add_fn{}(mixt::convert<i16>(a(i)), mixt::convert<i16>(b(i)))) << "n=" << n << " i=" << i;
            const float want = d::add_fn{}(d::mul_fn{}(mixt::convert<float>(c(i)), f(i)), mixt::convert<float>(b(i)));
            ASSERT_EQ(mixed(i), want) << "n=" << n << " i=" << i;
            const float want_widened =
                d::add_fn{}(d::mul_fn{}(mixt::convert<float>(b(i)), f(i)), mixt::convert<float>(a(i)));
            ASSERT_EQ(widened(i), want_widened) << "n=" << n << " i=" << i;
        }
    }
}

// bf16 results of f32 values at every size past a few unrolled iterations (with AVX2, the unrolled batches stored in
// pairs, simd::store_pair; with AVX512-BF16, the CPU's conversion and its subnormal lanes redone), bit for bit
// mixt::convert's: ties both ways, subnormals, infinities, and NaNs whose low 16 bits a rounding bias would carry
// into the high half (signaling ones among them: their quiet bit set, never rounded into an infinity).
TEST(fused, bf16_results_match_the_per_element_definition) {
    const std::uint32_t specials[] = {0x7f800001u, 0xff800001u, 0x7fc0ffffu, 0xffbfffffu, 0x7f80ffffu, 0x7fffffffu,
                                      0x00000001u, 0x80007fffu, 0x00008000u, 0x00018000u, 0x3f808000u, 0x3f818000u,
                                      0x7f7fffffu, 0xff7f8000u, 0x7f800000u, 0x80000000u};
    std::mt19937 gen(7);
    std::uniform_int_distribution<std::uint32_t> bits;
    std::uniform_int_distribution<int> pick(0, 3);
    for (Eigen::Index n = 0; n <= 4 * d::unroll_v<float> * 8 + 9; ++n) {
        Eigen::Tensor<float, 1> f(n);
        for (Eigen::Index i = 0; i < n; ++i)
            f(i) = std::bit_cast<float>(pick(gen) == 0 ? specials[static_cast<std::size_t>(i) % std::size(specials)] : bits(gen));
        const Eigen::Tensor<Eigen::bfloat16, 1> r = mixt::eval(mixt::cast<Eigen::bfloat16>(f));
        const Eigen::Tensor<Eigen::bfloat16, 1> sum = mixt::eval(mixt::cast<Eigen::bfloat16>(mixt::lazy(f) + f));
        for (Eigen::Index i = 0; i < n; ++i) {
            ASSERT_EQ(std::bit_cast<std::uint16_t>(r(i)), std::bit_cast<std::uint16_t>(mixt::convert<Eigen::bfloat16>(f(i))))
                << "n=" << n << " i=" << i << " bits " << std::bit_cast<std::uint32_t>(f(i));
            ASSERT_EQ(std::bit_cast<std::uint16_t>(sum(i)),
                      std::bit_cast<std::uint16_t>(mixt::convert<Eigen::bfloat16>(d::add_fn{}(f(i), f(i)))))
                << "n=" << n << " i=" << i << " bits " << std::bit_cast<std::uint32_t>(f(i));
        }
    }
}

// A bf16 leaf widened to f32 as an operand of f32 arithmetic, which quiets a signaling NaN itself (batch_operand
// then skips the load's quieting), and of maximum, which does not (the load's quieting stays): at every size past
// a few unrolled iterations, bit for bit against each element's definition, signaling and quiet NaNs of both signs
// in both operands.
TEST(fused, widened_bf16_operands_match_the_per_element_definition) {
    const std::uint16_t specials[] = {0x7f81, 0xff81, 0x7fa5, 0x7fc1, 0xffc0, 0x7f80, 0x0001, 0x8000, 0x3f80};
    std::mt19937 gen(11);
    std::uniform_int_distribution<std::uint32_t> bits;
    std::uniform_int_distribution<int> pick(0, 3);
    for (Eigen::Index n = 0; n <= 3 * d::unroll_v<float> * 8 + 9; ++n) {
        Eigen::Tensor<float, 1> a(n);
        Eigen::Tensor<Eigen::bfloat16, 1> b(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            const std::uint32_t r = bits(gen);
            const bool special = pick(gen) == 0;
            b(i) = std::bit_cast<Eigen::bfloat16>(special ? specials[static_cast<std::size_t>(i) % std::size(specials)]
                                                          : static_cast<std::uint16_t>(r >> 16));
            a(i) = std::bit_cast<float>(special && i % 2 == 0 ? 0x7f800001u + (r & 0xffu) : r);
        }
        const Eigen::Tensor<float, 1> difference = mixt::eval(mixt::lazy(a) - b);
        const Eigen::Tensor<float, 1> product = mixt::eval(mixt::lazy(b) * a);
        const Eigen::Tensor<float, 1> larger = mixt::eval(mixt::maximum(mixt::lazy(a), b));
        for (Eigen::Index i = 0; i < n; ++i) {
            const float w = mixt::convert<float>(b(i));
            const auto u = [](float x) { return std::bit_cast<std::uint32_t>(x); };
            if (std::isnan(a(i)) && std::isnan(w)) { // which NaN is the compiler's choice (README, "NaN")
                ASSERT_TRUE(std::isnan(difference(i)) && std::isnan(product(i))) << "n=" << n << " i=" << i;
            } else {
                ASSERT_EQ(u(difference(i)), u(d::sub_fn{}(a(i), w))) << "n=" << n << " i=" << i << " b " << u(w);
                ASSERT_EQ(u(product(i)), u(d::mul_fn{}(w, a(i)))) << "n=" << n << " i=" << i << " b " << u(w);
            }
            ASSERT_EQ(u(larger(i)), u(d::maximum_fn{}(a(i), w))) << "n=" << n << " i=" << i << " b " << u(w);
        }
    }
}

// f32 divided by a literal (on AVX-512 CPUs where division_by_reciprocal_pays: by a multiplication, simd/divide.hpp)
// at every size past a few unrolled iterations, against the division of each element: u8 values (every one) and
// f32 values with zeros, subnormals, infinities and NaNs among them, by divisors of either sign (each taken by
// the multiplications where the CPU's rule says so: a short significand, and the theorem's case).
TEST(fused, division_by_a_literal_matches_the_per_element_definition) {
    const float specials[] = {0.0f, -0.0f, 1e-40f, -1e-30f, 1e30f, INFINITY, -INFINITY, NAN, 3.4e38f};
    for (Eigen::Index n = 0; n <= 3 * d::unroll_v<float> * 16 + 9; ++n) {
        const auto a = random_tensor<u8>(n, 5);
        auto f = random_tensor<float>(n, 6);
        for (Eigen::Index i = 0; i < n; i += 61) f(i) = specials[(i / 61) % std::size(specials)]; // most batches without
        const Eigen::Tensor<float, 1> scaled = mixt::eval(mixt::lazy(a) / 255);
        const Eigen::Tensor<float, 1> thirds = mixt::eval(mixt::lazy(f) / 3.0f);
        const Eigen::Tensor<float, 1> negated = mixt::eval(mixt::lazy(f) / -0.229f);
        for (Eigen::Index i = 0; i < n; ++i) {
            const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
            ASSERT_EQ(bits(scaled(i)), bits(static_cast<float>(a(i)) / 255.0f)) << "n=" << n << " i=" << i;
            if (std::isnan(f(i))) {
                ASSERT_TRUE(std::isnan(thirds(i)) && std::isnan(negated(i))) << "n=" << n << " i=" << i;
                continue;
            }
            ASSERT_EQ(bits(thirds(i)), bits(f(i) / 3.0f)) << "n=" << n << " i=" << i << " " << f(i);
            ASSERT_EQ(bits(negated(i)), bits(f(i) / -0.229f)) << "n=" << n << " i=" << i << " " << f(i);
        }
    }
}

// The single-threaded pass hands the loop the kernel's run-time values as arguments (kernel_args), and the loop
// builds its own kernel from them (kernel_from_args, run_range_of): both must list them in the kernel's own
// order, through literals, comparisons with a literal, conversions and nodes of three children, where values of
// one type may trade places without a type error.
TEST(fused, kernel_args_follow_the_kernel) {
    const Eigen::Index n = 2 * d::block_length + 3 * d::unroll_v<float> * 8 + 5;
    const auto x = random_tensor<float>(n, 11);
    const auto y = random_tensor<float>(n, 12);
    const auto z = random_tensor<float>(n, 13);
    const auto h = random_tensor<Eigen::half>(n, 14);
    const auto b = random_tensor<i8>(n, 15);
    const auto e = mixt::where(mixt::lazy(b) > 0, x, y) - mixt::lazy(z) * 0.5 + h;
    EXPECT_EQ(d::leaf_pointers_of(e), std::tuple(b.data(), x.data(), y.data(), z.data(), h.data()));
    const auto kernel = d::make_kernel<float>(e);
    using K = std::remove_const_t<decltype(kernel)>;
    static_assert(d::kernel_arg_count_v<K> == 12);
    const auto args = d::kernel_args(kernel);
    constexpr Eigen::Index all = ~Eigen::Index{0}; // a leaf's mask: every element its own (not a broadcast)
    EXPECT_EQ(std::get<0>(args), b.data());
    EXPECT_EQ(std::get<1>(args), all);
    EXPECT_EQ(std::get<2>(args).literal, 0);
    EXPECT_EQ(std::get<2>(args).converted, i8{0});
    EXPECT_TRUE(std::get<2>(args).fits);
    EXPECT_EQ(std::get<3>(args), x.data());
    EXPECT_EQ(std::get<4>(args), all);
    EXPECT_EQ(std::get<5>(args), y.data());
    EXPECT_EQ(std::get<6>(args), all);
    EXPECT_EQ(std::get<7>(args), z.data());
    EXPECT_EQ(std::get<8>(args), all);
    EXPECT_EQ(std::get<9>(args), 0.5f);
    EXPECT_EQ(std::get<10>(args), h.data());
    EXPECT_EQ(std::get<11>(args), all);
    // Other values, each where it belongs: x and y trade places, the comparison's literal becomes 10, the
    // product's 0.25, and z is a broadcast of its first element (mask 0 over broadcast_copies copies of it).
    // The loop computes every element with them, at a size that runs every loop and a tail.
    auto above_10 = std::get<2>(args);
    above_10.literal = 10;
    above_10.converted = 10;
    const std::vector<float> z0(static_cast<std::size_t>(d::broadcast_copies), z(0));
    Eigen::Tensor<float, 1> moved(n);
    d::run_range_of<d::prefetch_kind::none, false, float, K>(moved.data(), 0, n, b.data(), all, above_10, y.data(), all, x.data(), all,
                                            z0.data(), Eigen::Index{0}, 0.25f, h.data(), all);
    for (Eigen::Index i = 0; i < n; ++i) {
        const float chosen = b(i) > 10 ? y(i) : x(i);
        const float want_i = d::add_fn{}(d::sub_fn{}(chosen, d::mul_fn{}(z(0), 0.25f)), mixt::convert<float>(h(i)));
        ASSERT_EQ(moved(i), want_i) << i;
    }
    // And the pass over the expression's own values.
    const Eigen::Tensor<float, 1> got = mixt::eval(e);
    for (Eigen::Index i = 0; i < n; ++i) {
        const float chosen = b(i) > 0 ? x(i) : y(i);
        const float want_i = d::add_fn{}(d::sub_fn{}(chosen, d::mul_fn{}(z(i), 0.5f)), mixt::convert<float>(h(i)));
        ASSERT_EQ(got(i), want_i) << i;
    }
}

// In place: the destination is one of the leaves (the only overlap assign allows), on both loops.
TEST(fused, in_place_on_both_loops) {
    const Eigen::Index n = 3 * d::block_length + 13;
    auto x = random_tensor<i16>(n, 5);
    const auto y = random_tensor<i8>(n, 6);
    const Eigen::Tensor<i16, 1> x0 = x;
    mixt::assign(x, mixt::lazy(x) * y - x);
    for (Eigen::Index i = 0; i < n; ++i)
        ASSERT_EQ(x(i), static_cast<i16>(x0(i) * y(i) - x0(i))) << i;
    auto h = random_tensor<Eigen::half>(n, 7);
    const Eigen::Tensor<Eigen::half, 1> h0 = h;
    mixt::assign(h, mixt::lazy(h) + h);
    for (Eigen::Index i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<float>(h(i)), static_cast<float>(h0(i)) * 2) << i;
}

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// Random parts in [-8, 8), with every few elements a special part: NaN, +-inf, -0, a subnormal, the largest.
template <class T>
Eigen::Tensor<T, 1> special_tensor(Eigen::Index n, unsigned seed) {
    using R = typename T::value_type;
    using lim = std::numeric_limits<R>;
    const R specials[] = {lim::quiet_NaN(), lim::infinity(), -lim::infinity(), R(-0.0), lim::denorm_min(), lim::max()};
    std::mt19937 gen(seed);
    std::uniform_real_distribution<R> dist(-8, 8);
    auto part = [&] { return gen() % 5 == 0 ? specials[gen() % 6] : dist(gen); };
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const R re = part();
        t(i) = T(re, part());
    }
    return t;
}

// The same bits in each part, or NaN in both (which NaN an addition of two NaNs keeps is the hardware's
// choice, and the compiler may swap a scalar sum's operands).
template <class T>
bool same(const T& got, const T& want) {
    auto part = [](auto g, auto w) {
        return (std::isnan(g) && std::isnan(w)) || std::memcmp(&g, &w, sizeof g) == 0;
    };
    return part(got.real(), want.real()) && part(got.imag(), want.imag());
}

TEST(fused, complex_sum_with_a_leaf_is_combined_from_memory) {
    using TC64 = Eigen::Tensor<c64, 1>;
    using TC128 = Eigen::Tensor<c128, 1>;
    using TF = Eigen::Tensor<float, 1>;
    // The root's leaf operand is combined from memory under AVX2, also when the other operand is a complex<float>
    // batch widened to complex<double>.
    using K1 = kernel_t<decltype(mixt::lazy(std::declval<const TC64&>()) * std::declval<const TF&>() +
                                 std::declval<const TC128&>())>;
    using K2 = kernel_t<decltype(mixt::lazy(std::declval<const TC64&>()) - std::declval<const TC64&>())>;
    using K3 = kernel_t<decltype(mixt::lazy(std::declval<const TC64&>()) * std::declval<const TC64&>())>;
    static_assert(d::combined_root_v<c128, K1> == bool(MIXT_SIMD_AVX2));
    static_assert(d::combined_root_v<c64, K2> == bool(MIXT_SIMD_AVX2));
    static_assert(!d::combined_root_v<c64, K3>);

    // Every size past a few unrolled iterations of the complex<float> loop (4 batches) and of the
    // complex<double> one (1 batch), so every path starts and stops at every offset.
    for (Eigen::Index n = 0; n <= 3 * d::unroll_v<c64> * 8 + 9; ++n) {
        const auto a = special_tensor<c64>(n, 11);
        const auto b = special_tensor<c64>(n, 12);
        const auto x = special_tensor<c128>(n, 13);
        const auto y = special_tensor<c128>(n, 14);
        auto f = random_tensor<float>(n, 15);
        for (Eigen::Index i = 0; i < n; i += 7) f(i) = i % 2 ? std::numeric_limits<float>::infinity() : -0.0f;
        const TC128 widened_right = mixt::eval(mixt::lazy(a) * f + x);
        const TC128 widened_left = mixt::eval(mixt::lazy(x) - a * f);
        const TC64 narrow_right = mixt::eval(mixt::lazy(a) * b - b);
        const TC64 narrow_left = mixt::eval(mixt::lazy(b) + a * f);
        const TC128 both_leaves = mixt::eval(mixt::lazy(x) - y);
        TC128 in_place = y;
        mixt::assign(in_place, mixt::lazy(a) * f + in_place);
        for (Eigen::Index i = 0; i < n; ++i) {
            const c64 af = d::mul_fn{}(a(i), mixt::convert<c64>(f(i)));
            const c128 af128 = mixt::convert<c128>(af);
            ASSERT_PRED2(same<c128>, widened_right(i), d::add_fn{}(af128, x(i))) << "n=" << n << " i=" << i;
            ASSERT_PRED2(same<c128>, widened_left(i), d::sub_fn{}(x(i), af128)) << "n=" << n << " i=" << i;
            ASSERT_PRED2(same<c64>, narrow_right(i), d::sub_fn{}(d::mul_fn{}(a(i), b(i)), b(i))) << "n=" << n << " i=" << i;
            ASSERT_PRED2(same<c64>, narrow_left(i), d::add_fn{}(b(i), af)) << "n=" << n << " i=" << i;
            ASSERT_PRED2(same<c128>, both_leaves(i), d::sub_fn{}(x(i), y(i))) << "n=" << n << " i=" << i;
            ASSERT_PRED2(same<c128>, in_place(i), d::add_fn{}(af128, y(i))) << "n=" << n << " i=" << i;
        }
    }
}

// `c64 * f32 +- c128` (and the mirrored forms) with the complex<float> operand a leaf: under AVX2 the product is
// computed in memory order (simd::apply_real_product_store), and a batch with a lane that is NaN in both parts
// goes the planar way. Every complex<float> whose parts are two of the specials, times every special float, in
// every operand order, against the per-element definition.
TEST(fused, complex_leaf_times_a_float_is_computed_in_memory_order) {
    using TC64 = Eigen::Tensor<c64, 1>;
    using TC128 = Eigen::Tensor<c128, 1>;
    using TF = Eigen::Tensor<float, 1>;
    using lim = std::numeric_limits<float>;
    using KR = kernel_t<decltype(mixt::lazy(std::declval<const TC64&>()) * std::declval<const TF&>() +
                                 std::declval<const TC128&>())>;
    using KL = kernel_t<decltype(mixt::lazy(std::declval<const TC128&>()) -
                                 mixt::lazy(std::declval<const TF&>()) * std::declval<const TC64&>())>;
    static_assert(d::real_product_operand<c128, d::add_fn, std::tuple_element_t<0, decltype(KR::ks)>>::value ==
                  bool(MIXT_SIMD_AVX2));
    static_assert(d::real_product_operand<c128, d::sub_fn, std::tuple_element_t<1, decltype(KL::ks)>>::value ==
                  bool(MIXT_SIMD_AVX2));

    const float specials[] = {0.0f, -0.0f, 1.0f, -2.5f, lim::infinity(), -lim::infinity(), lim::quiet_NaN(),
                              -lim::quiet_NaN(), lim::denorm_min(), -lim::min(), lim::max(), 3e-30f};
    constexpr Eigen::Index s = sizeof specials / sizeof specials[0];
    // Lengths that end inside a batch too (a partial tail takes the planar path), and one above the streaming
    // threshold (44 bytes per element), whose batches are streamed (stream_batch).
    const Eigen::Index streamed = static_cast<Eigen::Index>(d::streaming_threshold_bytes / 44) + 333;
    ASSERT_TRUE(d::use_streaming(streamed, 44) || !mixt::simd::streaming_stores);
    for (const Eigen::Index n : {s * s * s, s * s * s - 5, streamed}) {
        TC64 a(n);
        TF f(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            a(i) = c64(specials[i % s], specials[(i / s) % s]);
            f(i) = specials[(i / (s * s)) % s];
        }
        // The third operand: random parts with specials, and zeros of either sign, which keep the sign of a zero
        // part of the product in the sum (-0 + p, p - +0, -0 - p), so that a wrong sign there is seen.
        TC128 zeros(n), minus_zeros(n);
        for (Eigen::Index i = 0; i < n; ++i) zeros(i) = c128(0.0, 0.0), minus_zeros(i) = c128(-0.0, -0.0);
        for (const auto& x : {special_tensor<c128>(n, 21), zeros, minus_zeros}) {
            const TC128 leaf_left_add = mixt::eval(mixt::lazy(a) * f + x);
            const TC128 leaf_left_sub = mixt::eval(mixt::lazy(a) * f - x);
            const TC128 real_left_add = mixt::eval(mixt::lazy(f) * a + x);
            const TC128 x_left_sub = mixt::eval(mixt::lazy(x) - mixt::lazy(f) * a);
            const TC128 x_left_add = mixt::eval(mixt::lazy(x) + mixt::lazy(a) * f);
            for (Eigen::Index i = 0; i < n; ++i) {
                const c64 af = d::mul_fn{}(a(i), mixt::convert<c64>(f(i)));
                const c64 fa = d::mul_fn{}(mixt::convert<c64>(f(i)), a(i));
                const c128 af128 = mixt::convert<c128>(af), fa128 = mixt::convert<c128>(fa);
                const auto at = [&] { return "n=" + std::to_string(n) + " i=" + std::to_string(i); };
                ASSERT_PRED2(same<c128>, leaf_left_add(i), d::add_fn{}(af128, x(i))) << at();
                ASSERT_PRED2(same<c128>, leaf_left_sub(i), d::sub_fn{}(af128, x(i))) << at();
                ASSERT_PRED2(same<c128>, real_left_add(i), d::add_fn{}(fa128, x(i))) << at();
                ASSERT_PRED2(same<c128>, x_left_sub(i), d::sub_fn{}(x(i), fa128)) << at();
                ASSERT_PRED2(same<c128>, x_left_add(i), d::add_fn{}(x(i), af128)) << at();
            }
        }
    }
}

// Passes of more than L1's size ask for their destination's lines ahead of the stores (where software prefetch
// pays; elsewhere they run without, and the values are the same): the block loop, the 16-lane loop, the loop on
// words, the unrolled batch loop and the one-batch loop of complex<double> (whose pass, past
// prefetch_threshold_bytes, prefetches its inputs too), each with a tail past its last whole iteration, give the
// per-element results, and the elements past the destination, which the prefetches reach, keep their values.
TEST(fused, passes_that_prefetch_their_stores_match_the_per_element_definition) {
    using i32 = std::int32_t;
    const auto n = static_cast<Eigen::Index>(d::store_prefetch_threshold_bytes / 4 + 77); // every pass below moves >= 4 bytes per element
    constexpr Eigen::Index guard = 64;
    const auto a = random_tensor<u8>(n, 21);
    const auto b = random_tensor<i8>(n, 22);
    const auto j = random_tensor<i32>(n, 23);
    const auto f = random_tensor<float>(n, 24);
    const auto x = random_tensor<double>(n, 25);
    const auto k = random_tensor<i64>(n, 26);
    const auto c = special_tensor<c64>(n, 27);
    const auto z = special_tensor<c128>(n, 28);
    // Writes e into the first n of n + guard elements filled with `fill`, checks the plan's prefetch and the
    // guard, and hands the n results to `check`.
    const auto run = [&](auto e, auto fill, auto check) {
        using T = mixt::value_t<decltype(e)>;
        std::vector<T> memory(static_cast<std::size_t>(n + guard), fill);
        Eigen::TensorMap<Eigen::Tensor<T, 1>> dst(memory.data(), n);
        const std::string plan = mixt::explain(dst, e);
        EXPECT_EQ(plan.find("ahead of the stores") != std::string::npos, d::software_prefetch_pays()) << plan;
        mixt::assign(dst, e);
        for (Eigen::Index i = n; i < n + guard; ++i)
            ASSERT_EQ(std::memcmp(&memory[static_cast<std::size_t>(i)], &fill, sizeof fill), 0) << "guard " << i - n;
        for (Eigen::Index i = 0; i < n; ++i) check(i, memory[static_cast<std::size_t>(i)]);
    };
    run(mixt::lazy(j) + x, -1.0, [&](Eigen::Index i, double got) { // the block loop (8-byte results)
        ASSERT_EQ(got, d::add_fn{}(mixt::convert<double>(j(i)), x(i))) << i;
    });
    run(mixt::lazy(a) * f + f, -1.0f, [&](Eigen::Index i, float got) { // 16 lanes (on AVX-512)
        ASSERT_EQ(got, d::add_fn{}(d::mul_fn{}(mixt::convert<float>(a(i)), f(i)), f(i))) << i;
    });
    run(mixt::lazy(a) + b, i16{-1}, [&](Eigen::Index i, i16 got) { // words (on AVX-512), else the block loop
        ASSERT_EQ(got, d::add_fn{}(mixt::convert<i16>(a(i)), mixt::convert<i16>(b(i)))) << i;
    });
    run(mixt::lazy(k) * x, -1.0, [&](Eigen::Index i, double got) { // the unrolled batch loop
        ASSERT_EQ(got, d::mul_fn{}(mixt::convert<double>(k(i)), x(i))) << i;
    });
    run(mixt::lazy(c) * f + z, c128(-1, -1), [&](Eigen::Index i, c128 got) { // one complex<double> batch at a time
        const c128 want = d::add_fn{}(mixt::convert<c128>(d::mul_fn{}(c(i), mixt::convert<c64>(f(i)))), z(i));
        ASSERT_PRED2(same<c128>, got, want) << i;
    });
}

// The thread-count rule of a pass on a ThreadPoolDevice: a thread per min_bytes_per_thread moved, at least one,
// at most the device's threads.
TEST(fused_threads, a_thread_per_min_bytes_moved) {
    constexpr std::size_t k = 512 * 1024;
    static_assert(d::min_bytes_per_thread == k, "the default; MIXT_MIN_BYTES_PER_THREAD changes it");
    EXPECT_EQ(d::threads_for(0, 16), 1);
    EXPECT_EQ(d::threads_for(k - 1, 16), 1);
    EXPECT_EQ(d::threads_for(2 * k - 1, 16), 1);
    EXPECT_EQ(d::threads_for(2 * k, 16), 2);
    EXPECT_EQ(d::threads_for(3 * k + 5, 16), 3);
    EXPECT_EQ(d::threads_for(16 * k, 16), 16);
    EXPECT_EQ(d::threads_for(std::size_t{1} << 40, 16), 16);
    EXPECT_EQ(d::threads_for(std::size_t{1} << 40, 2), 2);
    EXPECT_EQ(d::threads_for(std::size_t{1} << 40, 1), 1);
    EXPECT_EQ(d::threads_for(std::size_t{1} << 40, 0), 1);
    // The suite's rows at 262144 elements: u8 + i8 -> i16 moves 1 MiB, two threads; f16 + f16 1.5 MiB, three
    // (Eigen's cost model gave each all 16 of a 16-core machine). At 4096 elements, one thread.
    EXPECT_EQ(d::threads_for(262144 * 4, 16), 2);
    EXPECT_EQ(d::threads_for(262144 * 6, 16), 3);
    EXPECT_EQ(d::threads_for(4096 * 44, 16), 1);
    EXPECT_EQ(d::threads_for(std::size_t{16777216} * 4, 16), 16);
    // Another threshold, and 0: every pass takes every thread.
    EXPECT_EQ(d::threads_for(10000, 8, 1000), 8);
    EXPECT_EQ(d::threads_for(5999, 8, 1000), 5);
    EXPECT_EQ(d::threads_for(1, 8, 0), 8);
}

} // namespace
