// mixt::simd::wide (the 16-lane AVX-512 batches) against the definitions it must reproduce bit for bit:
//   - loads, conversions and stores against the scalar mixt::convert: 8- and 16-bit sources exhaustively (every
//     f16 and bf16 pattern, every 8- and 16-bit integer), f32 sources on every rounding tie of f16 and bf16 and
//     on edge and random values, 32-bit integers on edges and random values;
//   - every operation against the 8-lane simd::apply on the same inputs (ops_test checks those against the
//     functors), rounded and stored unrounded: every f16/bf16 input for the unary functions;
//   - the fused loop's 16-lane path (eval/fused.hpp, run_range) against the 8-lane kernels, for every length
//     up to past three unrolled iterations and for literals that do not fit;
//   - words (32 integers in 16-bit lanes): every 8- and 16-bit integer loaded, every operation against the
//     functor on every 16-bit value paired with edges and random values, and the fused loop on words against
//     the per-element definition at every length up to past two unrolled iterations, streamed too;
//   - f32 division by a literal (simd/divide.hpp) against the division instruction: every significand of the
//     dividend for every short-significand divisor and 44 others, and the edges of both.
// Without AVX-512 (MIXT_SIMD_AVX512 == 0) there is nothing to check and the tests are skipped; the v4 test
// configuration (./mixt test) runs them.

#include <mixt/mixt.hpp>
#include <mixt/simd/divide.hpp>
#include <mixt/simd/wide.hpp>

#include <gtest/gtest.h>
#include <support/nan_contract.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace simd = mixt::simd;
namespace fn = mixt::detail;
using f16 = Eigen::half;
using bf16 = Eigen::bfloat16;

template <class T>
auto bits_of(T x) {
    if constexpr (sizeof(T) == 1) return static_cast<unsigned>(std::bit_cast<std::uint8_t>(x));
    else if constexpr (sizeof(T) == 2) return static_cast<unsigned>(std::bit_cast<std::uint16_t>(x));
    else return std::bit_cast<std::uint32_t>(x);
}

template <class T>
std::string show(T x) {
    std::ostringstream s;
    s << static_cast<double>(mixt::convert<double>(x)) << " (bits 0x" << std::hex << bits_of(x) << ")";
    return s.str();
}

// A bool array with data() (std::vector<bool> has none).
struct bool_array {
    std::unique_ptr<bool[]> p;
    std::size_t n = 0;
    explicit bool_array(std::size_t count = 0) : p(std::make_unique<bool[]>(count)), n(count) {}
    std::size_t size() const { return n; }
    const bool* data() const { return p.get(); }
    bool& operator[](std::size_t i) { return p[i]; }
    bool operator[](std::size_t i) const { return p[i]; }
};
template <class T>
using values_t = std::conditional_t<std::is_same_v<T, bool>, bool_array, std::vector<T>>;

// Inputs of T: every pattern for 8- and 16-bit types, else edges, f16/bf16 rounding ties (f32) and random
// values; the count is a multiple of 16.
template <class T>
std::vector<T> inputs_of() {
    std::vector<T> v;
    if constexpr (sizeof(T) <= 2) {
        for (std::uint32_t u = 0; u < (1u << (8 * sizeof(T))); ++u) {
            if constexpr (sizeof(T) == 1) v.push_back(std::bit_cast<T>(static_cast<std::uint8_t>(u)));
            else v.push_back(std::bit_cast<T>(static_cast<std::uint16_t>(u)));
        }
    } else if constexpr (std::is_same_v<T, float>) {
        // Every f16 and bf16 value, the midpoints to their neighbours and one f32 ulp either side of those.
        for (std::uint32_t u = 0; u < 65536; ++u) {
            const float h = static_cast<float>(std::bit_cast<f16>(static_cast<std::uint16_t>(u)));
            const float h_next = static_cast<float>(std::bit_cast<f16>(static_cast<std::uint16_t>((u + 1) & 0xffff)));
            v.push_back(h);
            if (std::isfinite(h) && std::isfinite(h_next) && (u & 0x7fff) != 0x7bff) {
                const float mid = h + (h_next - h) / 2;
                v.push_back(mid);
                v.push_back(std::nextafter(mid, 0.0f));
                v.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
            }
            for (std::uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
                v.push_back(std::bit_cast<float>((u << 16) | low));
        }
        std::mt19937 rng(7);
        for (int i = 0; i < 100000; ++i) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    } else {
        const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        for (T x : {T(0), T(1), T(2), T(65504), T(65520), T(16777216), T(16777217), T(2147483647u), lo, hi,
                    static_cast<T>(lo + 1), static_cast<T>(hi - 1)})
            v.push_back(x);
        std::mt19937 rng(11);
        for (int i = 0; i < 100000; ++i) v.push_back(static_cast<T>(rng()));
    }
    while (v.size() % 16 != 0) v.push_back(v[v.size() % 7]);
    return v;
}

template <class T>
values_t<T> inputs() {
    if constexpr (std::is_same_v<T, bool>) {
        bool_array v(64);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i * 7) % 3 == 0;
        return v;
    } else {
        return inputs_of<T>();
    }
}

// The value a load gives an element: an f16/bf16 signaling NaN is quieted by the widening (batch_test.cpp).
template <class T>
T canonical(T x) {
    return simd::detail::canonical(x);
}

// n values of T from a seed, with NaN, infinities, zeros and subnormals among them for floats.
template <class T>
values_t<T> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    values_t<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, bool>) {
            v[i] = (rng() & 1) != 0;
        } else if constexpr (std::is_integral_v<T>) {
            v[i] = static_cast<T>(rng());
        } else {
            const std::uint32_t r = static_cast<std::uint32_t>(rng());
            if constexpr (std::is_same_v<T, float>) {
                // Mostly moderate values, some patterns anywhere (NaN, inf, subnormal).
                v[i] = (r & 3) == 0 ? std::bit_cast<float>(r) : std::ldexp(static_cast<float>(r % 2001) - 1000.0f, -static_cast<int>(r % 7));
            } else {
                v[i] = std::bit_cast<T>(static_cast<std::uint16_t>(r));
            }
        }
    }
    return v;
}

