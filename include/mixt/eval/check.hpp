#ifndef MIXT_EVAL_CHECK_HPP
#define MIXT_EVAL_CHECK_HPP

// Every run-time check of evaluation, made before the first element is written (so on error the destination is
// untouched): the operands' shapes broadcast, and their broadcast shape broadcasts to the destination's (NumPy's
// `out=`: the expression stretches, the destination never does); every literal fits the dtype it is converted
// to; the destination's elements are distinct; and the destination and the operands either lie apart, or are
// the very same view (`assign(a, lazy(a) + 1)`), or, where one of them has no memory view that mixt can see (a
// `reverse()` or `shuffle()` destination, an Eigen expression leaf), the pass goes through a temporary so that
// the result is as if every operand had been read before the first write. Two views that partially overlap
// throw mixt::aliasing_error. `check_assign` is the one entry point of assign; eval makes a new array and
// needs only the shapes and literals.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/errors.hpp"
#include "mixt/eval/device.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/literal.hpp"
#include "mixt/expr/reduce.hpp"
#include "mixt/expr/rules.hpp"
#include "mixt/simd/arch.hpp"

namespace mixt {

/// Checks every literal of `e` against the type it is converted to; throws mixt::overflow_error naming the
/// value, the dtype and the operation.
template <class E>
void check_literals(const E&) {}

template <class Op, class... Cs>
void check_literals(const node<Op, Cs...>& n) {
    using N = node<Op, Cs...>;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                const auto& child = std::get<K>(n.children);
                using C = std::remove_cvref_t<decltype(child)>;
                if constexpr (detail::is_literal_v<C> && !detail::literal_compare_v<N>) {
                    using S = boost::mp11::mp_at_c<typename N::operand_types, K>;
                    if (!detail::literal_fits<S>(child.value))
                        throw overflow_error("mixt: the literal " + detail::literal_text(child.value) +
                                             " is out of bounds for " + std::string(name(dtype_of_v<S>)) +
                                             ", the dtype it is converted to in " + Op::name);
                } else {
                    check_literals(child);
                }
            }(),
            ...);
    }(std::index_sequence_for<Cs...>{});
}


