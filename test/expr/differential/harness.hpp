#ifndef MIXT_TEST_EXPR_DIFFERENTIAL_HARNESS_HPP
#define MIXT_TEST_EXPR_DIFFERENTIAL_HARNESS_HPP

// What the generated differential cases (gen.py) call: random leaves, and `check`, which evaluates the
// expression with mixt (eval, assign into a pre-sized tensor or map of another dtype, and for some trees the
// lowering to Eigen) and hands the results to `verify` (harness.cpp), where the reference evaluator recomputes
// every element. Only `check` is instantiated per expression; everything else is compiled once.

#include <mixt/mixt.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "expr/reference.hpp"

namespace mixt_test::diff {

/// One generated tree: its number, its text for the reference, the C++ expression (for messages), the node
/// the generator derived, and whether a literal in it is out of range (evaluation must throw).
struct tree_case {
    int id;
    const char* ref;
    const char* expr;
    const char* tag;
    bool overflow;
};

enum flags : unsigned {
    use_map = 1,      ///< assign into a TensorMap over a buffer (else into an Eigen::Tensor)
    use_to_eigen = 2, ///< also evaluate `Eigen::Tensor r = mixt::to_eigen(e)`
    use_strided_dst = 4, ///< assign into every other element (along dimension 0) of a larger tensor
    use_reduce = 8,      ///< also reduce the expression: one reduction over all axes, one over one axis
    reduce_pair_1 = 16,  ///< which two reductions (reduce_pair below): the pair's number in bits 16 and 32
    reduce_pair_2 = 32,
};

/// One reduction of the tree's expression, as mixt computed it.
struct reduction_run {
    std::string how;
    mixt::reduce_kind kind{};
    std::vector<int> axes; ///< the reduced axes (all of them for the first run)
    bool keep = false;
    mixt::dtype result{}, accumulator{};
    bool ran = false;
    std::optional<std::string> overflow, shape_error;
    std::vector<ref::scalar> values;
    std::vector<Eigen::Index> dims;
};

/// The element values of a leaf, for the reference, with its dimensions.
struct leaf_view {
    mixt::dtype type;
    std::vector<ref::scalar> values;
    std::vector<Eigen::Index> dims;
};

/// What one way of evaluating produced: the values, or the overflow_error it threw.
struct run {
    const char* how = "";
    bool ran = false;
    std::vector<ref::scalar> values;
    std::vector<Eigen::Index> dims;
    std::optional<std::string> overflow; ///< the message of mixt::overflow_error
    bool untouched = true;               ///< the destination still holds what it held before
};

struct outcome {
    mixt::dtype value_dtype; ///< mixt's value_t
    mixt::dtype tag;         ///< mixt's tag_t
    mixt::dtype dst_dtype;   ///< the dtype assign wrote into
    bool row_major;          ///< the expression's layout (how the leaves' elements map to the result's)
    run eval, assign, lowered;
};

/// The leaves' shapes broadcast as NumPy's (aligned at their last dimension, size 1 stretching), computed
/// here independently of mixt; throws std::invalid_argument where they do not broadcast.
std::vector<Eigen::Index> broadcast_dims(const std::vector<leaf_view>& leaves);

/// `n` random values of dtype `d`, edge values included (0, -1, min, max, NaN, infinities, -0, subnormals, ...).
std::vector<ref::scalar> random_values(mixt::dtype d, std::size_t n, std::uint64_t seed);

std::uint64_t leaf_seed(int tree, int leaf);

/// Runs the reference on the tree and compares everything; reports failures through GoogleTest.
void verify(const tree_case& c, const std::vector<leaf_view>& leaves, const outcome& out);

/// Reduces the elements mixt::eval gave (checked by verify against the reference) with exact arithmetic (128-bit
/// integers, long double within a stated bound for floats) and compares mixt's reductions with it.
void verify_reductions(const tree_case& c, const outcome& out, const std::vector<reduction_run>& runs);

template <class T>
std::vector<ref::scalar> values_of(const T* p, std::size_t n) {
    std::vector<ref::scalar> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(ref::make<T>(p[i]));
    return v;
}

template <class T>
void fill(T* p, const std::vector<ref::scalar>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) p[i] = std::get<T>(v[i]);
}

template <class T, int Layout, std::size_t R>
Eigen::Tensor<T, static_cast<int>(R), Layout> make_leaf(const std::array<Eigen::Index, R>& dims, int tree, int leaf) {
    Eigen::Tensor<T, static_cast<int>(R), Layout> t(dims);
    fill(t.data(), random_values(mixt::dtype_of_v<T>, static_cast<std::size_t>(t.size()), leaf_seed(tree, leaf)));
    return t;
}

