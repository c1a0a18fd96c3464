#ifndef MIXT_EXPR_LITERAL_HPP
#define MIXT_EXPR_LITERAL_HPP

// The rules of literals that every back end applies (the fused loop's kernel, the lowering to Eigen, the GPU's
// kernel, the reference of the tests):
//   - a weak literal is converted to the dtype its operation converts that operand to, and must fit it
//     (literal_fits; eval/lower.hpp's check_literals throws mixt::overflow_error before anything runs);
//   - a real array compared with a real literal is compared in the join like any comparison, except that a
//     literal that does not fit the join is compared by exact value instead (`u8 < 300` is true for every
//     element, not an overflow: spec/lattice.md): literal_compare, literal_compare_functor, and
//     literal_compare_parts, which takes such a node apart for a back end.
// Everything that runs per element is EIGEN_DEVICE_FUNC, so it compiles as device code.

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <Eigen/Core>

#include "mixt/dtype/convert.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/functors.hpp"

namespace mixt::detail {

// The order of an integer and a double, exactly (converting the integer to double would round above 2^53):
// -1, 0, 1, or 2 when d is NaN.
template <class I>
EIGEN_DEVICE_FUNC int int_double_order(I i, double d) {
    if (Eigen::numext::isnan(d)) return 2;
    constexpr int bits = 8 * static_cast<int>(sizeof(I));
    constexpr double hi = pow2<double>(std::is_signed_v<I> ? bits - 1 : bits);
    constexpr double lo = std::is_signed_v<I> ? -hi : 0.0;
    if (d >= hi) return -1;
    if (d < lo) return 1;
    const I t = static_cast<I>(d); // trunc(d) lies in [lo, hi): it fits I
    if (i != t) return i < t ? -1 : 1;
    const double td = static_cast<double>(t); // exact: a truncated double is a double
    return d > td ? -1 : d < td ? 1 : 0;
}

// -1, 0, 1, or 2 when unordered (NaN), comparing the exact values.
template <class A, class L>
EIGEN_DEVICE_FUNC int exact_order(const A& a, const L& l) {
    if constexpr ((std::is_integral_v<A>)&&std::is_integral_v<L>) {
        const bool an = std::is_signed_v<A> && a < A(0);
        const bool ln = std::is_signed_v<L> && l < L(0);
        if (an != ln) return an ? -1 : 1;
        const auto ua = static_cast<std::uint64_t>(a), ul = static_cast<std::uint64_t>(l);
        return ua < ul ? -1 : ua > ul ? 1 : 0;
    } else if constexpr (std::is_integral_v<A>) {
        using I = std::conditional_t<std::is_same_v<A, bool>, std::uint8_t, A>;
        return int_double_order(static_cast<I>(a), static_cast<double>(l));
    } else if constexpr (std::is_integral_v<L>) {
        const int o = int_double_order(l, mixt::convert<double>(a));
        return o == 2 ? 2 : -o;
    } else {
        const double da = mixt::convert<double>(a);
        const double dl = static_cast<double>(l);
        if (Eigen::numext::isnan(da) || Eigen::numext::isnan(dl)) return 2;
        return da < dl ? -1 : da > dl ? 1 : 0;
    }
}

// An array element `a` (already in the comparison's dtype J, the join) compared with a literal: in J, as
// every comparison is, when the literal fits J (`converted` is the literal in J); with the exact values when
// it does not (`u8 < 300` is true for every element).
template <class Fn, bool LiteralLeft, class J, class L>
struct literal_compare_functor {
    L literal;
    J converted;
    bool fits;
    EIGEN_DEVICE_FUNC bool operator()(const J& a) const {
        if (fits) return LiteralLeft ? Fn{}(converted, a) : Fn{}(a, converted);
        int o = exact_order(a, literal);
        if (o == 2) return std::is_same_v<Fn, not_equal_fn>;
        if (LiteralLeft) o = -o;
        return Fn{}(o, 0);
    }
};

template <class E>
struct is_literal : std::false_type {};
template <class V>
struct is_literal<literal<V>> : std::true_type {};
template <class E>
inline constexpr bool is_literal_v = is_literal<std::remove_cvref_t<E>>::value;

template <class Op>
struct is_compare : std::false_type {};
template <class Fn, bool Ordered>
struct is_compare<op::compare_op<Fn, Ordered>> : std::true_type {};

// A comparison of a real array with a real literal: compared in the join like any comparison, except that a
// literal that does not fit the join is not an error there but is compared by exact value (spec/lattice.md).
template <class Node>
struct literal_compare : std::false_type {};
template <class Op, class A, class B>
    requires(is_compare<Op>::value && (is_literal_v<A> != is_literal_v<B>))
struct literal_compare<node<Op, A, B>> {
    static constexpr bool literal_left = is_literal_v<A>;
    using fn = typename Op::fn;
    using array_child = std::remove_cvref_t<std::conditional_t<literal_left, B, A>>;
    using literal_child = std::remove_cvref_t<std::conditional_t<literal_left, A, B>>;
    static constexpr bool value =
        !is_complex_v<value_t<array_child>> && !is_complex_v<typename literal_child::value_type>;
};
template <class Node>
inline constexpr bool literal_compare_v = literal_compare<Node>::value;

template <class S, class V>
bool literal_fits(const V& v) {
    if constexpr (std::is_integral_v<V> && std::is_integral_v<S> && !std::is_same_v<S, bool>) {
        return exact_order(v, std::numeric_limits<S>::lowest()) >= 0 && exact_order(v, std::numeric_limits<S>::max()) <= 0;
    } else if constexpr (std::is_integral_v<V> && is_narrow_int_v<S>) {
        // int4, uint4, int2, uint2: the type's range, as for the other ints (int4 + 100 does not wrap silently).
        return exact_order(v, std::int64_t{S::min_value}) >= 0 && exact_order(v, std::int64_t{S::max_value}) <= 0;
    } else if constexpr (std::is_integral_v<V> && is_float_like_v<S>) {
        return !Eigen::numext::isinf(mixt::convert<S>(v));
    } else if constexpr (std::is_integral_v<V> && is_narrow_float_v<S>) {
        // A narrow float: the integer rounds to a finite value of the format (not to its inf or NaN, as f16's
        // rule), and not by saturation (the finite-only formats' overflow): within half an ulp of that value.
        const double r = mixt::convert<double>(mixt::convert<S>(v));
        if (!Eigen::numext::isfinite(r)) return false;
        const double x = static_cast<double>(v); // (an integer beyond 2^53 is far beyond every format's range)
        constexpr int mantissa = format_of(S::value_dtype).mantissa;
        return std::abs(x - r) <= std::abs(r) * std::ldexp(1.0, -(mantissa + 1));
    } else {
        return true;
    }
}

// A comparison with a literal taken apart for a back end (the fused loop's kernel, the lowering to Eigen, the
// GPU's kernel tree): the array child, the join J it is compared in, and the functor comparing an element of
// J with the literal.
template <class Node>
    requires literal_compare_v<Node>
struct literal_compare_parts {
    using parts = literal_compare<Node>;
    using join = boost::mp11::mp_at_c<typename Node::operand_types, parts::literal_left ? 1 : 0>;
    using literal_type = typename parts::literal_child::value_type;
    using functor = literal_compare_functor<typename parts::fn, parts::literal_left, join, literal_type>;

    const typename parts::array_child& array;
    functor compare;

    explicit literal_compare_parts(const Node& n)
        : array(std::get<parts::literal_left ? 1 : 0>(n.children)),
          compare(make_functor(std::get<parts::literal_left ? 0 : 1>(n.children).value)) {}

private:
    static functor make_functor(const literal_type& v) { return {v, mixt::convert<join>(v), literal_fits<join>(v)}; }
};

template <class V>
std::string literal_text(const V& v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace mixt::detail

#endif // MIXT_EXPR_LITERAL_HPP
