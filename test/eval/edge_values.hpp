#ifndef MIXT_TEST_EVAL_EDGE_VALUES_HPP
#define MIXT_TEST_EVAL_EDGE_VALUES_HPP

// The harness of the edge_values_*_test.cpp files: every operation, through real expressions, over tensors
// holding the values where C++ has undefined behaviour or IEEE special cases (INT_MIN, -1, 0, max, shift
// counts at the width, NaN of both signs and a payload, +-inf, -0, subnormals), every pair of them. Each
// expression is evaluated twice, by the fused loop (plain tensor leaves) and by the lowering to Eigen
// (TensorRef leaves), and compared element by element with the per-element definition: the operation's
// functor on the operands converted with mixt::convert to the rule's operand types (functors_test.cpp
// checks those functors against independent references). Run under UBSan (preset test-asan), this proves
// that no input reaches undefined behaviour on either path.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/operators.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace edge {

namespace mp = boost::mp11;
namespace d = mixt::detail;
__extension__ typedef __int128 W;

using int_types = mp::mp_list<std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t, std::int16_t,
                              std::int32_t, std::int64_t>;
using float_types = mp::mp_list<Eigen::half, Eigen::bfloat16, float, double>;
using complex_types = mp::mp_list<std::complex<float>, std::complex<double>>;
using all_types = mp::mp_append<mp::mp_list<bool>, int_types, float_types, complex_types>;

template <class T>
std::string name() {
    return std::string(mixt::short_name(mixt::dtype_of_v<T>));
}

template <class T>
T from_bits(std::uint64_t bits) {
    using U = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
    const U narrow = static_cast<U>(bits);
    T x{};
    std::memcpy(static_cast<void*>(&x), &narrow, sizeof(T));
    return x;
}

template <class T>
std::vector<T> specials() {
    using L = std::numeric_limits<T>;
    if constexpr (std::is_same_v<T, bool>) {
        return {false, true};
    } else if constexpr (std::is_integral_v<T>) {
        constexpr int bits = 8 * sizeof(T);
        std::vector<T> v{L::min(), static_cast<T>(L::min() + 1), T(0), T(1), T(2), T(3), static_cast<T>(bits - 1),
                         static_cast<T>(bits), static_cast<T>(bits + 1), static_cast<T>(L::max() / 2),
                         static_cast<T>(L::max() - 1), L::max()};
        if constexpr (std::is_signed_v<T>) v.push_back(T(-1));
        return v;
    } else if constexpr (d::is_complex_v<T>) {
        using R = typename T::value_type;
        const R parts[] = {R(0), R(-0.0), R(1), R(-2.5), std::numeric_limits<R>::infinity(), -std::numeric_limits<R>::infinity(),
                           std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::max()};
        std::vector<T> v;
        for (R re : parts)
            for (R im : parts) v.emplace_back(re, im);
        return v;
    } else {
        // Both signs of NaN and a NaN with a payload: conversions keep sign and payload (convert.hpp rule 8).
        const std::uint64_t payload_nan = sizeof(T) == 2 ? (std::is_same_v<T, Eigen::half> ? 0xfe01u : 0xffc1u)
                                          : sizeof(T) == 4 ? 0xffc12345u
                                                           : 0xfff8123456789abcu;
        return {T(0), static_cast<T>(-0.0f), T(1), static_cast<T>(-1.0f), static_cast<T>(0.5f), static_cast<T>(-2.5f),
                T(3), static_cast<T>(100000.0f), L::max(), L::lowest(), L::min(), L::denorm_min(), L::infinity(),
                -L::infinity(), L::quiet_NaN(), from_bits<T>(payload_nan)};
    }
}

template <class T>
std::string show(const T& x) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>)
        s << static_cast<float>(x);
    else if constexpr (sizeof(T) == 1 && std::is_integral_v<T>)
        s << +x;
    else if constexpr (mixt::is_narrow_float_v<T> || mixt::is_narrow_int_v<T>)
        s << x << " (code " << +x.bits() << ")";
    else
        s << x;
    return s.str();
}

// NaNs are equal whatever their sign and payload (arithmetic does not document them); otherwise the bits.
template <class T>
bool same_value(const T& a, const T& b) {
    if constexpr (d::is_float_like_v<T>) {
        if (d::is_nan_value(a) && d::is_nan_value(b)) return true;
        return std::memcmp(&a, &b, sizeof(T)) == 0;
    } else if constexpr (d::is_complex_v<T>) {
        return same_value(a.real(), b.real()) && same_value(a.imag(), b.imag());
    } else {
        return a == b;
    }
}
// The bits, NaNs included (conversions document them).
template <class T>
bool same_bits(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, bool>) return a == b;
    else return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Tensors holding every pair (a, b) of the two value lists, at least 37 elements, never a multiple of 8, so
