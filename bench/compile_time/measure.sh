#!/usr/bin/env bash
# Compile-time figures for the README: the time to compile a few translation units, median of N runs, with
# each compiler, printed as markdown tables.
#
#   (c) baseline    an empty TU that includes <unsupported/Eigen/CXX11/Tensor>   (what an Eigen Tensor user pays)
#   (b) umbrella    a TU that only includes <mixt/mixt.hpp>         (the cost of including all of mixt)
#   (d) lattice     a TU that only includes <mixt/lattice/promote.hpp> and Mp11 (the headers (a) includes)
#   (a) all pairs   test/lattice/promote_all_pairs.cpp: promote_t + has_promotion_v for all 33 x 33 dtype pairs
#                   under the 4 lattice-only built-in policies (4356 pairs), each checked against promote_types
# "over Tensor" is (b) - (c), the include cost of mixt (issue 42's mark: at most MARK_S seconds of CPU with each
# compiler); "per pair" is ((a) - (d)) / 4356, the compile-time cost of one promotion query.
# A second table gives, for each of the six built-in policies, a TU that includes <mixt/mixt.hpp> and asks
# one promote_types of that policy (which derives its lattice), less (b): what using a policy costs.
#
# Each cell is the median of RUNS timed compiles after one untimed warm-up, run one at a time: wall clock
# (what the user waits for), and in parentheses CPU time (user + sys), which a busy machine disturbs less.
#
# Usage: bench/compile_time/measure.sh [compiler...]        (default: g++ clang++, those that exist)
# Environment:
#   RUNS=5                  timed runs per cell
#   CXXFLAGS_EXTRA=...      added to every compile (default: -std=c++20 -c, no -O flag)
#   EIGEN3_INCLUDE_DIR      default: pkg-config eigen3, else /usr/include/eigen3
#   BOOST_INCLUDE_DIR       default: none (Boost from the compiler's default include path)
#   BUDGET_S=10             exit 1 when the CPU-time median of (a) exceeds this many seconds
#   MARK_S=1.0              exit 1 when the CPU-time median of (b) - (c) exceeds this many seconds

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
runs="${RUNS:-5}"
budget="${BUDGET_S:-10}"
mark="${MARK_S:-1.0}"
if [[ $# -gt 0 ]]; then compilers=("$@"); else compilers=(g++ clang++); fi

eigen="${EIGEN3_INCLUDE_DIR:-}"
if [[ -z "$eigen" ]]; then
  eigen="$(pkg-config --variable=includedir eigen3 2> /dev/null || true)"
  [[ -n "$eigen" && -d "$eigen/eigen3" ]] && eigen="$eigen/eigen3"
  [[ -z "$eigen" || ! -f "$eigen/Eigen/Core" ]] && eigen=/usr/include/eigen3
fi
[[ -f "$eigen/Eigen/Core" ]] || { echo "measure.sh: Eigen not found (set EIGEN3_INCLUDE_DIR)" >&2; exit 2; }

includes=(-I "$root/include" -isystem "$eigen")
# A default system directory must not be named again: -isystem /usr/include breaks #include_next <math.h>.
case "${BOOST_INCLUDE_DIR:-}" in
  "" | /usr/include | /usr/include/ | /usr/local/include | /usr/local/include/) ;;
  *) includes+=(-isystem "$BOOST_INCLUDE_DIR") ;;
esac
# shellcheck disable=SC2206
extra=(${CXXFLAGS_EXTRA:-})

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '#include <unsupported/Eigen/CXX11/Tensor>\n' > "$work/baseline.cpp"
printf '#include <mixt/mixt.hpp>\n' > "$work/umbrella.cpp"
printf '#include <boost/mp11/algorithm.hpp>\n#include <boost/mp11/list.hpp>\n#include <mixt/lattice/promote.hpp>\n' \
  > "$work/lattice.cpp"
all_pairs="$root/test/lattice/promote_all_pairs.cpp"
policies=(jax jax_x32 jax_strict array_api torch megengine)
for p in "${policies[@]}"; do
  printf '#include <mixt/mixt.hpp>\nstatic_assert(mixt::promote_types(mixt::dtype::int8, mixt::dtype::int8, mixt::policy::%s{}).has_value());\n' \
    "$p" > "$work/policy_$p.cpp"
done

median() { sort -g | awk '{ t[NR] = $1 } END { if (NR % 2) print t[(NR + 1) / 2]; else printf "%.3f\n", (t[NR / 2] + t[NR / 2 + 1]) / 2 }'; }

