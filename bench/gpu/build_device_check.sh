#!/usr/bin/env bash
# Builds, on a machine with nvcc and no GPU, what bench/gpu/device_check.sh runs on one: the GPU tests
# (test_gpu) and the GPU benchmark (mixt-gpu-bench), sm_90 (H100/H200), libstdc++ linked statically, copied
# with the check script into build-gpu/check (git-ignored: /build*/). Then, on the GPU machine, from the
# repository root: `bash build-gpu/check/device_check.sh build-gpu/check "$OUT"`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=build-gpu
jobs=${MIXT_JOBS:-$(nproc 2>/dev/null || echo 2)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
  -DMIXT_BUILD_TESTS=ON -DMIXT_BUILD_BENCH=OFF -DMIXT_BUILD_EXAMPLES=OFF -DMIXT_BUILD_TOOLS=OFF \
  -DMIXT_TEST_COMPILE_CHECKS=OFF -DMIXT_TEST_EDGE_VALUES=OFF -DMIXT_CUDA_ARCHITECTURES=90-real \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
cmake --build "$build" --parallel "$jobs" --target test_gpu mixt-gpu-bench
mkdir -p "$build/check"
cp "$build/test/gpu/test_gpu" "$build/bench/gpu/mixt-gpu-bench" bench/gpu/device_check.sh "$build/check/"
echo "ready: $build/check ($(du -sh "$build/check" | cut -f1)); on the GPU machine: bash $build/check/device_check.sh $build/check \"\$OUT\""