#if MIXT_SIMD_AVX512

template <class T>
void expect_same_bits(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    int shown = 0;
    for (std::size_t i = 0; i < got.size() && shown < 5; ++i) {
        if (bits_of(got[i]) != bits_of(want[i])) {
            ADD_FAILURE() << what << " at " << i << ": got " << show(got[i]) << ", want " << show(want[i]);
            ++shown;
        }
    }
}

template <class To, class From>
void check_conversion() {
    const values_t<From> in = inputs<From>();
    std::vector<To> got(in.size()), unrounded(in.size()), want(in.size());
    for (std::size_t i = 0; i < in.size(); i += 16) {
        const auto b = simd::wide::load(in.data() + i);
        simd::wide::store(got.data() + i, simd::wide::convert<To>(b));
        simd::wide::store(unrounded.data() + i, simd::wide::convert_unrounded<To>(b));
    }
    for (std::size_t i = 0; i < in.size(); ++i) want[i] = mixt::convert<To>(canonical(in[i]));
    const std::string what = std::string("convert ") + typeid(From).name() + " -> " + typeid(To).name();
    expect_same_bits(got, want, what);
    expect_same_bits(unrounded, want, what + " (unrounded, stored)");
}

template <class To, class... Froms>
void check_conversions_to() {
    (
        [] {
            if constexpr (simd::wide::convertible_v<To, Froms>) check_conversion<To, Froms>();
        }(),
        ...);
}

TEST(simd_wide, conversions_match_mixt_convert) {
    check_conversions_to<float, bool, std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t, std::int32_t,
                         f16, bf16, float>();
    check_conversions_to<f16, bool, std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, f16, bf16, float>();
    check_conversions_to<bf16, bool, std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, f16, bf16, float>();
    // One rounding only: 32-bit integers to f16 or bf16 would round twice through f32.
    static_assert(!simd::wide::convertible_v<f16, std::int32_t> && !simd::wide::convertible_v<bf16, std::uint32_t>);
    static_assert(!simd::wide::convertible_v<std::int32_t, float>);
}

// Every lane of the wide operation against the 8-lane one on the same inputs: rounded, and stored unrounded.
template <class R, class Fn, class... Ts>
void check_operation(const std::string& what, const values_t<Ts>&... in) {
    static_assert(simd::wide::supported_v<R, Fn, Ts...>);
    const std::size_t n = std::get<0>(std::forward_as_tuple(in...)).size();
    std::vector<std::uint32_t> got(n), got_unrounded(n), want(n);
    for (std::size_t i = 0; i < n; i += 16) {
        const auto w = simd::wide::apply<R>(Fn{}, simd::wide::load(in.data() + i)...);
        const auto wu = simd::wide::apply_unrounded<R>(Fn{}, simd::wide::load(in.data() + i)...);
        if constexpr (std::is_same_v<R, bool>) {
            for (int l = 0; l < 16; ++l) {
                got[i + l] = (w.m >> l) & 1u;
                got_unrounded[i + l] = (wu.m >> l) & 1u;
            }
        } else {
            R out[16], out_u[16];
            simd::wide::store(out, w);
            simd::wide::store(out_u, wu);
            for (int l = 0; l < 16; ++l) {
                got[i + l] = bits_of(out[l]);
                got_unrounded[i + l] = bits_of(out_u[l]);
            }
        }
        for (std::size_t h = 0; h < 16; h += 8) {
            R out[8];
            simd::store(out, simd::apply<R>(Fn{}, simd::load(in.data() + i + h)...));
            for (int l = 0; l < 8; ++l) want[i + h + l] = bits_of(out[l]);
        }
    }
    // The NaN contract: both NaN is the same result, whatever the payloads (with two NaN operands, x86 returns
    // the first source operand's, and which comes first in a commutative operation is the compiler's choice).
    int shown = 0;
    for (std::size_t i = 0; i < n && shown < 5; ++i) {
        if (!mixt_test::same_result_bits<R>(got[i], want[i]) || !mixt_test::same_result_bits<R>(got_unrounded[i], want[i])) {
            std::ostringstream s;
            ((s << " " << show(in[i])), ...);
            ADD_FAILURE() << what << " on" << s.str() << ": wide 0x" << std::hex << got[i] << ", unrounded 0x"
                          << got_unrounded[i] << ", 8-lane 0x" << want[i];
            ++shown;
        }
    }
}

template <class T>
void check_f32_lane_operations() {
    const std::string t = typeid(T).name();
    const std::vector<T> a = sizeof(T) == 2 ? inputs<T>() : random_values<T>(65536, 1);
    const std::vector<T> b = random_values<T>(a.size(), 2);
    check_operation<T, fn::add_fn, T, T>(t + " +", a, b);
    check_operation<T, fn::sub_fn, T, T>(t + " -", a, b);
    check_operation<T, fn::mul_fn, T, T>(t + " *", a, b);
    check_operation<T, fn::div_fn, T, T>(t + " /", a, b);
    check_operation<T, fn::minimum_fn, T, T>(t + " minimum", a, b);
    check_operation<T, fn::maximum_fn, T, T>(t + " maximum", b, a);
    check_operation<T, fn::neg_fn, T>(t + " neg", a);
    check_operation<T, fn::abs_fn, T>(t + " abs", a);
    check_operation<T, fn::sqrt_fn, T>(t + " sqrt", a);
    check_operation<bool, fn::equal_fn, T, T>(t + " ==", a, b);
    check_operation<bool, fn::not_equal_fn, T, T>(t + " !=", a, a);
    check_operation<bool, fn::less_fn, T, T>(t + " <", a, b);
    check_operation<bool, fn::less_equal_fn, T, T>(t + " <=", b, a);
    check_operation<bool, fn::greater_fn, T, T>(t + " >", a, b);
    check_operation<bool, fn::greater_equal_fn, T, T>(t + " >=", a, b);
    check_operation<T, fn::where_fn, bool, T, T>(t + " where", random_values<bool>(a.size(), 3), a, b);
}

