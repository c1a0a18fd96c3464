// Every binary operation through real expressions over bool and integer dtypes (narrow ones that C++
// promotes to int, and 64-bit ones that it does not), on every pair of edge values (INT_MIN, -1, 0, max,
// shift counts at and past the width), compared with the per-element definition on the fused loop and
// (where marked both) on the lowering to Eigen. See edge_values.hpp; functors_test.cpp covers every integer
// type at the functor level. (i32 is in edge_values_float_test.cpp, which keeps both files under a minute
// of compile time.)

#include "edge_values.hpp"

#include <cstdint>

namespace {

using edge::paths;

TEST(edge_values, bool_operations) { edge::all_binary_ops<bool, bool>(); }
TEST(edge_values, int8_operations) { edge::all_binary_ops<std::int8_t, std::int8_t>(); }
TEST(edge_values, int64_operations) { edge::all_binary_ops<std::int64_t, std::int64_t>(); }
TEST(edge_values, uint64_operations) { edge::all_binary_ops<std::uint64_t, std::uint64_t, paths::fused_only>(); }

TEST(edge_values, mixed_integer_pairs) {
    edge::all_binary_ops<std::int8_t, std::uint8_t>();                     // i16
    edge::all_binary_ops<std::uint64_t, std::int64_t, paths::fused_only>(); // f*, stored as f64
    edge::all_binary_ops<bool, std::uint16_t, paths::fused_only>();        // u16
}

} // namespace
