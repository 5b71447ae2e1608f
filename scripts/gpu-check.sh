#!/usr/bin/env bash
# The GPU evidence in one short run (for a lent GPU machine, ~10 minutes at most):
# GPU-marked tests, the kernel compile check, and a quick gpu-bench table.
# Usage: scripts/gpu-check.sh [OUTDIR]   (OUTDIR defaults to $OUT or ./gpu-check)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-check}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
$py -m iclr25 info --json > "$out/info.json" 2> "$out/info.err"
$py -m pytest -m gpu -q -p no:cacheprovider --timeout 300 2>&1 | tee "$out/pytest-gpu.txt" | tail -n 30
if $py -m iclr25 --help | grep -q gpu-bench; then
  timeout 300 $py -m iclr25 gpu-bench --quick --json --out "$out/bench" > "$out/gpu-bench.json" 2> "$out/gpu-bench.err"
  echo "gpu-bench exit $?"
  timeout 60 $py -m iclr25 gpu-bench --quick 2>&1 | tail -n 40 || true
fi