TEST(simd_wide, f32_lane_operations_match_the_8_lane_ones) {
    check_f32_lane_operations<f16>();
    check_f32_lane_operations<bf16>();
    check_f32_lane_operations<float>();
}

TEST(simd_wide, exp_of_every_half_matches_the_8_lane_one) {
    check_operation<f16, fn::exp_fn, f16>("exp f16", inputs<f16>());
}

template <class T>
void check_int_compares() {
    const std::string t = typeid(T).name();
    const std::vector<T> a = random_values<T>(4096, 4), b = random_values<T>(4096, 5);
    std::vector<T> c = a;
    for (std::size_t i = 0; i < c.size(); i += 3) c[i] = b[i]; // some equal lanes
    check_operation<bool, fn::equal_fn, T, T>(t + " ==", c, b);
    check_operation<bool, fn::not_equal_fn, T, T>(t + " !=", c, b);
    check_operation<bool, fn::less_fn, T, T>(t + " <", a, b);
    check_operation<bool, fn::less_equal_fn, T, T>(t + " <=", c, b);
    check_operation<bool, fn::greater_fn, T, T>(t + " >", a, b);
    check_operation<bool, fn::greater_equal_fn, T, T>(t + " >=", c, b);
}

TEST(simd_wide, integer_comparisons_and_logic_match_the_8_lane_ones) {
    check_int_compares<std::uint8_t>();
    check_int_compares<std::int8_t>();
    check_int_compares<std::uint16_t>();
    check_int_compares<std::int16_t>();
    check_int_compares<std::uint32_t>();
    check_int_compares<std::int32_t>();
    const bool_array p = random_values<bool>(256, 6), q = random_values<bool>(256, 7);
    check_operation<bool, fn::logical_and_fn, bool, bool>("&&", p, q);
    check_operation<bool, fn::logical_or_fn, bool, bool>("||", p, q);
    check_operation<bool, fn::logical_not_fn, bool>("!", p);
}

// The fused loop's 16-lane path against the 8-lane kernels: the destination written by mixt::assign must hold,
// element for element, what the kernel's 8-lane batches (k.at, k.at_partial) give.
template <class E>
void check_fused(const E& e, const std::string& what) {
    using D = mixt::value_t<E>;
    const auto k = fn::make_kernel<D>(e);
    static_assert(fn::wide_loop_v<D, std::remove_const_t<decltype(k)>>, "expected to run the 16-lane loop");
    const Eigen::Index n = fn::first_leaf(e).size();
    Eigen::Tensor<D, 1> got(n);
    mixt::assign(got, e);
    std::vector<D> want(static_cast<std::size_t>(n));
    Eigen::Index i = 0;
    for (; i + 8 <= n; i += 8) simd::store(want.data() + i, k.at(i));
    if (i < n) simd::store_partial(want.data() + i, k.at_partial(i, static_cast<int>(n - i)), static_cast<int>(n - i));
    for (Eigen::Index j = 0; j < n; ++j) {
        if (bits_of(got(j)) != bits_of(want[static_cast<std::size_t>(j)])) {
            ADD_FAILURE() << what << ", n = " << n << ", element " << j << ": got " << show(got(j)) << ", want "
                          << show(want[static_cast<std::size_t>(j)]);
            return;
        }
    }
}

template <class T>
Eigen::Tensor<T, 1> tensor(Eigen::Index n, unsigned seed) {
    const std::vector<T> v = random_values<T>(static_cast<std::size_t>(n), seed);
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) t(i) = v[static_cast<std::size_t>(i)];
    return t;
}

TEST(simd_wide, fused_loop_matches_the_8_lane_kernels_at_every_length) {
    for (Eigen::Index n = 0; n <= 3 * 64 + 17; ++n) {
        const auto a8 = tensor<std::int8_t>(n, 1);
        const auto u16 = tensor<std::uint16_t>(n, 2);
        const auto h = tensor<f16>(n, 3);
        const auto h2 = tensor<f16>(n, 4);
        const auto b = tensor<bf16>(n, 5);
        const auto b2 = tensor<bf16>(n, 6);
        const auto f = tensor<float>(n, 7);
        const auto f2 = tensor<float>(n, 8);
        const auto u8 = tensor<std::uint8_t>(n, 9);
        check_fused(mixt::exp(mixt::lazy(h)) * b, "exp(f16) * bf16");
        check_fused(mixt::lazy(b) * b2 + f, "bf16 * bf16 + f32");
        check_fused(mixt::lazy(a8) + mixt::lazy(h) * f, "i8 + f16 * f32");
        // u8 leaves read a block of 64 at a time (block_byte_leaf_kernel), beside an i8 one.
        check_fused(mixt::lazy(u8) * f + f2, "u8 * f32 + f32");
        check_fused(mixt::lazy(a8) * f - u8, "i8 * f32 - u8");
        check_fused(mixt::cast<bf16>(mixt::lazy(u8) * f), "cast<bf16>(u8 * f32)"); // the converting loop: 8 batches
        check_fused(mixt::lazy(h) + h2, "f16 + f16");
        check_fused(mixt::where(mixt::lazy(f) > 0, h, b), "where(f32 > 0, f16, bf16)");
        check_fused(mixt::lazy(f) * 0.5f + u16, "f32 * 0.5 + u16");
        // A literal that does not fit the join is compared by exact value: the cold path, on each half.
        check_fused(mixt::where(mixt::lazy(a8) < 300, h, h2), "where(i8 < 300, f16, f16)");
        check_fused(mixt::where(mixt::lazy(u16) > -1, b, b2), "where(u16 > -1, bf16, bf16)");
        check_fused(-mixt::sqrt(mixt::lazy(h)) * 2 - mixt::abs(mixt::lazy(h2)), "-sqrt(f16) * 2 - abs(f16)");
    }
}