// the vector loop's tail runs too.
template <class A, class B>
struct pairs {
    Eigen::Tensor<A, 1> a;
    Eigen::Tensor<B, 1> b;
    pairs(const std::vector<A>& va, const std::vector<B>& vb) {
        const std::size_t combos = va.size() * vb.size();
        std::size_t size = combos < 37 ? 37 : combos;
        if (size % 8 == 0) ++size;
        a.resize(static_cast<Eigen::Index>(size));
        b.resize(static_cast<Eigen::Index>(size));
        for (std::size_t k = 0; k < size; ++k) {
            a(static_cast<Eigen::Index>(k)) = va[(k % combos) / vb.size()];
            b(static_cast<Eigen::Index>(k)) = vb[(k % combos) % vb.size()];
        }
    }
};

template <class E>
struct node_info;
template <class Op, class... Cs>
struct node_info<mixt::node<Op, Cs...>> {
    using op = Op;
    using operands = typename mixt::node<Op, Cs...>::operand_types;
    using result = typename mixt::node<Op, Cs...>::value_type;
};

// Which evaluations check_paths runs. Each is a template instantiation of its own, the main cost of
// compiling these tests, so the literal and cast tables run the fused loop only (the lowering's handling of
// literals and conversions is the same code for every operation, covered by the binary and unary tables).
enum class paths { both, fused_only };

// Evaluates `make(leaves...)` on the fused loop and (unless fused_only) on the lowering to Eigen, and
// compares every element k with `reference(k)`.
// MIXT_TEST_EDGE_LOWERING=0 (CMake option MIXT_TEST_EDGE_LOWERING; the CI configurations that exist for the
// fused loop's SIMD code) leaves the lowering out everywhere.
#if !defined(MIXT_TEST_EDGE_LOWERING)
#define MIXT_TEST_EDGE_LOWERING 1
#endif
// mixt::eval's flat pass alone, as eval runs it: the broadcast shape and the literals checked, then run_fused.
// Every operand in these tables is a contiguous rank-1 tensor of the result's shape, so eval takes run_fused
// at run time; calling it directly leaves out the strided pass that eval also compiles and these operands never
// reach (a third of these files' compile time).
template <class E>
Eigen::Tensor<mixt::value_t<E>, 1> eval_flat(const E& e) {
    const auto shape = d::broadcast_shape(e, "eval");
    mixt::check_literals(e);
    Eigen::Tensor<mixt::value_t<E>, 1> result(shape[0]);
    const Eigen::DefaultDevice device;
    const auto plan = d::plan_flat<Eigen::Tensor<mixt::value_t<E>, 1>, E>(result.size(), device);
    d::run_fused(result.data(), result.size(), e, device, plan.pass);
    return result;
}

template <paths Requested = paths::both, class Make, class Ref, class Cmp, class... Ts>
void check_paths(const std::string& what, Make make, Ref reference, Cmp equal, const Eigen::Tensor<Ts, 1>&... ts) {
    constexpr paths Paths = MIXT_TEST_EDGE_LOWERING ? Requested : paths::fused_only;
    using E = decltype(make(mixt::lazy(ts)...));
    using R = mixt::value_t<E>;
    const Eigen::Tensor<R, 1> fused = eval_flat(make(mixt::lazy(ts)...));
    Eigen::Tensor<R, 1> lowered;
    if constexpr (Paths == paths::both) {
        const std::tuple<Eigen::TensorRef<Eigen::Tensor<Ts, 1>>...> refs{Eigen::TensorRef<Eigen::Tensor<Ts, 1>>(ts)...};
        lowered = std::apply([&](const auto&... r) { return mixt::eval(make(mixt::lazy(r)...)); }, refs);
    }
    int wrong = 0;
    for (Eigen::Index k = 0; k < fused.size(); ++k) {
        const R want = reference(k);
        for (int path = 0; path < (Paths == paths::both ? 2 : 1); ++path) {
            const R got = path == 0 ? fused(k) : lowered(k);
            if (!equal(got, want) && ++wrong <= 5)
                ADD_FAILURE() << what << (path == 0 ? " [fused]" : " [lowered]") << " element " << k << ": got "
                              << show(got) << ", expected " << show(want) << " (operands "
                              << ((show(ts(k)) + ", ") + ...) << ")";
        }
    }
    EXPECT_EQ(wrong, 0) << what;
}

