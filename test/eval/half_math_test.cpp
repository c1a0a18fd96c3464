// The unary functions of f16 and bf16 on every one of their 65536 inputs: each path (the scalar definition,
// the fused loop on the DefaultDevice and on a ThreadPoolDevice, the lowering to Eigen) gives the correctly
// rounded result, the same bits everywhere (NaN: any NaN, the NaN contract). The correctly rounded value is
// computed here from the x87 long double functions (64-bit significand), rounded once to the 16-bit type.
#define EIGEN_USE_THREADS

#include <mixt/eval/assign.hpp>
#include <mixt/eval/lower.hpp>
#include <mixt/expr/operators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace {

template <class T>
std::uint16_t bits_of(T x) {
    return Eigen::numext::bit_cast<std::uint16_t>(x);
}
template <class T>
T from_bits(std::uint16_t b) {
    return Eigen::numext::bit_cast<T>(b);
}
template <class T>
bool is_nan(T x) {
    return std::isnan(static_cast<float>(x));
}

// The long double value L rounded once to T: through double (exact unless L is not a double), and where the
// double is a midpoint between two values of T (its neighbours round apart), L itself decides.
template <class T>
T round_once(long double L) {
    const double d = static_cast<double>(L);
    if (std::isnan(d)) return std::numeric_limits<T>::quiet_NaN();
    T r = mixt::convert<T>(d);
    const T up = mixt::convert<T>(std::nextafter(d, std::numeric_limits<double>::infinity()));
    const T down = mixt::convert<T>(std::nextafter(d, -std::numeric_limits<double>::infinity()));
    if (bits_of(up) != bits_of(down) && static_cast<long double>(d) != L) r = L > static_cast<long double>(d) ? up : down;
    return r;
}

// How far the exact value L lies from the nearest midpoint between two values of T (want: L correctly
// rounded), relative to |L|. A computation in double whose relative error stays below it rounds to want:
// the GPU's scalar definition is one (CUDA's double exp, log, sin, cos and tanh are within 2 ulps, 2^-51),
// so this margin is what stands for the GPU's bits in a test that runs without one.
template <class T>
long double midpoint_margin(long double L, T want) {
    const long double w = static_cast<float>(want);
    if (std::isinf(w) || std::isnan(w) || L == w) return 1;
    const std::uint16_t b = bits_of(want);
    const bool away = std::fabs(L) > std::fabs(w); // the neighbour on L's side has a larger magnitude
    long double next = static_cast<float>(from_bits<T>(static_cast<std::uint16_t>(away ? b + 1 : b - 1)));
    if (std::isinf(next)) next = 2 * w - static_cast<float>(from_bits<T>(static_cast<std::uint16_t>(b - 1)));
    return (std::fabs(next - w) / 2 - std::fabs(L - w)) / std::fabs(L);
}

// One case per unary function of a float: its name, the long double reference, the expression and the functor.
#define MIXT_HALF_MATH_CASE(CASE, NAME, REF, APPLY, FN)                \
    struct CASE {                                                      \
        static constexpr const char* name = NAME;                      \
        static long double ref(long double x) { return REF; }          \
        template <class E>                                             \
        static auto apply(E&& e) { return APPLY; }                     \
        using fn = mixt::detail::FN;                                   \
    };
MIXT_HALF_MATH_CASE(exp_case, "exp", std::exp(x), mixt::exp(e), exp_fn)
MIXT_HALF_MATH_CASE(log_case, "log", std::log(x), mixt::log(e), log_fn)
MIXT_HALF_MATH_CASE(sin_case, "sin", std::sin(x), mixt::sin(e), sin_fn)
MIXT_HALF_MATH_CASE(cos_case, "cos", std::cos(x), mixt::cos(e), cos_fn)
MIXT_HALF_MATH_CASE(tanh_case, "tanh", std::tanh(x), mixt::tanh(e), tanh_fn)
MIXT_HALF_MATH_CASE(sqrt_case, "sqrt", std::sqrt(x), mixt::sqrt(e), sqrt_fn)
// Exact functions, for completeness: every unary function of a float.
MIXT_HALF_MATH_CASE(abs_case, "abs", std::fabs(x), mixt::abs(e), abs_fn)
MIXT_HALF_MATH_CASE(neg_case, "negation", -x, -e, neg_fn)
#undef MIXT_HALF_MATH_CASE

