// Per-node rounding in a user's build with default flags: every product of these expressions is rounded to its
// dtype before the sum that consumes it, as the reference evaluator computes, on each of mixt's paths (the
// fused loop, the lowering to Eigen, a thread pool). Built with g++ -O3 -march=native, without mixt's
// -ffp-contract=off, GCC would otherwise fuse the multiply and the add into one FMA (rounded once): about a
// quarter of the elements of f32 * f32 + f32 differ then.
#define EIGEN_USE_THREADS
#define MIXT_MIN_BYTES_PER_THREAD 1024 // the pool's passes below are split over both threads
#include <mixt/mixt.hpp>

#include <expr/reference.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace {

namespace ref = mixt_test::ref;
constexpr Eigen::Index n = 4099;

template <class T>
Eigen::Tensor<T, 1> random_tensor(unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1000.0, 1000.0);
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double v = dist(gen);
        if constexpr (std::is_integral_v<T>)
            t(i) = static_cast<T>(static_cast<int>(v) % 100);
        else if constexpr (mixt::detail::is_complex_v<T>)
            t(i) = T(static_cast<typename T::value_type>(v), static_cast<typename T::value_type>(dist(gen)));
        else
            t(i) = static_cast<T>(v);
        if (i == 7) {
            if constexpr (std::is_floating_point_v<T>) t(i) = std::nan("");
        }
    }
    return t;
}

template <class T>
ref::scalar scalar_of(const T& v) {
    return ref::make<T>(v);
}

// NaN in both, or the same value bit for bit (complex: part by part). The NaN contract: a NaN's sign and
// payload are not part of a result.
bool same_value(const ref::scalar& got, const ref::scalar& want) {
    if (ref::is_nan(got) || ref::is_nan(want)) return ref::is_nan(got) && ref::is_nan(want);
    if (got != want) return false;
    if (ref::is_complex(ref::dtype_of(got))) {
        const auto g = ref::to_c128(got), w = ref::to_c128(want);
        return std::signbit(g.real()) == std::signbit(w.real()) && std::signbit(g.imag()) == std::signbit(w.imag());
    }
    return !ref::is_float(ref::dtype_of(got)) || std::signbit(ref::to_double(got)) == std::signbit(ref::to_double(want));
}

int failures = 0;

// Compares r (a path's result of `text` over the leaves) with the reference, element by element.
template <class R, class... Ts>
void compare(const char* path, const std::string& text, const Eigen::Tensor<R, 1>& r,
             const Eigen::Tensor<Ts, 1>&... leaves) {
    ref::node root = ref::parse(text);
    const std::vector<mixt::dtype> dtypes{mixt::dtype_of_v<Ts>...};
    ref::type(root, dtypes, ref::table::published());
    std::vector<std::vector<ref::scalar>> inputs;
    (
        [&] {
            std::vector<ref::scalar> column;
            for (Eigen::Index i = 0; i < n; ++i) column.push_back(scalar_of(leaves(i)));
            inputs.push_back(std::move(column));
        }(),
        ...);
    int differ = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        const ref::scalar want = ref::evaluate(root, inputs, static_cast<std::size_t>(i)).v;
        if (!same_value(scalar_of(r(i)), want)) ++differ;
    }
    std::printf("%-9s %-40s %4d of %ld elements differ from the reference\n", path, text.c_str(), differ,
                static_cast<long>(n));
    failures += differ != 0;
}

template <class... Ts, class Build>
void check(const std::string& text, Build build, const Eigen::Tensor<Ts, 1>&... leaves) {
    using R = mixt::value_t<decltype(build(leaves...))>;
    compare("eval", text, Eigen::Tensor<R, 1>(mixt::eval(build(leaves...))), leaves...);
    const Eigen::Tensor<R, 1> lowered = mixt::to_eigen(build(leaves...));
    compare("to_eigen", text, lowered, leaves...);
    Eigen::ThreadPool pool(1);
    const Eigen::ThreadPoolDevice device(&pool, 2);
    Eigen::Tensor<R, 1> pooled(n);
    mixt::assign(pooled, build(leaves...), device);
    compare("pool", text, pooled, leaves...);
}

} // namespace

