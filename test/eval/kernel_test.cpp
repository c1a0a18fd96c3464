// mixt/eval/kernel.hpp: the kernel tree of an expression, the data that every target's loop binds to its own
// nodes. Arrays are their data pointers in the order of the leaves (the iteration space's operands), literals
// are converted to their operand's dtype, conversions are nodes of their own, casts add no operation, and
// comparisons with a literal carry the functor that compares by exact value.

#include <mixt/eval/kernel.hpp>
#include <mixt/expr/operators.hpp>

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace d = mixt::detail;
namespace k = mixt::detail::ktree;
using i8 = std::int8_t;
using u8 = std::uint8_t;
using f16 = Eigen::half;

struct data {
    Eigen::Tensor<i8, 1> a{5};
    Eigen::Tensor<u8, 1> b{5};
    Eigen::Tensor<float, 1> c{5};
    Eigen::Tensor<f16, 1> h{5};
};

TEST(kernel, leaves_are_pointers_and_conversions_are_nodes) {
    data x;
    const auto t = d::make_kernel_tree<float>(mixt::lazy(x.a) + x.c);
    using T = std::remove_const_t<decltype(t)>;
    static_assert(std::is_same_v<T, k::op<d::add_fn, float, k::convert<float, k::array<i8>>, k::array<float>>>);
    EXPECT_EQ(std::get<0>(t.ks).k.p, x.a.data());
    EXPECT_EQ(std::get<1>(t.ks).p, x.c.data());
    // The same tree wanted in another dtype gets a conversion on top.
    const auto as_f16 = d::make_kernel_tree<f16>(mixt::lazy(x.a) + x.c);
    static_assert(std::is_same_v<std::remove_const_t<decltype(as_f16)>, k::convert<f16, T>>);
}

TEST(kernel, literals_are_converted_to_their_operand_dtype) {
    data x;
    const auto t = d::make_kernel_tree<f16>(mixt::lazy(x.h) * 0.1);
    using T = std::remove_const_t<decltype(t)>;
    static_assert(std::is_same_v<T, k::op<d::mul_fn, f16, k::array<f16>, k::constant<f16>>>);
    // 0.1 rounded once to f16 (0x2e66), not through f32 first.
    EXPECT_EQ(Eigen::numext::bit_cast<std::uint16_t>(std::get<1>(t.ks).value), 0x2e66);
    const auto i = d::make_kernel_tree<i8>(mixt::lazy(x.a) - 3);
    EXPECT_EQ(std::get<1>(i.ks).value, i8{3});
}

TEST(kernel, a_cast_is_its_operand_converted) {
    data x;
    const auto t = d::make_kernel_tree<f16>(mixt::cast<f16>(x.b));
    static_assert(std::is_same_v<std::remove_const_t<decltype(t)>, k::convert<f16, k::array<u8>>>);
    EXPECT_EQ(t.k.p, x.b.data());
    const auto same = d::make_kernel_tree<u8>(mixt::cast<u8>(x.b));
    static_assert(std::is_same_v<std::remove_const_t<decltype(same)>, k::array<u8>>);
}

TEST(kernel, a_comparison_with_a_literal_keeps_the_exact_functor) {
    data x;
    const auto t = d::make_kernel_tree<bool>(mixt::lazy(x.b) < 300);
    using T = std::remove_const_t<decltype(t)>;
    static_assert(std::is_same_v<decltype(T::k), k::array<u8>>);
    static_assert(std::is_same_v<T::value_type, bool>);
    EXPECT_EQ(t.k.p, x.b.data());
    EXPECT_FALSE(t.f.fits);
    EXPECT_TRUE(t.f(u8{255}));
    const auto fits = d::make_kernel_tree<bool>(mixt::lazy(x.b) < 30);
    EXPECT_TRUE(fits.f.fits);
    EXPECT_FALSE(fits.f(u8{30}));
}

TEST(kernel, arrays_come_in_the_order_of_the_leaves) {
    data x;
    const auto e = mixt::where(mixt::lazy(x.c) > 0, (mixt::lazy(x.a) + x.b) * x.h, x.c);
    const auto t = d::make_kernel_tree<float>(e);
    using T = std::remove_const_t<decltype(t)>;
    static_assert(k::array_count_v<T> == 5);
    // A walk of the tree's arrays, depth-first and left to right, gives the leaves' pointers in their order.
    std::vector<const void*> from_tree;
    const auto walk = [&](const auto& self, const auto& n) -> void {
        using N = std::remove_cvref_t<decltype(n)>;
        if constexpr (requires { n.p; })
            from_tree.push_back(n.p);
        else if constexpr (requires { n.ks; })
            std::apply([&](const auto&... c) { (self(self, c), ...); }, n.ks);
        else if constexpr (requires { n.k; })
            self(self, n.k);
        else
            static_assert(std::is_same_v<N, k::constant<typename N::value_type>>);
    };
    walk(walk, t);
    const std::vector<const void*> leaves{x.c.data(), x.a.data(), x.b.data(), x.h.data(), x.c.data()};
    EXPECT_EQ(from_tree, leaves);
}

} // namespace