template <class T, int R, int Layout>
leaf_view view(const Eigen::Tensor<T, R, Layout>& t) {
    leaf_view v{mixt::dtype_of_v<T>, values_of(t.data(), static_cast<std::size_t>(t.size())), {}};
    for (int k = 0; k < R; ++k) v.dims.push_back(t.dimension(k));
    return v;
}

/// The values of a leaf that is an Eigen view (`stride`, `slice`), materialized by Eigen itself.
template <class X>
leaf_view view(const X& x) {
    using traits = Eigen::internal::traits<X>;
    using T = std::remove_const_t<typename traits::Scalar>;
    const Eigen::Tensor<T, traits::NumDimensions, traits::Layout> m = x;
    return view(m);
}

template <class Tensor>
std::vector<Eigen::Index> dims_of(const Tensor& t) {
    std::vector<Eigen::Index> d;
    for (int k = 0; k < Tensor::NumDimensions; ++k) d.push_back(t.dimension(k));
    return d;
}

/// Evaluates a reduction of the tree's expression into `r`.
template <class Red>
void run_reduction(reduction_run& r, const Red& red, std::string how, bool keep) {
    using X = std::remove_cvref_t<Red>;
    r.how = std::move(how);
    r.kind = X::kind;
    r.axes.assign(red.axes.begin(), red.axes.end());
    r.keep = keep;
    r.result = X::types.result;
    r.accumulator = X::types.accumulator;
    try {
        const auto t = mixt::eval(red);
        r.ran = true;
        r.values = values_of(t.data(), static_cast<std::size_t>(t.size()));
        r.dims = dims_of(t);
    } catch (const mixt::overflow_error& x) {
        r.overflow = x.what();
    } catch (const mixt::shape_error& x) {
        r.shape_error = x.what();
    }
}