// The binary operations and which kind of join each is defined for (rules.hpp rule 7).
enum kinds : unsigned { k_bool = 1, k_int = 2, k_float = 4, k_complex = 8, k_all = 15 };

template <class Op, unsigned Kinds>
struct binary {
    using op = Op;
    static constexpr unsigned kinds = Kinds;
};
using binary_ops = mp::mp_list<
    binary<mixt::op::add, k_all>, binary<mixt::op::subtract, k_int | k_float | k_complex>,
    binary<mixt::op::multiply, k_all>, binary<mixt::op::divide, k_all>,
    binary<mixt::op::floor_divide, k_int | k_float>, binary<mixt::op::modulo, k_int | k_float>,
    binary<mixt::op::equal, k_all>, binary<mixt::op::not_equal, k_all>,
    binary<mixt::op::less, k_bool | k_int | k_float>, binary<mixt::op::less_equal, k_bool | k_int | k_float>,
    binary<mixt::op::greater, k_bool | k_int | k_float>, binary<mixt::op::greater_equal, k_bool | k_int | k_float>,
    binary<mixt::op::logical_and, k_bool>, binary<mixt::op::logical_or, k_bool>,
    binary<mixt::op::bit_and, k_bool | k_int>, binary<mixt::op::bit_or, k_bool | k_int>,
    binary<mixt::op::bit_xor, k_bool | k_int>, binary<mixt::op::shift_left, k_int>,
    binary<mixt::op::shift_right, k_int>, binary<mixt::op::pow, k_all>, binary<mixt::op::minimum, k_all>,
    binary<mixt::op::maximum, k_all>>;

template <class Tag>
constexpr unsigned kind_bit() {
    switch (mixt::kind(Tag::value)) {
    case mixt::dtype_kind::boolean: return k_bool;
    case mixt::dtype_kind::unsigned_int:
    case mixt::dtype_kind::signed_int: return k_int;
    case mixt::dtype_kind::floating: return k_float;
    case mixt::dtype_kind::complex: return k_complex;
    }
    return 0;
}

/// where and clip (every kind) on the same pairs: where(c, a, b) with a condition that alternates
/// irregularly; clip(a, b, b reversed), so that bounds cross (lo > hi) and meet NaN and infinities.
template <paths Paths, class A, class B>
void all_ternary_ops(const pairs<A, B>& p) {
    const Eigen::Index n = p.a.size();
    Eigen::Tensor<bool, 1> c(n);
    Eigen::Tensor<B, 1> hi(n);
    for (Eigen::Index k = 0; k < n; ++k) {
        c(k) = k % 3 != 0;
        hi(k) = p.b(n - 1 - k);
    }
    const auto same = [](const auto& x, const auto& y) { return same_value(x, y); };
    {
        const auto make = [](auto cond, auto x, auto y) { return mixt::where(std::move(cond), std::move(x), std::move(y)); };
        using info = node_info<decltype(make(mixt::lazy(c), mixt::lazy(p.a), mixt::lazy(p.b)))>;
        using S1 = mp::mp_at_c<typename info::operands, 1>;
        using S2 = mp::mp_at_c<typename info::operands, 2>;
        using R = typename info::result;
        const auto reference = [&](Eigen::Index k) {
            return static_cast<R>(d::where_fn{}(c(k), mixt::convert<S1>(p.a(k)), mixt::convert<S2>(p.b(k))));
        };
        check_paths<Paths>("where(bool, " + name<A>() + ", " + name<B>() + ")", make, reference, same, c, p.a, p.b);
    }
    {
        const auto make = [](auto x, auto lo, auto h) { return mixt::clip(std::move(x), std::move(lo), std::move(h)); };
        using info = node_info<decltype(make(mixt::lazy(p.a), mixt::lazy(p.b), mixt::lazy(hi)))>;
        using S0 = mp::mp_at_c<typename info::operands, 0>;
        using S1 = mp::mp_at_c<typename info::operands, 1>;
        using S2 = mp::mp_at_c<typename info::operands, 2>;
        using R = typename info::result;
        const auto reference = [&](Eigen::Index k) {
            return static_cast<R>(
                d::clip_fn{}(mixt::convert<S0>(p.a(k)), mixt::convert<S1>(p.b(k)), mixt::convert<S2>(hi(k))));
        };
        check_paths<Paths>("clip(" + name<A>() + ", " + name<B>() + ", " + name<B>() + ")", make, reference, same, p.a,
                           p.b, hi);
    }
}

