#ifndef MIXT_EXPR_FUNCTORS_HPP
#define MIXT_EXPR_FUNCTORS_HPP

// The per-element meaning of every operation, on values already converted to the operation's compute type.
// Defined for every input (no undefined behaviour), callable from device code, and the reference that the
// vectorized loops are tested against. The documented results:
//   - `+ - *` on integers wrap modulo 2^n; unary `-` too (so `-INT_MIN == INT_MIN`, `-u` is `2^n - u`).
//   - on bool, `+` is logical or and `*` logical and (as NumPy and JAX).
//   - f16 and bf16 compute in f32 and round once per operation.
//   - integer floor_divide: NumPy's results: `x // 0 == 0`, `INT_MIN // -1 == INT_MIN` (wraps); rounds toward
//     negative infinity. Integer `%`: `x % 0 == 0`; the result has the sign of the divisor (Python's modulo).
//   - float floor_divide and `%`: NumPy's (`fmod` adjusted to the divisor's sign; `x // 0` is `x / 0`).
//   - shifts: a count outside `[0, bits)` gives 0 for `<<`, and for `>>` gives 0, or -1 for a negative
//     signed value (the limit of repeated arithmetic shifts). `>>` of a signed value is arithmetic.
//   - `abs(INT_MIN) == INT_MIN` (wraps). `abs` of complex is the real-valued magnitude.
//   - integer `pow` wraps; a negative exponent gives `1 / x**-e` truncated: 1 for x == 1, +-1 for x == -1,
//     0 otherwise (0 ** negative is 0). Float pow is `std::pow`; a float base with an integer exponent computes
//     in double, exact in the exponent (an odd exponent keeps a negative base's sign however large it is). A
//     complex base with an integer exponent (an integer dtype, or a complex value that is an integer) multiplies
//     by repeated squaring; other complex powers are exp(e * log(base)) computed in a wider type.
//   - complex<double> division is written out (complex_divide): libgcc's __divdc3 gives NaN for some finite
//     quotients.
//   - `minimum`, `maximum` and `clip` propagate NaN (NumPy's `minimum`, not `fmin`) and order -0 below +0
//     (IEEE 754-2019's minimum and maximum); on complex they order lexicographically.

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "mixt/dtype/convert.hpp"

namespace mixt::detail {

// f16/bf16 compute in f32.
template <class T>
using compute_t =
    std::conditional_t<is_small_float_v<T>, float, T>;

// Integer arithmetic in an unsigned type at least as wide as `unsigned`, so nothing promotes to `int` and
// overflows.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
EIGEN_DEVICE_FUNC constexpr T from_wrap(wrap_t<T> x) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x)); // modular since C++20
}

template <class T>
EIGEN_DEVICE_FUNC constexpr bool is_nan_value(const T& x) {
    if constexpr (is_float_like_v<T>)
        return Eigen::numext::isnan(x);
    else if constexpr (is_complex_v<T>)
        return Eigen::numext::isnan(x.real()) || Eigen::numext::isnan(x.imag());
    else
        return false;
}

template <class T>
EIGEN_DEVICE_FUNC constexpr bool less(const T& a, const T& b) {
    if constexpr (is_complex_v<T>)
        return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
    else
        return a < b;
}

// `x`, which the compiler may not fuse with the operation that consumes it: a product passed through rounded()
// is rounded to its type before it is added or subtracted, whatever -ffp-contract the user's code is built with
// (GCC's default for -std=gnu++20 contracts a * b + c into a fused multiply-add across inlined functions, which
// rounds once instead of per node). __builtin_assoc_barrier (GCC 12, Clang 16) costs nothing at run time and
// leaves scalar loops vectorizable; the fused CPU loop is compiled without contraction besides (MIXT_FLATTEN,
// simd/arch.hpp). Clang's default (-ffp-contract=on) fuses within one source expression only, which mixt's
// per-node functions never write. nvcc has -fmad instead (and its front end does not know the builtin).
template <class T>
EIGEN_DEVICE_FUNC constexpr T rounded(T x) {
#if defined(__has_builtin) && !defined(__CUDACC__)
#if __has_builtin(__builtin_assoc_barrier)
    return __builtin_assoc_barrier(x);
#else
    return x;
#endif
#else
    return x;
#endif
}

// The product x * y rounded to F, never fused into the sum that consumes it: on the host rounded(x * y); in CUDA
// device code __fmul_rn/__dmul_rn, which nvcc never contracts into a multiply-add, whatever -fmad the program
// is built with (its default, -fmad=true, fuses a plain product with the sum that consumes it).
template <class F>
EIGEN_DEVICE_FUNC F mul_rn(F x, F y) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<F, float>)
        return __fmul_rn(x, y);
    else if constexpr (std::is_same_v<F, double>)
        return __dmul_rn(x, y);
    else
        return x * y;
