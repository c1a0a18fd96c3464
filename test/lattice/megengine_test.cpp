// policy::megengine (mixt/lattice/policy.hpp) against MegEngine's dtype document (the seed
// ../shared/seeds/004_*.txt, "类型提升规则"): its examples as expressions, its default dtypes, its dtypes, and
// mixt's choice where the document contradicts itself on bool (README, "Policies").

#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <type_traits>

#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <gtest/gtest.h>

#include <mixt/mixt.hpp>

namespace mixt {
inline void PrintTo(dtype d, std::ostream* os) { *os << name(d); }
} // namespace mixt

namespace {

namespace dt = mixt::dtypes;
using mixt::dtype;
using mge = mixt::policy::megengine;

Eigen::Tensor<std::int8_t, 1> i8(1);
Eigen::Tensor<std::uint8_t, 1> u8(1);
Eigen::Tensor<std::int16_t, 1> i16(1);
Eigen::Tensor<float, 1> f32(1);
Eigen::Tensor<bool, 1> b(1);

TEST(policy_megengine, is_a_lattice_over_megengines_dtypes) {
    EXPECT_TRUE(mixt::check_lattice_v<mge>);
    // The document's table: bool, int8, int16, int32, uint8, uint16, float16, float32 are supported; int64,
    // uint32, uint64, float64 are not (and it names no bfloat16 or complex).
    std::set<dtype> concrete;
    boost::hana::for_each(mge::edges, [&](auto entry) {
        using From = typename decltype(+boost::hana::first(entry))::type;
        if (!mixt::is_weak(From::value)) concrete.insert(From::value);
    });
    EXPECT_EQ(concrete, (std::set<dtype>{dtype::bool_, dtype::int8, dtype::int16, dtype::int32, dtype::uint8,
                                         dtype::uint16, dtype::float16, dtype::float32}));
}

TEST(policy_megengine, the_documents_examples) {
    // a = Tensor([1], dtype="int8"); b = Tensor([1], dtype="uint8"); (a + b).dtype == int16
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(i8) + u8)>, std::int16_t>);
    // int16 + float32 tensors: float32 (int16 -> int32 -> float16 -> float32)
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(i16) + f32)>, float>);
    EXPECT_EQ(mixt::promote_types(dtype::int16, dtype::int32, mge{}), dtype::int32);
    EXPECT_EQ(mixt::promote_types(dtype::int32, dtype::float16, mge{}), dtype::float16);
    EXPECT_EQ(mixt::promote_types(dtype::float16, dtype::float32, mge{}), dtype::float32);
    // int16 tensor + 1: the scalar takes the tensor's dtype, int16
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(i16) + 1)>, std::int16_t>);
    // int16 tensor + 1.0: type first, the Python float as the default float, float32
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(i16) + 1.0)>, float>);
    Eigen::Tensor<float, 1> r = mixt::eval(mixt::lazy<mge>(i16.setConstant(2)) + 1.5);
    EXPECT_EQ(r(0), 3.5f);
}

TEST(policy_megengine, default_dtypes_are_float32_and_int32) {
    static_assert(std::is_same_v<mixt::materialize_t<dt::weak_float, mge>, dt::f32>);
    static_assert(std::is_same_v<mixt::materialize_t<dt::weak_int, mge>, dt::i32>);
    // What a reduction of bool sums in: the default int.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(mixt::lazy<mge>(b)))>, std::int32_t>);
}

// The document lists the mixing bool -> int -> float and also says that bool connects to nothing: mixt takes
// the mixing rule (README, "Policies").
TEST(policy_megengine, bool_mixes_into_int_and_float) {
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(b) + i8)>, std::int8_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(b) + f32)>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy<mge>(b) + 1)>, std::int32_t>);
    EXPECT_EQ(mixt::promote_types(dtype::bool_, dtype::uint16, mge{}), dtype::uint16);
}

TEST(policy_megengine, what_it_does_not_have) {
    EXPECT_EQ(mixt::promote_types(dtype::int64, dtype::int8, mge{}), std::nullopt);
    EXPECT_EQ(mixt::promote_types(dtype::float64, dtype::float32, mge{}), std::nullopt);
    EXPECT_FALSE((mixt::op::defined_v<mixt::op::add, mge, dt::f32, dt::weak_complex>));
}

} // namespace
