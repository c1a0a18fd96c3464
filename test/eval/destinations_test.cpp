// Destinations and leaves of every kind (mixt/eval/check.hpp, mixt/eval/assign.hpp): the result is always as if
// every operand had been read before the first write, whatever the destination (a tensor, a map, a chip, a
// slice, a stride, a reshape, a reverse, a shuffle, a Dense object) and whatever the leaves (arrays in memory or
// Eigen expressions: broadcast, reshape, reverse, shuffle, stride, arithmetic); an expression broadcasts to its
// destination (NumPy's `out=`), which never stretches; Dense vectors keep their orientation; results of rank 0
// and 1 have Eigen's default layout. Run under ASan and UBSan in CI (the asan configuration).

#include <mixt/mixt.hpp>

#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using index_t = Eigen::Index;
using ::testing::HasSubstr;

Eigen::Tensor<float, 1> iota(index_t n, float first = 1.f) {
    Eigen::Tensor<float, 1> t(n);
    for (index_t i = 0; i < n; ++i) t(i) = first + static_cast<float>(i);
    return t;
}

// --- The client's reproducers ---------------------------------------------------------------------------------

TEST(destinations, a_reverse_of_an_operand) {
    Eigen::Tensor<float, 1> g = iota(5);
    const Eigen::array<bool, 1> rv{true};
    mixt::assign(g.reverse(rv), mixt::lazy(g) * 2);
    const float want[] = {10, 8, 6, 4, 2};
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(g(i), want[i]) << i;
}

TEST(destinations, a_shuffle_of_an_operand_is_a_transpose) {
    Eigen::Tensor<float, 2> t(3, 3);
    for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(i);
    const Eigen::Tensor<float, 2> before = t;
    mixt::assign(t.shuffle(Eigen::array<int, 2>{1, 0}), mixt::lazy(t) + 0);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 3; ++j) EXPECT_EQ(t(i, j), before(j, i)) << i << ", " << j;
}

TEST(destinations, a_broadcast_leaf) {
    // A per-channel normalize: x [4, 3] minus its channel means [1, 3] broadcast by Eigen.
    Eigen::Tensor<float, 2> x(4, 3);
    for (index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i * i % 11);
    Eigen::Tensor<float, 2> mean(1, 3);
    mean.setValues({{0.5f, 1.5f, 2.5f}});
    const Eigen::array<index_t, 2> by{4, 1};
    const Eigen::Tensor<float, 2> r = mixt::eval(mixt::lazy(x) - mean.broadcast(by));
    const Eigen::Tensor<float, 2> r2 = mixt::eval(mixt::lazy(mean.broadcast(by)) * 2 + x);
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 3; ++j) {
            EXPECT_EQ(r(i, j), x(i, j) - mean(0, j));
            EXPECT_EQ(r2(i, j), mean(0, j) * 2 + x(i, j));
        }
}

// --- Leaves of every kind the README promises ------------------------------------------------------------------

TEST(destinations, eigen_expression_leaves_of_every_kind) {
    Eigen::Tensor<float, 2> t(4, 6);
    for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(i) - 7.f;
    const Eigen::Tensor<std::int8_t, 2> s = t.cast<std::int8_t>();
    auto check = [&](const auto& leaf_expr) {
        const Eigen::Tensor<float, 2> plain = leaf_expr; // Eigen evaluates the leaf
        const Eigen::Tensor<float, 2> got = mixt::eval(mixt::lazy(leaf_expr) * s.slice(Eigen::array<index_t, 2>{0, 0},
                                                                                        Eigen::array<index_t, 2>{plain.dimension(0), plain.dimension(1)}));
        for (index_t i = 0; i < plain.dimension(0); ++i)
            for (index_t j = 0; j < plain.dimension(1); ++j)
                EXPECT_EQ(got(i, j), plain(i, j) * static_cast<float>(s(i, j))) << i << ", " << j;
    };
    check(t.reshape(Eigen::array<index_t, 2>{6, 4}).reshape(Eigen::array<index_t, 2>{4, 6}));
    check(t.reverse(Eigen::array<bool, 2>{true, false}));
    check(t.shuffle(Eigen::array<int, 2>{0, 1}));
    check(t.stride(Eigen::array<index_t, 2>{2, 2}));
    check(t * 2.f + 1.f);
    check(t.slice(Eigen::array<index_t, 2>{0, 0}, Eigen::array<index_t, 2>{1, 6}).broadcast(Eigen::array<index_t, 2>{4, 1}));
}

// --- Every kind of destination, overlapping its operands ------------------------------------------------------