#else
    return rounded(x * y);
#endif
}

// a / b rounded once: in CUDA device code __fdiv_rn/__ddiv_rn, which no flag (-prec-div, fast math) turns into
// an approximation.
template <class F>
EIGEN_DEVICE_FUNC F divide_rn(F a, F b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<F, float>)
        return __fdiv_rn(a, b);
    else if constexpr (std::is_same_v<F, double>)
        return __ddiv_rn(a, b);
    else
        return a / b;
#else
    return a / b;
#endif
}

template <class T, class F>
EIGEN_DEVICE_FUNC T via_compute(const T& a, F f) {
    return static_cast<T>(f(static_cast<compute_t<T>>(a)));
}
template <class T, class F>
EIGEN_DEVICE_FUNC T via_compute(const T& a, const T& b, F f) {
    return static_cast<T>(f(static_cast<compute_t<T>>(a), static_cast<compute_t<T>>(b)));
}

// Complex values are combined part by part here and below, never through std::complex's operators: with nvcc
// 13, libstdc++ 12 and C++20, its constexpr `+ - / +=` (written over GNU __complex__ values) compile to nothing
// in device code (`a + b` gives `a`, silently). test/gpu/ptx_check.cmake checks the instructions each of these
// functions compiles to for the device.
struct add_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_bool_v<T>) return a || b;
        else if constexpr (is_int_v<T>) return from_wrap<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)));
        else if constexpr (is_complex_v<T>) return T(a.real() + b.real(), a.imag() + b.imag());
        else return via_compute(a, b, [](auto x, auto y) { return x + y; });
    }
};
struct sub_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_int_v<T>) return from_wrap<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)));
        else if constexpr (is_complex_v<T>) return T(a.real() - b.real(), a.imag() - b.imag());
        else return via_compute(a, b, [](auto x, auto y) { return x - y; });
    }
};
// The complex product: the textbook formula (ac - bd, ad + bc), every product and sum rounded once, and C's
// Annex G recovery of infinities when both parts come out NaN (as libgcc's __muldc3 does). Written out
// rather than std::complex's operator*, which GCC 12 turns into fused multiply-adds (vfmaddsub) wherever FMA
// is available, even under -ffp-contract=off, and in a different order at different call sites: the same
// product then differed between two loops of one program. The vector loops compute the same formula.
template <class F>
EIGEN_DEVICE_FUNC F complex_box(F v) { // +-inf -> +-1, finite -> +-0 (the sign kept)
    return std::copysign((Eigen::numext::isinf)(v) ? F(1) : F(0), v);
}
template <class F>
EIGEN_DEVICE_FUNC F complex_nan_to_zero(F v) {
    return (Eigen::numext::isnan)(v) ? std::copysign(F(0), v) : v;
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> complex_multiply(const std::complex<F>& x, const std::complex<F>& y) {
    const auto isinf = [](F v) { return (Eigen::numext::isinf)(v); };
    const auto isnan = [](F v) { return (Eigen::numext::isnan)(v); };
    F a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
    const F ac = mul_rn(a, c), bd = mul_rn(b, d), ad = mul_rn(a, d), bc = mul_rn(b, c);
    F re = ac - bd, im = ad + bc;
    if (isnan(re) && isnan(im)) {
        bool recompute = false;
        if (isinf(a) || isinf(b)) { // x is infinite
            a = complex_box(a), b = complex_box(b), c = complex_nan_to_zero(c), d = complex_nan_to_zero(d);
            recompute = true;
        }
        if (isinf(c) || isinf(d)) { // y is infinite
            c = complex_box(c), d = complex_box(d), a = complex_nan_to_zero(a), b = complex_nan_to_zero(b);
            recompute = true;
        }
        if (!recompute && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) { // overflow in a product
            a = complex_nan_to_zero(a), b = complex_nan_to_zero(b);
            c = complex_nan_to_zero(c), d = complex_nan_to_zero(d);
            recompute = true;
        }
        if (recompute) {
            const F inf = std::numeric_limits<F>::infinity();
            re = inf * (mul_rn(a, c) - mul_rn(b, d));
            im = inf * (mul_rn(a, d) + mul_rn(b, c));
        }
    }
    return {re, im};
}

struct mul_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_bool_v<T>) return a && b;
        else if constexpr (is_int_v<T>) return from_wrap<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)));
        else if constexpr (is_complex_v<T>) return complex_multiply(a, b);
        else return via_compute(a, b, [](auto x, auto y) { return mul_rn(x, y); });
    }
};
// The complex<double> quotient x / y, written out: libstdc++'s operator/ calls libgcc's __divdc3, whose
// d * (b / c) is 0 * inf for a real divisor that overflows a part of the quotient, so that
// (19.9 + 0.14i) / 2.2e-308 gave (inf, nan) for (inf, 6.4e306), and (1.7e308 + 1.7e308i) / 0.1 gave NaN in both
// parts. Here:
//   - a real divisor (y's imaginary part zero) divides each part, and an imaginary one (real part zero) too:
//     each part correctly rounded, infinities and NaNs as real division makes them;
//   - otherwise both parts of y are scaled by the same power of two so that the larger lies in [1, 2) (exact), and
//     those of x too, so that neither |y|^2 nor the numerator's products can overflow or underflow while the
//     quotient is finite (C11 Annex G's example, _Cdivd, scales y only: (1.7e308 + 1.7e308i) / (1 + i) overflowed
//     its numerator); the formula x * conj(y) / |y|^2, each product rounded once, then scaled back (scalbn rounds
//     once, where the result is subnormal). A part of x or y smaller than 2^-1074 of the larger part of the same
//     operand is lost in the scaling: normwise the quotient is accurate to a few eps everywhere;
//   - where both parts come out NaN, C's Annex G recovery: an infinite x over a finite y is infinite, a finite x
//     over an infinite y is zero.
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> complex_divide(const std::complex<F>& x, const std::complex<F>& y) {
    using std::fabs;
    using std::fmax;
    using std::ilogb;
    using std::scalbn;
    const auto isinf = [](F v) { return (Eigen::numext::isinf)(v); };
    const auto isnan = [](F v) { return (Eigen::numext::isnan)(v); };
    const auto isfinite = [](F v) { return (Eigen::numext::isfinite)(v); };
    F a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
    if (d == F(0)) return {a / c, b / c};
    if (c == F(0)) return {b / d, -a / d};
    const F ymax = fmax(fabs(c), fabs(d));
    int ey = 0;
    if (isfinite(ymax)) {
        ey = ilogb(ymax);
        c = scalbn(c, -ey);
        d = scalbn(d, -ey);
    }
    const F xmax = fmax(fabs(a), fabs(b));
    int ex = 0;
    if (isfinite(xmax) && xmax != F(0)) {
        ex = ilogb(xmax);
        a = scalbn(a, -ex);
        b = scalbn(b, -ex);
    }
    const F denominator = mul_rn(c, c) + mul_rn(d, d);
    F re = scalbn((mul_rn(a, c) + mul_rn(b, d)) / denominator, ex - ey);
    F im = scalbn((mul_rn(b, c) - mul_rn(a, d)) / denominator, ex - ey);
    if (isnan(re) && isnan(im)) {
        const F inf = std::numeric_limits<F>::infinity();
        if ((isinf(a) || isinf(b)) && isfinite(c) && isfinite(d)) {
            a = complex_box(a), b = complex_box(b);
            re = inf * (mul_rn(a, c) + mul_rn(b, d));
            im = inf * (mul_rn(b, c) - mul_rn(a, d));
        } else if (isinf(ymax) && isfinite(a) && isfinite(b)) {
            c = complex_box(c), d = complex_box(d);
            re = F(0) * (mul_rn(a, c) + mul_rn(b, d));
            im = F(0) * (mul_rn(b, c) - mul_rn(a, d));
        }
    }
    return {re, im};
}

