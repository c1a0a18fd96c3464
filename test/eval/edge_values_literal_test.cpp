// Every binary operation through real expressions with a C++ literal operand: in range, at the limits and
// out of range (an overflow_error, except for comparisons, which compare exact values), integer, unsigned
// 64-bit and floating literals, NaN and inf. See edge_values.hpp.

#include "edge_values.hpp"

#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

constexpr auto i64_min = std::numeric_limits<std::int64_t>::min();
constexpr auto i64_max = std::numeric_limits<std::int64_t>::max();
const std::vector<std::int64_t> ints{i64_min, -129, -1, 0, 1, 8, 64, 255, 256, 65520, i64_max};
const std::vector<std::uint64_t> big{std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()};
const std::vector<double> floats{-0.0, -2.5, 1e300, std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::quiet_NaN()};

// u8: literals on both sides.
TEST(edge_values, uint8_with_literals) {
    edge::all_literal_ops<std::uint8_t, true>(ints);
    edge::all_literal_ops<std::uint8_t, true>(floats);
}

TEST(edge_values, int64_with_literals) {
    edge::all_literal_ops<std::int64_t>(ints);
    edge::all_literal_ops<std::int64_t>(big);
    edge::all_literal_ops<std::int64_t>(floats);
}

TEST(edge_values, float16_with_literals) {
    edge::all_literal_ops<Eigen::half>(ints);
    edge::all_literal_ops<Eigen::half>(floats);
}

TEST(edge_values, complex64_with_literals) {
    edge::all_literal_ops<std::complex<float>>(ints);
    edge::all_literal_ops<std::complex<float>>(std::vector<std::complex<double>>{{0, -0.0}, {1e300, -1}, {std::numeric_limits<double>::quiet_NaN(), 1}});
}

} // namespace