// Quarter q of 64 bytes (load_quarter) is the batch load makes of the bytes at 16 q: every byte value of u8 in
// every quarter, at five positions of the block each.
template <class T>
void check_quarters() {
#if MIXT_SIMD_AVX512VBMI
    const std::vector<T> in = inputs_of<T>(); // every value, 256 of them
    for (std::size_t shift = 0; shift < 64; shift += 13) {
        std::vector<T> block(64);
        for (std::size_t b = 0; b < in.size(); b += 64) {
            for (std::size_t j = 0; j < 64; ++j) block[j] = in[(b + j + shift) % in.size()];
            for (int q = 0; q < 4; ++q) {
                const auto got = simd::wide::load_quarter(block.data(), q);
                const auto want = simd::wide::load(block.data() + 16 * q);
                ASSERT_EQ(std::memcmp(&got.v, &want.v, sizeof(got.v)), 0)
                    << typeid(T).name() << ", quarter " << q << " of the block at " << b << " + " << shift;
            }
        }
    }
#endif
}

TEST(simd_wide, quarters_of_64_bytes_load_as_their_16) {
    if (!mixt::simd::wide::has_quarters_v<std::uint8_t>) GTEST_SKIP() << "no AVX512-VBMI: u8 batches load one by one";
    check_quarters<std::uint8_t>();
}

// --- words ---------------------------------------------------------------------------------------------

// The 16-bit lane of every element of a register of words.
std::vector<std::uint16_t> lanes_of(__m512i v) {
    std::vector<std::uint16_t> out(32);
    _mm512_storeu_si512(out.data(), v);
    return out;
}

// Every value of T loaded into words holds mixt::convert<i16> of it (the same bits as convert<u16>).
template <class T>
void check_word_load() {
    const std::vector<T> in = inputs_of<T>();
    for (std::size_t i = 0; i + 32 <= in.size(); i += 32) {
        const auto got = lanes_of(simd::wide::load_words(in.data() + i));
        for (std::size_t l = 0; l < 32; ++l) {
            const auto want_i16 = std::bit_cast<std::uint16_t>(mixt::convert<std::int16_t>(in[i + l]));
            const auto want_u16 = mixt::convert<std::uint16_t>(in[i + l]);
            ASSERT_EQ(got[l], want_i16) << typeid(T).name() << " " << show(in[i + l]);
            ASSERT_EQ(got[l], want_u16) << typeid(T).name() << " " << show(in[i + l]);
        }
    }
    const auto b = lanes_of(simd::wide::broadcast_words(std::numeric_limits<T>::lowest()));
    for (std::uint16_t x : b)
        ASSERT_EQ(x, std::bit_cast<std::uint16_t>(mixt::convert<std::int16_t>(std::numeric_limits<T>::lowest())));
}

TEST(simd_wide, words_load_every_8_and_16_bit_integer) {
    check_word_load<std::uint8_t>();
    check_word_load<std::int8_t>();
    check_word_load<std::uint16_t>();
    check_word_load<std::int16_t>();
    static_assert(simd::wide::word_convertible_v<std::int16_t, std::uint8_t> &&
                  simd::wide::word_convertible_v<std::uint16_t, std::int8_t>);
    static_assert(!simd::wide::word_convertible_v<std::int8_t, std::int16_t>); // narrowing changes bits
    static_assert(!simd::wide::word_convertible_v<std::int32_t, std::int16_t>);
}

// fn on words against the functor on R, for every 16-bit a and b from edges and random values.
template <class R, class Fn>
void check_word_operation(const std::string& what) {
    static_assert(simd::wide::word_supported_v<R, Fn, R, R>);
    const std::vector<R> a = inputs_of<R>(); // every value
    std::vector<R> b(a.size());
    std::mt19937 rng(17);
    const R edges[] = {R(0), R(1), static_cast<R>(-1), std::numeric_limits<R>::lowest(), std::numeric_limits<R>::max(),
                       static_cast<R>(std::numeric_limits<R>::lowest() + 1), R(255), R(256)};
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = i % 4 == 0 ? static_cast<R>(rng()) : edges[(i / 4) % 8];
    int shown = 0;
    for (std::size_t i = 0; i + 32 <= a.size(); i += 32) {
        const auto got = lanes_of(simd::wide::apply_words(Fn{}, simd::wide::load_words(a.data() + i),
                                                         simd::wide::load_words(b.data() + i)));
        for (std::size_t l = 0; l < 32 && shown < 5; ++l) {
            const R want = static_cast<R>(Fn{}(a[i + l], b[i + l]));
            if (got[l] != std::bit_cast<std::uint16_t>(want)) {
                ADD_FAILURE() << what << " on " << show(a[i + l]) << ", " << show(b[i + l]) << ": got 0x" << std::hex
                              << got[l] << ", want " << show(want);
                ++shown;
            }
        }
    }
}

template <class R>
void check_word_operations() {
    const std::string t = typeid(R).name();
    check_word_operation<R, fn::add_fn>(t + " +");
    check_word_operation<R, fn::sub_fn>(t + " -");
    check_word_operation<R, fn::mul_fn>(t + " *");
    check_word_operation<R, fn::bit_and_fn>(t + " &");
    check_word_operation<R, fn::bit_or_fn>(t + " |");
    check_word_operation<R, fn::bit_xor_fn>(t + " ^");
}