// The complex quotient mixt computes: complex<double> as complex_divide says; complex<float> by the same
// algorithm in double, each part rounded once to float. The products of float parts are exact in double and
// each part of the double quotient is within a few double ulp of the exact one, so the float parts are
// correctly rounded but for double rounding next to a tie: more accurate than libgcc's __divsc3 (std::complex's
// operator/ on the host, which compiles to nothing in CUDA device code), and the same bits on every device.
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> complex_quotient(const std::complex<F>& x, const std::complex<F>& y) {
    if constexpr (std::is_same_v<F, double>) {
        return complex_divide(x, y);
    } else {
        const std::complex<double> q = complex_divide(std::complex<double>(static_cast<double>(x.real()), static_cast<double>(x.imag())),
                                                      std::complex<double>(static_cast<double>(y.real()), static_cast<double>(y.imag())));
        return {static_cast<F>(q.real()), static_cast<F>(q.imag())};
    }
}

struct div_fn { // true division: operands are already floating or complex
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_complex_v<T>)
            return complex_quotient(a, b);
        else
            return via_compute(a, b, [](auto x, auto y) { return x / y; });
    }
};

template <class F>
EIGEN_DEVICE_FUNC void float_divmod(F a, F b, F& div, F& mod) {
    using std::floor;
    using std::fmod;
    mod = fmod(a, b);
    if (b == F(0)) {
        div = a / b;
        return;
    }
    div = (a - mod) / b;
    if (mod != F(0)) {
        if ((b < F(0)) != (mod < F(0))) {
            mod += b;
            div -= F(1);
        }
    } else {
        mod = std::copysign(F(0), b);
    }
    if (div != F(0)) {
        F f = floor(div);
        if (div - f > F(0.5)) f += F(1);
        div = f;
    } else {
        div = std::copysign(F(0), a / b);
    }
}

