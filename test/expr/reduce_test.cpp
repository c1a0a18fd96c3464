// mixt/expr/reduce.hpp: the result and accumulator dtypes of every reduction, for every classic dtype under
// the four built-in policies, against test/data/reduction_dtypes.csv (written by gen_reduction_table.py from
// JAX's rules, independently of mixt); the shapes reductions give; axes that are rejected.

#include <mixt/errors.hpp>
#include <mixt/expr/reduce.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <complex>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include <gtest/gtest.h>

namespace {

using dtypes_list = boost::mp11::mp_list<bool, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t,
                                         std::int16_t, std::int32_t, std::int64_t, Eigen::bfloat16, Eigen::half, float,
                                         double, std::complex<float>, std::complex<double>>;
using policies_list = boost::mp11::mp_list<mixt::policy::jax, mixt::policy::jax_x32, mixt::policy::jax_strict,
                                           mixt::policy::array_api>;

template <mixt::reduce_kind K>
using kind_c = std::integral_constant<mixt::reduce_kind, K>;
using kinds_list =
    boost::mp11::mp_list<kind_c<mixt::reduce_kind::sum>, kind_c<mixt::reduce_kind::prod>, kind_c<mixt::reduce_kind::mean>,
                         kind_c<mixt::reduce_kind::min>, kind_c<mixt::reduce_kind::max>,
                         kind_c<mixt::reduce_kind::argmin>, kind_c<mixt::reduce_kind::argmax>,
                         kind_c<mixt::reduce_kind::any>, kind_c<mixt::reduce_kind::all>>;

template <mixt::reduce_kind K, class X>
auto reduce_all(X&& x) {
    using namespace mixt::detail;
    return make_reduction<K, false, false>(static_cast<X&&>(x), all_axes<operand_rank_v<X>>());
}

std::map<std::string, std::pair<std::string, std::string>> read_table() {
    std::ifstream in(std::string(MIXT_TEST_DATA_DIR) + "/reduction_dtypes.csv");
    std::map<std::string, std::pair<std::string, std::string>> t;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::stringstream s(line);
        std::string policy, kind, dtype, result, acc;
        std::getline(s, policy, ',');
        std::getline(s, kind, ',');
        std::getline(s, dtype, ',');
        std::getline(s, result, ',');
        std::getline(s, acc, ',');
        t[policy + " " + kind + " " + dtype] = {result, acc};
    }
    return t;
}

TEST(reduce, result_and_accumulator_dtypes_match_the_table_for_every_policy) {
    const auto table = read_table();
    ASSERT_EQ(table.size(), 540u);
    int checked = 0, skipped = 0;
    boost::mp11::mp_for_each<policies_list>([&](auto policy) {
        using P = decltype(policy);
        boost::mp11::mp_for_each<kinds_list>([&](auto kind) {
            constexpr mixt::reduce_kind K = decltype(kind)::value;
            boost::mp11::mp_for_each<dtypes_list>([&](auto value) {
                using T = decltype(value);
                const std::string key = std::string(P::name) + " " + std::string(mixt::reduce_name(K)) + " " +
                                        std::string(mixt::name(mixt::tag_of_t<T>::value));
                const auto it = table.find(key);
                ASSERT_NE(it, table.end()) << key;
                constexpr bool complex_order = (K == mixt::reduce_kind::argmin || K == mixt::reduce_kind::argmax) &&
                                               mixt::detail::is_complex_v<T>;
                constexpr bool not_a_node = std::is_same_v<P, mixt::policy::array_api> &&
                                            (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>);
                if constexpr (complex_order || not_a_node) {
                    // Compile errors (compile_fail.reduce.*): the table says so too.
                    EXPECT_EQ(it->second.first, "-") << key;
                    ++skipped;
                } else {
                    using R = decltype(reduce_all<K>(mixt::lazy<P>(std::declval<Eigen::Tensor<T, 2>&>())));
                    EXPECT_EQ(std::string(mixt::name(R::types.result)), it->second.first) << key;
                    EXPECT_EQ(std::string(mixt::name(R::types.accumulator)), it->second.second) << key;
                    // The C++ types follow the dtypes.
                    static_assert(std::is_same_v<mixt::value_t<R>, mixt::storage_t<mixt::dtype_tag<R::types.result>>>);
                    ++checked;
                }
            });
        });
    });
    EXPECT_EQ(checked + skipped, 540);
    EXPECT_EQ(skipped, 2 * 2 * 4 + 9 * 2 - 0); // argmin/argmax of c64/c128 x 4 policies; f16/bf16 under array_api
}

// The cases the research cites from JAX (shared research §1.10), written out.
TEST(reduce, jax_published_cases) {
    Eigen::Tensor<std::int8_t, 1> i8(3);
    Eigen::Tensor<Eigen::half, 1> f16(3);
    Eigen::Tensor<std::int64_t, 1> i64(3);
    Eigen::Tensor<std::uint8_t, 1> u8(3);
    using x32 = mixt::policy::jax_x32;
    // "NumPy always promotes to 64-bit; jax instead promotes to the default dtype".
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(i8))>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(mixt::lazy<x32>(i8)))>, std::int32_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(u8))>, std::uint64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(mixt::lazy<x32>(u8)))>, std::uint32_t>);
    // f16 accumulates in f32 and returns f16.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(f16))>, Eigen::half>);
    static_assert(std::is_same_v<decltype(mixt::sum(f16))::accumulator_type, float>);
    // mean: int8 -> float32 even with x64, int64 -> float64.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::mean(i8))>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::mean(i64))>, double>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::mean(mixt::lazy<x32>(i64)))>, float>);
    // max keeps the dtype, argmax is the default int.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::max(i8))>, std::int8_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::argmax(f16))>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::argmax(mixt::lazy<x32>(f16)))>, std::int32_t>);
    // sum(x, dtype=...) and dot.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum<std::int8_t>(i8))>, std::int8_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum<float>(i8))>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::dot(i8, f16))>, Eigen::half>);
    static_assert(std::is_same_v<decltype(mixt::dot(i8, f16))::accumulator_type, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::dot(i8, i8))>, std::int8_t>);
}

TEST(reduce, ranks_with_and_without_keepdims) {
    Eigen::Tensor<float, 3> x(2, 3, 4);
    static_assert(decltype(mixt::sum(x))::rank == 0);
    static_assert(decltype(mixt::sum(x, mixt::keepdims))::rank == 3);
    static_assert(decltype(mixt::sum(x, 1))::rank == 2);
    static_assert(decltype(mixt::sum(x, {0, 2}))::rank == 1);
    static_assert(decltype(mixt::sum(x, {0, 2}, mixt::keepdims))::rank == 3);
    static_assert(decltype(mixt::argmax(x, 2, mixt::keepdims))::rank == 3);
    const auto r = mixt::sum(x, {-1, 0});
    EXPECT_EQ(r.axes[0], 0);
    EXPECT_EQ(r.axes[1], 2);
}

TEST(reduce, bad_axes_throw_shape_error) {
    Eigen::Tensor<float, 2> x(2, 3);
    EXPECT_THROW((void)mixt::sum(x, 2), mixt::shape_error);
    EXPECT_THROW((void)mixt::sum(x, -3), mixt::shape_error);
    EXPECT_THROW((void)mixt::max(x, {1, -1}), mixt::shape_error);
    try {
        (void)mixt::mean(x, {0, 0});
        FAIL();
    } catch (const mixt::shape_error& e) {
        EXPECT_NE(std::string(e.what()).find("mean: axis 0 is named twice for an operand of rank 2"), std::string::npos)
            << e.what();
    }
}

} // namespace