/// Every binary operation defined for the join of A and B, on every pair of their special values.
template <class A, class B, paths Paths = paths::both>
void all_binary_ops() {
    const pairs<A, B> p(specials<A>(), specials<B>());
    constexpr unsigned join_kind = kind_bit<mixt::join_t<mixt::policy::jax, mixt::tag_of_t<A>, mixt::tag_of_t<B>>>();
    mp::mp_for_each<binary_ops>([&](auto b) {
        using B_ = decltype(b);
        using Op = typename B_::op;
        if constexpr ((B_::kinds & join_kind) != 0) {
            const auto make = [](auto x, auto y) { return d::make_node<Op>(std::move(x), std::move(y)); };
            using info = node_info<decltype(make(mixt::lazy(p.a), mixt::lazy(p.b)))>;
            using S0 = mp::mp_at_c<typename info::operands, 0>;
            using S1 = mp::mp_at_c<typename info::operands, 1>;
            using R = typename info::result;
            const auto reference = [&](Eigen::Index k) {
                return static_cast<R>(typename Op::fn{}(mixt::convert<S0>(p.a(k)), mixt::convert<S1>(p.b(k))));
            };
            check_paths<Paths>(std::string(Op::name) + "(" + name<A>() + ", " + name<B>() + ")", make, reference,
                             [](const R& x, const R& y) { return same_value(x, y); }, p.a, p.b);
        }
    });
    all_ternary_ops<Paths>(p);
}

template <class Op, bool Left, paths Paths, class T, class L>
void literal_case(const Eigen::Tensor<T, 1>& a, L lit) {
    const auto make = [lit](auto x) {
        if constexpr (Left)
            return d::make_node<Op>(lit, std::move(x));
        else
            return d::make_node<Op>(std::move(x), lit);
    };
    using N = decltype(make(mixt::lazy(a)));
    using R = mixt::value_t<N>;
    using S_left = mp::mp_at_c<typename N::operand_types, 0>;
    using S_right = mp::mp_at_c<typename N::operand_types, 1>;
    const std::string what = std::string(Op::name) + "(" +
                             (Left ? "literal " + show(lit) + ", " + name<T>() : name<T>() + ", literal " + show(lit)) + ")";
    const auto equal = [](const R& x, const R& y) { return same_value(x, y); };
    // Compared in the join, as every operation: the literal converted to the operand dtype.
    const auto reference = [&](Eigen::Index k) {
        if constexpr (Left)
            return static_cast<R>(typename Op::fn{}(mixt::convert<S_left>(lit), mixt::convert<S_right>(a(k))));
        else
            return static_cast<R>(typename Op::fn{}(mixt::convert<S_left>(a(k)), mixt::convert<S_right>(lit)));
    };
    const bool fits = Left ? d::literal_fits<S_left>(lit) : d::literal_fits<S_right>(lit);
    if constexpr (d::literal_compare_v<N>) {
        // A literal that does not fit the join is compared by exact value: as wide integers, or as long
        // doubles (exact for every float and every integer up to 64 bits), not after converting it.
        const auto exact = [&](Eigen::Index k) {
            if constexpr (std::is_integral_v<T> && std::is_integral_v<L>) {
                const W x = static_cast<W>(a(k)), y = static_cast<W>(lit);
                return static_cast<R>(typename Op::fn{}(Left ? y : x, Left ? x : y));
            } else {
                const long double x = std::is_integral_v<T> ? static_cast<long double>(a(k))
                                                            : static_cast<long double>(mixt::convert<double>(a(k)));
                const long double y = static_cast<long double>(lit);
                return static_cast<R>(typename Op::fn{}(Left ? y : x, Left ? x : y));
            }
        };
        if (fits)
            check_paths<Paths>(what, make, reference, equal, a);
        else
            check_paths<Paths>(what, make, exact, equal, a);
    } else {
        if (!fits) {
            EXPECT_THROW((void)eval_flat(make(mixt::lazy(a))), mixt::overflow_error) << what;
            return;
        }
        check_paths<Paths>(what, make, reference, equal, a);
    }
}

