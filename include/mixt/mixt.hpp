#ifndef MIXT_MIXT_HPP
#define MIXT_MIXT_HPP

// The umbrella header: includes every public header of mixt and nothing else.

#include "mixt/version.hpp"
#include "mixt/fwd.hpp"

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/storage.hpp"
#include "mixt/dtype/convert.hpp"
#include "mixt/dtype/packed.hpp"

#include "mixt/lattice/graph.hpp"
#include "mixt/lattice/policy.hpp"
#include "mixt/lattice/lattice.hpp"
#include "mixt/lattice/promote.hpp"

#include "mixt/expr/functors.hpp"
#include "mixt/expr/rules.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/operators.hpp"
#include "mixt/expr/reduce.hpp"

#include "mixt/errors.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/reduce.hpp"
#include "mixt/eval/assign.hpp"
#include "mixt/eval/explain.hpp"

#endif // MIXT_MIXT_HPP