namespace detail {

// Calls f(eigen_operand) for every leaf (visit_leaves).
template <class E, class F>
void for_each_leaf(const E& e, F& f) {
    visit_leaves(e, [&f](const auto& l) { f(l.x); });
}

/// The shape `e` evaluates to at rank R (at least e's rank; leading dimensions of size 1 added): its operands'
/// shapes broadcast at e's own rank (NumPy's rule; aligned_shape: a Dense column vector is [n, 1] where e has
/// rank 2 or more), else mixt::shape_error naming `what`, the call the user made, and the two shapes that do not
/// broadcast.
template <int R, class E>
shape_t<R> broadcast_shape_at(const E& e, const char* what) {
    constexpr int ER = std::remove_cvref_t<E>::rank;
    static_assert(ER >= 0, "mixt: the expression has no array operand (only literals and mixt::strong scalars)");
    static_assert(ER <= R);
    shape_t<ER> own{};
    bool seen = false;
    auto fold = [&](const auto& x) {
        // The message shows an operand's own shape, a Dense column vector's as the column it acts as ([n, 1]).
        if constexpr (dense_column_v<std::remove_cvref_t<decltype(x)>> && ER >= 2) {
            broadcast_into<ER>(own, seen, aligned_shape<ER>(x), what);
        } else {
            const auto shown = shape_of(x);
            broadcast_into<ER>(own, seen, aligned_shape<ER>(x), what, &shown);
        }
    };
    for_each_leaf(e, fold);
    if (!seen) own.fill(1);
    shape_t<R> acc;
    acc.fill(1);
    for (int d = 0; d < ER; ++d) acc[static_cast<std::size_t>(R - ER + d)] = own[static_cast<std::size_t>(d)];
    return acc;
}

/// The shape `e` evaluates to (broadcast_shape_at at e's own rank).
template <class E>
shape_t<std::remove_cvref_t<E>::rank> broadcast_shape(const E& e, const char* what) {
    return broadcast_shape_at<std::remove_cvref_t<E>::rank>(e, what);
}

template <int R>
Eigen::DSizes<Eigen::Index, R> to_dsizes(const shape_t<R>& s) {
    Eigen::DSizes<Eigen::Index, R> d;
    for (std::size_t i = 0; i < s.size(); ++i) d[static_cast<Eigen::Index>(i)] = s[i];
    return d;
}


/// Whether `shape` (an expression's, at the destination's rank R) broadcasts to the destination's `dims`:
/// every dimension equal, or 1 in the expression.
template <std::size_t R>
bool broadcasts_to(const std::array<index_t, R>& shape, const std::array<index_t, R>& dims) {
    for (std::size_t d = 0; d != R; ++d)
        if (shape[d] != dims[d] && shape[d] != 1) return false;
    return true;
}

/// Checks that `e`'s operands broadcast, and that their shape broadcasts to the destination's `dims`.
template <std::size_t R, class E>
void check_destination_shape(const std::array<index_t, R>& dims, const E& e, const char* what) {
    const auto shape = broadcast_shape_at<static_cast<int>(R)>(e, what);
    if (!broadcasts_to(shape, dims)) throw_destination_shape(what, dims, shape);
}

[[noreturn]] MIXT_COLD inline void throw_partial_overlap(const char* what) {
    throw aliasing_error(std::string("mixt: ") + what +
                         ": the destination partially overlaps an operand (other elements, or the same ones of "
                         "another width, order or broadcast); evaluate into a separate tensor first");
}
[[noreturn]] MIXT_COLD inline void throw_self_overlap(const char* what) {
    throw aliasing_error(std::string("mixt: ") + what +
                         ": the destination's strides make distinct indices name the same element");
}

/// The view of a destination's memory (has_view_v<Dst>), writable.
template <class Dst>
auto destination_view(Dst& dst) {
    const auto v = view_of(dst);
    using T = std::remove_const_t<typename decltype(v)::element_type>;
    if constexpr (is_packed_element_v<T>)
        return strided_view<T, static_cast<int>(v.dims.size())>{v.data, v.dims, v.strides};
    else
        return strided_view<T, static_cast<int>(v.dims.size())>{const_cast<T*>(v.data), v.dims, v.strides};
}

/// The view of an operand for the overlap check: its own, or, for an operand with data() but no view (a
/// TensorRef of a tensor), its shape laid out contiguously from data(); none for an expression.
template <class X>
auto operand_view_for_overlap(const X& x) {
    if constexpr (has_view_v<X>) {
        return view_of(x);
    } else if constexpr (requires { x.data(); }) {
        constexpr int R = array_traits<X>::rank;
        using T = const view_scalar_t<X>;
        const auto dims = shape_of(x);
        return strided_view<T, R>{x.data(), dims,
                                  contiguous_strides<R>(dims, array_traits<X>::layout == static_cast<int>(Eigen::RowMajor))};
    } else {
        return 0;
    }
}

// The common case, checked and run without building strided views: a plain tensor or map as destination and
// as every leaf, each of the destination's shape (and, as ranks and layouts agree at compile time, laid out
// alike: one flat run).
template <class L>
using leaf_is_tensor_or_map = is_tensor_or_map<typename L::eigen_type>;
template <class D, class E>
inline constexpr bool flat_candidate_v = is_tensor_or_map<std::remove_cvref_t<D>>::value &&
                                         boost::mp11::mp_all_of<leaf_list_t<E>, leaf_is_tensor_or_map>::value;

/// Whether every leaf of e has exactly the shape of dst (flat_candidate_v only). This, check_flat and
/// check_destination are always inlined: as calls they took 2-3 ns of a 4096-element pass's 470
/// (docs/performance-notes.md, "The plan's cost on the flat path").
template <class Dst, class E>
MIXT_ALWAYS_INLINE bool same_shape_leaves(const Dst& dst, const E& e) {
    bool same = true;
    auto check = [&](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if constexpr (array_traits<X>::rank != array_traits<std::remove_cvref_t<Dst>>::rank) {
            same = false;
        } else {
            for (int d = 0; d < array_traits<X>::rank; ++d) same = same && x.dimension(d) == dst.dimension(d);
        }
    };
    for_each_leaf(e, check);
    return same;
}

/// check_before_write for flat_candidate_v operands of the destination's shape: the literals, and no partial
/// overlap of contiguous ranges.
template <class Dst, class E>
MIXT_ALWAYS_INLINE void check_flat(const Dst& dst, const E& e, const char* what) {
    check_literals(e);
    using T = std::remove_const_t<typename Eigen::internal::traits<std::remove_cvref_t<Dst>>::Scalar>;
    const auto* dst_begin = reinterpret_cast<const unsigned char*>(dst.data());
    const auto* dst_end = dst_begin + static_cast<std::size_t>(dst.size()) * sizeof(T);
    auto check_leaf = [&](const auto& x) {
        using S = std::remove_cvref_t<decltype(*x.data())>;
        const auto* b = reinterpret_cast<const unsigned char*>(x.data());
        const auto* end = b + static_cast<std::size_t>(x.size()) * sizeof(S);
        const bool overlap = b != nullptr && dst_begin != nullptr && b < dst_end && dst_begin < end;
        if (overlap && !(b == dst_begin && sizeof(S) == sizeof(T))) throw_partial_overlap(what);
    };
    for_each_leaf(e, check_leaf);
}

/// The checks before the first write: the expression's shape (its operands broadcast) broadcasts to the
/// destination's,
/// every literal fits, and the destination's elements are distinct and overlap no operand but one that is the
/// very same view of the same width (`assign(a, lazy(a) + 1)`). `what` is the call the user made.
template <class T, int R, class E>
void check_before_write(const strided_view<T, R>& dst, const E& e, const char* what) {
    check_destination_shape(dst.dims, e, what);
    check_literals(e);
    if (!elements_distinct(dst)) throw_self_overlap(what);
    const auto dst_extent = byte_extent(dst);
    const std::uintptr_t dst_first = dst_extent.first, dst_last = dst_extent.second;
    auto check_leaf = [&](const auto& x) {
        const auto v = operand_view_for_overlap(x);
        if constexpr (!std::is_same_v<decltype(v), const int>) {
            const auto [first, last] = byte_extent(v);
            if (first >= dst_last || dst_first >= last || first == last || dst_first == dst_last) return;
            const auto b = broadcast_view_from<std::remove_cvref_t<E>::rank, R>(v, dst.dims);
            bool same = same_start(b.data, dst.data);
            for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d)
                same = same && (dst.dims[d] <= 1 || b.strides[d] == dst.strides[d]);
            if (!same) throw_partial_overlap(what);
        }
    };
    for_each_leaf(e, check_leaf);
}

