#ifndef MIXT_EVAL_SPACE_HPP
#define MIXT_EVAL_SPACE_HPP

// Shapes: NumPy broadcasting, arrays in memory as strided views, and the iteration space of a pass.
//
// Broadcasting follows NumPy: shapes are aligned at their last dimension, a lower-rank operand gains leading
// dimensions of size 1, and a dimension of size 1 stretches to the other operand's size. Indices are logical
// (the order of a tensor's indices, whatever its layout), so `[2, 3] + [3]` adds the vector to each row in
// either layout.
//
// A strided view is where an array's elements lie: element (i0, i1, ...) at data + i0 * s0 + i1 * s1 + ...
// Tensors, TensorMaps, `chip`, `slice` and `stride` of those, and Dense arrays, matrices, maps, blocks and refs
// have one (has_view_v); an operand broadcast along a dimension has stride 0 there.
//
// The iteration space of a pass is the destination's shape with every operand's strides, its dimensions in the
// destination's memory order (innermost last), size-1 dimensions dropped and neighbours merged wherever every
// operand steps through both as through one (a contiguous tensor and its same-shape operands become one
// dimension: the flat loop). The pass then runs the innermost dimension as contiguous runs of the fused kernel
// (eval/fused.hpp), one run per outer index. An operand whose elements along the run are not contiguous (a
// broadcast value, stride 0; a strided view) is staged: copied into a small buffer, in registers' reach, which
// the kernel reads as if it were contiguous. A stage is refilled only when its contents change: a broadcast
// value along a row once per row, a broadcast vector once per pass. When the innermost dimension is short
// (a channel-last image's 3 channels), runs span several rows of it so that each call of the kernel has work.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/packed.hpp"
#include "mixt/errors.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/simd/arch.hpp"

