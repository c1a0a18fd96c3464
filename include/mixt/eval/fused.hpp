#ifndef MIXT_EVAL_FUSED_HPP
#define MIXT_EVAL_FUSED_HPP

// The fused CPU loop: one pass over memory, 8 elements at a time, every node computed on simd::batch values
// in registers. Used by assign() on the DefaultDevice and the ThreadPoolDevice when every leaf is a plain
// Eigen::Tensor or TensorMap (contiguous memory); other leaves (TensorRef, tensor expressions) and other
// devices go through the lowering to Eigen (eval/lower.hpp).
//
// Before the loop, the expression is turned into a kernel: a tree of the same shape holding only what the
// loop needs (leaf pointers, literals already converted and broadcast), so nothing per call is redone per
// element. Results are the same as the per-element definitions (expr/functors.hpp, mixt::convert) bit for
// bit, except transcendental functions, whose vector versions agree within 2 ulp of the result type.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/simd/convert.hpp"
#include "mixt/simd/ops.hpp"

namespace mixt::detail {

template <class T>
struct is_plain_tensor : std::false_type {};
template <class S, int N, int O, class I>
struct is_plain_tensor<Eigen::Tensor<S, N, O, I>> : std::true_type {};
template <class P, int O, template <class> class MP>
struct is_plain_tensor<Eigen::TensorMap<P, O, MP>> : std::true_type {};

/// Whether the fused loop can evaluate an expression: every leaf is contiguous memory.
template <class E>
struct fusable : std::true_type {};
template <class P, class X>
struct fusable<leaf<P, X>> : is_plain_tensor<std::remove_cvref_t<X>> {};
template <class Op, class... Cs>
struct fusable<node<Op, Cs...>> : std::bool_constant<(fusable<std::remove_cvref_t<Cs>>::value && ...)> {};
template <class E>
inline constexpr bool fusable_v = fusable<std::remove_cvref_t<E>>::value;

using index_t = Eigen::Index;

template <class T>
struct leaf_kernel {
    const T* p;
    simd::batch<T> at(index_t i) const { return simd::load(p + i); }
    simd::batch<T> at_partial(index_t i, int n) const { return simd::load_partial(p + i, n); }
};

template <class T>
struct const_kernel {
    simd::batch<T> v;
    const simd::batch<T>& at(index_t) const { return v; }
    const simd::batch<T>& at_partial(index_t, int) const { return v; }
};

template <class S, class K>
struct convert_kernel {
    K k;
    simd::batch<S> at(index_t i) const { return simd::convert<S>(k.at(i)); }
    simd::batch<S> at_partial(index_t i, int n) const { return simd::convert<S>(k.at_partial(i, n)); }
};

template <class Fn, class R, class... Ks>
struct op_kernel {
    std::tuple<Ks...> ks;
    simd::batch<R> at(index_t i) const {
        return std::apply([&](const auto&... k) { return simd::apply<R>(Fn{}, k.at(i)...); }, ks);
    }
    simd::batch<R> at_partial(index_t i, int n) const {
        return std::apply([&](const auto&... k) { return simd::apply<R>(Fn{}, k.at_partial(i, n)...); }, ks);
    }
};

// An array compared with a literal: when the literal converts to the array's compute type without loss (the
// usual case: `x > 0`), an ordinary vector comparison gives the exact answer; otherwise each lane compares
// exact values (literal_compare_functor).
template <class Fn, bool LiteralLeft, class A, class L, class K>
struct literal_compare_kernel {
    K k;
    L literal;
    simd::batch<A> literal_b;
    bool lossless;
    simd::batch<bool> compute(const simd::batch<A>& a) const {
        if (lossless)
            return LiteralLeft ? simd::apply<bool>(Fn{}, literal_b, a) : simd::apply<bool>(Fn{}, a, literal_b);
        return simd::apply<bool>(literal_compare_functor<Fn, LiteralLeft, A, L>{literal}, a);
    }
    simd::batch<bool> at(index_t i) const { return compute(k.at(i)); }
    simd::batch<bool> at_partial(index_t i, int n) const { return compute(k.at_partial(i, n)); }
};

template <class S, class E>
auto make_kernel(const E& e);

template <class P, class X>
auto make_native_kernel(const leaf<P, X>& l) {
    return leaf_kernel<value_t<leaf<P, X>>>{l.x.data()};
}
template <class Op, class... Cs>
auto make_native_kernel(const node<Op, Cs...>& n) {
    using N = node<Op, Cs...>;
    using R = value_t<N>;
    if constexpr (literal_compare_v<N>) {
        using LC = literal_compare<N>;
        const auto& arr = std::get<LC::literal_left ? 1 : 0>(n.children);
        const auto& lit = std::get<LC::literal_left ? 0 : 1>(n.children);
        using A = value_t<decltype(arr)>;
        using L = typename std::remove_cvref_t<decltype(lit)>::value_type;
        const A converted = mixt::convert<A>(lit.value);
        const bool lossless = !is_nan_value(converted) && exact_order(converted, lit.value) == 0;
        auto k = make_kernel<A>(arr);
        return literal_compare_kernel<typename Op::fn, LC::literal_left, A, L, decltype(k)>{
            k, lit.value, simd::broadcast(converted), lossless};
    } else {
        using ops = typename N::operand_types;
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return op_kernel<typename Op::fn, R,
                             decltype(make_kernel<boost::mp11::mp_at_c<ops, K>>(std::get<K>(n.children)))...>{
                {make_kernel<boost::mp11::mp_at_c<ops, K>>(std::get<K>(n.children))...}};
        }(std::index_sequence_for<Cs...>{});
    }
}

/// The kernel that computes `e` converted to `S`.
template <class S, class E>
auto make_kernel(const E& e) {
    using V = value_t<E>;
    if constexpr (is_literal_v<E> || std::is_same_v<E, scalar<V>>) {
        return const_kernel<S>{simd::broadcast(mixt::convert<S>(e.value))};
    } else if constexpr (std::is_same_v<S, V>) {
        return make_native_kernel(e);
    } else {
        auto k = make_native_kernel(e);
        return convert_kernel<S, decltype(k)>{k};
    }
}

/// Runs a kernel over elements [begin, end) of the destination. The kernel is taken by value: a local copy
/// cannot alias the destination, so its pointers and broadcast literals stay in registers across the stores.
template <class D, class K>
void run_kernel(D* dst, const K k, index_t begin, index_t end) {
    index_t i = begin;
    for (; i + simd::lanes <= end; i += simd::lanes) simd::store(dst + i, k.at(i));
    if (i < end) {
        const int n = static_cast<int>(end - i);
        simd::store_partial(dst + i, k.at_partial(i, n), n);
    }
}

} // namespace mixt::detail

#endif // MIXT_EVAL_FUSED_HPP
