// Builds against an installed mixt: the umbrella header and both dependencies
// are reachable through mixt::mixt alone, and the version CMake found is the
// version in the header.
#include <mixt/mixt.hpp>
#include <mixt/version.hpp>

#include <Eigen/Core>
#include <boost/version.hpp>

#include <cstdio>

static_assert(EIGEN_VERSION_AT_LEAST(3, 4, 0));
static_assert(BOOST_VERSION >= 107400);

int main() {
  std::printf("mixt %d.%d.%d\n", MIXT_VERSION_MAJOR, MIXT_VERSION_MINOR, MIXT_VERSION_PATCH);
  return MIXT_VERSION_MAJOR == EXPECT_MAJOR && MIXT_VERSION_MINOR == EXPECT_MINOR &&
                 MIXT_VERSION_PATCH == EXPECT_PATCH
             ? 0
             : 1;
}