namespace mixt::detail {

using index_t = Eigen::Index;

/// A shape of rank R (R >= 0), in logical dimension order.
template <int R>
using shape_t = std::array<index_t, static_cast<std::size_t>(R)>;

/// The layout of a result of rank R of an expression of layout `layout`: row-major where the expression is, at
/// rank 2 or more; Eigen's default (column-major) at rank 0 and 1, where both layouts are the same memory.
template <int R, int layout>
inline constexpr int result_layout_v =
    R >= 2 && layout == static_cast<int>(Eigen::RowMajor) ? static_cast<int>(Eigen::RowMajor) : static_cast<int>(Eigen::ColMajor);

/// Where an array's elements lie: element (i0, ..., iR-1) at data + sum(i_d * strides[d]), strides in elements.
/// `column` marks the view of an Eigen Dense column vector (rank 1): against operands of rank 2 or more it is
/// the column [n, 1], as Eigen's types say, not NumPy's row [1, n] (aligned_shape, broadcast_view). A view of
/// a packed array (dtype/packed.hpp) has elements packed_element<S> and a packed_ptr<S> for data: the same
/// arithmetic of element offsets, but its elements have no address (a pass unpacks them into a stage).
template <class T, int R>
struct strided_view {
    using element_type = T;
    view_pointer_t<T> data;
    shape_t<R> dims;
    shape_t<R> strides;
    bool column = false;
};

template <class Dims>
std::string shape_text(const Dims& d) {
    std::ostringstream s;
    s << '[';
    for (std::size_t i = 0; i < static_cast<std::size_t>(d.size()); ++i) s << (i ? ", " : "") << d[i];
    s << ']';
    return s.str();
}

template <int R>
shape_t<R> contiguous_strides(const shape_t<R>& dims, bool row_major) {
    shape_t<R> s{};
    index_t step = 1;
    for (int k = 0; k < R; ++k) {
        const auto d = static_cast<std::size_t>(row_major ? R - 1 - k : k);
        s[d] = step;
        step *= dims[d];
    }
    return s;
}

// --- Views of Eigen objects ---------------------------------------------------------------------------------

/// Whether X is a plain Eigen::Tensor or TensorMap (contiguous memory of its own shape).
template <class T>
struct is_tensor_or_map : std::false_type {};
template <class S, int N, int O, class I>
struct is_tensor_or_map<Eigen::Tensor<S, N, O, I>> : std::true_type {};
template <class P, int O, template <class> class MP>
struct is_tensor_or_map<Eigen::TensorMap<P, O, MP>> : std::true_type {};

template <class X>
struct has_view : is_tensor_or_map<X> {};
template <Eigen::DenseIndex Dim, class X>
struct has_view<Eigen::TensorChippingOp<Dim, X>> : has_view<std::remove_cvref_t<X>> {};
template <class Start, class Sizes, class X>
struct has_view<Eigen::TensorSlicingOp<Start, Sizes, X>> : has_view<std::remove_cvref_t<X>> {};
template <class Strides, class X>
struct has_view<Eigen::TensorStridingOp<Strides, X>> : has_view<std::remove_cvref_t<X>> {};
template <class X>
    requires eigen_dense<X>
struct has_view<X> : std::true_type {};
template <class T, int R, int L>
struct has_view<packed_map<T, R, L>> : std::true_type {};
/// Whether an Eigen object is an array in memory at fixed strides (view_of gives them).
template <class X>
inline constexpr bool has_view_v = has_view<std::remove_cvref_t<X>>::value;

/// Whether the memory of a view can be written through it: not a map of const elements, nor a view of a
/// const tensor, nor a Dense expression without lvalue access.
template <class X>
struct writable_view : std::bool_constant<!std::is_const_v<typename Eigen::internal::traits<X>::Scalar>> {};
template <Eigen::DenseIndex Dim, class X>
struct writable_view<Eigen::TensorChippingOp<Dim, X>>
    : std::bool_constant<!std::is_const_v<X> && writable_view<std::remove_cvref_t<X>>::value> {};
template <class Start, class Sizes, class X>
struct writable_view<Eigen::TensorSlicingOp<Start, Sizes, X>>
    : std::bool_constant<!std::is_const_v<X> && writable_view<std::remove_cvref_t<X>>::value> {};
template <class Strides, class X>
struct writable_view<Eigen::TensorStridingOp<Strides, X>>
    : std::bool_constant<!std::is_const_v<X> && writable_view<std::remove_cvref_t<X>>::value> {};
template <class X>
    requires eigen_dense<X>
struct writable_view<X> : std::bool_constant<(static_cast<unsigned>(X::Flags) & Eigen::LvalueBit) != 0> {};

template <class T, int R, int L>
struct writable_view<packed_map<T, R, L>> : std::bool_constant<!std::is_const_v<T>> {};
template <class P, int O, template <class> class MP>
struct writable_view<Eigen::TensorMap<P, O, MP>>
    : std::bool_constant<!std::is_const_v<P> && !std::is_const_v<typename Eigen::internal::traits<P>::Scalar>> {};

/// Whether an object owns its elements (a Tensor, a Dense Array or Matrix): a const one is read-only.
template <class X>
struct owns_its_elements : std::false_type {};
template <class S, int N, int O, class I>
struct owns_its_elements<Eigen::Tensor<S, N, O, I>> : std::true_type {};
template <class X>
    requires eigen_dense<X>
struct owns_its_elements<X> : std::bool_constant<std::is_base_of_v<Eigen::PlainObjectBase<X>, X>> {};
template <class X>
inline constexpr bool owns_its_elements_v = owns_its_elements<std::remove_cvref_t<X>>::value;

template <class X>
using view_scalar_t = std::remove_const_t<typename Eigen::internal::traits<std::remove_cvref_t<X>>::Scalar>;

/// Whether a view's memory is a packed array (a packed_map, or a chip, slice or stride of one).
template <class X>
struct packed_memory : is_packed_map<X> {};
template <Eigen::DenseIndex Dim, class X>
struct packed_memory<Eigen::TensorChippingOp<Dim, X>> : packed_memory<std::remove_cvref_t<X>> {};
template <class Start, class Sizes, class X>
struct packed_memory<Eigen::TensorSlicingOp<Start, Sizes, X>> : packed_memory<std::remove_cvref_t<X>> {};
template <class Strides, class X>
struct packed_memory<Eigen::TensorStridingOp<Strides, X>> : packed_memory<std::remove_cvref_t<X>> {};
template <class X>
inline constexpr bool packed_memory_v = packed_memory<std::remove_cvref_t<X>>::value;

/// The element type of the view of X (has_view_v): its scalar, or packed_element of it for packed memory.
template <class X>
using view_element_t =
    std::conditional_t<packed_memory_v<X>, packed_element<view_scalar_t<X>>, view_scalar_t<X>>;

/// The strided view of an Eigen object (has_view_v), read-only.
template <class X>
MIXT_ALWAYS_INLINE auto view_of(const X& x) {
    using T = const view_element_t<X>;
    constexpr int R = array_traits<X>::rank;
    if constexpr (is_packed_map_v<X>) {
        strided_view<T, R> v{x.pointer(), {}, {}};
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) v.dims[d] = x.dimensions()[d];
        v.strides = contiguous_strides<R>(v.dims, array_traits<X>::layout == static_cast<int>(Eigen::RowMajor));
        return v;
    } else if constexpr (eigen_dense<X>) {
        if constexpr (R == 1) {
            return strided_view<T, 1>{x.data(), {x.size()}, {x.innerStride()}, X::ColsAtCompileTime == 1};
        } else if constexpr (X::IsRowMajor) {
            return strided_view<T, 2>{x.data(), {x.rows(), x.cols()}, {x.outerStride(), x.innerStride()}};
        } else {
            return strided_view<T, 2>{x.data(), {x.rows(), x.cols()}, {x.innerStride(), x.outerStride()}};
        }
    } else if constexpr (requires { x.offset(); x.expression(); }) { // chip: one dimension fixed
        const auto in = view_of(x.expression());
        const auto dim = static_cast<std::size_t>(x.dim());
        strided_view<T, R> v{in.data + x.offset() * in.strides[dim], {}, {}};
        for (std::size_t d = 0, o = 0; d < in.dims.size(); ++d) {
            if (d == dim) continue;
            v.dims[o] = in.dims[d];
            v.strides[o++] = in.strides[d];
        }
        return v;
    } else if constexpr (requires { x.startIndices(); x.sizes(); x.expression(); }) { // slice
        auto v = view_of(x.expression());
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            v.data += x.startIndices()[d] * v.strides[d];
            v.dims[d] = x.sizes()[d];
        }
        return v;
    } else if constexpr (requires { x.strides(); x.expression(); }) { // stride: every k-th element
        auto v = view_of(x.expression());
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            const index_t k = x.strides()[d];
            v.dims[d] = (v.dims[d] + k - 1) / k;
            v.strides[d] *= k;
        }
        return v;
    } else {
        strided_view<T, R> v{x.data(), {}, {}};
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) v.dims[d] = x.dimensions()[d];
        v.strides = contiguous_strides<R>(v.dims, array_traits<X>::layout == static_cast<int>(Eigen::RowMajor));
        return v;
    }
}

