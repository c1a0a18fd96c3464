#!/usr/bin/env bash
# The GPU check in one call (a few minutes): runs the GPU tests and the GPU benchmark built by
# bench/gpu/build_device_check.sh and writes a summary. Usage: device_check.sh BIN_DIR [OUT_DIR]
# (OUT_DIR defaults to $OUT, else BIN_DIR/out). Without a GPU it says so and exits 0; it exits 1 when a test
# fails or mixt's GPU result differs from the CPU's.
set -uo pipefail
bin=${1:?usage: device_check.sh BIN_DIR [OUT_DIR]}
out=${2:-${OUT:-$bin/out}}
mkdir -p "$out"
summary="$out/summary.md"
status=0
{
  echo "# mixt device check ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
  else
    echo "GPU: none found (no nvidia-smi)"
  fi
  echo
  echo "## GPU tests (test_gpu)"
  echo
  echo '```'
} >"$summary"
timeout 240 "$bin/test_gpu" --gtest_color=no >"$out/test_gpu.log" 2>&1
rc=$?
grep -E '^\[==========\] [0-9]+ tests? from .* ran|^\[  (PASSED|SKIPPED) +\] [0-9]+ tests?|^\[  FAILED  \]|Failure|differs|further' \
  "$out/test_gpu.log" | head -n 60 >>"$summary"
echo "exit status $rc" >>"$summary"
echo '```' >>"$summary"
[[ $rc -ne 0 ]] && status=1
{
  echo
  echo "## GPU benchmark (mixt-gpu-bench)"
  echo
} >>"$summary"
timeout 240 "$bin/mixt-gpu-bench" --out "$out/gpu.md" >"$out/gpu_bench.log" 2>&1
rc=$?
cat "$out/gpu_bench.log" >>"$summary"
echo >>"$summary"
echo "exit status $rc" >>"$summary"
[[ $rc -ne 0 ]] && status=1
cat "$summary"
exit $status