// Calls f(eigen_operand) for every leaf of e, the leaves inside its reductions included.
template <class E, class F>
void for_each_operand(const E&, F&) {} // a literal or a scalar: no memory
template <class P, class X, class F>
void for_each_operand(const leaf<P, X>& l, F& f) {
    f(l.x);
}
template <class Op, class... Cs, class F>
void for_each_operand(const node<Op, Cs...>& n, F& f) {
    std::apply([&](const auto&... c) { (for_each_operand(c, f), ...); }, n.children);
}
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given, class F>
void for_each_operand(const reduction<K, C, N, Keep, Given>& r, F& f) {
    for_each_operand(r.child, f);
}


/// The bytes an Eigen object may read or write, for the overlap checks of objects without a memory view: a
/// view's extent; an object with data() (a TensorRef, a Tensor) its dimensions from there; an Eigen expression
/// the union of its arguments' (a reverse or shuffle of a tensor: the tensor's). `known` is false where mixt
/// cannot see the memory (an expression of another kind, a TensorRef of an expression): it may be anywhere. A
/// functor of a unaryExpr or a generator is taken to read only its arguments (one that reads the destination
/// through a pointer of its own is not seen).
struct memory_extent {
    std::uintptr_t first = 0, last = 0;
    bool known = true;
    memory_extent& operator|=(const memory_extent& o) {
        if (!o.known) {
            known = false;
        } else if (o.first != o.last) {
            first = first == last ? o.first : std::min(first, o.first);
            last = std::max(last, o.last);
        }
        return *this;
    }
    bool may_overlap(const memory_extent& o) const {
        if (!known || !o.known) return true;
        return first != last && o.first != o.last && first < o.last && o.first < last;
    }
};