int main() {
    const auto a = random_tensor<float>(1), b = random_tensor<float>(2), c = random_tensor<float>(3);
    const auto i8 = random_tensor<std::int8_t>(4);
    const auto x = random_tensor<double>(5), y = random_tensor<double>(6), z = random_tensor<double>(7);
    const auto p = random_tensor<std::complex<float>>(8), q = random_tensor<std::complex<float>>(9);
    check("(add (mul L0 L1) L2)", [](auto& u, auto& v, auto& w) { return mixt::lazy(u) * v + w; }, a, b, c);
    check("(add (mul L0 L1) L2)", [](auto& u, auto& v, auto& w) { return mixt::lazy(u) * v + w; }, i8, b, c);
    check("(sub L0 (mul L1 L2))", [](auto& u, auto& v, auto& w) { return mixt::lazy(u) - mixt::lazy(v) * w; }, x, y, z);
    check("(add (mul L0 L1) (mul L2 L0))",
          [](auto& u, auto& v, auto& w) { return mixt::lazy(u) * v + mixt::lazy(w) * u; }, a, b, c);
    // The complex product, whose reference the evaluator computes in long double (within a tolerance): here
    // the textbook formula with each product and each sum rounded to f32 once, computed in double (a product of
    // two floats is exact in double, and a sum rounded to double and then to float is rounded correctly). Each
    // rounded value goes through a volatile: this file is built with contraction too, and GCC fuses a product
    // with the sum that consumes it even across a conversion to float.
    const auto f = [](double v) {
        volatile float r = static_cast<float>(v);
        return static_cast<double>(r);
    };
    Eigen::Tensor<std::complex<float>, 1> want(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double pr = p(i).real(), pi = p(i).imag(), qr = q(i).real(), qi = q(i).imag();
        const double re = f(f(pr * qr) - f(pi * qi)), im = f(f(pr * qi) + f(pi * qr));
        want(i) = {static_cast<float>(f(re + static_cast<double>(a(i)))), static_cast<float>(im)};
    }
    const auto product_plus = [&](auto& u, auto& v, auto& w) { return mixt::lazy(u) * v + w; };
    Eigen::ThreadPool pool(1);
    const Eigen::ThreadPoolDevice device(&pool, 2);
    const Eigen::Tensor<std::complex<float>, 1> fused = mixt::eval(product_plus(p, q, a));
    Eigen::Tensor<std::complex<float>, 1> pooled(n);
    const Eigen::Tensor<std::complex<float>, 1> lowered = mixt::to_eigen(product_plus(p, q, a));
    mixt::assign(pooled, product_plus(p, q, a), device);
    using c64_tensor = Eigen::Tensor<std::complex<float>, 1>;
    for (const c64_tensor* r : std::initializer_list<const c64_tensor*>{&fused, &lowered, &pooled}) {
        int differ = 0;
        for (Eigen::Index i = 0; i < n; ++i)
            if (!same_value(scalar_of((*r)(i)), scalar_of(want(i)))) {
                if (differ++ == 0)
                    std::printf("  element %ld: %.9g%+.9gi, reference %.9g%+.9gi\n", static_cast<long>(i),
                                (*r)(i).real(), (*r)(i).imag(), want(i).real(), want(i).imag());
            }
        std::printf("%-9s %-40s %4d of %ld elements differ from the reference\n",
                    r == &fused ? "eval" : r == &lowered ? "to_eigen" : "pool", "c64 * c64 + f32", differ,
                    static_cast<long>(n));
        failures += differ != 0;
    }
    if (failures != 0) {
        std::printf("per-node rounding lost in %d comparisons\n", failures);
        return 1;
    }
    std::printf("every node rounded once, on every path\n");
    return 0;
}
