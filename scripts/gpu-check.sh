#!/usr/bin/env bash
# The GPU evidence in one short run (for a lent GPU machine, ~10 minutes at most):
# GPU-marked tests, the kernel compile check, and a quick gpu-bench table whose ratios are
# the evidence for the targets in docs/gpu-bench.md.
# Usage: scripts/gpu-check.sh [OUTDIR]   (OUTDIR defaults to $OUT or ./gpu-check)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-check}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"
start=$(date +%s)
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
$py -m iclr25 info --json > "$out/info.json" 2> "$out/info.err"
# 1. correctness: every gpu-marked test (kernels against their fp32 references), <= 5 min
timeout 300 $py -m pytest -m gpu -q -p no:cacheprovider --timeout 240 2>&1 \
  | tee "$out/pytest-gpu.txt" | tail -n 30
echo "pytest exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s"
if $py -m iclr25 --help | grep gpu-bench > /dev/null; then  # not -q: pipefail + SIGPIPE
  # 2. registers and spills (nvcc, when the machine has it; cached)
  timeout 60 $py -m iclr25 gpu-bench --compile-only --json > "$out/compile.json" 2> "$out/compile.err"
  echo "compile check exit $?"
  # 3. the quick bench: GEMM 4096^3, attention N=4096 D=128, linear attention N=4096, hot paths
  timeout 210 $py -m iclr25 gpu-bench --quick --json --save "$out/gpu-bench-table.json" \
    --out "$out/bench" > "$out/gpu-bench.json" 2> "$out/gpu-bench.err"
  echo "gpu-bench exit $?"
  $py - "$out/gpu-bench.json" <<'EOF' || tail -n 20 "$out/gpu-bench.err"
import json, sys
from rich.console import Console
from iclr25.commands.gpu_bench import _render
doc = json.load(open(sys.argv[1]))
print("device:", (doc["environment"]["device"] or {}).get("name"), "| warnings:", doc["warnings"])
_render(Console(width=200), doc["results"])
EOF
fi
echo "gpu-check done in $(( $(date +%s) - start )) s; files in $out"
