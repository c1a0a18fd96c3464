// Every unary operation and function (-, ~, !, abs, sqrt, exp, log, sin, cos, tanh, real, imag, conj)
// through real expressions over every dtype, on every edge value, on the fused loop and the lowering to
// Eigen (one dtype per width and kind; the others on the fused loop), compared with the per-element definition (transcendental functions within 4 ulp, special values
// exactly). See edge_values.hpp.

#include "edge_values.hpp"

#include <complex>
#include <cstdint>

namespace {

namespace mp = boost::mp11;

// Both paths for one dtype of each width and kind, the fused loop for the others.
using both_paths = mp::mp_list<bool, std::int8_t, std::uint64_t, Eigen::half, float, std::complex<float>>;

TEST(edge_values, unary_operations) {
    mp::mp_for_each<edge::all_types>([](auto t) {
        using T = decltype(t);
        if constexpr (mp::mp_contains<both_paths, T>::value)
            edge::all_unary_ops<T>();
        else
            edge::all_unary_ops<T, edge::paths::fused_only>();
    });
}

} // namespace