/// The shape of any array operand (a view's, or an Eigen tensor expression's as its evaluator has it).
template <class X>
auto shape_of(const X& x) {
    constexpr int R = array_traits<X>::rank;
    if constexpr (has_view_v<X>) {
        return view_of(x).dims;
    } else {
        shape_t<R> s{};
        if constexpr (requires { x.dimensions(); }) {
            for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) s[d] = x.dimensions()[d];
        } else {
            Eigen::DefaultDevice device;
            Eigen::TensorEvaluator<const X, Eigen::DefaultDevice> ev(x, device);
            for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) s[d] = ev.dimensions()[d];
        }
        return s;
    }
}

/// The strided views of an expression's leaves, in the order of the tree (the order of kernel_args' pointers).
template <class E>
auto leaf_views_of(const E& e) {
    return map_leaves(e, [](const auto& l) { return view_of(l.x); });
}

// --- Broadcasting ---------------------------------------------------------------------------------------------

template <class A, class B>
[[noreturn]] MIXT_COLD void throw_not_broadcastable(const char* what, const A& a, const B& b) {
    throw shape_error(std::string("mixt: ") + what + ": shape mismatch: operands of shapes " + shape_text(a) +
                      " and " + shape_text(b) +
                      " do not broadcast (aligned at the last dimension, sizes must be equal or 1)");
}
template <class A, class B>
[[noreturn]] MIXT_COLD void throw_destination_shape(const char* what, const A& dst, const B& e) {
    throw shape_error(std::string("mixt: ") + what + ": shape mismatch: the destination has shape " +
                      shape_text(dst) + " but the expression has shape " +
                      shape_text(e) + ", which does not broadcast to it (the destination never stretches)");
}

