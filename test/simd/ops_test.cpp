// mixt::simd::apply (simd/ops.hpp, and its AVX2 versions in simd/ops_avx2.hpp) against the scalar functors of
// expr/functors.hpp, which are the definition. The unary functions of half and bfloat16 nodes are checked on
// every one of the 65536 inputs: sqrt, -, abs bit for bit; exp, log, sin, cos and tanh within the documented
// 2 ulp of the result type (in f16/bf16 steps), with infinities, zeros and the sign of every number exact,
// and a NaN wherever the definition gives one (of the definition's sign, for the exact operations). The vector versions are AVX2 code of their own (exp of a half node is mixt's own polynomial), so
// this is where a wrong constant, a lost NaN or a bad clamp shows up; in builds without AVX2 both sides are
// the scalar definition and the test checks the lane loop.

#include <mixt/simd/batch.hpp>
#include <mixt/simd/ops.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fn = mixt::detail;
using mixt::simd::lanes;

template <class T>
T from_bits(std::uint16_t u) {
    return std::bit_cast<T>(u);
}

template <class T>
std::uint16_t to_bits(T x) {
    return std::bit_cast<std::uint16_t>(x);
}

// The position of a 16-bit float on a line where adjacent representable values are 1 apart and -0 == +0.
inline int ordinal(std::uint16_t bits) {
    const int magnitude = bits & 0x7fff;
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

inline bool is_nan_bits(std::uint16_t bits, int exponent_bits) {
    const int mantissa_bits = 15 - exponent_bits;
    const unsigned exponent_mask = ((1u << exponent_bits) - 1u) << mantissa_bits;
    return (bits & exponent_mask) == exponent_mask && (bits & ((1u << mantissa_bits) - 1u)) != 0;
}

inline bool is_inf_or_zero(std::uint16_t bits, int exponent_bits) {
    const int mantissa_bits = 15 - exponent_bits;
    const unsigned exponent_mask = ((1u << exponent_bits) - 1u) << mantissa_bits;
    const unsigned magnitude = bits & 0x7fffu;
    return magnitude == 0 || magnitude == exponent_mask;
}

struct summary {
    int checked = 0;
    int inexact = 0;
    int worst = 0;
    std::vector<std::string> failures;
};

// Runs `f` on every bit pattern of T, 8 lanes at a time through simd::apply, against f lane by lane.
template <class T, class Fn>
summary check_every_input(Fn f, int max_ulp) {
    constexpr int exponent_bits = std::is_same_v<T, Eigen::half> ? 5 : 8;
    summary s;
    for (std::uint32_t first = 0; first < 0x10000u; first += lanes) {
        T in[lanes];
        for (int l = 0; l < lanes; ++l) in[l] = from_bits<T>(static_cast<std::uint16_t>(first + l));
        T out[lanes];
        mixt::simd::to_array(mixt::simd::apply<T>(f, mixt::simd::load(in)), out);
        // The batch a fused loop stores (the rounding left to the store) must store the same bits.
        T stored[lanes];
        mixt::simd::store(stored, mixt::simd::apply_unrounded<T>(f, mixt::simd::load(in)));
        for (int l = 0; l < lanes; ++l) {
            const std::uint16_t want = to_bits(static_cast<T>(f(in[l])));
            const std::uint16_t got = to_bits(out[l]);
            ++s.checked;
            if (to_bits(stored[l]) != got && s.failures.size() < 8) {
                std::ostringstream m;
                m << std::hex << "input 0x" << (first + static_cast<std::uint32_t>(l)) << ": apply_unrounded stored 0x"
                  << to_bits(stored[l]) << ", apply 0x" << got;
                s.failures.push_back(m.str());
            }
            if (want == got) continue;
            const bool want_nan = is_nan_bits(want, exponent_bits);
            const bool got_nan = is_nan_bits(got, exponent_bits);
            if (!want_nan) ++s.inexact;
            const int distance = std::abs(ordinal(want) - ordinal(got));
            bool ok = !want_nan && !got_nan && distance <= max_ulp;
            // Special results are exact: an infinity or a zero (of its sign) where the definition gives one.
            if (is_inf_or_zero(want, exponent_bits) && want != got) ok = false;
            // The sign of a nonzero result never flips.
            if (!want_nan && ((want ^ got) & 0x8000u) != 0) ok = false;
            // A NaN result is a NaN. Its payload is not specified (the scalar definition rounds through Eigen's
            // half, which keeps none; F16C keeps the top bits), nor is its sign, except for the exact
            // operations (-x and abs(x) set the sign bit of a NaN too).
            if (want_nan) ok = got_nan && (max_ulp > 0 || ((want ^ got) & 0x8000u) == 0);
            if (!ok && s.failures.size() < 8) {
                std::ostringstream m;
                m << std::hex << "input 0x" << (first + static_cast<std::uint32_t>(l)) << ": got 0x" << got
                  << ", the definition gives 0x" << want << std::dec << " (" << distance << " ulp)";
                s.failures.push_back(m.str());
            }
            if (!want_nan && !got_nan) s.worst = std::max(s.worst, distance);
        }
    }
    return s;
}

template <class T, class Fn>
void expect_within(const char* name, Fn f, int max_ulp) {
    const summary s = check_every_input<T>(f, max_ulp);
    EXPECT_EQ(s.checked, 0x10000);
    EXPECT_TRUE(s.failures.empty()) << name << ": " << s.failures.size() << "+ inputs off by more than " << max_ulp
                                    << " ulp or wrong on a special value, e.g. " << s.failures.front();
    EXPECT_LE(s.worst, max_ulp) << name;
    std::printf("%-8s %-5s %5d of 65536 numbers differ from the scalar definition, by at most %d ulp\n", name,
                std::is_same_v<T, Eigen::half> ? "f16" : "bf16", s.inexact, s.worst);
}

TEST(simd_ops, f16_exact_operations_on_every_input) {
    expect_within<Eigen::half>("sqrt", fn::sqrt_fn{}, 0);
    expect_within<Eigen::half>("negate", fn::neg_fn{}, 0);
    expect_within<Eigen::half>("abs", fn::abs_fn{}, 0);
}

TEST(simd_ops, bf16_exact_operations_on_every_input) {
    expect_within<Eigen::bfloat16>("sqrt", fn::sqrt_fn{}, 0);
    expect_within<Eigen::bfloat16>("negate", fn::neg_fn{}, 0);
    expect_within<Eigen::bfloat16>("abs", fn::abs_fn{}, 0);
}

TEST(simd_ops, f16_transcendentals_on_every_input) {
    expect_within<Eigen::half>("exp", fn::exp_fn{}, 2);
    expect_within<Eigen::half>("log", fn::log_fn{}, 2);
    expect_within<Eigen::half>("sin", fn::sin_fn{}, 2);
    expect_within<Eigen::half>("cos", fn::cos_fn{}, 2);
    expect_within<Eigen::half>("tanh", fn::tanh_fn{}, 2);
}

TEST(simd_ops, bf16_transcendentals_on_every_input) {
    expect_within<Eigen::bfloat16>("exp", fn::exp_fn{}, 2);
    expect_within<Eigen::bfloat16>("log", fn::log_fn{}, 2);
    expect_within<Eigen::bfloat16>("sin", fn::sin_fn{}, 2);
    expect_within<Eigen::bfloat16>("cos", fn::cos_fn{}, 2);
    expect_within<Eigen::bfloat16>("tanh", fn::tanh_fn{}, 2);
}

// + - * / of two f16 or bf16 batches: every bit pattern as the left operand, each against 8 right operands (the
// specials, then random patterns), bit for bit against the functor, through apply and through
// apply_unrounded then a store.
template <class T, class Fn>
void expect_exact_binary(const char* name, Fn f) {
    std::uint32_t state = 12345u;
    const auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<std::uint16_t>(state >> 16);
    };
    // 0, -0, the smallest subnormal, 1, -1, the largest finite, infinity, a NaN.
    constexpr bool f16 = std::is_same_v<T, Eigen::half>;
    const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, f16 ? 0x3c00 : 0x3f80, f16 ? 0xbc00 : 0xbf80,
                                      f16 ? 0x7bff : 0x7f7f, f16 ? 0x7c00 : 0x7f80, f16 ? 0x7e00 : 0x7fc0};
    int failures = 0;
    std::string first_failure;
    for (int round = 0; round < 8; ++round) {
        for (std::uint32_t first = 0; first < 0x10000u; first += lanes) {
            T a[lanes], b[lanes], out[lanes], stored[lanes];
            for (int l = 0; l < lanes; ++l) {
                a[l] = from_bits<T>(static_cast<std::uint16_t>(first + static_cast<std::uint32_t>(l)));
                const std::uint16_t special = specials[(round + l) % 8];
                b[l] = from_bits<T>(round < 2 ? special : next());
            }
            const auto x = mixt::simd::load(a);
            const auto y = mixt::simd::load(b);
            mixt::simd::to_array(mixt::simd::apply<T>(f, x, y), out);
            mixt::simd::store(stored, mixt::simd::apply_unrounded<T>(f, x, y));
            for (int l = 0; l < lanes; ++l) {
                const std::uint16_t want = to_bits(static_cast<T>(f(a[l], b[l])));
                constexpr int exponent_bits = f16 ? 5 : 8;
                // A NaN result is a NaN, of any payload (see check_every_input).
                const auto agrees = [&](std::uint16_t got) {
                    return got == want || (is_nan_bits(want, exponent_bits) && is_nan_bits(got, exponent_bits));
                };
                if ((!agrees(to_bits(out[l])) || to_bits(stored[l]) != to_bits(out[l])) && ++failures == 1) {
                    std::ostringstream m;
                    m << std::hex << "0x" << to_bits(a[l]) << " and 0x" << to_bits(b[l]) << ": apply 0x"
                      << to_bits(out[l]) << ", stored unrounded 0x" << to_bits(stored[l]) << ", the definition 0x"
                      << want;
                    first_failure = m.str();
                }
            }
        }
    }
    EXPECT_EQ(failures, 0) << name << ", e.g. " << first_failure;
}

TEST(simd_ops, f16_arithmetic_stored_unrounded_matches_the_definition) {
    expect_exact_binary<Eigen::half>("add", fn::add_fn{});
    expect_exact_binary<Eigen::half>("sub", fn::sub_fn{});
    expect_exact_binary<Eigen::half>("mul", fn::mul_fn{});
    expect_exact_binary<Eigen::half>("div", fn::div_fn{});
}

TEST(simd_ops, bf16_arithmetic_stored_unrounded_matches_the_definition) {
    expect_exact_binary<Eigen::bfloat16>("add", fn::add_fn{});
    expect_exact_binary<Eigen::bfloat16>("sub", fn::sub_fn{});
    expect_exact_binary<Eigen::bfloat16>("mul", fn::mul_fn{});
    expect_exact_binary<Eigen::bfloat16>("div", fn::div_fn{});
}

} // namespace