TEST(simd_wide, word_operations_match_the_functors) {
    check_word_operations<std::int16_t>();
    check_word_operations<std::uint16_t>();
    static_assert(!simd::wide::word_supported_v<std::int16_t, fn::div_fn, std::int16_t, std::int16_t>);
    static_assert(!simd::wide::word_supported_v<std::int8_t, fn::add_fn, std::int8_t, std::int8_t>); // wraps at 8 bits
    static_assert(!simd::wide::word_supported_v<bool, fn::less_fn, std::int16_t, std::int16_t>);
}

// Random integers over T's whole range.
template <class T>
Eigen::Tensor<T, 1> int_tensor(Eigen::Index n, unsigned seed) {
    std::mt19937 rng(seed);
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) t(i) = static_cast<T>(rng());
    return t;
}

// mixt::assign of e, which must run the loop on words, into a map at element `offset` of a 64-byte aligned
// buffer, against want(i); nothing around the destination may change.
template <class E, class Want>
void check_words_fused(const E& e, Want want, const std::string& what, std::size_t offset) {
    using D = mixt::value_t<E>;
    static_assert(fn::word_loop_v<D, std::remove_const_t<decltype(fn::make_kernel<D>(e))>>,
                  "expected to run the loop on words");
    const Eigen::Index n = fn::first_leaf(e).size();
    std::vector<D> raw(static_cast<std::size_t>(n) + offset + 64 + 32, D(0x5a5a));
    const auto base = (reinterpret_cast<std::uintptr_t>(raw.data()) + 63) & ~std::uintptr_t{63};
    D* dst = reinterpret_cast<D*>(base) + offset;
    Eigen::TensorMap<Eigen::Tensor<D, 1>> map(dst, n);
    mixt::assign(map, e);
    for (Eigen::Index i = 0; i < n; ++i) {
        const D w = want(i);
        if (dst[i] != w) {
            ADD_FAILURE() << what << ", n = " << n << ", offset " << offset << ", element " << i << ": got " << dst[i]
                          << ", want " << w;
            return;
        }
    }
    for (std::size_t k = 0; k < raw.size(); ++k) {
        const D* p = raw.data() + k;
        if (p < dst || p >= dst + n) {
            ASSERT_EQ(raw[k], D(0x5a5a)) << what << ": wrote outside, n = " << n;
        }
    }
}

TEST(simd_wide, fused_loop_on_words_matches_the_definition_at_every_length) {
    using i8 = std::int8_t;
    using u8 = std::uint8_t;
    using i16 = std::int16_t;
    using u16 = std::uint16_t;
    for (Eigen::Index n = 0; n <= 2 * 128 + 40; ++n) {
        const auto a = int_tensor<u8>(n, 1);
        const auto b = int_tensor<i8>(n, 2);
        const auto c = int_tensor<i16>(n, 3);
        const auto u = int_tensor<u16>(n, 4);
        const std::size_t offset = static_cast<std::size_t>(n) % 5;
        const auto at = [](const auto& t, Eigen::Index i) { return t(i); };
        check_words_fused(mixt::lazy(a) + b, [&](Eigen::Index i) { return fn::add_fn{}(mixt::convert<i16>(at(a, i)), mixt::convert<i16>(at(b, i))); },
                          "u8 + i8", offset);
        check_words_fused(mixt::lazy(c) * b - 3,
                          [&](Eigen::Index i) {
                              return fn::sub_fn{}(fn::mul_fn{}(at(c, i), mixt::convert<i16>(at(b, i))), i16(3));
                          },
                          "i16 * i8 - 3", offset);
        check_words_fused((mixt::lazy(u) ^ a) | (mixt::lazy(u) & 0xf0f0),
                          [&](Eigen::Index i) {
                              return fn::bit_or_fn{}(fn::bit_xor_fn{}(at(u, i), mixt::convert<u16>(at(a, i))),
                                                     fn::bit_and_fn{}(at(u, i), u16(0xf0f0)));
                          },
                          "(u16 ^ u8) | (u16 & 0xf0f0)", offset);
        check_words_fused(mixt::lazy(u) * u - a,
                          [&](Eigen::Index i) {
                              return fn::sub_fn{}(fn::mul_fn{}(at(u, i), at(u, i)), mixt::convert<u16>(at(a, i)));
                          },
                          "u16 * u16 - u8", offset);
    }
    // Not on words: 8-bit results (they would need wrapping at 8 bits), a 32-bit node, a comparison.
    using T8 = Eigen::Tensor<i8, 1>;
    using T16 = Eigen::Tensor<i16, 1>;
    using TU16 = Eigen::Tensor<u16, 1>;
    using TU8 = Eigen::Tensor<u8, 1>;
    static_assert(!fn::word_loop_v<i8, decltype(fn::make_kernel<i8>(mixt::lazy(std::declval<const T8&>()) + std::declval<const T8&>()))>);
    static_assert(!fn::word_loop_v<std::int32_t, decltype(fn::make_kernel<std::int32_t>(mixt::lazy(std::declval<const T16&>()) + std::declval<const TU16&>()))>);
    static_assert(fn::word_loop_v<i16, decltype(fn::make_kernel<i16>(mixt::lazy(std::declval<const TU8&>()) + std::declval<const T8&>()))>);
}

// Low halves of an f32 on and around bf16's rounding tie (0x8000), and others.
constexpr std::uint32_t tie_lows[16] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4000, 0xc000,
                                        0x7ffe, 0x8002, 0x1234, 0xfedc, 0x0100, 0x00ff, 0xff00, 0x5555};