TEST(destinations, views_that_are_the_very_same_run_in_place) {
    Eigen::Tensor<float, 2> a(5, 7);
    a.setConstant(2.f);
    mixt::assign(a.chip(1, 0), mixt::lazy(a.chip(1, 0)) * 3);
    mixt::assign(a.slice(Eigen::array<index_t, 2>{2, 1}, Eigen::array<index_t, 2>{2, 3}),
                 mixt::lazy(a.slice(Eigen::array<index_t, 2>{2, 1}, Eigen::array<index_t, 2>{2, 3})) + 1);
    EXPECT_EQ(a(1, 4), 6.f);
    EXPECT_EQ(a(2, 1), 3.f);
    EXPECT_EQ(a(3, 3), 3.f);
    EXPECT_EQ(a(3, 4), 2.f);
}

TEST(destinations, views_that_partially_overlap_throw_before_writing) {
    Eigen::Tensor<float, 1> g = iota(8);
    const Eigen::Tensor<float, 1> before = g;
    Eigen::TensorMap<Eigen::Tensor<float, 1>> shifted(g.data() + 1, 7);
    Eigen::TensorMap<Eigen::Tensor<float, 1>> head(g.data(), 7);
    EXPECT_THROW(mixt::assign(shifted, mixt::lazy(head) * 2), mixt::aliasing_error);
    EXPECT_THROW(mixt::assign(g.stride(Eigen::array<index_t, 1>{2}), mixt::lazy(g.slice(Eigen::array<index_t, 1>{1}, Eigen::array<index_t, 1>{4})) * 2),
                 mixt::aliasing_error);
    for (index_t i = 0; i < 8; ++i) EXPECT_EQ(g(i), before(i));
}

TEST(destinations, without_a_view_over_an_operand_go_through_a_temporary) {
    // reverse of a 2-d tensor over the same tensor, on either side.
    Eigen::Tensor<float, 2, Eigen::RowMajor> t(3, 4);
    for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(i);
    const Eigen::Tensor<float, 2, Eigen::RowMajor> before = t;
    const Eigen::array<bool, 2> flip{true, true};
    mixt::assign(t.reverse(flip), mixt::lazy(t) - 1);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 4; ++j) EXPECT_EQ(t(2 - i, 3 - j), before(i, j) - 1);
    // An Eigen expression leaf over the destination's memory, the destination a plain tensor.
    Eigen::Tensor<float, 1> g = iota(5);
    mixt::assign(g, mixt::lazy(g.reverse(Eigen::array<bool, 1>{true})) * 2);
    const float want[] = {10, 8, 6, 4, 2};
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(g(i), want[i]) << i;
    // ... and a destination view (a chip) under a shuffle leaf of its own tensor.
    Eigen::Tensor<float, 2> sq(3, 3);
    for (index_t i = 0; i < sq.size(); ++i) sq.data()[i] = static_cast<float>(i);
    const Eigen::Tensor<float, 2> sq0 = sq;
    mixt::assign(sq, mixt::lazy(sq.shuffle(Eigen::array<int, 2>{1, 0})) + 0);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 3; ++j) EXPECT_EQ(sq(i, j), sq0(j, i));
    // A shuffle destination over another tensor: written directly, the same values.
    Eigen::Tensor<float, 2> other(3, 3);
    mixt::assign(other.shuffle(Eigen::array<int, 2>{1, 0}), mixt::lazy(sq0) * 1);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 3; ++j) EXPECT_EQ(other(i, j), sq0(j, i));
    // A reshape destination over its operand keeps the view checks (its evaluator has the memory).
    Eigen::Tensor<float, 2> r(2, 3);
    r.setConstant(4.f);
    mixt::assign(r.reshape(Eigen::array<index_t, 1>{6}), mixt::lazy(r.reshape(Eigen::array<index_t, 1>{6})) * 0.5f);
    EXPECT_EQ(r(1, 2), 2.f);
}

TEST(destinations, errors_leave_a_destination_without_a_view_untouched) {
    Eigen::Tensor<std::uint8_t, 1> g(5);
    g.setConstant(7);
    const Eigen::array<bool, 1> rv{true};
    EXPECT_THROW(mixt::assign(g.reverse(rv), mixt::lazy(g) + 300), mixt::overflow_error);
    Eigen::Tensor<std::uint8_t, 1> six(6);
    EXPECT_THROW(mixt::assign(g.reverse(rv), mixt::lazy(six) + 1), mixt::shape_error);
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(g(i), 7);
}

// --- An expression broadcasts to its destination ---------------------------------------------------------------

