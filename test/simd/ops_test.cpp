// mixt::simd::apply (simd/ops.hpp, and its AVX2 versions in simd/ops_avx2.hpp) against the scalar functors of
// expr/functors.hpp, which are the definition. The unary functions of half and bfloat16 nodes are checked on
// every one of the 65536 inputs: sqrt, -, abs bit for bit; exp, log, sin, cos and tanh within the documented
// 2 ulp of the result type (in f16/bf16 steps), with infinities, zeros and the sign of every number exact,
// and a NaN wherever the definition gives one (of the definition's sign, for the exact operations). The vector versions are AVX2 code of their own (exp of a half node is mixt's own polynomial), so
// this is where a wrong constant, a lost NaN or a bad clamp shows up; in builds without AVX2 both sides are
// the scalar definition and the test checks the lane loop. apply_real_product_store (`c64 * f32 +- c128` from
// memory) is checked bit for bit against the planar path it replaces.

#include <mixt/simd/batch.hpp>
#include <mixt/simd/ops.hpp>
#include <mixt/simd/stream.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

// apply_real_product_store (`c64 * f32 +- c128` straight from memory, AVX2 and AVX-512 forms) against the planar
// path it stands for: apply_store of the planar complex product. Every complex<float> whose parts are two of the
// specials (NaNs of both signs and with a payload, a signalling NaN, infinities, zeros, subnormals, the
// largest) times every special float, each operand order, + and -, the memory operand on either side. Where
// it stores, the result must be the planar path's bit for bit, NaN payloads included; where it declines, the
// planar product must have a lane that is NaN in both parts.
template <bool ALeft, bool RealLeft, bool Stream = false, class Fn>
void expect_real_product_store(const char* name, Fn op) {
    using c64 = std::complex<float>;
    using c128 = std::complex<double>;
    using lim = std::numeric_limits<float>;
    const float specials[] = {0.0f, -0.0f, 1.0f, -2.5f, lim::infinity(), -lim::infinity(), lim::quiet_NaN(),
                              -lim::quiet_NaN(), std::bit_cast<float>(0x7fc12345u), std::bit_cast<float>(0x7f800001u),
                              lim::denorm_min(), -lim::min(), lim::max(), 3e-30f};
    constexpr int s = sizeof specials / sizeof specials[0];
    constexpr int n = s * s * s;
    static_assert(n % lanes == 0);
    std::vector<c64> a(n);
    std::vector<float> x(n);
    std::vector<c128> p(n);
    const c128 others[] = {c128(1.5, -2.0), c128(-0.0, -0.0), c128(0.0, 0.0), c128(lim::infinity(), 0.25)};
    for (int i = 0; i < n; ++i) {
        a[i] = c64(specials[i % s], specials[(i / s) % s]);
        x[i] = specials[i / (s * s)];
        p[i] = others[(i / 3) % 4];
    }
    int stored = 0, declined = 0, failures = 0;
    std::string first_failure;
    for (int i = 0; i < n; i += lanes) {
        const auto xb = mixt::simd::load(x.data() + i);
        const auto xc = mixt::simd::convert<c64>(xb);
        const auto ab = mixt::simd::load(a.data() + i);
        const auto product = RealLeft ? mixt::simd::apply<c64>(fn::mul_fn{}, xc, ab)
                                      : mixt::simd::apply<c64>(fn::mul_fn{}, ab, xc);
        alignas(64) c128 got[lanes];
        c128 want[lanes];
        mixt::simd::apply_store<ALeft>(want, op, product, p.data() + i);
        // Whether the textbook formula (before C's recovery, which the planar product has applied) gives a lane
        // that is NaN in both parts.
        bool both_nan = false;
        for (int j = 0; j < lanes; ++j) {
            const float re = a[i + j].real(), im = a[i + j].imag(), r = x[i + j], zero = 0.0f;
            const float pr = RealLeft ? r * re - zero * im : re * r - im * zero;
            const float pi = RealLeft ? r * im + zero * re : re * zero + im * r;
            both_nan = both_nan || (std::isnan(pr) && std::isnan(pi));
        }
        if (mixt::simd::apply_real_product_store<ALeft, RealLeft, Stream>(got, op, a.data() + i, xb, p.data() + i)) {
            if constexpr (Stream) mixt::simd::stream_fence();
            ++stored;
            if (std::memcmp(got, want, sizeof got) != 0 && failures++ == 0) {
                std::ostringstream out;
                for (int j = 0; j < lanes; ++j)
                    if (std::memcmp(&got[j], &want[j], sizeof got[j]) != 0)
                        out << "a=" << a[i + j] << " x=" << x[i + j] << " p=" << p[i + j] << ": got " << got[j]
                            << ", want " << want[j] << "; ";
                first_failure = out.str();
            }
            if (both_nan && failures++ == 0) first_failure = "stored a batch whose product is NaN in both parts";
        } else {
            ++declined;
            if (!both_nan && failures++ == 0)
                first_failure = "declined a batch with no lane NaN in both parts at " + std::to_string(i);
        }
    }
    EXPECT_EQ(failures, 0) << name << ", e.g. " << first_failure;
    // Both ways are taken (a batch is declined for one lane: most batches here have a NaN or an infinity).
    EXPECT_GT(stored, 0) << name;
    EXPECT_GT(declined, 0) << name;
}

TEST(simd_ops, real_product_store_matches_the_planar_path_bit_for_bit) {
    using c128 = std::complex<double>;
    if constexpr (mixt::simd::combines_real_product_v<c128, fn::add_fn>) {
        expect_real_product_store<true, false>("a * x + p", fn::add_fn{});
        expect_real_product_store<true, true>("x * a + p", fn::add_fn{});
        expect_real_product_store<false, false>("p + a * x", fn::add_fn{});
        expect_real_product_store<true, false>("a * x - p", fn::sub_fn{});
        expect_real_product_store<false, true>("p - x * a", fn::sub_fn{});
        // With streaming stores (the fused loop's at 32 MiB and more).
        expect_real_product_store<true, false, true>("a * x + p, streamed", fn::add_fn{});
        expect_real_product_store<false, true, true>("p - x * a, streamed", fn::sub_fn{});
    } else {
        GTEST_SKIP() << "apply_real_product_store is an AVX2 form: not in this build";
    }
}

} // namespace
