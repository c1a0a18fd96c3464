// mixt/eval/space.hpp: NumPy's broadcasting of shapes, the strided views of tensors, tensor views and Dense
// objects, the overlap helpers, and the iteration space (dimensions in memory order, merged where every
// operand allows).
#include <mixt/mixt.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

namespace {

using mixt::detail::index_t;
using S2 = std::array<index_t, 2>;
using ::testing::HasSubstr;

template <class E>
std::string shape_error_of(const E& e) {
    try {
        (void)mixt::detail::broadcast_shape(e, "eval");
    } catch (const mixt::shape_error& x) {
        return x.what();
    }
    return "no exception";
}

TEST(space, broadcast_shapes_follow_numpy) {
    Eigen::Tensor<float, 3> a(2, 1, 4);
    Eigen::Tensor<float, 2> b(3, 1);
    Eigen::Tensor<float, 1> c(4);
    Eigen::Tensor<float, 0> s;
    a.setZero();
    b.setZero();
    c.setZero();
    s.setZero();
    // Aligned at the last dimension; size 1 stretches; missing leading dimensions are 1.
    EXPECT_EQ(mixt::detail::broadcast_shape(mixt::lazy(a) + b, "eval"), (std::array<index_t, 3>{2, 3, 4}));
    EXPECT_EQ(mixt::detail::broadcast_shape(mixt::lazy(b) * c + s, "eval"), (std::array<index_t, 2>{3, 4}));
    EXPECT_EQ(mixt::detail::broadcast_shape(mixt::lazy(s) + 1, "eval"), (std::array<index_t, 0>{}));
    // A size-0 dimension broadcasts with 1 (and stays 0).
    Eigen::Tensor<float, 1> empty(0);
    EXPECT_EQ(mixt::detail::broadcast_shape(mixt::lazy(b) + empty, "eval"), (std::array<index_t, 2>{3, 0}));
    // Sizes that differ and are not 1: both shapes named.
    Eigen::Tensor<float, 1> five(5);
    five.setZero();
    const std::string m = shape_error_of(mixt::lazy(a) + five);
    EXPECT_THAT(m, HasSubstr("mixt: eval: shape mismatch"));
    EXPECT_THAT(m, HasSubstr("[2, 1, 4]"));
    EXPECT_THAT(m, HasSubstr("[5]"));
    // The error names the shape folded so far (b and c broadcast to [3, 4]) and the operand that does not fit.
    Eigen::Tensor<float, 2> d(2, 4);
    EXPECT_THAT(shape_error_of(mixt::lazy(b) + c + d), HasSubstr("[3, 4] and [2, 4]"));
}

TEST(space, views_of_tensors_and_their_views) {
    Eigen::Tensor<float, 3> t(4, 5, 6); // column-major: strides 1, 4, 20
    const auto v = mixt::detail::view_of(t);
    EXPECT_EQ(v.data, t.data());
    EXPECT_EQ(v.strides, (std::array<index_t, 3>{1, 4, 20}));
    Eigen::Tensor<float, 3, Eigen::RowMajor> r(4, 5, 6); // row-major: 30, 6, 1
    EXPECT_EQ(mixt::detail::view_of(r).strides, (std::array<index_t, 3>{30, 6, 1}));
    // chip(2, 1): dimension 1 fixed at 2.
    const auto c = mixt::detail::view_of(t.chip(2, 1));
    EXPECT_EQ(c.data, t.data() + 8);
    EXPECT_EQ(c.dims, (std::array<index_t, 2>{4, 6}));
    EXPECT_EQ(c.strides, (std::array<index_t, 2>{1, 20}));
    // slice, then stride, then chip: views compose.
    const Eigen::array<index_t, 3> off{1, 2, 3}, ext{3, 3, 2};
    const Eigen::array<index_t, 3> step{2, 1, 1};
    const auto s = mixt::detail::view_of(t.slice(off, ext).stride(step).chip(1, 2));
    EXPECT_EQ(s.data, t.data() + 1 + 2 * 4 + 4 * 20);
    EXPECT_EQ(s.dims, (std::array<index_t, 2>{2, 3}));
    EXPECT_EQ(s.strides, (std::array<index_t, 2>{2, 4}));
    for (index_t i = 0; i < 2; ++i)
        for (index_t j = 0; j < 3; ++j) EXPECT_EQ(&t(1 + 2 * i, 2 + j, 4), s.data + i * s.strides[0] + j * s.strides[1]);
}

TEST(space, views_of_dense_objects) {
    Eigen::MatrixXf m(6, 5); // column-major, outer stride 6
    const auto v = mixt::detail::view_of(m.block(1, 2, 3, 2));
    EXPECT_EQ(v.data, &m(1, 2));
    EXPECT_EQ(v.dims, (std::array<index_t, 2>{3, 2}));
    EXPECT_EQ(v.strides, (std::array<index_t, 2>{1, 6}));
    // A row of a column-major matrix is a vector whose elements lie 6 apart; a column is contiguous.
    const auto row = mixt::detail::view_of(m.row(4));
    EXPECT_EQ(row.data, &m(4, 0));
    EXPECT_EQ(row.dims, (std::array<index_t, 1>{5}));
    EXPECT_EQ(row.strides, (std::array<index_t, 1>{6}));
    EXPECT_EQ(mixt::detail::view_of(m.col(3)).strides, (std::array<index_t, 1>{1}));
    // Row-major, and a map with an inner and outer stride.
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm(3, 4);
    EXPECT_EQ(mixt::detail::view_of(rm).strides, (std::array<index_t, 2>{4, 1}));
    float buffer[64] = {};
    Eigen::Map<Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>> map(buffer, 3, 4,
                                                                                      Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(10, 2));
    EXPECT_EQ(mixt::detail::view_of(map).strides, (std::array<index_t, 2>{2, 10}));
    EXPECT_EQ(mixt::detail::view_of(map).dims, (std::array<index_t, 2>{3, 4}));
    // Ranks and layouts of Dense leaves.
    static_assert(decltype(mixt::lazy(m))::rank == 2 && decltype(mixt::lazy(m))::layout == Eigen::ColMajor);
    static_assert(decltype(mixt::lazy(rm))::layout == Eigen::RowMajor);
    static_assert(decltype(mixt::lazy(m.row(1)))::rank == 1 && decltype(mixt::lazy(m.col(1)))::rank == 1);
    static_assert(decltype(mixt::lazy(m.block(0, 0, 1, 3)))::rank == 2); // not a vector at compile time
}

TEST(space, overlap_helpers) {
    float buffer[100] = {};
    using view2 = mixt::detail::strided_view<float, 2>;
    const view2 rows{buffer, {3, 4}, {10, 1}};
    EXPECT_EQ(mixt::detail::byte_extent(rows).first, reinterpret_cast<std::uintptr_t>(buffer));
    EXPECT_EQ(mixt::detail::byte_extent(rows).second, reinterpret_cast<std::uintptr_t>(buffer + 24));
    EXPECT_TRUE(mixt::detail::elements_distinct(rows));
    EXPECT_FALSE(mixt::detail::elements_distinct(view2{buffer, {3, 4}, {2, 1}})); // rows overlap
    EXPECT_FALSE(mixt::detail::elements_distinct(view2{buffer, {3, 4}, {0, 1}})); // a broadcast destination
    EXPECT_TRUE(mixt::detail::elements_distinct(view2{buffer, {1, 4}, {0, 1}}));  // size 1: nothing repeats
    EXPECT_TRUE(mixt::detail::elements_distinct(view2{buffer, {0, 4}, {0, 0}}));  // empty
}

TEST(space, dimensions_merge_where_every_operand_allows) {
    using mixt::detail::make_space;
    // [4, 5, 6] row-major, contiguous destination and operand: one dimension of 120.
    const std::array<index_t, 3> dims{4, 5, 6};
    const std::array<index_t, 3> contiguous{30, 6, 1};
    auto s = make_space<3, 2>(dims, {contiguous, contiguous}, true);
    EXPECT_EQ(s.rank, 1);
    EXPECT_EQ(s.dims[0], 120);
    EXPECT_TRUE(s.flat(0) && s.flat(1));
    // The same with an operand broadcast along the first dimension: [4, 30], its strides 0 and 1.
    s = make_space<3, 2>(dims, {contiguous, {0, 6, 1}}, true);
    EXPECT_EQ(s.rank, 2);
    EXPECT_EQ(s.dims[0], 4);
    EXPECT_EQ(s.dims[1], 30);
    EXPECT_EQ(s.strides[1][0], 0);
    EXPECT_EQ(s.strides[1][1], 1);
    // Column-major order: the first dimension is innermost, so the space is reversed.
    const std::array<index_t, 3> col{1, 4, 20};
    s = make_space<3, 2>(dims, {col, {1, 0, 0}}, false);
    EXPECT_EQ(s.rank, 2);
    EXPECT_EQ(s.dims[0], 30);
    EXPECT_EQ(s.dims[1], 4);
    EXPECT_EQ(s.inner_stride(1), 1);
    // Size-1 dimensions drop out; a single element is a space of one.
    s = make_space<3, 2>({1, 1, 1}, {contiguous, {0, 0, 0}}, true);
    EXPECT_EQ(s.rank, 1);
    EXPECT_EQ(s.dims[0], 1);
}

TEST(space, runs_span_rows_of_a_short_innermost_dimension) {
    using mixt::detail::make_space;
    // A channel-last image [10000, 3] with a [3] vector: runs of many rows (whole batches: a multiple of 64
    // elements), the vector staged.
    const auto s = make_space<2, 3>({10000, 3}, std::array<S2, 3>{S2{3, 1}, S2{3, 1}, S2{0, 1}}, true);
    const auto runs = mixt::detail::plan_runs(s);
    EXPECT_GT(runs.plan.rows, 1);
    EXPECT_LE(runs.plan.rows * 3, mixt::detail::stage_elements);
    EXPECT_EQ(runs.plan.rows * 3 % 64, 0);
    EXPECT_EQ(runs.plan.items, (10000 + runs.plan.rows - 1) / runs.plan.rows);
    EXPECT_GT(runs.plan.items, 1);
    EXPECT_TRUE(runs.direct[0] && runs.direct[1]);
    EXPECT_FALSE(runs.direct[2]);
    // A long row with a value broadcast along it: pieces of a stage.
    const auto t = make_space<2, 2>({3, 5000}, std::array<S2, 2>{S2{5000, 1}, S2{1, 0}}, true);
    const auto long_runs = mixt::detail::plan_runs(t);
    EXPECT_EQ(long_runs.plan.rows, 1);
    EXPECT_EQ(long_runs.plan.piece, mixt::detail::stage_elements);
    EXPECT_EQ(long_runs.plan.items, 3 * ((5000 + mixt::detail::stage_elements - 1) / mixt::detail::stage_elements));
}

} // namespace