template <class T, class Case>
void check_every_input() {
    constexpr Eigen::Index n = 65536;
    Eigen::Tensor<T, 1> x(n);
    for (Eigen::Index i = 0; i < n; ++i) x(i) = from_bits<T>(static_cast<std::uint16_t>(i));

    const Eigen::Tensor<T, 1> fused = mixt::eval(Case::apply(mixt::lazy(x)));
    Eigen::ThreadPool pool(2);
    const Eigen::ThreadPoolDevice device(&pool, 2);
    Eigen::Tensor<T, 1> pooled(n);
    mixt::assign(pooled, Case::apply(mixt::lazy(x)), device);
    const Eigen::Tensor<T, 1> lowered = mixt::to_eigen(Case::apply(mixt::lazy(x)));

    const std::string what = std::string(Case::name) + " of " + (std::is_same_v<T, Eigen::half> ? "f16" : "bf16");
    int wrong = 0;
    long double margin = 1;
    for (Eigen::Index i = 0; i < n; ++i) {
        const T in = x(i);
        const long double exact = Case::ref(static_cast<long double>(static_cast<float>(in)));
        const T want = round_once<T>(exact);
        if (!std::isnan(exact)) margin = std::min(margin, midpoint_margin(exact, want));
        const T scalar = typename Case::fn{}(in);
        const T got[] = {scalar, fused(i), pooled(i), lowered(i)};
        const char* path[] = {"scalar definition", "fused loop", "thread pool", "lowering to Eigen"};
        for (int p = 0; p < 4; ++p) {
            const bool ok = is_nan(want) ? is_nan(got[p]) : bits_of(got[p]) == bits_of(want);
            if (!ok && ++wrong <= 8)
                ADD_FAILURE() << what << ", " << path[p] << ": input 0x" << std::hex << i << " ("
                              << static_cast<float>(in) << ") gives 0x" << bits_of(got[p]) << ", correctly rounded 0x"
                              << bits_of(want) << std::dec;
        }
    }
    EXPECT_EQ(wrong, 0) << what;
    // 2^-45: the long double references are within 2^-62 or so; CUDA's double functions within 2^-51.
    EXPECT_GT(margin, 0x1p-45L) << what << ": an exact value lies this close to a rounding boundary";
    if (margin < 1) std::printf("%s: exact values at least %Lg (relative) from a rounding boundary\n", what.c_str(), margin);
}

template <class T>
void check_all_functions() {
    check_every_input<T, exp_case>();
    check_every_input<T, log_case>();
    check_every_input<T, sin_case>();
    check_every_input<T, cos_case>();
    check_every_input<T, tanh_case>();
    check_every_input<T, sqrt_case>();
    check_every_input<T, abs_case>();
    check_every_input<T, neg_case>();
}

// The case an outside cross-check found: eval gave 0x45c5 and to_eigen 0x45c6 (the correctly rounded value).
TEST(half_math, exp_of_half_1_7529297_is_0x45c6_on_every_path) {
    Eigen::Tensor<Eigen::half, 1> x(17);
    x.setConstant(from_bits<Eigen::half>(0x3f03));
    const Eigen::Tensor<Eigen::half, 1> fused = mixt::eval(mixt::exp(mixt::lazy(x)));
    const Eigen::Tensor<Eigen::half, 1> lowered = mixt::to_eigen(mixt::exp(mixt::lazy(x)));
    for (Eigen::Index i = 0; i < x.size(); ++i) {
        EXPECT_EQ(bits_of(fused(i)), 0x45c6) << i;
        EXPECT_EQ(bits_of(lowered(i)), 0x45c6) << i;
    }
    EXPECT_EQ(bits_of(mixt::detail::exp_fn{}(x(0))), 0x45c6);
}

TEST(half_math, f16_functions_are_correctly_rounded_on_every_input_and_path) { check_all_functions<Eigen::half>(); }
TEST(half_math, bf16_functions_are_correctly_rounded_on_every_input_and_path) { check_all_functions<Eigen::bfloat16>(); }

} // namespace