struct floor_divide_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_int_v<T>) {
            if (b == 0) return T(0);
            if constexpr (std::is_signed_v<T>) {
                if (b == T(-1)) return from_wrap<T>(static_cast<wrap_t<T>>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a)));
                const T q = static_cast<T>(a / b);
                return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
            } else {
                return static_cast<T>(a / b);
            }
        } else {
            return via_compute(a, b, [](auto x, auto y) {
                decltype(x) d{}, m{};
                float_divmod(x, y, d, m);
                return d;
            });
        }
    }
};
struct mod_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if constexpr (is_int_v<T>) {
            if (b == 0) return T(0);
            if constexpr (std::is_signed_v<T>) {
                if (b == T(-1)) return T(0);
                const T r = static_cast<T>(a % b);
                return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
            } else {
                return static_cast<T>(a % b);
            }
        } else {
            return via_compute(a, b, [](auto x, auto y) {
                decltype(x) d{}, m{};
                float_divmod(x, y, d, m);
                return m;
            });
        }
    }
};

struct neg_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a) const {
        if constexpr (is_int_v<T>) return from_wrap<T>(static_cast<wrap_t<T>>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a)));
        else if constexpr (is_complex_v<T>) return T(-a.real(), -a.imag());
        else return via_compute(a, [](auto x) { return -x; });
    }
};

struct equal_fn {
    template <class T>
    EIGEN_DEVICE_FUNC bool operator()(const T& a, const T& b) const {
        if constexpr (is_complex_v<T>) return a.real() == b.real() && a.imag() == b.imag();
        else return static_cast<compute_t<T>>(a) == static_cast<compute_t<T>>(b);
    }
};
struct not_equal_fn {
    template <class T>
    EIGEN_DEVICE_FUNC bool operator()(const T& a, const T& b) const { return !equal_fn{}(a, b); }
};
#define MIXT_DETAIL_COMPARE(NAME, OP)                                                                          \
    struct NAME {                                                                                              \
        template <class T>                                                                                     \
        EIGEN_DEVICE_FUNC bool operator()(const T& a, const T& b) const {                                      \
            return static_cast<compute_t<T>>(a) OP static_cast<compute_t<T>>(b);                               \
        }                                                                                                      \
    };
MIXT_DETAIL_COMPARE(less_fn, <)
MIXT_DETAIL_COMPARE(less_equal_fn, <=)
MIXT_DETAIL_COMPARE(greater_fn, >)
MIXT_DETAIL_COMPARE(greater_equal_fn, >=)
#undef MIXT_DETAIL_COMPARE

struct logical_and_fn {
    EIGEN_DEVICE_FUNC bool operator()(bool a, bool b) const { return a && b; }
};
struct logical_or_fn {
    EIGEN_DEVICE_FUNC bool operator()(bool a, bool b) const { return a || b; }
};
struct logical_not_fn {
    EIGEN_DEVICE_FUNC bool operator()(bool a) const { return !a; }
};

struct bit_and_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const { return static_cast<T>(a & b); }
};
struct bit_or_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const { return static_cast<T>(a | b); }
};
struct bit_xor_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const { return static_cast<T>(a ^ b); }
};
struct bit_not_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a) const {
        if constexpr (is_bool_v<T>) return !a;
        else return static_cast<T>(~static_cast<wrap_t<T>>(a));
    }
};
struct shift_left_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        constexpr int bits = static_cast<int>(sizeof(T) * 8);
        if (b < T(0) || static_cast<std::uint64_t>(b) >= static_cast<std::uint64_t>(bits)) return T(0);
        return from_wrap<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) << static_cast<int>(b)));
    }
};
struct shift_right_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        constexpr int bits = static_cast<int>(sizeof(T) * 8);
        if (b < T(0) || static_cast<std::uint64_t>(b) >= static_cast<std::uint64_t>(bits)) return a < T(0) ? T(-1) : T(0);
        return static_cast<T>(a >> static_cast<int>(b)); // arithmetic for signed since C++20
    }
};

// |x + iy| = hypot(x, y): what std::abs(std::complex) computes on the host (glibc's cabs is hypot), and in
// device code the GPU's hypot (std::abs of a std::complex is a host function there).
template <class F>
EIGEN_DEVICE_FUNC F complex_abs(const std::complex<F>& z) {
#if defined(EIGEN_GPU_COMPILE_PHASE)
    return Eigen::numext::hypot(z.real(), z.imag());
#else
    return std::hypot(z.real(), z.imag());
#endif
}

