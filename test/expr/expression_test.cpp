// mixt/expr/expression.hpp: what a lazy expression holds and what it is. Leaves over every kind of Eigen
// operand (Tensor, TensorMap, TensorRef, a tensor expression such as `a * a` or `a.slice(...)`), ranks 0..4
// in both layouts; lvalues held by reference (later changes are seen), rvalues moved in (a temporary
// outlives the full-expression that made it); the static facts every node carries (tag, value_type, policy,
// rank, layout); weak literals and strong scalars; choosing the policy per leaf or for a whole expression, and
// evaluating under each built-in policy.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/expression.hpp>
#include <mixt/expr/operators.hpp>

#include <array>
#include <complex>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>

namespace {

namespace dt = mixt::dtypes;
using jax = mixt::policy::jax;
using x32 = mixt::policy::jax_x32;
using strict = mixt::policy::jax_strict;
using array_api = mixt::policy::array_api;

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
    // (A result of rank 0 or 1 has Eigen's default layout, the same memory either way.)
    const Eigen::Tensor<float, N, (N >= 2 ? L : Eigen::ColMajor)> r = mixt::eval(e);
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
        const Eigen::Tensor<double, N, (N >= 2 ? L : Eigen::ColMajor)> r = mixt::eval(e);
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
    static_assert(std::is_same_v<leaf, mixt::leaf<void, Eigen::Tensor<float, 1>>>);
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
    // No leaf chose a policy: the expression is typed under the default one.
    static_assert(std::is_void_v<E::policy>);
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

TEST(expression_policy, per_leaf) {
    Eigen::Tensor<std::uint32_t, 1> u(3);
    u.setValues({1, 4000000000u, 7});
    Eigen::Tensor<std::int32_t, 1> i(3);
    i.setValues({-2, 5, 100});
    static_assert(std::is_void_v<decltype(mixt::lazy(u))::policy>);
    static_assert(std::is_same_v<decltype(mixt::lazy<x32>(u))::policy, x32>);
    static_assert(std::is_same_v<decltype(mixt::lazy<jax>(u))::policy, jax>);
    // A leaf without a policy takes the policy of the expression it joins.
    using E = decltype(mixt::lazy(i) + mixt::lazy<x32>(u));
    static_assert(std::is_same_v<E::policy, x32> && std::is_same_v<mixt::value_t<E>, std::int32_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(u) + mixt::lazy(i))>, std::int64_t>);
    // A sub-expression without a policy joins an expression of another one where it types the same under both.
    Eigen::Tensor<float, 1> f(3);
    f.setValues({0.5f, 1.5f, 2.5f});
    const auto g = mixt::lazy(f) * 2;
    const auto mixed = mixt::lazy<x32>(u) + g;
    static_assert(std::is_same_v<decltype(mixed)::policy, x32> && std::is_same_v<mixt::value_t<decltype(mixed)>, float>);
    EXPECT_EQ(mixt::eval(mixed)(2), 12.0f);
}

TEST(expression_policy, whole_expression) {
    Eigen::Tensor<std::uint32_t, 1> u(4);
    u.setValues({1, 4000000000u, 7, 2147483648u});
    Eigen::Tensor<std::int32_t, 1> i(4);
    i.setValues({-2, 5, 100, 1});
    // u32 + i32 is i32 under jax_x32, i64 under jax.
    const auto e = mixt::lazy<x32>(mixt::lazy(u) + mixt::lazy(i));
    using E = std::remove_const_t<decltype(e)>;
    static_assert(std::is_same_v<E::policy, x32>);
    static_assert(std::is_same_v<mixt::value_t<E>, std::int32_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(u) + mixt::lazy(i))>, std::int64_t>);
    const Eigen::Tensor<std::int32_t, 1> r = mixt::eval(e);
    // u32 values are converted to i32 (modulo 2^32), then added with wrap-around.
    EXPECT_EQ(r(0), -1);
    EXPECT_EQ(r(1), static_cast<std::int32_t>(4000000005ll - 4294967296ll));
    EXPECT_EQ(r(2), 107);
    EXPECT_EQ(r(3), std::numeric_limits<std::int32_t>::min() + 1);
    // The leaves were lvalues: still held by reference.
    using first = std::tuple_element_t<0, decltype(e.children)>;
    static_assert(std::is_same_v<first, mixt::leaf<x32, const Eigen::Tensor<std::uint32_t, 1>&>>);
    EXPECT_EQ(&std::get<0>(e.children).x, &u);

    // Deeper trees are typed again at every node: (u32 + i32) * 2 + 1.5 is f32 under x32, f64 under jax.
    const auto d = mixt::lazy<x32>((mixt::lazy(u) + i) * 2 + 1.5);
    static_assert(std::is_same_v<mixt::value_t<decltype(d)>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype((mixt::lazy(u) + i) * 2 + 1.5)>, double>);
    using inner = std::remove_cvref_t<std::tuple_element_t<0, decltype(d.children)>>;
    static_assert(std::is_same_v<inner::policy, x32> && std::is_same_v<mixt::value_t<inner>, std::int32_t>);
    EXPECT_EQ(mixt::eval(d)(2), 215.5f);
    // Plain Eigen operands and literals in the tree; a weak result is stored in 32 bits.
    Eigen::Tensor<std::uint64_t, 1> big(1);
    big.setValues({3});
    Eigen::Tensor<std::int64_t, 1> sig(1);
    sig.setValues({-5});
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<x32>(mixt::lazy(big) + sig))>, float>);
    EXPECT_EQ(mixt::eval(mixt::lazy<x32>(mixt::lazy(big) + sig))(0), -2.0f);
}