/// Whether X is an Eigen Dense column vector (VectorXf, ArrayXf, `m.col(j)`): the column [n, 1] against
/// operands of rank 2 or more. A row vector (RowVectorXf, `m.row(i)`) is [1, n], NumPy's alignment.
template <class X>
inline constexpr bool dense_column_v = [] {
    if constexpr (eigen_dense<X>)
        return X::IsVectorAtCompileTime && X::ColsAtCompileTime == 1;
    else
        return false;
}();

/// The shape of operand x aligned to rank R >= its rank, as broadcasting sees it: leading dimensions of size 1
/// (NumPy's rule), except a Dense column vector, which is [..., 1, n, 1] (dense_column_v).
template <int R, class X>
shape_t<R> aligned_shape(const X& x) {
    const auto own = shape_of(x);
    constexpr int r = static_cast<int>(std::tuple_size_v<decltype(own)>);
    static_assert(r <= R);
    shape_t<R> s;
    s.fill(1);
    if constexpr (dense_column_v<X> && R >= 2) {
        s[static_cast<std::size_t>(R - 2)] = own[0];
    } else {
        for (int k = 0; k < r; ++k) s[static_cast<std::size_t>(R - r + k)] = own[static_cast<std::size_t>(k)];
    }
    return s;
}

/// Folds `dims` (rank r <= R) into `acc`, NumPy's way; the message shows `shown` for it where given (the
/// operand's shape before aligned_shape).
template <int R, std::size_t r, class Shown = std::array<index_t, r>>
void broadcast_into(shape_t<R>& acc, bool& seen, const std::array<index_t, r>& dims, const char* what,
                    const Shown* shown = nullptr) {
    static_assert(static_cast<int>(r) <= R);
    if (!seen) {
        acc.fill(1);
        seen = true;
    }
    const shape_t<R> before = acc;
    for (std::size_t k = 0; k != r; ++k) {
        index_t& a = acc[static_cast<std::size_t>(R) - r + k];
        const index_t b = dims[k];
        if (a == b || b == 1) continue;
        if (a == 1) {
            a = b;
            continue;
        }
        if (shown)
            throw_not_broadcastable(what, before, *shown); // the operand's own shape, as the user wrote it
        throw_not_broadcastable(what, before, dims);
    }
}

/// The view `v` of an operand of an expression of rank ER, as an operand of shape `to` of rank R >= ER (the
/// destination's): a Dense column vector is a column only where the expression has rank 2 or more; an expression
/// of lower rank than its destination broadcasts to it as NumPy's do (leading dimensions of size 1).
template <int ER, int R, class T, int r>
strided_view<T, R> broadcast_view_from(strided_view<T, r> v, const shape_t<R>& to);

/// The view `v` (of rank r <= R) as an operand of shape `to`: leading dimensions of size 1 added (a Dense
/// column vector's [n] at dimension R - 2, aligned_shape), stride 0 wherever a size 1 stretches. `to` must be
/// v's broadcast (broadcast_shape checked it).
template <int R, class T, int r>
strided_view<T, R> broadcast_view(const strided_view<T, r>& v, const shape_t<R>& to) {
    strided_view<T, R> b{v.data, to, {}};
    if constexpr (r == 1 && R >= 2) {
        if (v.column) {
            b.strides[static_cast<std::size_t>(R - 2)] = v.dims[0] == 1 ? 0 : v.strides[0];
            return b;
        }
    }
    for (int k = 0; k < r; ++k) {
        const auto d = static_cast<std::size_t>(R - r + k);
        b.strides[d] = v.dims[static_cast<std::size_t>(k)] == 1 ? 0 : v.strides[static_cast<std::size_t>(k)];
    }
    return b;
}

