// mixt/expr/expression.hpp: what a lazy expression holds and what it is. Leaves over every kind of Eigen
// operand (Tensor, TensorMap, TensorRef, a tensor expression such as `a * a` or `a.slice(...)`), ranks 0..4
// in both layouts; lvalues held by reference (later changes are seen), rvalues moved in (a temporary
// outlives the full-expression that made it); the static facts every node carries (tag, value_type, policy,
// rank, layout); weak literals and strong scalars.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/expression.hpp>
#include <mixt/expr/operators.hpp>

#include <array>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>

namespace {

namespace dt = mixt::dtypes;
using jax = mixt::policy::jax;

template <int N>
Eigen::DSizes<Eigen::Index, N> test_dims() {
    constexpr std::array<Eigen::Index, 4> all{3, 5, 2, 3}; // 90 elements at rank 4, never a multiple of 8
    Eigen::DSizes<Eigen::Index, N> d;
    for (int i = 0; i < N; ++i) d[i] = all[static_cast<std::size_t>(i)];
    return d;
}

template <class T, int N, int L>
Eigen::Tensor<T, N, L> iota(int start) {
    Eigen::Tensor<T, N, L> t(test_dims<N>());
    for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(static_cast<int>(i % 50) + start);
    return t;
}

// lazy(i8 operand) * f32 tensor + 2: checks every element against the same computation on the flat arrays.
template <int N, int L, class Operand>
void check_leaf(const Operand& operand, const Eigen::Tensor<std::int8_t, N, L>& values) {
    const auto b = iota<float, N, L>(-7);
    const auto e = mixt::lazy(operand) * b + 2;
    static_assert(std::is_same_v<mixt::value_t<decltype(e)>, float>);
    static_assert(decltype(e)::rank == N && decltype(e)::layout == L);
    const Eigen::Tensor<float, N, L> r = mixt::eval(e);
    for (int i = 0; i < N; ++i) ASSERT_EQ(r.dimension(i), values.dimension(i));
    ASSERT_EQ(r.size(), values.size());
    for (Eigen::Index i = 0; i < r.size(); ++i)
        ASSERT_EQ(r.data()[i], static_cast<float>(values.data()[i]) * b.data()[i] + 2.0f) << "element " << i;
}

template <int N, int L>
void check_all_leaf_kinds() {
    SCOPED_TRACE("rank " + std::to_string(N) + (L == Eigen::RowMajor ? " row-major" : " column-major"));
    Eigen::Tensor<std::int8_t, N, L> a = iota<std::int8_t, N, L>(-20);
    check_leaf<N, L>(a, a);
    const Eigen::TensorMap<Eigen::Tensor<std::int8_t, N, L>> map(a.data(), a.dimensions());
    check_leaf<N, L>(map, a);
    const Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, N, L>> const_map(a.data(), a.dimensions());
    check_leaf<N, L>(const_map, a);
    const Eigen::TensorRef<Eigen::Tensor<std::int8_t, N, L>> ref(a);
    check_leaf<N, L>(ref, a);
    // A tensor expression, held by value (it refers to `a` itself).
    const Eigen::Tensor<std::int8_t, N, L> squared = a * a;
    check_leaf<N, L>(a * a, squared);
    if constexpr (N > 0) {
        Eigen::DSizes<Eigen::Index, N> offsets, extents = a.dimensions();
        for (int i = 0; i < N; ++i) offsets[i] = 0;
        offsets[0] = 1;
        extents[0] -= 1;
        const Eigen::Tensor<std::int8_t, N, L> sliced = a.slice(offsets, extents);
        const auto e = mixt::lazy(a.slice(offsets, extents)) + mixt::lazy(a.slice(offsets, extents)) * 0.5;
        const Eigen::Tensor<double, N, L> r = mixt::eval(e);
        for (int i = 0; i < N; ++i) ASSERT_EQ(r.dimension(i), sliced.dimension(i));
        for (Eigen::Index i = 0; i < r.size(); ++i) ASSERT_EQ(r.data()[i], sliced.data()[i] * 1.5);
    }
}

TEST(expression, leaves_of_every_kind_rank_and_layout) {
    check_all_leaf_kinds<0, Eigen::ColMajor>();
    check_all_leaf_kinds<1, Eigen::ColMajor>();
    check_all_leaf_kinds<2, Eigen::ColMajor>();
    check_all_leaf_kinds<3, Eigen::ColMajor>();
    check_all_leaf_kinds<4, Eigen::ColMajor>();
    check_all_leaf_kinds<0, Eigen::RowMajor>();
    check_all_leaf_kinds<1, Eigen::RowMajor>();
    check_all_leaf_kinds<2, Eigen::RowMajor>();
    check_all_leaf_kinds<3, Eigen::RowMajor>();
    check_all_leaf_kinds<4, Eigen::RowMajor>();
}

TEST(expression, row_major_results_keep_the_layout) {
    Eigen::Tensor<std::int16_t, 2, Eigen::RowMajor> a(2, 3);
    a.setValues({{1, 2, 3}, {4, 5, 6}});
    Eigen::Tensor<float, 2, Eigen::RowMajor> b(2, 3);
    b.setValues({{0.5f, 0.5f, 0.5f}, {1, 1, 1}});
    const auto r = mixt::eval(mixt::lazy(a) - b);
    static_assert(std::is_same_v<std::remove_const_t<decltype(r)>, Eigen::Tensor<float, 2, Eigen::RowMajor>>);
    EXPECT_EQ(r(0, 2), 2.5f);
    EXPECT_EQ(r(1, 0), 3.0f);
}

TEST(expression, lvalues_are_held_by_reference) {
    Eigen::Tensor<std::int32_t, 1> a(5);
    a.setConstant(1);
    Eigen::Tensor<double, 1> b(5);
    b.setConstant(0.25);
    const auto e = mixt::lazy(a) + b;
    using first = std::tuple_element_t<0, decltype(e.children)>;
    using second = std::tuple_element_t<1, decltype(e.children)>;
    static_assert(std::is_same_v<decltype(first::x), const Eigen::Tensor<std::int32_t, 1>&>);
    static_assert(std::is_same_v<decltype(second::x), const Eigen::Tensor<double, 1>&>);
    EXPECT_EQ(&std::get<0>(e.children).x, &a);
    // Changed after the expression was built: the evaluation sees the new values.
    a.setConstant(40);
    b(2) = 2.0;
    const Eigen::Tensor<double, 1> r = mixt::eval(e);
    EXPECT_EQ(r(0), 40.25);
    EXPECT_EQ(r(2), 42.0);
    // A named sub-expression (an lvalue) is held by reference too, not copied.
    const auto inner = mixt::lazy(a) * 2;
    const auto outer = inner + 1;
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(outer.children)>, const decltype(inner)&>);
    EXPECT_EQ(mixt::eval(outer)(4), 81);
}

