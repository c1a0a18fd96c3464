#ifndef MIXT_FWD_HPP
#define MIXT_FWD_HPP

// Forward declarations only. This header must include nothing else, so that any header may include it
// without paying for Eigen or Hana.

namespace mixt {

enum class dtype : unsigned char;
enum class policy_id : unsigned char;
template <dtype D>
struct dtype_tag;

namespace policy {
struct jax;
struct jax_x32;
struct jax_strict;
struct array_api;
} // namespace policy

template <class Policy>
struct lattice;

} // namespace mixt

#endif // MIXT_FWD_HPP
