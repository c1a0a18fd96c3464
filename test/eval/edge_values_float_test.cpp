// Every binary operation through real expressions over the float and complex dtypes, on every pair of edge
// values (+-0, +-1, subnormals, max, lowest, +-inf, NaN of both signs and with a payload; complex numbers
// of all their combinations), compared with the per-element definition on the fused loop and (where marked
// both) on the lowering to Eigen. See edge_values.hpp.

#include "edge_values.hpp"

#include <complex>
#include <cstdint>

namespace {

using edge::paths;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

TEST(edge_values, float16_operations) { edge::all_binary_ops<Eigen::half, Eigen::half>(); }
TEST(edge_values, float32_operations) { edge::all_binary_ops<float, float>(); }
TEST(edge_values, complex64_operations) { edge::all_binary_ops<c64, c64>(); }
TEST(edge_values, bfloat16_operations) { edge::all_binary_ops<Eigen::bfloat16, Eigen::bfloat16, paths::fused_only>(); }
TEST(edge_values, float64_operations) { edge::all_binary_ops<double, double, paths::fused_only>(); }
TEST(edge_values, complex128_operations) { edge::all_binary_ops<c128, c128, paths::fused_only>(); }

// An integer dtype, here to balance the compile time of the edge_values files.
TEST(edge_values, int32_operations) { edge::all_binary_ops<std::int32_t, std::int32_t, paths::fused_only>(); }

TEST(edge_values, mixed_float_pairs) {
    edge::all_binary_ops<double, c64>();                                   // c128
    edge::all_binary_ops<Eigen::half, Eigen::bfloat16, paths::fused_only>(); // f32
    edge::all_binary_ops<std::int32_t, float, paths::fused_only>();          // f32
}

} // namespace