TEST(expression_policy, whole_expression_keeps_or_moves_what_it_holds) {
    Eigen::Tensor<std::uint32_t, 1> u(3);
    u.setValues({1, 2, 3});
    Eigen::Tensor<std::int32_t, 1> i(3);
    i.setValues({10, 20, 30});
    // lazy(e), and lazy<P>(e) where e's policy is P, return e itself.
    auto same = mixt::lazy<x32>(u) + i;
    static_assert(std::is_same_v<decltype(mixt::lazy(same)), decltype(same)&>);
    static_assert(std::is_same_v<decltype(mixt::lazy<x32>(same)), decltype(same)&>);
    EXPECT_EQ(&mixt::lazy<x32>(same), &same);
    static_assert(std::is_same_v<decltype(mixt::lazy(std::move(same))), decltype(same)&&>);

    // An rvalue expression: what it owns is moved into the new one.
    Eigen::Tensor<std::uint32_t, 1> owned = u;
    const std::uint32_t* storage = owned.data();
    const auto moved = mixt::lazy<x32>(mixt::lazy(std::move(owned)) + i);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(moved.children)>,
                                 mixt::leaf<x32, Eigen::Tensor<std::uint32_t, 1>>>);
    EXPECT_EQ(std::get<0>(moved.children).x.data(), storage);
    EXPECT_EQ(mixt::eval(moved)(2), 33);

    // An lvalue expression: what it owns is referred to, as an operator refers to an lvalue operand.
    const auto named = mixt::lazy(Eigen::Tensor<std::uint32_t, 1>(u)) + i;
    const auto over = mixt::lazy<x32>(named);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(over.children)>,
                                 mixt::leaf<x32, const Eigen::Tensor<std::uint32_t, 1>&>>);
    EXPECT_EQ(&std::get<0>(over.children).x, &std::get<0>(named.children).x);
    EXPECT_EQ(mixt::eval(over)(0), 11);
    static_assert(std::is_same_v<mixt::value_t<decltype(named)>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(over)>, std::int32_t>);

    // A named sub-expression held by reference is rebuilt into the new tree; a strong scalar is kept.
    const auto sub = mixt::lazy(u) * mixt::strong(std::int32_t{2});
    const auto outer = mixt::lazy<x32>(sub + i);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype((sub + i).children)>, const decltype(sub)&>);
    using rebuilt = std::tuple_element_t<0, decltype(outer.children)>;
    static_assert(!std::is_reference_v<rebuilt> && std::is_same_v<rebuilt::policy, x32>);
    static_assert(std::is_same_v<mixt::value_t<rebuilt>, std::int32_t>);
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(rebuilt::children)>, mixt::scalar<std::int32_t>>);
    EXPECT_EQ(mixt::eval(outer)(2), 36);
}

TEST(expression_policy, evaluates_under_every_policy) {
    Eigen::Tensor<std::int8_t, 1> a(4);
    a.setValues({-128, -1, 0, 120});
    // jax_strict: an i8 array and a weak int literal stay i8 (the literal must fit).
    const auto s = mixt::lazy<strict>(mixt::lazy(a) + 7);
    static_assert(std::is_same_v<decltype(s)::policy, strict> && std::is_same_v<mixt::value_t<decltype(s)>, std::int8_t>);
    const Eigen::Tensor<std::int8_t, 1> rs = mixt::eval(s);
    EXPECT_EQ(rs(0), -121);
    EXPECT_EQ(rs(1), 6);
    EXPECT_EQ(rs(2), 7);
    EXPECT_EQ(rs(3), 127);
    // ... and chosen per leaf, the same.
    const Eigen::Tensor<std::int8_t, 1> rl = mixt::eval(mixt::lazy<strict>(a) + 7);
    EXPECT_EQ(rl(3), 127);

    // array_api: f32 + f64 is f64; an int literal joins a real float array.
    Eigen::Tensor<float, 1> f(3);
    f.setValues({0.1f, -2.5f, 1e30f});
    Eigen::Tensor<double, 1> d(3);
    d.setValues({0.2, 0.25, -1e30});
    const auto e = mixt::lazy<array_api>(f + mixt::lazy(d) * 2);
    static_assert(std::is_same_v<decltype(e)::policy, array_api> && std::is_same_v<mixt::value_t<decltype(e)>, double>);
    const Eigen::Tensor<double, 1> r = mixt::eval(e);
    EXPECT_EQ(r(0), static_cast<double>(0.1f) + 0.4);
    EXPECT_EQ(r(1), -2.0);
    EXPECT_EQ(r(2), static_cast<double>(1e30f) - 2e30);
    // An int8 array with an int literal under array_api.
    const Eigen::Tensor<std::int8_t, 1> ri = mixt::eval(mixt::lazy<array_api>(mixt::lazy(a) * 1 - 1));
    EXPECT_EQ(ri(0), 127); // wraps
    EXPECT_EQ(ri(3), 119);
}

} // namespace