template <int ER, int R, class T, int r>
strided_view<T, R> broadcast_view_from(strided_view<T, r> v, const shape_t<R>& to) {
    if constexpr (ER < 2) v.column = false;
    return broadcast_view<R>(v, to);
}

// --- Overlap ----------------------------------------------------------------------------------------------------

/// The bytes [first, last) a view can touch (its bounding interval).
template <class T, int R>
std::pair<std::uintptr_t, std::uintptr_t> byte_extent(const strided_view<T, R>& v) {
    const auto base = reinterpret_cast<std::uintptr_t>(v.data);
    std::intptr_t lo = 0, hi = 0;
    for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
        if (v.dims[d] == 0) return {base, base};
        const std::intptr_t span = static_cast<std::intptr_t>(v.strides[d]) * static_cast<std::intptr_t>(v.dims[d] - 1);
        (span < 0 ? lo : hi) += span;
    }
    const auto size = static_cast<std::intptr_t>(sizeof(T));
    return {static_cast<std::uintptr_t>(static_cast<std::intptr_t>(base) + lo * size),
            static_cast<std::uintptr_t>(static_cast<std::intptr_t>(base) + (hi + 1) * size)};
}
template <class V>
std::pair<std::uintptr_t, std::uintptr_t> packed_byte_extent(const V& v) {
    const auto base = reinterpret_cast<std::uintptr_t>(v.data.bytes);
    index_t lo = 0, hi = 0;
    for (std::size_t d = 0; d != v.dims.size(); ++d) {
        if (v.dims[d] == 0) return {base, base};
        const index_t span = v.strides[d] * (v.dims[d] - 1);
        (span < 0 ? lo : hi) += span;
    }
    const auto per = static_cast<index_t>(decltype(v.data)::per_byte);
    return {static_cast<std::uintptr_t>(static_cast<std::intptr_t>(base) + (v.data.first + lo) / per),
            static_cast<std::uintptr_t>(static_cast<std::intptr_t>(base) + (v.data.first + hi) / per + 1)};
}

/// The same for a view of a packed array: the bytes that hold its first and last elements, and those between.
template <class S, int R>
std::pair<std::uintptr_t, std::uintptr_t> byte_extent(const strided_view<const packed_element<S>, R>& v) {
    return packed_byte_extent(v);
}
template <class S, int R>
std::pair<std::uintptr_t, std::uintptr_t> byte_extent(const strided_view<packed_element<S>, R>& v) {
    return packed_byte_extent(v);
}
/// Whether two views' data start at the same element of the same width (the same view, where their strides
/// agree too): the same address and element size, or the same packed element.
template <class A, class B>
bool same_start(A* a, B* b) {
    return static_cast<const void*>(a) == static_cast<const void*>(b) && sizeof(A) == sizeof(B);
}
template <class S>
bool same_start(const packed_ptr<S>& a, const packed_ptr<S>& b) {
    return a.bytes == b.bytes && a.first == b.first;
}
template <class A, class B>
bool same_start(const A&, const B&) {
    return false; // packed and unpacked memory, or two packed types
}

/// Whether distinct indices of a view name distinct elements (so that writing through it is well defined): its
/// dimensions of more than one element, by increasing stride, each step past the whole extent of the smaller ones.
template <class T, int R>
bool elements_distinct(const strided_view<T, R>& v) {
    std::array<std::pair<index_t, index_t>, static_cast<std::size_t>(R)> by_stride{};
    std::size_t n = 0;
    for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
        if (v.dims[d] == 0) return true;
        if (v.dims[d] > 1) by_stride[n++] = {v.strides[d] < 0 ? -v.strides[d] : v.strides[d], v.dims[d]};
    }
    // An insertion sort of at most R entries (std::sort on so small an array makes GCC 12 warn, wrongly, that
    // its unrolled insertion sort reads past the array: -Warray-bounds in a user's -O2 -Wall build).
    for (std::size_t k = 1; k < n; ++k)
        for (std::size_t j = k; j > 0 && by_stride[j] < by_stride[j - 1]; --j) std::swap(by_stride[j], by_stride[j - 1]);
    index_t reach = 1;
    for (std::size_t k = 0; k < n; ++k) {
        if (by_stride[k].first < reach) return false;
        reach = by_stride[k].first * by_stride[k].second;
    }
    return true;
}