/// Every binary operation defined for T with each literal on its right (and left: BothSides). A literal that does not fit the
/// dtype it is converted to is an overflow_error (checked here), except in comparisons, which compare exact
/// values.
template <class T, bool BothSides = false, class L>
void all_literal_ops(const std::vector<L>& literals) {
    const pairs<T, T> p(specials<T>(), {T{}});
    constexpr unsigned kind = kind_bit<mixt::join_t<mixt::policy::jax, mixt::tag_of_t<T>, mixt::literal_tag_t<L>>>();
    for (const L lit : literals) {
        mp::mp_for_each<binary_ops>([&](auto b) {
            using B_ = decltype(b);
            if constexpr ((B_::kinds & kind) != 0) {
                literal_case<typename B_::op, false, paths::fused_only>(p.a, lit);
                if constexpr (BothSides) literal_case<typename B_::op, true, paths::fused_only>(p.a, lit);
            }
        });
    }
}


// Transcendental functions: the fused loop's vector versions agree with the scalar definition within 2 ulp
// (eval/fused.hpp); special values (NaN, +-inf, exact results) must agree exactly.
template <class T>
bool close(const T& got, const T& want) {
    if constexpr (d::is_complex_v<T>) {
        return close(got.real(), want.real()) && close(got.imag(), want.imag());
    } else if constexpr (d::is_float_like_v<T>) {
        const double g = static_cast<double>(got), w = static_cast<double>(want);
        if (std::isnan(w) || std::isinf(w) || w == 0) return same_value(got, want) || (w == 0 && g == 0);
        const double ulp = std::abs(w) * std::ldexp(1.0, 1 - std::numeric_limits<T>::digits);
        return std::abs(g - w) <= 4 * ulp;
    } else {
        return got == want;
    }
}

template <class Op, unsigned Kinds, bool Transcendental = false>
struct unary {
    using op = Op;
    static constexpr unsigned kinds = Kinds;
    static constexpr bool transcendental = Transcendental;
};
using unary_ops = mp::mp_list<
    unary<mixt::op::negate, k_int | k_float | k_complex>, unary<mixt::op::bit_not, k_bool | k_int>,
    unary<mixt::op::logical_not, k_bool>, unary<mixt::op::abs, k_all>, unary<mixt::op::sqrt, k_all, true>,
    unary<mixt::op::exp, k_all, true>, unary<mixt::op::log, k_all, true>, unary<mixt::op::sin, k_all, true>,
    unary<mixt::op::cos, k_all, true>, unary<mixt::op::tanh, k_all, true>, unary<mixt::op::real, k_all>,
    unary<mixt::op::imag, k_all>, unary<mixt::op::conj, k_all>>;

/// Every unary operation defined for T, on every special value.
template <class T, paths Paths = paths::both>
void all_unary_ops() {
    const pairs<T, T> p(specials<T>(), {T{}});
    constexpr unsigned kind = kind_bit<mixt::tag_of_t<T>>();
    mp::mp_for_each<unary_ops>([&](auto u) {
        using U = decltype(u);
        using Op = typename U::op;
        if constexpr ((U::kinds & kind) != 0) {
            const auto make = [](auto x) { return d::make_node<Op>(std::move(x)); };
            using N = decltype(make(mixt::lazy(p.a)));
            using S = mp::mp_at_c<typename N::operand_types, 0>;
            using R = mixt::value_t<N>;
            const auto reference = [&](Eigen::Index k) { return static_cast<R>(typename Op::fn{}(mixt::convert<S>(p.a(k)))); };
            const auto equal = [](const R& x, const R& y) { return U::transcendental ? close(x, y) : same_value(x, y); };
            check_paths<Paths>(std::string(Op::name) + "(" + name<T>() + ")", make, reference, equal, p.a);
        }
    });
}

/// mixt::cast<To> from From on every special value: mixt::convert's result, bit for bit (NaN payloads too).
template <class From, class... To>
void casts_to(mp::mp_list<To...>) {
    const pairs<From, From> p(specials<From>(), {From{}});
    (check_paths<paths::fused_only>(
         "cast<" + name<To>() + ">(" + name<From>() + ")", [](auto x) { return mixt::cast<To>(std::move(x)); },
         [&](Eigen::Index k) { return mixt::convert<To>(p.a(k)); }, [](const To& x, const To& y) { return same_bits(x, y); },
         p.a),
     ...);
}

} // namespace edge

#endif // MIXT_TEST_EVAL_EDGE_VALUES_HPP