template <class X>
memory_extent memory_of(const X& x) {
    if constexpr (has_view_v<X>) {
        const auto e = byte_extent(view_of(x));
        return {e.first, e.second, true};
    } else if constexpr (requires { x.data(); x.size(); }) {
        if (x.data() == nullptr) return {0, 0, x.size() == 0};
        const auto first = reinterpret_cast<std::uintptr_t>(x.data());
        return {first, first + static_cast<std::uintptr_t>(x.size()) * sizeof(view_scalar_t<X>), true};
    } else if constexpr (requires { x.expression(); }) { // reverse, shuffle, reshape, broadcast, conversion, ...
        return memory_of(x.expression());
    } else if constexpr (requires { x.nestedExpression(); }) { // a cwise unary or nullary op
        return memory_of(x.nestedExpression());
    } else if constexpr (requires { x.lhsExpression(); x.rhsExpression(); }) { // a cwise binary op
        memory_extent m = memory_of(x.lhsExpression());
        return m |= memory_of(x.rhsExpression());
    } else {
        return {0, 0, false};
    }
}

/// Whether a destination without a memory view (`g.reverse()`, `t.shuffle(p)`) may share memory with an
/// operand of e: then assign evaluates into a temporary first.
template <class Dst, class E>
bool may_overlap_operands(const Dst& dst, const E& e) {
    const memory_extent d = memory_of(dst);
    bool overlap = false;
    auto check = [&](const auto& x) { overlap = overlap || d.may_overlap(memory_of(x)); };
    for_each_leaf(e, check);
    return overlap;
}

/// Whether an operand of e that is an Eigen expression (no memory view, no data()) may read the memory of a
/// destination that has a view: then assign evaluates into a temporary first.
template <class T, int R, class E>
bool expression_leaf_may_overlap(const strided_view<T, R>& dst, const E& e) {
    const auto extent = byte_extent(dst);
    const memory_extent d{extent.first, extent.second, true};
    bool overlap = false;
    auto check = [&](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if constexpr (!has_view_v<X>) {
            if constexpr (requires { x.data(); }) {
                if (x.data() != nullptr) return; // check_before_write saw it as a contiguous view
            }
            overlap = overlap || d.may_overlap(memory_of(x));
        }
    };
    for_each_leaf(e, check);
    return overlap;
}

/// Every check of `assign(dst, e)` before the first write (the header's list); returns whether the pass must go
/// through a temporary (a destination and an operand that may share memory without both being views).
template <class Dst, class E>
bool check_assign(const Dst& dst, const E& e, const char* what) {
    using D = std::remove_cvref_t<Dst>;
    if constexpr (has_view_v<D>) {
        const auto v = destination_view(const_cast<Dst&>(dst));
        check_before_write(v, e, what);
        return expression_leaf_may_overlap(v, e);
    } else {
        constexpr int R = array_traits<D>::rank;
        const auto own = shape_of(dst);
        check_destination_shape(own, e, what);
        // A destination whose evaluator has its memory (a reshape of a tensor): that memory as a contiguous view.
        Eigen::DefaultDevice host;
        const Eigen::TensorEvaluator<const D, Eigen::DefaultDevice> ev(dst, host);
        if (const auto* data = ev.data()) {
            using T = std::remove_const_t<std::remove_pointer_t<decltype(data)>>;
            const strided_view<T, R> v{const_cast<T*>(data), own,
                                       contiguous_strides<R>(own, array_traits<D>::layout == static_cast<int>(Eigen::RowMajor))};
            check_before_write(v, e, what);
            return expression_leaf_may_overlap(v, e);
        }
        check_literals(e);
        return may_overlap_operands(dst, e);
    }
}

/// What the checks found, for the plan (plan_of): the destination and every leaf plain tensors or maps of its
/// shape (check_flat), views checked against each other (check_assign), or a destination and an operand that may
/// share memory without both being views (check_assign: through a temporary).
enum class checked { views, flat, through_temporary };

/// Every check of `assign(dst, e)` on Device (no reduction in e), the common case (plain tensors of dst's shape on
/// the CPU) without building strided views; returns the verdict. assign and explain both start here.
template <class Device, class Dst, class E>
MIXT_ALWAYS_INLINE checked check_destination(const Dst& dst, const E& e, const char* what) {
    using D = std::remove_cvref_t<Dst>;
    if constexpr (flat_candidate_v<D, E> && has_view_v<D> && cpu_device_v<Device>) {
        if (same_shape_leaves(dst, e)) {
            check_flat(dst, e, what);
            return checked::flat;
        }
    }
    return check_assign(dst, e, what) ? checked::through_temporary : checked::views;
}

} // namespace detail

} // namespace mixt

#endif // MIXT_EVAL_CHECK_HPP