TEST(destinations, assign_broadcasts_the_expression_into_slices_and_views) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> t(4, 3);
    t.setConstant(-1.f);
    Eigen::Tensor<float, 1> vec3(3);
    vec3.setValues({2.f, 4.f, 6.f});
    // A rank-1 expression into a [2, 3] slice of t: every row of the slice, no other row.
    mixt::assign(t.slice(Eigen::array<index_t, 2>{1, 0}, Eigen::array<index_t, 2>{2, 3}), mixt::lazy(vec3) * 0.5f);
    for (index_t j = 0; j < 3; ++j) {
        EXPECT_EQ(t(0, j), -1.f);
        EXPECT_EQ(t(1, j), vec3(j) * 0.5f);
        EXPECT_EQ(t(2, j), vec3(j) * 0.5f);
        EXPECT_EQ(t(3, j), -1.f);
    }
    // [1, 3] into [4, 3], and a column [4, 1] into the whole tensor.
    Eigen::Tensor<float, 2, Eigen::RowMajor> row(1, 3), col(4, 1);
    row.setValues({{1.f, 2.f, 3.f}});
    col.setValues({{10.f}, {20.f}, {30.f}, {40.f}});
    mixt::assign(t, mixt::lazy(row) + 1);
    EXPECT_EQ(t(3, 2), 4.f);
    mixt::assign(t, mixt::lazy(col) * 2);
    EXPECT_EQ(t(3, 2), 80.f);
    EXPECT_EQ(t(0, 1), 20.f);
    // A literal-free rank-0 expression fills everything.
    Eigen::Tensor<float, 0> zero;
    zero() = 5.f;
    mixt::assign(t, mixt::lazy(zero) + 0.5f);
    EXPECT_EQ(t(2, 1), 5.5f);
    // An Eigen expression leaf (the lowering) broadcast into a higher rank.
    mixt::assign(t, mixt::lazy(vec3 * 2.f) + 1);
    EXPECT_EQ(t(3, 2), 13.f);
    // A reduction of rank 1 broadcast into rank 2: each row the sums.
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(3, 5);
    for (index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
    Eigen::Tensor<float, 2, Eigen::RowMajor> sums(2, 5);
    mixt::assign(sums, mixt::sum(mixt::lazy(x), 0));
    for (index_t j = 0; j < 5; ++j) {
        EXPECT_EQ(sums(0, j), x(0, j) + x(1, j) + x(2, j));
        EXPECT_EQ(sums(1, j), sums(0, j));
    }
    Eigen::Tensor<float, 2, Eigen::RowMajor> sums_kept(2, 5);
    mixt::assign(sums_kept, mixt::sum(mixt::lazy(x), {0}, mixt::keepdims));
    EXPECT_EQ(sums_kept(1, 4), sums(1, 4));
    // A reduction over all axes (rank 0) broadcast into rank 2: every element the total.
    Eigen::Tensor<float, 2, Eigen::RowMajor> totals(2, 3);
    mixt::assign(totals, mixt::sum(mixt::lazy(x)));
    for (index_t i = 0; i < totals.size(); ++i) EXPECT_EQ(totals.data()[i], 105.f) << i;
}

TEST(destinations, the_destination_never_stretches) {
    Eigen::Tensor<float, 2> one_row(1, 3);
    one_row.setConstant(9.f);
    Eigen::Tensor<float, 2> two_rows(2, 3);
    two_rows.setConstant(1.f);
    try {
        mixt::assign(one_row, mixt::lazy(two_rows) * 2);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("the destination has shape [1, 3] but the expression has shape [2, 3], which "
                                        "does not broadcast to it"));
    }
    Eigen::Tensor<float, 1> four(4);
    EXPECT_THROW(mixt::assign(two_rows, mixt::lazy(four) + 1), mixt::shape_error);
    for (index_t j = 0; j < 3; ++j) EXPECT_EQ(one_row(0, j), 9.f);
    EXPECT_EQ(two_rows(1, 2), 1.f);
}

// --- Dense vectors keep their orientation ----------------------------------------------------------------------