Eigen::Tensor<float, 1> make_tensor(float v, Eigen::Index n) {
    Eigen::Tensor<float, 1> t(n);
    t.setConstant(v);
    return t;
}

TEST(expression, rvalues_are_moved_in_and_outlive_the_full_expression) {
    // The temporary dies at the end of this statement; the leaf owns what it was moved from.
    const auto e = mixt::lazy(make_tensor(1.5f, 7)) * 2 + mixt::lazy(make_tensor(0.25f, 7));
    using first_child = std::remove_cvref_t<std::tuple_element_t<0, decltype(e.children)>>;
    using leaf = std::remove_cvref_t<std::tuple_element_t<0, decltype(first_child::children)>>;
    static_assert(std::is_same_v<leaf, mixt::leaf<jax, Eigen::Tensor<float, 1>>>);
    make_tensor(99.0f, 7); // reuse the stack and heap the temporaries had
    const Eigen::Tensor<float, 1> r = mixt::eval(e);
    for (Eigen::Index i = 0; i < 7; ++i) EXPECT_EQ(r(i), 3.25f);

    // Moved, not copied: the leaf has the very storage of the tensor it was made from.
    Eigen::Tensor<std::int8_t, 1> t(9);
    t.setConstant(3);
    const std::int8_t* storage = t.data();
    const auto m = mixt::lazy(std::move(t)) + 1;
    EXPECT_EQ(std::get<0>(m.children).x.data(), storage);
    EXPECT_EQ(mixt::eval(m)(8), 4);

    // A plain Eigen tensor temporary as the other operand of a mixt operator: moved in as well.
    Eigen::Tensor<std::int8_t, 1> small(7);
    small.setConstant(2);
    const auto n = mixt::lazy(small) + make_tensor(0.5f, 7);
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(n.children)>, mixt::leaf<void, Eigen::Tensor<float, 1>>>);
    EXPECT_EQ(mixt::eval(n)(6), 2.5f);
}

