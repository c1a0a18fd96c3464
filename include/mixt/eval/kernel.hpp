#ifndef MIXT_EVAL_KERNEL_HPP
#define MIXT_EVAL_KERNEL_HPP

// The kernel tree: what a pass needs of an expression, whatever target runs it. It has the expression's
// shape with only run-time data left in it:
//   - an array leaf is its data pointer (`ktree::array`); its strides are the iteration space's (eval/space.hpp),
//     whose operands are the destination and then the leaves in the order of this tree (depth-first, left to
//     right: leaf_views_of's order);
//   - a literal is its value already converted to the dtype its operation converts it to (`ktree::constant`);
//   - a conversion is a node of its own (`ktree::convert`); `cast<T>(x)` is x converted to T, with no identity
//     operation above it;
//   - an operation is its functor type, its result type and its operands (`ktree::op`);
//   - a real array compared with a real literal is the array and the functor that compares in the join or, when
//     the literal does not fit it, by exact value (`ktree::compare`, expr/literal.hpp).
// The rules are applied here once, by `make_kernel_tree<S>(e)` (the tree of `e` converted to S). Each target
// binds the tree to its own nodes: the CPU's fused loops to SIMD kernels (eval/fused.hpp, `cpu_binder`), the
// GPU to device nodes that add each leaf's strides (eval/gpu.hpp, `gpu::binder`).

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include "mixt/dtype/convert.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/functors.hpp"
#include "mixt/expr/literal.hpp"
#include "mixt/simd/arch.hpp"

namespace mixt::detail {

namespace ktree {

/// An array operand: the address of its element at the pass's first index.
template <class T>
struct array {
    using value_type = T;
    const T* p;
};

/// A literal, converted to its operand's dtype.
template <class T>
struct constant {
    using value_type = T;
    T value;
};

/// The value of K converted to S (mixt::convert).
template <class S, class K>
struct convert {
    using value_type = S;
    K k;
};

/// The functor Fn of the operands Ks, computing R.
template <class Fn, class R, class... Ks>
struct op {
    using value_type = R;
    std::tuple<Ks...> ks;
};

/// K's elements (of F's join) compared with F's literal (a literal_compare_functor).
template <class F, class K>
struct compare {
    using value_type = bool;
    K k;
    F f;
};

/// How many array operands a tree reads.
template <class K>
inline constexpr std::size_t array_count_v = 0;
template <class T>
inline constexpr std::size_t array_count_v<array<T>> = 1;
template <class S, class K>
inline constexpr std::size_t array_count_v<convert<S, K>> = array_count_v<K>;
template <class F, class K>
inline constexpr std::size_t array_count_v<compare<F, K>> = array_count_v<K>;
template <class Fn, class R, class... Ks>
inline constexpr std::size_t array_count_v<op<Fn, R, Ks...>> = (std::size_t{0} + ... + array_count_v<Ks>);

} // namespace ktree

template <class S, class E>
MIXT_ALWAYS_INLINE auto make_kernel_tree(const E& e);
template <class O, class E>
MIXT_ALWAYS_INLINE auto make_compute_tree(const E& e);

/// The tree of an expression node or leaf in its own dtype.
template <class P, class X>
MIXT_ALWAYS_INLINE auto make_native_kernel_tree(const leaf<P, X>& l) {
    if constexpr (packed_memory_v<X>)
        return ktree::array<value_t<leaf<P, X>>>{nullptr}; // a stage's, set by the pass (eval/strided.hpp)
    else
        return ktree::array<value_t<leaf<P, X>>>{view_of(l.x).data};
}
template <class Op, class... Cs>
MIXT_ALWAYS_INLINE auto make_native_kernel_tree(const node<Op, Cs...>& n) {
    using N = node<Op, Cs...>;
    using ops = typename N::operand_types;
    if constexpr (literal_compare_v<N>) {
        const literal_compare_parts<N> parts(n);
        auto k = make_kernel_tree<typename decltype(parts)::join>(parts.array);
        return ktree::compare<typename decltype(parts)::functor, decltype(k)>{k, parts.compare};
    } else if constexpr (std::is_same_v<typename Op::fn, identity_fn> && sizeof...(Cs) == 1) {
        // cast<T>(x): x converted to T. No target has an identity worth computing (the SIMD back ends would
        // round-trip f16/bf16 lanes through memory for it).
        return make_kernel_tree<boost::mp11::mp_at_c<ops, 0>>(std::get<0>(n.children));
    } else {
        // The operation in its compute type: the node's dtype, or for a narrow dtype f32 or i32, its result
        // converted back (dtype/storage.hpp, narrow_compute_t). Each operand is first its own dtype's value (a
        // literal rounded to the narrow dtype it is converted to), then widened (make_compute_tree). Braced
        // initialization: the operands are made left to right, the order of the leaves.
        using R = value_t<N>;
        auto k = [&]<std::size_t... K>(std::index_sequence<K...>) {
            return ktree::op<typename Op::fn, narrow_compute_t<R>,
                             decltype(make_compute_tree<boost::mp11::mp_at_c<ops, K>>(std::get<K>(n.children)))...>{
                {make_compute_tree<boost::mp11::mp_at_c<ops, K>>(std::get<K>(n.children))...}};
        }(std::index_sequence_for<Cs...>{});
        if constexpr (is_narrow_v<R>)
            return ktree::convert<R, decltype(k)>{k};
        else
            return k;
    }
}

/// The tree of `e` converted to O, then widened to O's compute type (a narrow O's f32 or i32).
template <class O, class E>
MIXT_ALWAYS_INLINE auto make_compute_tree(const E& e) {
    using C = narrow_compute_t<O>;
    if constexpr (std::is_same_v<C, O>) {
        return make_kernel_tree<O>(e);
    } else if constexpr (is_literal_v<E> || std::is_same_v<E, scalar<value_t<E>>>) {
        return ktree::constant<C>{mixt::convert<C>(mixt::convert<O>(e.value))};
    } else {
        auto k = make_kernel_tree<O>(e);
        return ktree::convert<C, decltype(k)>{k};
    }
}

/// The kernel tree that computes `e` converted to `S`.
template <class S, class E>
MIXT_ALWAYS_INLINE auto make_kernel_tree(const E& e) {
    using V = value_t<E>;
    if constexpr (is_literal_v<E> || std::is_same_v<E, scalar<V>>) {
        return ktree::constant<S>{mixt::convert<S>(e.value)};
    } else if constexpr (std::is_same_v<S, V>) {
        return make_native_kernel_tree(e);
    } else {
        auto k = make_native_kernel_tree(e);
        return ktree::convert<S, decltype(k)>{k};
    }
}

} // namespace mixt::detail

#endif // MIXT_EVAL_KERNEL_HPP