// f32 -> bf16 on every high half of an f32 (every bf16 neighbourhood: zeros, subnormals, normals, inf, NaN) with
// low halves on and around the tie: the 16-lane store, its rounding kept in f32 lanes, and the 8-lane store,
// against mixt::convert. Where the target has AVX512-BF16 this checks the CPU's vcvtneps2bf16 and the repair of the
// lanes it reads as zero (subnormal inputs), one batch at a time and in the fused loop's groups (store_group).
TEST(simd_wide, bf16_rounding_of_every_high_half_matches_mixt_convert) {
    long wrong = 0;
    alignas(64) float in[16];
    alignas(64) bf16 out16[16];
    alignas(64) bf16 out8[16];
    alignas(64) float rounded[16];
    alignas(64) float ring[4][16];
    alignas(64) bf16 grouped[64];
    alignas(64) bf16 grouped3[48];
    alignas(64) bf16 classified[64];
    alignas(64) bf16 streamed3[48];
    alignas(64) bf16 converted3[48];
    alignas(64) bf16 converted8[128];
    for (std::uint32_t hi = 0; hi < 0x10000u; ++hi) {
        for (int k = 0; k < 16; ++k) in[k] = std::bit_cast<float>((hi << 16) | tie_lows[k]);
        simd::wide::store(out16, simd::wide::batch<bf16>{_mm512_load_ps(in)});
        simd::store(out8, simd::batch<bf16>{_mm256_load_ps(in)});
        simd::store(out8 + 8, simd::batch<bf16>{_mm256_load_ps(in + 8)});
        _mm512_store_ps(rounded, simd::wide::detail::round_to<bf16>(_mm512_load_ps(in)));
        for (int k = 0; k < 16; ++k) {
            const bf16 want = mixt::convert<bf16>(in[k]);
            const bool ok = fn::bf16_bits(out16[k]) == fn::bf16_bits(want) && fn::bf16_bits(out8[k]) == fn::bf16_bits(want) &&
                            std::bit_cast<std::uint32_t>(rounded[k]) == std::bit_cast<std::uint32_t>(mixt::convert<float>(want));
            if (!ok && ++wrong <= 10)
                ADD_FAILURE() << "f32 bits " << std::hex << std::bit_cast<std::uint32_t>(in[k]) << ": 16-lane "
                              << fn::bf16_bits(out16[k]) << ", 8-lane " << fn::bf16_bits(out8[k]) << ", want "
                              << fn::bf16_bits(want);
        }
        // The fused loop's groups (store_group), of 4 and 3 batches: the last 4 high halves, so that groups with
        // and without a subnormal lane in one of their batches both occur; and of 8 (eight_with).
        std::memcpy(ring[hi % 4], in, sizeof in);
        if (hi < 3) continue;
        const auto batch_at = [&](std::uint32_t h) { return simd::wide::batch<bf16>{_mm512_load_ps(ring[h % 4])}; };
        // A group of 8 batches (the converting loop's two groups) of ones but for b at batch hi % 8, so that a
        // check that leaves out any batch of the group fails.
        const auto eight_with = [&](simd::wide::batch<bf16> b) {
            std::array<simd::wide::batch<bf16>, 8> g;
            g.fill(simd::wide::batch<bf16>{_mm512_set1_ps(1.0f)});
            g[hi % 8] = b;
            return g;
        };
        // Both ways the loop stores a group: classified first (store_group, also streamed), and converted first,
        // classified only where the result has a ±0 lane (store_group_converted).
        const std::array four{batch_at(hi - 3), batch_at(hi - 2), batch_at(hi - 1), batch_at(hi)};
        const std::array three{batch_at(hi - 2), batch_at(hi - 1), batch_at(hi)};
        simd::wide::store_group(grouped, four);
        simd::wide::store_group(grouped3, three);
        simd::wide::store_group<true>(streamed3, three);
#if MIXT_SIMD_AVX512BF16 // (store_group_converted exists only there)
        {
            static_assert(simd::wide::converts_first_v<bf16>);
            const bool converted = simd::wide::store_group_converted(classified, four);
            // A group with a subnormal or a zero input has a ±0 lane in its result.
            const bool small = hi - 3 <= 0x80 || (hi - 3 >= 0x8000 && hi - 3 <= 0x8080) || hi <= 0x80 ||
                               (hi >= 0x8000 && hi <= 0x8080);
            if (!converted && !small && ++wrong <= 10) ADD_FAILURE() << "high halves up to " << std::hex << hi << ": classified";
            (void)simd::wide::store_group_converted(converted3, three);
            (void)simd::wide::store_group_converted(converted8, eight_with(batch_at(hi)));
        }
#else
        simd::wide::store_group(classified, four);
        simd::wide::store_group(converted3, three);
        simd::wide::store_group(converted8, eight_with(batch_at(hi)));
#endif
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 16; ++k) {
                const float x = ring[(hi - 3 + static_cast<std::uint32_t>(j)) % 4][k];
                const auto want = fn::bf16_bits(mixt::convert<bf16>(x));
                const bool ok = fn::bf16_bits(grouped[j * 16 + k]) == want && fn::bf16_bits(classified[j * 16 + k]) == want &&
                                (j == 0 || (fn::bf16_bits(grouped3[(j - 1) * 16 + k]) == want &&
                                            fn::bf16_bits(streamed3[(j - 1) * 16 + k]) == want &&
                                            fn::bf16_bits(converted3[(j - 1) * 16 + k]) == want));
                if (!ok && ++wrong <= 10)
                    ADD_FAILURE() << "f32 bits " << std::hex << std::bit_cast<std::uint32_t>(x) << ": group of 4 "
                                  << fn::bf16_bits(grouped[j * 16 + k]) << ", want " << want;
            }
        // The group of 8: high half hi at batch hi % 8, ones elsewhere.
        for (int j = 0; j < 8; ++j)
            for (int k = 0; k < 16; ++k) {
                const float x = j == static_cast<int>(hi % 8) ? ring[hi % 4][k] : 1.0f;
                const auto want = fn::bf16_bits(mixt::convert<bf16>(x));
                if (fn::bf16_bits(converted8[j * 16 + k]) != want && ++wrong <= 10)
                    ADD_FAILURE() << "f32 bits " << std::hex << std::bit_cast<std::uint32_t>(x) << ": group of 8 "
                                  << fn::bf16_bits(converted8[j * 16 + k]) << ", want " << want;
            }
    }
    EXPECT_EQ(wrong, 0);
}

