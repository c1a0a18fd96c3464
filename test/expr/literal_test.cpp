// mixt/expr/literal.hpp: the rules of literals that every back end shares. A literal must fit the dtype it is
// converted to (literal_fits); a real array compared with a real literal is compared in the join when the
// literal fits it, else by exact value (exact_order, literal_compare_functor), and literal_compare_parts takes
// such a comparison apart (the array child, the join, the functor).

#include <mixt/expr/literal.hpp>
#include <mixt/expr/operators.hpp>

#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <gtest/gtest.h>

namespace {

namespace d = mixt::detail;
using i64 = std::int64_t;
using u64 = std::uint64_t;

TEST(literal, exact_order_of_integers_of_any_signedness) {
    EXPECT_EQ(d::exact_order(std::int8_t{-1}, u64{0}), -1); // no wrap to 2^64 - 1
    EXPECT_EQ(d::exact_order(u64{18446744073709551615u}, i64{-1}), 1);
    EXPECT_EQ(d::exact_order(std::uint8_t{255}, 255), 0);
    EXPECT_EQ(d::exact_order(std::int16_t{-300}, std::int8_t{-128}), -1);
}

TEST(literal, exact_order_of_an_integer_and_a_double_does_not_round_the_integer) {
    constexpr i64 big = (i64{1} << 53) + 1; // not a double: converting it would give 2^53
    EXPECT_EQ(d::exact_order(big, 9007199254740992.0), 1);
    EXPECT_EQ(d::exact_order(9007199254740992.0, big), -1);
    EXPECT_EQ(d::exact_order(std::numeric_limits<i64>::max(), 9223372036854775808.0), -1); // 2^63
    EXPECT_EQ(d::exact_order(std::numeric_limits<i64>::min(), -9223372036854775808.0), 0);
    EXPECT_EQ(d::exact_order(u64{18446744073709551615u}, 18446744073709551616.0), -1);
    EXPECT_EQ(d::exact_order(3, 2.5), 1);
    EXPECT_EQ(d::exact_order(-3, -2.5), -1);
    EXPECT_EQ(d::exact_order(2, 2.0), 0);
    EXPECT_EQ(d::exact_order(2, std::numeric_limits<double>::quiet_NaN()), 2);
    EXPECT_EQ(d::exact_order(Eigen::half(2.5f), 2), 1);
    EXPECT_EQ(d::exact_order(Eigen::bfloat16(-0.0f), 0), 0);
    EXPECT_EQ(d::exact_order(std::numeric_limits<float>::quiet_NaN(), 1.0), 2);
}

TEST(literal, fits_the_dtype_it_is_converted_to) {
    EXPECT_TRUE(d::literal_fits<std::uint8_t>(255));
    EXPECT_FALSE(d::literal_fits<std::uint8_t>(256));
    EXPECT_FALSE(d::literal_fits<std::uint8_t>(-1));
    EXPECT_TRUE(d::literal_fits<std::int8_t>(-128));
    EXPECT_FALSE(d::literal_fits<std::int8_t>(-129));
    EXPECT_TRUE(d::literal_fits<u64>(i64{0}));
    EXPECT_TRUE(d::literal_fits<Eigen::half>(65504));  // f16's largest
    EXPECT_FALSE(d::literal_fits<Eigen::half>(65536)); // rounds to infinity
    EXPECT_TRUE(d::literal_fits<Eigen::bfloat16>(65536));
    EXPECT_TRUE(d::literal_fits<bool>(7));       // a bool is any value's truth
    EXPECT_TRUE(d::literal_fits<Eigen::half>(1e6)); // a float literal overflows to inf as a cast does
}

TEST(literal, fits_a_narrow_dtype_only_within_its_range) {
    // Narrow ints: their range, as the other ints (no silent wrap).
    EXPECT_TRUE(d::literal_fits<mixt::int4>(7));
    EXPECT_TRUE(d::literal_fits<mixt::int4>(-8));
    EXPECT_FALSE(d::literal_fits<mixt::int4>(8));
    EXPECT_FALSE(d::literal_fits<mixt::int4>(100));
    EXPECT_FALSE(d::literal_fits<mixt::int4>(-9));
    EXPECT_TRUE(d::literal_fits<mixt::uint2>(3));
    EXPECT_FALSE(d::literal_fits<mixt::uint2>(4));
    EXPECT_FALSE(d::literal_fits<mixt::uint4>(-1));
    // Narrow floats: an integer that rounds to a finite value, not to inf or NaN, nor saturated.
    EXPECT_TRUE(d::literal_fits<mixt::float8_e5m2>(57344));   // e5m2's largest
    EXPECT_TRUE(d::literal_fits<mixt::float8_e5m2>(61439));   // rounds down to it
    EXPECT_FALSE(d::literal_fits<mixt::float8_e5m2>(61440));  // rounds to inf
    EXPECT_TRUE(d::literal_fits<mixt::float8_e4m3fn>(464));   // halfway: rounds to 448 (even)
    EXPECT_FALSE(d::literal_fits<mixt::float8_e4m3fn>(465));  // its NaN
    EXPECT_TRUE(d::literal_fits<mixt::float4_e2m1fn>(6));     // e2m1's largest
    EXPECT_TRUE(d::literal_fits<mixt::float4_e2m1fn>(-5));    // rounds to -4 (ties to even)
    EXPECT_FALSE(d::literal_fits<mixt::float4_e2m1fn>(100));  // would saturate to 6
    EXPECT_FALSE(d::literal_fits<mixt::float8_e8m0fnu>(0));   // no zero: its NaN
    EXPECT_TRUE(d::literal_fits<mixt::float8_e8m0fnu>(3));    // rounds to 4
    EXPECT_TRUE(d::literal_fits<mixt::float8_e4m3fn>(1e6));   // a float literal becomes the overflow value, as JAX's
}

TEST(literal, a_comparison_with_a_literal_that_does_not_fit_compares_exact_values) {
    Eigen::Tensor<std::uint8_t, 1> u8(4);
    u8.setValues({0, 1, 200, 255});
    const auto e = mixt::lazy(u8) < 300;
    using N = std::remove_const_t<decltype(e)>;
    static_assert(d::literal_compare_v<N>);
    const d::literal_compare_parts<N> parts(e);
    static_assert(std::is_same_v<decltype(parts)::join, std::uint8_t>); // a weak int joins u8 as u8
    EXPECT_EQ(&parts.array.x, &u8);
    EXPECT_FALSE(parts.compare.fits);
    for (int v = 0; v < 256; ++v) EXPECT_TRUE(parts.compare(static_cast<std::uint8_t>(v))) << v;

    const auto right = 200 > mixt::lazy(u8); // the literal on the left
    const d::literal_compare_parts<std::remove_const_t<decltype(right)>> flipped(right);
    EXPECT_TRUE(flipped.compare.fits);
    EXPECT_EQ(flipped.compare.converted, 200);
    EXPECT_TRUE(flipped.compare(std::uint8_t{199}));
    EXPECT_FALSE(flipped.compare(std::uint8_t{200}));

    const auto minus = mixt::lazy(u8) != -1; // never equal, so != is true everywhere
    const d::literal_compare_parts<std::remove_const_t<decltype(minus)>> ne(minus);
    EXPECT_FALSE(ne.compare.fits);
    EXPECT_TRUE(ne.compare(std::uint8_t{255}));
}

TEST(literal, only_real_comparisons_with_one_literal_are_taken_apart) {
    Eigen::Tensor<std::uint8_t, 1> u8(2);
    Eigen::Tensor<std::complex<float>, 1> c64(2);
    static_assert(!d::literal_compare_v<std::remove_const_t<decltype(mixt::lazy(u8) < u8)>>);
    static_assert(!d::literal_compare_v<std::remove_const_t<decltype(mixt::lazy(u8) + 1)>>);
    static_assert(!d::literal_compare_v<std::remove_const_t<decltype(mixt::lazy(c64) == 1)>>);
    static_assert(d::is_literal_v<std::remove_const_t<decltype(std::get<1>((mixt::lazy(u8) + 1).children))>>);
    SUCCEED();
}

} // namespace