/// Evaluates `e` every way and verifies the results against the reference.
template <class D, unsigned Flags, class E>
void check(const tree_case& c, const E& e, std::initializer_list<leaf_view> leaf_list) {
    using X = std::remove_cvref_t<E>;
    using V = mixt::value_t<E>;
    constexpr int rank = X::rank;
    constexpr int layout = X::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor : Eigen::ColMajor;
    const std::vector<leaf_view> leaves(leaf_list);
    outcome out{mixt::dtype_of_v<V>, mixt::tag_t<E>::value, mixt::dtype_of_v<D>, layout == Eigen::RowMajor, {}, {}, {}};

    const std::vector<Eigen::Index> shape = broadcast_dims(leaves);
    ASSERT_EQ(shape.size(), static_cast<std::size_t>(rank)) << "the leaves' shapes broadcast to another rank";
    std::array<Eigen::Index, rank> dims{};
    for (int k = 0; k < rank; ++k) dims[static_cast<std::size_t>(k)] = shape[static_cast<std::size_t>(k)];
    Eigen::Index size = 1;
    for (const auto d : dims) size *= d;
    const auto n = static_cast<std::size_t>(size);

    out.eval.how = "mixt::eval(e)";
    try {
        const auto r = mixt::eval(e);
        out.eval.ran = true;
        out.eval.values = values_of(r.data(), static_cast<std::size_t>(r.size()));
        out.eval.dims = dims_of(r);
    } catch (const mixt::overflow_error& x) {
        out.eval.overflow = x.what();
    }

    // The destination is pre-sized and holds random values, so that an element left unwritten shows.
    const std::vector<ref::scalar> before = random_values(mixt::dtype_of_v<D>, n, leaf_seed(c.id, 99));
    const auto buffer = std::make_unique<D[]>(n); // not std::vector: vector<bool> has no data()
    fill(buffer.get(), before);
    out.assign.how = (Flags & use_map) != 0          ? "mixt::assign(TensorMap, e)"
                     : (Flags & use_strided_dst) != 0 ? "mixt::assign(big.stride({2, 1, ...}), e)"
                                                      : "mixt::assign(Tensor, e)";
    try {
        if constexpr ((Flags & use_strided_dst) != 0 && rank > 0) {
            // Every other element along dimension 0 of a tensor twice as long there; the others must keep
            // their values.
            std::array<Eigen::Index, rank> big_dims = dims, steps{};
            big_dims[0] *= 2;
            steps.fill(1);
            steps[0] = 2;
            Eigen::Tensor<D, rank, layout> big(big_dims);
            const std::vector<ref::scalar> around =
                random_values(mixt::dtype_of_v<D>, static_cast<std::size_t>(big.size()), leaf_seed(c.id, 98));
            fill(big.data(), around);
            {
                // The elements of the view get `before`, as the other destinations do.
                Eigen::TensorMap<Eigen::Tensor<D, rank, layout>> staged(buffer.get(), dims);
                big.stride(steps) = staged;
            }
            const Eigen::Tensor<D, rank, layout> kept = big;
            // What the view holds after assign (also when it threw), and the elements between it (odd index 0),
            // which must keep their values.
            const auto collect = [&] {
                const Eigen::Tensor<D, rank, layout> written = big.stride(steps);
                out.assign.dims = dims_of(written);
                std::copy(written.data(), written.data() + size, buffer.get());
                std::array<Eigen::Index, rank> offsets{};
                offsets[0] = 1;
                std::array<Eigen::Index, rank> extents = big_dims;
                extents[0] -= 1;
                const Eigen::Tensor<D, rank, layout> now = big.slice(offsets, extents).stride(steps);
                const Eigen::Tensor<D, rank, layout> then = kept.slice(offsets, extents).stride(steps);
                if (std::memcmp(static_cast<const void*>(now.data()), static_cast<const void*>(then.data()),
                                static_cast<std::size_t>(now.size()) * sizeof(D)) != 0)
                    ADD_FAILURE() << "tree " << c.id << ": mixt::assign into a strided view wrote between its elements";
            };
            auto view_of_big = big.stride(steps);
            try {
                mixt::assign(view_of_big, e);
            } catch (...) {
                collect();
                throw;
            }
            collect();
        } else if constexpr ((Flags & use_map) != 0) {
            Eigen::TensorMap<Eigen::Tensor<D, rank, layout>> dst(buffer.get(), dims);
            mixt::assign(dst, e);
            out.assign.dims = dims_of(dst);
        } else {
            Eigen::Tensor<D, rank, layout> dst(dims);
            fill(dst.data(), before);
            mixt::assign(dst, e);
            out.assign.dims = dims_of(dst);
            std::copy(dst.data(), dst.data() + size, buffer.get());
        }
        out.assign.ran = true;
    } catch (const mixt::overflow_error& x) {
        out.assign.overflow = x.what();
    }
    out.assign.values = values_of(buffer.get(), n);
    out.assign.untouched = true;
    for (std::size_t i = 0; i < n && out.assign.untouched; ++i)
        out.assign.untouched = ref::dtype_of(before[i]) == ref::dtype_of(out.assign.values[i]) &&
                               std::memcmp(&buffer[i], &std::get<D>(before[i]), sizeof(D)) == 0;

    if constexpr ((Flags & use_to_eigen) != 0) {
        out.lowered.how = "Eigen::Tensor r = mixt::to_eigen(e)";
        try {
            const Eigen::Tensor<V, rank, layout> r = mixt::to_eigen(e);
            out.lowered.ran = true;
            out.lowered.values = values_of(r.data(), static_cast<std::size_t>(r.size()));
            out.lowered.dims = dims_of(r);
        } catch (const mixt::overflow_error& x) {
            out.lowered.overflow = x.what();
        }
    }
    verify(c, leaves, out);

    if constexpr ((Flags & use_reduce) != 0 && rank > 0) {
        // Two reductions, chosen by the pair's number: over all axes, and over one axis (the tree's number
        // modulo the rank), with keepdims for some.
        constexpr unsigned pair = (Flags / reduce_pair_1) & 3u;
        constexpr bool complex = mixt::kind(mixt::dtype_of_v<V>) == mixt::dtype_kind::complex;
        const int axis = c.id % rank;
        std::vector<reduction_run> runs(2);
        if constexpr (pair == 0) {
            run_reduction(runs[0], mixt::sum(e), "mixt::sum(e)", false);
            run_reduction(runs[1], mixt::max(e, axis, mixt::keepdims), "mixt::max(e, axis, keepdims)", true);
        } else if constexpr (pair == 1) {
            run_reduction(runs[0], mixt::mean(e), "mixt::mean(e)", false);
            if constexpr (complex)
                run_reduction(runs[1], mixt::min(e, axis), "mixt::min(e, axis)", false);
            else
                run_reduction(runs[1], mixt::argmax(e, axis), "mixt::argmax(e, axis)", false);
        } else if constexpr (pair == 2) {
            run_reduction(runs[0], mixt::prod(e), "mixt::prod(e)", false);
            if constexpr (complex)
                run_reduction(runs[1], mixt::sum(e, axis), "mixt::sum(e, axis)", false);
            else
                run_reduction(runs[1], mixt::argmin(e, axis, mixt::keepdims), "mixt::argmin(e, axis, keepdims)", true);
        } else {
            run_reduction(runs[0], mixt::any(e), "mixt::any(e)", false);
            run_reduction(runs[1], mixt::all(e, axis, mixt::keepdims), "mixt::all(e, axis, keepdims)", true);
        }
        verify_reductions(c, out, runs);
    }
}

} // namespace mixt_test::diff

#endif // MIXT_TEST_EXPR_DIFFERENTIAL_HARNESS_HPP