// The rounding of an arithmetic result to bf16 (the result of + - * / or sqrt on lanes holding bf16 values,
// arithmetic_to_bf16_high, arithmetic_f32x8_to_bf16_high), which leaves out the NaN test: on every high half of
// an f32 with the tie_lows, against mixt::convert (infinities and NaNs only with a zero low half: the NaNs such
// arithmetic makes); and what it relies on, that x86 arithmetic on bf16 values makes no NaN with a nonzero low
// half: each bf16 NaN (either sign, every payload) and the default NaN's causes against ordinary values, zeros,
// infinities and NaNs, through both widths.
TEST(simd_wide, bf16_rounding_of_arithmetic_results_matches_mixt_convert) {
    long wrong = 0;
    alignas(64) float in[16];
    alignas(64) float got16[16];
    alignas(64) float got8[16];
    for (std::uint32_t hi = 0; hi < 0x10000u; ++hi) {
        const bool inf_or_nan = (hi & 0x7f80u) == 0x7f80u; // (with a nonzero low half, a NaN such arithmetic does not make)
        for (int k = 0; k < 16; ++k) in[k] = std::bit_cast<float>((hi << 16) | (inf_or_nan ? 0u : tie_lows[k]));
        _mm512_store_si512(got16, simd::wide::detail::arithmetic_to_bf16_high(_mm512_load_ps(in)));
        _mm256_store_si256(reinterpret_cast<__m256i*>(got8), simd::detail::arithmetic_f32x8_to_bf16_high(_mm256_load_ps(in)));
        _mm256_store_si256(reinterpret_cast<__m256i*>(got8 + 8),
                           simd::detail::arithmetic_f32x8_to_bf16_high(_mm256_load_ps(in + 8)));
        for (int k = 0; k < 16; ++k) {
            const auto want = std::bit_cast<std::uint32_t>(mixt::convert<float>(mixt::convert<bf16>(in[k])));
            const auto w16 = std::bit_cast<std::uint32_t>(got16[k]), w8 = std::bit_cast<std::uint32_t>(got8[k]);
            if ((!mixt_test::same_result_bits<float>(w16, want) || !mixt_test::same_result_bits<float>(w8, want)) &&
                ++wrong <= 10)
                ADD_FAILURE() << "f32 bits " << std::hex << std::bit_cast<std::uint32_t>(in[k]) << ": 16-lane " << w16
                              << ", 8-lane " << w8 << ", want " << want;
        }
    }
    EXPECT_EQ(wrong, 0);

    std::vector<bf16> a, b;
    const float others[] = {0.0f, -0.0f, 1.0f, -3.5f, 1e30f, 1e-30f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
    for (std::uint32_t h = 0; h < 0x10000u; ++h) {
        if ((h & 0x7f80u) != 0x7f80u || (h & 0x7fu) == 0) continue; // the NaNs
        for (const float o : others) {
            a.push_back(std::bit_cast<bf16>(static_cast<std::uint16_t>(h)));
            b.push_back(static_cast<bf16>(o));
            a.push_back(static_cast<bf16>(o));
            b.push_back(std::bit_cast<bf16>(static_cast<std::uint16_t>(h)));
        }
    }
    for (const float x : others) // 0 * inf, inf - inf, 0 / 0, inf / inf: the default NaN
        for (const float y : others) {
            a.push_back(static_cast<bf16>(x));
            b.push_back(static_cast<bf16>(y));
        }
    a.push_back(static_cast<bf16>(-1.0f)); // sqrt's default NaN
    b.push_back(static_cast<bf16>(1.0f));
    while (a.size() % 16 != 0) {
        a.push_back(static_cast<bf16>(2.0f));
        b.push_back(static_cast<bf16>(3.0f));
    }
    long low_bits = 0;
    const auto check = [&](const char* what, __m512 r) {
        alignas(64) std::uint32_t bits[16];
        _mm512_store_si512(bits, _mm512_castps_si512(r));
        for (const std::uint32_t x : bits)
            if (mixt_test::is_nan_bits<float>(x) && (x & 0xffffu) != 0 && ++low_bits <= 10)
                ADD_FAILURE() << what << " made the NaN " << std::hex << x;
    };
    const auto check8 = [&](const char* what, __m256 lo, __m256 hi) {
        check(what, _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
    };
    for (std::size_t i = 0; i < a.size(); i += 16) {
        const __m512 x = simd::wide::load_operand(a.data() + i).v, y = simd::wide::load_operand(b.data() + i).v;
        check("+", simd::wide::detail::arith<fn::add_fn>(x, y));
        check("-", simd::wide::detail::arith<fn::sub_fn>(x, y));
        check("*", simd::wide::detail::arith<fn::mul_fn>(x, y));
        check("/", simd::wide::detail::arith<fn::div_fn>(x, y));
        check("sqrt", _mm512_sqrt_ps(x));
        const __m256 x0 = simd::load_operand(a.data() + i).v, x1 = simd::load_operand(a.data() + i + 8).v;
        const __m256 y0 = simd::load_operand(b.data() + i).v, y1 = simd::load_operand(b.data() + i + 8).v;
        check8("8-lane +", simd::detail::arith_ps<fn::add_fn>(x0, y0), simd::detail::arith_ps<fn::add_fn>(x1, y1));
        check8("8-lane -", simd::detail::arith_ps<fn::sub_fn>(x0, y0), simd::detail::arith_ps<fn::sub_fn>(x1, y1));
        check8("8-lane *", simd::detail::arith_ps<fn::mul_fn>(x0, y0), simd::detail::arith_ps<fn::mul_fn>(x1, y1));
        check8("8-lane /", simd::detail::arith_ps<fn::div_fn>(x0, y0), simd::detail::arith_ps<fn::div_fn>(x1, y1));
        check8("8-lane sqrt", _mm256_sqrt_ps(x0), _mm256_sqrt_ps(x1));
    }
    EXPECT_EQ(low_bits, 0);
}

// f32 division by a literal (simd/divide.hpp) against the division instruction, bit for bit: every divisor taken
// for its short significand (the 128 significands of at most 8 significant bits, at exponents across the range,
// either sign) and 44 others, each against every significand of the dividend (at an exponent of its own across
// the range that takes the multiplications, either sign); then batches with one lane from the edges (zeros,
// subnormals, the ends of the dividends' range, infinities, NaNs with payloads) among ordinary ones, and divisors
// that divide (outside the range, or neither reason of divide.hpp).
TEST(simd_wide, division_by_a_constant_has_the_bits_of_division) {
    std::vector<float> divisors = {255.0f, 3.0f, 7.0f, 10.0f, 0.229f, 1.0f / 3.0f, 0.1f, 4.0f, 1.0f, 0x1p-20f, 0x1p20f,
                                   std::nextafter(2.0f, 0.0f), std::nextafter(1.0f, 2.0f), std::nextafter(0x1p20f, 0.0f),
                                   0x1.fffffep-20f, 1.5f, 127.5f, -255.0f, -0.5f, -3.0f};
    std::mt19937 rng(43);
    std::uniform_real_distribution<float> significand(1.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-20, 19);
    for (int k = 0; k < 24; ++k) divisors.push_back(std::ldexp(significand(rng), exponent(rng)) * (k % 3 == 0 ? -1.0f : 1.0f));
    std::vector<float> short_divisors;
    for (int k = 0; k < 128; ++k) short_divisors.push_back(std::ldexp(1.0f + static_cast<float>(k) / 128, k % 40 - 20) * (k % 2 ? -1.0f : 1.0f));

    long wrong = 0;
    const auto compare = [&](const float* a, float b, const simd::f32_divisor& d) {
        alignas(64) float got[16];
        alignas(64) float want[16];
        _mm512_store_ps(got, simd::wide::divide(_mm512_loadu_ps(a), d));
        _mm512_store_ps(want, _mm512_div_ps(_mm512_loadu_ps(a), _mm512_set1_ps(b)));
        for (int k = 0; k < 16; ++k)
            if (std::bit_cast<std::uint32_t>(got[k]) != std::bit_cast<std::uint32_t>(want[k]) && ++wrong <= 10)
                ADD_FAILURE() << std::hexfloat << a[k] << " / " << b << ": " << got[k] << ", want " << want[k];
    };
    alignas(64) float a[16];
    const auto every_significand = [&](float b) {
        const auto d = simd::f32_divisor::of(b, true);
        for (std::uint32_t m = 0; m < (1u << 23); m += 16) {
            for (std::uint32_t k = 0; k < 16; ++k) {
                const std::uint32_t i = m + k;
                const std::uint32_t e = 127 - 60 + (i * 2654435761u >> 7) % 140; // 2^-60 .. 2^79: all in the range
                a[k] = std::bit_cast<float>(((i & 1u) << 31) | (e << 23) | i);
            }
            compare(a, b, d);
        }
        return d.by_reciprocal;
    };
    for (const float b : short_divisors) ASSERT_TRUE(every_significand(b)) << b << " (a short significand)";
    int by_reciprocal = 0;
    for (const float b : divisors) by_reciprocal += every_significand(b);
    // Each reason takes some (the theorem's: 0.229, 0.1; the short significands': 255, 3, 7, 10), not all.
    EXPECT_TRUE(simd::f32_divisor::of(0.229f, true).by_reciprocal && simd::f32_divisor::of(-255.0f, true).by_reciprocal);
    EXPECT_FALSE(simd::f32_divisor::of(std::nextafter(2.0f, 0.0f), true).by_reciprocal);
    EXPECT_GT(by_reciprocal, 20);
    EXPECT_LT(by_reciprocal, static_cast<int>(divisors.size()));

    const float edges[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -0x1p-140f,
                           std::numeric_limits<float>::min(), 0x1p-60f, std::nextafter(0x1p-60f, 0.0f), -0x1p-61f,
                           0x1p80f, std::nextafter(0x1p80f, INFINITY), 0x1.fffffep80f, 0x1p81f,
                           std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), INFINITY, -INFINITY,
                           std::bit_cast<float>(0x7fc00000u), std::bit_cast<float>(0xffc12345u),
                           std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff812345u)};
    const float others[] = {0x1p-21f, 0x1p21f, 0.0f, -0.0f, INFINITY, std::numeric_limits<float>::denorm_min(),
                            std::bit_cast<float>(0x7fc01234u)};
    for (const float b : divisors) {
        const auto d = simd::f32_divisor::of(b, true);
        for (const float edge : edges)
            for (int lane = 0; lane < 16; lane += 5) {
                for (int k = 0; k < 16; ++k) a[k] = std::ldexp(significand(rng), exponent(rng));
                a[lane] = edge;
                compare(a, b, d);
            }
    }
    for (const float b : others) {
        const auto d = simd::f32_divisor::of(b, true);
        EXPECT_FALSE(d.by_reciprocal) << b;
        for (const float edge : edges) {
            for (int k = 0; k < 16; ++k) a[k] = std::ldexp(significand(rng), exponent(rng));
            a[3] = edge;
            compare(a, b, d);
        }
    }
    EXPECT_FALSE(simd::f32_divisor::of(255.0f, false).by_reciprocal);
    EXPECT_EQ(wrong, 0);
}

// The loop on words with streaming stores runs in eval/streaming_test.cpp (`u8 + i8` at every length and
// offset): this program is built without streaming (mixt_add_test), so it could not stream here.

#else

TEST(simd_wide, skipped_without_avx512) {
    static_assert(!simd::avx512);
    GTEST_SKIP() << "no AVX-512 in this build: the 16-lane batches are not compiled";
}

#endif

} // namespace
