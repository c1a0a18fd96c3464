#ifndef MIXT_MIXT_HPP
#define MIXT_MIXT_HPP

// The umbrella header: includes every public header of mixt and nothing else.

#include "mixt/version.hpp"
#include "mixt/fwd.hpp"

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/storage.hpp"

#include "mixt/lattice/policy.hpp"
#include "mixt/lattice/lattice.hpp"
#include "mixt/lattice/promote.hpp"

#endif // MIXT_MIXT_HPP