TEST(expression, static_facts_of_a_node) {
    Eigen::Tensor<std::int8_t, 3> a(2, 2, 3);
    Eigen::Tensor<std::uint8_t, 3> b(2, 2, 3);
    Eigen::Tensor<Eigen::half, 3> c(2, 2, 3);
    using E = decltype((mixt::lazy(a) + b) * c);
    static_assert(std::is_same_v<mixt::tag_t<E>, dt::f16>);
    static_assert(std::is_same_v<mixt::value_t<E>, Eigen::half>);
    static_assert(std::is_same_v<E::policy, jax>);
    static_assert(E::rank == 3 && E::layout == Eigen::ColMajor);
    using inner = std::remove_cvref_t<std::tuple_element_t<0, decltype(std::declval<E>().children)>>;
    // Promotion is per node: the inner sum is i16, then joined with f16.
    static_assert(std::is_same_v<mixt::tag_t<inner>, dt::i16>);
    static_assert(std::is_same_v<E::operand_types, boost::mp11::mp_list<Eigen::half, Eigen::half>>);
    // u64 + i64 is the weak f*, stored as f64 under jax and as f32 under jax_x32.
    Eigen::Tensor<std::uint64_t, 1> u;
    Eigen::Tensor<std::int64_t, 1> s;
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(u) + s)>, dt::weak_float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(u) + s)>, double>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mixt::policy::jax_x32>(u) + s)>, float>);
    // A leaf alone.
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a))>, dt::i8>);
    static_assert(decltype(mixt::lazy(a))::rank == 3);
    static_assert(mixt::mixt_expression<decltype(mixt::lazy(a))> && !mixt::mixt_expression<decltype(a)>);
    static_assert(mixt::eigen_tensor<decltype(a)> && mixt::eigen_tensor<decltype(a * a)>);
    // lazy() of a mixt expression passes it through.
    auto l = mixt::lazy(a);
    static_assert(std::is_same_v<decltype(mixt::lazy(l)), decltype(l)&>);
}

TEST(expression, literals_are_weak_and_strong_scalars_are_not) {
    Eigen::Tensor<std::int8_t, 1> a(3);
    a.setValues({1, 2, 3});
    Eigen::Tensor<Eigen::half, 1> h(3);
    h.setValues({Eigen::half(1), Eigen::half(2), Eigen::half(3)});
    // C++ literal types become weak nodes, kept at full width until they are converted.
    static_assert(std::is_same_v<mixt::literal<std::int64_t>::tag, dt::weak_int>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a) + 2)>, dt::i8>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a) + 'x')>, dt::i8>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a) + 2ull)>, dt::i8>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a) + 2.0f)>, dt::weak_float>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(h) * 0.5)>, dt::f16>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(h) * std::complex<float>(1, 1))>, dt::c64>);
    using lit = std::remove_cvref_t<std::tuple_element_t<1, decltype((mixt::lazy(a) + 2.5f).children)>>;
    static_assert(std::is_same_v<lit, mixt::literal<double>>);
    using big = std::remove_cvref_t<std::tuple_element_t<1, decltype((mixt::lazy(a) + 1ull).children)>>;
    static_assert(std::is_same_v<big, mixt::literal<std::uint64_t>>);
    using cplx = std::remove_cvref_t<std::tuple_element_t<1, decltype((mixt::lazy(a) + std::complex<float>()).children)>>;
    static_assert(std::is_same_v<cplx, mixt::literal<std::complex<double>>>);
    // A strong scalar joins with its own dtype.
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(a) + mixt::strong(std::int16_t{3}))>, dt::i16>);
    static_assert(std::is_same_v<mixt::tag_t<decltype(mixt::lazy(h) + mixt::strong(1.0f))>, dt::f32>);
    EXPECT_EQ(mixt::eval(mixt::lazy(a) + mixt::strong(std::int16_t{300}))(2), 303);
    EXPECT_EQ(mixt::eval(mixt::lazy(h) * 0.5)(2), Eigen::half(1.5f));
}

} // namespace