struct abs_fn {
    template <class T>
    EIGEN_DEVICE_FUNC auto operator()(const T& a) const {
        if constexpr (is_complex_v<T>) return complex_abs(a);
        else if constexpr (is_bool_v<T>) return a;
        else if constexpr (is_int_v<T> && std::is_signed_v<T>) return a < 0 ? neg_fn{}(a) : a;
        else if constexpr (is_int_v<T>) return a;
        else return via_compute(a, [](auto x) { return Eigen::numext::abs(x); });
    }
};

// Real functions are the C library's on the host: Eigen::numext::tanh(float) is a fast rational approximation
// when EIGEN_FAST_MATH is on (Eigen's default), several ulp off and exactly +-1 from |x| ~ 7.9 on. In device
// code, Eigen::numext calls the GPU's own functions.
#if defined(EIGEN_GPU_COMPILE_PHASE)
#define MIXT_DETAIL_REAL_MATH(FN, X) Eigen::numext::FN(X)
#else
#define MIXT_DETAIL_REAL_MATH(FN, X) std::FN(X)
#endif
// Complex functions are std::complex's on the host. Those are host functions, so device code computes the
// textbook formulas over the GPU's real functions (within a few ulp, normwise, of the host's).
#if defined(EIGEN_GPU_COMPILE_PHASE)
namespace device_complex {
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> exp(const std::complex<F>& z) {
    const F m = Eigen::numext::exp(z.real());
    return {m * Eigen::numext::cos(z.imag()), m * Eigen::numext::sin(z.imag())};
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> log(const std::complex<F>& z) {
    return {Eigen::numext::log(Eigen::numext::hypot(z.real(), z.imag())), ::atan2(z.imag(), z.real())};
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> sqrt(const std::complex<F>& z) {
    const F x = z.real(), y = z.imag();
    if (x == F(0) && y == F(0)) return {F(0), y};
    const F t = Eigen::numext::sqrt((Eigen::numext::abs(x) + Eigen::numext::hypot(x, y)) / F(2));
    if (x >= F(0)) return {t, y / (F(2) * t)};
    return {Eigen::numext::abs(y) / (F(2) * t), ::copysign(t, y)};
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> sin(const std::complex<F>& z) {
    return {Eigen::numext::sin(z.real()) * Eigen::numext::cosh(z.imag()),
            Eigen::numext::cos(z.real()) * Eigen::numext::sinh(z.imag())};
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> cos(const std::complex<F>& z) {
    return {Eigen::numext::cos(z.real()) * Eigen::numext::cosh(z.imag()),
            -(Eigen::numext::sin(z.real()) * Eigen::numext::sinh(z.imag()))};
}
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> tanh(const std::complex<F>& z) {
    const F x = z.real(), y = z.imag();
    if (Eigen::numext::abs(x) > F(20)) return {::copysign(F(1), x), ::copysign(F(0), Eigen::numext::sin(F(2) * y))};
    const F d = Eigen::numext::cosh(F(2) * x) + Eigen::numext::cos(F(2) * y);
    return {Eigen::numext::sinh(F(2) * x) / d, Eigen::numext::sin(F(2) * y) / d};
}
} // namespace device_complex
#define MIXT_DETAIL_COMPLEX_MATH(FN, X) device_complex::FN(X)
#else
#define MIXT_DETAIL_COMPLEX_MATH(FN, X) std::FN(X)
#endif
#define MIXT_DETAIL_MATH(NAME, FN)                                                                             \
    struct NAME {                                                                                              \
        template <class T>                                                                                     \
        EIGEN_DEVICE_FUNC T operator()(const T& a) const {                                                     \
            if constexpr (is_complex_v<T>) {                                                                   \
                return MIXT_DETAIL_COMPLEX_MATH(FN, a);                                                        \
            } else if constexpr (is_small_float_v<T>) {                                                        \
                /* f16, bf16: in double, rounded once (correctly rounded: half_math_test checks every input) */ \
                return ::mixt::convert<T>(MIXT_DETAIL_REAL_MATH(FN, static_cast<double>(a)));                  \
            } else {                                                                                           \
                return via_compute(a, [](auto x) { return MIXT_DETAIL_REAL_MATH(FN, x); });                    \
            }                                                                                                  \
        }                                                                                                      \
    };
MIXT_DETAIL_MATH(sqrt_fn, sqrt)
MIXT_DETAIL_MATH(exp_fn_in_double, exp)
MIXT_DETAIL_MATH(log_fn, log)
MIXT_DETAIL_MATH(sin_fn, sin)
MIXT_DETAIL_MATH(cos_fn, cos)
MIXT_DETAIL_MATH(tanh_fn, tanh)
#undef MIXT_DETAIL_MATH
#undef MIXT_DETAIL_REAL_MATH
#undef MIXT_DETAIL_COMPLEX_MATH

// exp of an f16 or bf16 value for GPU code, the correctly rounded value as on the host, at float speed
// (double's exp made E10, exp(f16) * bf16, compute-bound on an H200). In float, with explicitly rounded
// operations (no -fmad or fast-math flag changes them): k = x / ln 2 rounded to an integer (by adding 1.5 * 2^23,
// which leaves k in the low bits: no conversion instruction), r = x - k ln 2 (Cody-Waite, ln 2 in two parts,
// exact in its first), e^r by its Taylor polynomial of degree 7 (|r| <= 0.35: truncation below 2^-27) and 2^k by
// exponent bits: within 2 float ulp of e^x. Where no rounding boundary of T (a midpoint between two values of
// T) lies within 4 float ulp of that value, T's rounding of it is T's correctly rounded e^x (rounding is
// monotonic), found from the bits below T's precision without converting; the rest (about 1 value in 1000),
// and x outside [-87, 88] or a result below 2^-24 (T's result 0 or inf, NaN), take the double path as the host.
// Conversions run at a quarter of the arithmetic rate, so the fast path converts only x in and the result out.
// The host compiles the same steps (std::fma, per-operation rounding): test/expr/functors_test.cpp checks every
// value of both types there, test/gpu/gpu_test.cu on a GPU.
EIGEN_DEVICE_FUNC inline float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
EIGEN_DEVICE_FUNC inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return rounded(a + b);
#endif
}
template <class T>
EIGEN_DEVICE_FUNC T small_float_exp(T a) {
    const float x = static_cast<float>(a);
    if (x >= -87.0f && x <= 88.0f) {
        const float t = fma_rn(x, 1.44269502162933349609375f, 12582912.0f);
        const float k = add_rn(t, -12582912.0f);
        const int ki = bit_cast<int>(t) - 0x4B400000; // |k| <= 127
        float r = fma_rn(-k, 0.693145751953125f, x); // k * ln2_hi is exact (ln2_hi has 16 bits)
        r = fma_rn(-k, 1.428606765330187045e-06f, r);
        float p = 1.0f / 5040.0f;
        p = fma_rn(p, r, 1.0f / 720.0f);
        p = fma_rn(p, r, 1.0f / 120.0f);
        p = fma_rn(p, r, 1.0f / 24.0f);
        p = fma_rn(p, r, 1.0f / 6.0f);
        p = fma_rn(p, r, 0.5f);
        p = fma_rn(p, r, 1.0f);
        p = fma_rn(p, r, 1.0f);
        const int k1 = ki / 2, k2 = ki - k1; // each half's power of two is a normal float
        const float y = mul_rn(mul_rn(p, bit_cast<float>((k1 + 127) << 23)), bit_cast<float>((k2 + 127) << 23));
        const unsigned b = bit_cast<unsigned>(y); // a normal float: y >= e^-87 (2 ulp) > 2^-126
        const int e = static_cast<int>(b >> 23) - 127;
        // The float bits below T's precision at y: 16 for bf16, 13 for a normal f16, more for a subnormal one.
        const int below = std::is_same_v<T, Eigen::bfloat16> ? 16 : 13 + (e < -14 ? -14 - e : 0);
        if (below <= 23) {
            const unsigned half = 1u << (below - 1), m = b & ((1u << below) - 1u);
            if ((m > half ? m - half : half - m) > 4u) return ::mixt::convert<T>(y);
        }
    }
    return ::mixt::convert<T>(Eigen::numext::exp(static_cast<double>(x)));
}

struct exp_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a) const {
#if defined(__CUDA_ARCH__)
        if constexpr (is_small_float_v<T>) return small_float_exp(a);
        else return exp_fn_in_double{}(a);
#else
        return exp_fn_in_double{}(a);
#endif
    }
};

// x ** n for a float x and an integer n, in double, exact in n: a 64-bit n beyond 2^53 is split into a
// part that double holds (the low bits cleared) and the rest, and an odd n keeps the sign of a negative base
// however large n is (converting n first rounds an odd n above 2^53 to an even one, and one above 2^24 when
// converted to float).
template <class I>
EIGEN_DEVICE_FUNC double float_int_pow(double x, I n) {
    using std::pow;
    using U = std::make_unsigned_t<I>;
    constexpr int value_bits = std::numeric_limits<I>::digits; // 63 for int64_t, 64 for uint64_t
    constexpr int spare = value_bits - std::numeric_limits<double>::digits;
    if constexpr (spare <= 0) {
        return pow(x, static_cast<double>(n));
    } else {
        constexpr I exact = I{1} << std::numeric_limits<double>::digits; // every integer up to 2^53 is a double
        bool fits = n <= exact;
        if constexpr (std::is_signed_v<I>) fits = fits && n >= -exact;
        if (fits) return pow(x, static_cast<double>(n));
        // |x| ** high, times |x| ** low where that can matter (|x| ** high finite and not 0, so |x| lies within
        // 2^-43 of 1 and |x| ** low is near 1); the sign from n's parity, which is low's.
        using std::fabs;
        using std::signbit;
        constexpr U low_mask = (U{1} << spare) - 1;
        const U bits = static_cast<U>(n);
        const U low = bits & low_mask; // n = high + low, 0 <= low < 2^spare
        const I high = static_cast<I>(bits & ~low_mask);
        const double ax = fabs(x);
        double magnitude = pow(ax, static_cast<double>(high));
        if (low != 0 && magnitude != 0 && !(Eigen::numext::isinf)(magnitude))
            magnitude = rounded(magnitude) * rounded(pow(ax, static_cast<double>(low)));
        return signbit(x) && (bits & 1) != 0 ? -magnitude : magnitude;
    }
}

// z ** n for a complex z and an integer n: repeated squaring with the complex product (each rounded once), of
// z for n > 0 and of 1 / z for n < 0 (so that a result near the underflow or overflow threshold is not lost in
// an intermediate power that overflows or underflows first), starting from the lowest set power so that no
// product by 1 + 0i changes the sign of a zero part ((-1 + 0i) ** 2 is 1 - 0i). z ** 0 is 1 + 0i for every z
// (as a real x ** 0, and XLA's and NumPy's complex powers). complex64 computes in complex128 and rounds once.
template <class F, class I>
EIGEN_DEVICE_FUNC std::complex<F> complex_int_pow(const std::complex<F>& z, I n) {
    if constexpr (std::is_same_v<F, float>) {
        const std::complex<double> r = complex_int_pow(std::complex<double>(z.real(), z.imag()), n);
        return {static_cast<float>(r.real()), static_cast<float>(r.imag())};
    } else {
        using U = std::make_unsigned_t<I>;
        bool negative = false;
        if constexpr (std::is_signed_v<I>) negative = n < 0;
        U m = negative ? static_cast<U>(U{0} - static_cast<U>(n)) : static_cast<U>(n);
        if (m == 0) return {F(1), F(0)};
        std::complex<F> x = negative ? complex_quotient(std::complex<F>(F(1), F(0)), z) : z;
        while ((m & 1) == 0) {
            x = complex_multiply(x, x);
            m = static_cast<U>(m >> 1);
        }
        std::complex<F> r = x;
        for (m = static_cast<U>(m >> 1); m != 0; m = static_cast<U>(m >> 1)) {
            x = complex_multiply(x, x);
            if (m & 1) r = complex_multiply(r, x);
        }
        return r;
    }
}

// z ** w for complex z and w, as exp(w * log(z)) in a wider type where there is one: the error of w * log(z),
// carried into the exponential, is |w * log(z)| times the precision it is computed in, so in the result's own
// precision a large |w * log(z)| loses most digits (pow(7, 3.5 + 20j) in complex128 was 1527 eps off). complex64
// computes in complex128; complex128 in long double where it is wider than double (x86: 64-bit mantissa), which
// keeps the result within a few eps normwise while |w * log(z)| < 2^11.
template <class F>
EIGEN_DEVICE_FUNC std::complex<F> complex_general_pow(const std::complex<F>& z, const std::complex<F>& w) {
#if !defined(EIGEN_GPU_COMPILE_PHASE)
    if constexpr (std::is_same_v<F, float>) {
        const std::complex<double> r = std::pow(std::complex<double>(z.real(), z.imag()),
                                                std::complex<double>(w.real(), w.imag()));
        return {static_cast<float>(r.real()), static_cast<float>(r.imag())};
    } else if constexpr (std::is_same_v<F, double> && std::numeric_limits<long double>::digits > 53) {
        const std::complex<long double> r = std::pow(std::complex<long double>(z.real(), z.imag()),
                                                     std::complex<long double>(w.real(), w.imag()));
        return {static_cast<double>(r.real()), static_cast<double>(r.imag())};
    } else {
        return std::pow(z, w);
    }
#else
    // Device code: exp(w * log(z)) from device_complex's exp and log, in complex128 (a GPU has nothing wider), 0
    // for a zero base with a positive real exponent (as glibc's cpow gives).
    if (z.real() == F(0) && z.imag() == F(0) && w.real() > F(0)) return {F(0), F(0)};
    const std::complex<double> zd(static_cast<double>(z.real()), static_cast<double>(z.imag()));
    const std::complex<double> wd(static_cast<double>(w.real()), static_cast<double>(w.imag()));
    const std::complex<double> r = device_complex::exp(complex_multiply(wd, device_complex::log(zd)));
    return {static_cast<F>(r.real()), static_cast<F>(r.imag())};
#endif
}

struct pow_fn {
    // Base and exponent keep their own types: a float base with an integer exponent computes in double, exact in
    // the exponent (float_int_pow), and rounds once to the base's type.
    template <class B, class E>
    EIGEN_DEVICE_FUNC B operator()(const B& base, const E& e) const {
        if constexpr (is_int_v<B> || is_bool_v<B>) {
            static_assert(std::is_same_v<B, E>);
            if constexpr (is_bool_v<B>) {
                return !e || base;
            } else {
                if constexpr (std::is_signed_v<E>) {
                    if (e < 0) return base == B(1) ? B(1) : base == B(-1) ? ((e & 1) ? B(-1) : B(1)) : B(0);
                }
                wrap_t<B> result = 1, x = static_cast<wrap_t<B>>(base);
                using UE = std::make_unsigned_t<E>;
                for (UE n = static_cast<UE>(e); n != 0; n >>= 1) {
                    if (n & 1) result = static_cast<wrap_t<B>>(result * x);
                    x = static_cast<wrap_t<B>>(x * x);
                }
                return from_wrap<B>(result);
            }
        } else if constexpr (is_complex_v<B>) {
            // An integer exponent, or a complex one whose value is an integer (of magnitude up to 2^62): repeated
            // squaring. Otherwise exp(e * log(base)) (std::pow).
            using F = typename B::value_type;
            if constexpr (is_int_v<E>) {
                return complex_int_pow(base, e);
            } else if constexpr (is_bool_v<E>) {
                return complex_int_pow(base, static_cast<int>(e));
            } else {
                const B exponent = convert<B>(e);
                const F re = exponent.real();
                using std::fabs;
                using std::trunc;
                if (exponent.imag() == F(0) && fabs(re) <= F(4611686018427387904.0) && trunc(re) == re)
                    return complex_int_pow(base, static_cast<std::int64_t>(re));
                return complex_general_pow(base, exponent);
            }
        } else if constexpr (is_int_v<E>) {
            return convert<B>(float_int_pow(convert<double>(base), e));
        } else {
            using C = std::conditional_t<std::is_same_v<B, double>, double, float>;
            using std::pow;
            return convert<B>(pow(convert<C>(base), convert<C>(e)));
        }
    }
};

template <class T>
EIGEN_DEVICE_FUNC bool sign_bit(const T& x) {
    using std::signbit;
    if constexpr (is_small_float_v<T>)
        return signbit(static_cast<float>(x));
    else
        return signbit(x);
}

// minimum and maximum of real floats order -0 below +0, as IEEE 754-2019's minimum and maximum (and JAX) do:
// minimum(+0, -0) is -0 and maximum(-0, +0) is +0. Equal operands are otherwise the same value; a tie between
// them returns the first. Complex values are ordered lexicographically, their parts by `<`.
struct minimum_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if (is_nan_value(a)) return a;
        if (is_nan_value(b)) return b;
        if constexpr (is_float_like_v<T>) {
            if (a == b) return sign_bit(a) ? a : b;
        }
        return less(b, a) ? b : a;
    }
};
struct maximum_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a, const T& b) const {
        if (is_nan_value(a)) return a;
        if (is_nan_value(b)) return b;
        if constexpr (is_float_like_v<T>) {
            if (a == b) return sign_bit(a) ? b : a;
        }
        return less(a, b) ? b : a;
    }
};
struct clip_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& x, const T& lo, const T& hi) const {
        return minimum_fn{}(maximum_fn{}(x, lo), hi);
    }
};
struct where_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(bool c, const T& x, const T& y) const { return c ? x : y; }
};

struct real_fn {
    template <class T>
    EIGEN_DEVICE_FUNC auto operator()(const T& a) const {
        if constexpr (is_complex_v<T>) return a.real();
        else return a;
    }
};
struct imag_fn {
    template <class T>
    EIGEN_DEVICE_FUNC auto operator()(const T& a) const {
        if constexpr (is_complex_v<T>) return a.imag();
        else return T(0);
    }
};
struct conj_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a) const {
        if constexpr (is_complex_v<T>) return T(a.real(), -a.imag());
        else return a;
    }
};
struct identity_fn {
    template <class T>
    EIGEN_DEVICE_FUNC T operator()(const T& a) const { return a; }
};

} // namespace mixt::detail

#endif // MIXT_EXPR_FUNCTORS_HPP