// --- The iteration space ----------------------------------------------------------------------------------------

/// Runs are staged through buffers of this many elements per operand (on the stack of the thread running them).
inline constexpr index_t stage_elements = 4096;
/// An innermost dimension shorter than this is run several rows at a time (when the destination allows).
inline constexpr index_t short_run = 64;

/// The iteration space of a pass over M operands (the destination first): up to R dimensions in the
/// destination's memory order, innermost last, each with every operand's stride; at least one dimension.
template <int R, std::size_t M>
struct iteration_space {
    static constexpr std::size_t max_dims = R > 0 ? static_cast<std::size_t>(R) : 1;
    int rank = 1;
    std::array<index_t, max_dims> dims{};
    std::array<std::array<index_t, max_dims>, M> strides{};

    index_t inner() const { return dims[static_cast<std::size_t>(rank - 1)]; }
    index_t inner_stride(std::size_t k) const { return strides[k][static_cast<std::size_t>(rank - 1)]; }
    /// Whether operand k steps through the whole space as one contiguous run.
    bool flat(std::size_t k) const { return rank == 1 && strides[k][0] == 1; }
};

/// The space of a flat pass of n elements: one dimension, every operand at stride 1.
template <int R, std::size_t M>
iteration_space<R, M> flat_space(index_t n) {
    iteration_space<R, M> s;
    s.dims[0] = n;
    for (auto& t : s.strides) t[0] = 1;
    return s;
}

/// The space of `dims` for operands of strides `strides[k]` (all in logical order): in memory order (row_major:
/// as written; else reversed), dimensions of size 1 dropped, neighbours every operand steps through as one merged.
/// Written into s (a plan's member): a space returned by value was copied into the plan by loads wider than the
/// stores that had just made it, which then wait until those stores are written (no store forwarding).
template <int R, std::size_t M>
void make_space_into(iteration_space<R, M>& s, const shape_t<R>& dims, const std::array<shape_t<R>, M>& strides,
                     bool row_major) {
    s = iteration_space<R, M>{};
    int n = 0;
    for (int k = 0; k < R; ++k) {
        const auto d = static_cast<std::size_t>(row_major ? k : R - 1 - k);
        if (dims[d] == 1) continue;
        if (n > 0) {
            const auto last = static_cast<std::size_t>(n - 1);
            bool merges = true;
            for (std::size_t o = 0; o < M; ++o) merges = merges && s.strides[o][last] == strides[o][d] * dims[d];
            if (merges) {
                s.dims[last] *= dims[d];
                for (std::size_t o = 0; o < M; ++o) s.strides[o][last] = strides[o][d];
                continue;
            }
        }
        const auto at = static_cast<std::size_t>(n++);
        s.dims[at] = dims[d];
        for (std::size_t o = 0; o < M; ++o) s.strides[o][at] = strides[o][d];
    }
    if (n == 0) { // one element
        s.dims[0] = 1;
        for (std::size_t o = 0; o < M; ++o) s.strides[o][0] = 1;
        n = 1;
    }
    s.rank = n;
}
template <int R, std::size_t M>
iteration_space<R, M> make_space(const shape_t<R>& dims, const std::array<shape_t<R>, M>& strides, bool row_major) {
    iteration_space<R, M> s;
    make_space_into(s, dims, strides, row_major);
    return s;
}

/// How a space is cut into runs: `rows` rows of the dimension outside the innermost one per run (more than one
/// when the innermost is short), or pieces of `piece` elements of one row; `items` runs in all.
struct run_plan {
    index_t rows = 1;      // rows of dimension rank - 2 per run (1: a run is a piece of one row)
    index_t piece = 0;     // elements per run when rows == 1
    index_t per_row = 1;   // runs per row when rows == 1
    index_t row_groups = 1; // runs along dimension rank - 2 when rows > 1
    index_t outer = 1;     // positions over the dimensions outside those
    index_t items = 1;
};

} // namespace mixt::detail

#endif // MIXT_EVAL_SPACE_HPP
