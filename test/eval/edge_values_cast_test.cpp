// mixt::cast from every dtype to every dtype through real expressions, on every edge value: bit for bit
// what mixt::convert gives (int wrapping, float -> int truncating and saturating with NaN -> 0, one correct
// rounding into floats, NaN sign and payload kept). See edge_values.hpp.

#include "edge_values.hpp"

namespace {

namespace mp = boost::mp11;

TEST(edge_values, casts_between_all_dtypes) {
    mp::mp_for_each<edge::all_types>([](auto t) { edge::casts_to<decltype(t)>(edge::all_types{}); });
}

} // namespace