TEST(destinations, a_column_vector_is_a_column_and_a_row_vector_a_row) {
    Eigen::MatrixXf m(5, 7);
    for (index_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(i);
    Eigen::VectorXf v(5);
    Eigen::RowVectorXf w(7);
    for (index_t i = 0; i < 5; ++i) v(i) = 100.f * static_cast<float>(i + 1);
    for (index_t j = 0; j < 7; ++j) w(j) = 1000.f * static_cast<float>(j + 1);
    const auto by_column = mixt::eval(mixt::lazy(m) + v);
    const auto by_row = mixt::eval(mixt::lazy(m) + w);
    ASSERT_EQ(by_column.rows(), 5);
    ASSERT_EQ(by_column.cols(), 7);
    for (index_t i = 0; i < 5; ++i)
        for (index_t j = 0; j < 7; ++j) {
            EXPECT_EQ(by_column(i, j), m(i, j) + v(i));
            EXPECT_EQ(by_row(i, j), m(i, j) + w(j));
        }
    // Without an operand of rank 2, vectors are rank 1 and NumPy's rule holds: a column and a row of different
    // lengths do not broadcast, in eval and in assign alike; with a rank-2 operand they make the outer sum.
    EXPECT_THROW((void)mixt::eval(mixt::lazy(v) + w), mixt::shape_error);
    Eigen::MatrixXf into(5, 7);
    EXPECT_THROW(mixt::assign(into, mixt::lazy(v) + w), mixt::shape_error);
    const auto outer = mixt::eval(mixt::lazy(m) * 0 + v + w);
    for (index_t i = 0; i < 5; ++i)
        for (index_t j = 0; j < 7; ++j) EXPECT_EQ(outer(i, j), v(i) + w(j));
    // A column and a row of one length: rank 1, element by element; assign(dst, e) is assign(dst, eval(e)).
    Eigen::RowVectorXf w5 = w.head(5);
    Eigen::MatrixXf sq5(4, 5), sq5_eval(4, 5);
    mixt::assign(sq5, mixt::lazy(v) + w5);
    mixt::assign(sq5_eval, mixt::lazy(mixt::eval(mixt::lazy(v) + w5)) + 0);
    for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 5; ++j) {
            EXPECT_EQ(sq5(i, j), v(j) + w5(j));
            EXPECT_EQ(sq5_eval(i, j), sq5(i, j));
        }
    // On a square matrix the column vector still adds along the columns (row i gets v(i)).
    Eigen::MatrixXf sq = Eigen::MatrixXf::Zero(5, 5);
    const auto sq_col = mixt::eval(mixt::lazy(sq) + v);
    const auto sq_blocks = mixt::eval(mixt::lazy(sq) + sq.col(2).array() + 1);
    for (index_t i = 0; i < 5; ++i)
        for (index_t j = 0; j < 5; ++j) {
            EXPECT_EQ(sq_col(i, j), v(i));
            EXPECT_EQ(sq_blocks(i, j), 1.f);
        }
    // Vectors of one orientation are rank 1; eval keeps their orientation.
    const auto alone = mixt::eval(mixt::lazy(v) * 2);
    static_assert(std::is_same_v<std::remove_const_t<decltype(alone)>, Eigen::ArrayXf>);
    EXPECT_EQ(alone(4), 1000.f);
    const auto row_alone = mixt::eval(mixt::lazy(w) * 2);
    static_assert(std::is_same_v<std::remove_const_t<decltype(row_alone)>, Eigen::Array<float, 1, Eigen::Dynamic>>);
    EXPECT_EQ(row_alone(6), 14000.f);
    // A rank-1 expression into a matrix broadcasts as NumPy's do, as the row [1, n], whatever its vectors'
    // orientation: assign(dst, e) is assign(dst, eval(e)).
    Eigen::MatrixXf dst(3, 5);
    mixt::assign(dst, mixt::lazy(v) + 0);
    for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 5; ++j) EXPECT_EQ(dst(i, j), v(j));
    Eigen::MatrixXf five_by_three(5, 3);
    EXPECT_THROW(mixt::assign(five_by_three, mixt::lazy(v) + 0), mixt::shape_error);
    // A mismatch names the column.
    Eigen::VectorXf v7(7);
    try {
        mixt::assign(into, mixt::lazy(m) + v7);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("operands of shapes [5, 7] and [7, 1]"));
    }
}

// --- Results of rank 0 and 1 have Eigen's default layout --------------------------------------------------------

TEST(destinations, rank_zero_and_one_results_have_the_default_layout) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(3, 4);
    for (index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 5) % 12);
    Eigen::Tensor<std::int64_t, 0> r = mixt::eval(mixt::argmax(mixt::lazy(x)));
    EXPECT_EQ(r(), 7); // 35 % 12 = 11 at i = 7
    Eigen::Tensor<float, 1> rows = mixt::eval(mixt::sum(mixt::lazy(x), 1));
    Eigen::Tensor<float, 0> total = mixt::eval(mixt::sum(mixt::lazy(x)));
    EXPECT_EQ(rows(0), x(0, 0) + x(0, 1) + x(0, 2) + x(0, 3));
    EXPECT_EQ(total(), 66.f);
    Eigen::Tensor<float, 1, Eigen::RowMajor> v(3);
    v.setConstant(2.f);
    Eigen::Tensor<float, 1> doubled = mixt::eval(mixt::lazy(v) * 2);
    EXPECT_EQ(doubled(2), 4.f);
    // Rank 2 keeps the operands' layout.
    static_assert(std::is_same_v<decltype(mixt::eval(mixt::lazy(x) * 2)), Eigen::Tensor<float, 2, Eigen::RowMajor>>);
}

} // namespace