# Prints "<wall median> <cpu median>" in seconds for compiling $2 with $1.
measure() {
  local cxx="$1" src="$2" i t walls=() cpus=()
  if ! "$cxx" -std=c++20 "${includes[@]}" "${extra[@]}" -c "$src" -o "$work/out.o" 2> "$work/err"; then
    echo "measure.sh: $cxx cannot compile $src:" >&2
    head -n 20 "$work/err" >&2
    exit 2
  fi
  for ((i = 0; i < runs; ++i)); do
    t="$( { TIMEFORMAT='%3R %3U %3S'; time "$cxx" -std=c++20 "${includes[@]}" "${extra[@]}" -c "$src" -o "$work/out.o" 2> /dev/null; } 2>&1)"
    read -r real user sys <<< "$t"
    walls+=("$real")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')")
  done
  echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${cpus[@]}" | median)"
}

cell() { awk -v w="$1" -v c="$2" 'BEGIN { printf "%.2f (%.2f)", w, c }'; }

over_budget=0
rows=()
policy_rows=()
for cxx in "${compilers[@]}"; do
  if ! command -v "$cxx" > /dev/null; then
    echo "measure.sh: $cxx not found, skipped" >&2
    continue
  fi
  version="$("$cxx" --version | head -n 1)"
  # (set -e stops here when a compile fails: an assignment takes the substitution's exit status)
  c="$(measure "$cxx" "$work/baseline.cpp")"
  b="$(measure "$cxx" "$work/umbrella.cpp")"
  d="$(measure "$cxx" "$work/lattice.cpp")"
  a="$(measure "$cxx" "$all_pairs")"
  read -r cw cc <<< "$c"
  read -r bw bc <<< "$b"
  read -r dw dc <<< "$d"
  read -r aw ac <<< "$a"
  over="$(awk -v b="$bw" -v c="$cw" -v bc="$bc" -v cc="$cc" 'BEGIN { printf "%.2f (%.2f)", b - c, bc - cc }')"
  prow="| $version |"
  for p in "${policies[@]}"; do
    read -r pw pc <<< "$(measure "$cxx" "$work/policy_$p.cpp")"
    prow+=" $(awk -v p="$pw" -v b="$bw" -v pc="$pc" -v bc="$bc" 'BEGIN { printf "%.2f (%.2f)", p - b, pc - bc }') |"
  done
  policy_rows+=("$prow")
  per_pair="$(awk -v a="$aw" -v d="$dw" -v ac="$ac" -v dc="$dc" 'BEGIN { printf "%.2f (%.2f)", (a - d) / 4356 * 1000, (ac - dc) / 4356 * 1000 }')"
  rows+=("| $version | $(cell "$cw" "$cc") | $(cell "$bw" "$bc") | $over | $(cell "$dw" "$dc") | $(cell "$aw" "$ac") | $per_pair |")
  if awk -v b="$bc" -v c="$cc" -v m="$mark" 'BEGIN { exit !(b - c > m) }'; then
    echo "measure.sh: $cxx: <mixt/mixt.hpp> costs $(awk -v b="$bc" -v c="$cc" 'BEGIN { printf "%.2f", b - c }') s of CPU over Eigen Tensor, over the mark of ${mark} s" >&2
    over_budget=1
  fi
  if awk -v a="$ac" -v m="$budget" 'BEGIN { exit !(a > m) }'; then
    echo "measure.sh: $cxx took ${ac} s of CPU for the all-pairs TU, over the budget of ${budget} s" >&2
    over_budget=1
  fi
done

echo "Compile time in seconds: wall clock (CPU time, user + sys), median of $runs runs after one warm-up, one"
echo "compile at a time. Flags: -std=c++20 -c ${CXXFLAGS_EXTRA:-}(no -O). Machine: $(nproc) cores, $(uname -m)."
echo
echo "| compiler | (c) \`<unsupported/Eigen/CXX11/Tensor>\` | (b) \`<mixt/mixt.hpp>\` | (b) - (c), over Tensor | (d) \`<mixt/lattice/promote.hpp>\` | (a) all pairs, 4 x 33 x 33 | ms per pair, ((a) - (d)) / 4356 |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "Using one policy: a TU with <mixt/mixt.hpp> and one promote_types of that policy (its lattice derived), less (b)."
echo
echo "| compiler | $(printf '`%s` | ' "${policies[@]}")"
echo "|---|$(printf -- '---:|%.0s' "${policies[@]}")"
printf '%s\n' "${policy_rows[@]}"
exit "$over_budget"
