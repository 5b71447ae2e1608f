#!/usr/bin/env bash
# The GPU evidence in one prepared run on a lent H100/H200 (under 10 minutes):
#   1. the self-checks of the kernels written without a GPU (gemm_hopper, gemm_wgmma,
#      attention_hopper, attention_bwd), each in a subprocess with a time limit, verdicts cached;
#   2. every gpu-marked test (kernels against their fp32 references, descriptor churn);
#   3. the benchmark through the public CLI: `python -m benchmarks --only gpu-bench` runs
#      `iclr25 gpu-bench --json` for GEMM (1024, 4000, 4096, 4096x4224x4096, 8192, x @ W.T),
#      attention forward (4096, 8192, causal, GQA), backward, linear attention (with
#      flash-linear-attention when installed) and writes benchmarks/results/gpu-bench.json
#      with provenance (what `make docs` renders);
#   4. the other commands' hot paths (gpu-bench --quick) into OUTDIR;
#   5. the report: tables, the kernel that ran per case, and one line per goal with its
#      ratio and verdict; then `python -m docs` renders the docs from the new result file.
#
# Usage: [PYTHON=python3] scripts/gpu-check.sh [OUTDIR]     (OUTDIR: $OUT, else ./gpu-check)
#
# GPU_CHECK_LIMITS="SELFCHECK TESTS BENCH HOT" sets each step's limit in seconds (default
# 90 120 300 45; 0 skips a step). flash-linear-attention: the lent machine has no network;
# wheels in ./wheels (e.g. `pip download flash-linear-attention fla-core einops --no-deps
# -d wheels` beforehand, carried with the tree) are installed with --no-deps if `fla` is
# not importable. Rerunnable: files in OUTDIR are overwritten.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-check}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"
start=$(date +%s)
read -r t_self t_tests t_bench t_hot <<< "${GPU_CHECK_LIMITS:-90 120 300 45}"
since() { echo "$(($(date +%s) - start)) s"; }
has() { "$py" -c "import $1" > /dev/null 2>&1; }

nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi is not available"
if ! "$py" -c "import iclr25.cli" 2> "$out/import.err"; then
  echo "iclr25 does not import with $py:"
  tail -n 5 "$out/import.err"
  exit 1
fi
if ! has fla && ls wheels/*.whl > /dev/null 2>&1; then
  "$py" -m pip install --no-index --no-deps --find-links wheels wheels/*.whl > "$out/fla-install.txt" 2>&1 \
    && echo "installed the wheels in ./wheels" || echo "could not install ./wheels (see $out/fla-install.txt)"
fi
has fla || echo "flash-linear-attention is not installed: its rows will say unavailable"

# 1. self-checks (a subprocess each; a hang is a timeout, not a stuck run)
reports=()
if [ "$t_self" -gt 0 ]; then
  for kernel in gemm_hopper gemm_wgmma attention_hopper attention_bwd; do
    ICLR25_SELFCHECK_TIMEOUT_S="$t_self" timeout "$((t_self + 10))" "$py" -c "
import json, sys
from iclr25.gpu import selfcheck
v = selfcheck.verify('$kernel', 0)
print(json.dumps(v.as_dict()))
" > "$out/selfcheck-$kernel.json" 2> "$out/selfcheck-$kernel.err"
    reports+=("$out/selfcheck-$kernel.json")
    echo "self-check $kernel done after $(since)"
  done
fi

# 2. correctness: every test file with gpu-marked tests
if [ "$t_tests" -eq 0 ]; then
  echo "GPU tests skipped (GPU_CHECK_LIMITS)"
elif has pytest; then
  mapfile -t files < <(grep -rlE --include='test_*.py' 'pytest\.mark\.gpu' tests | sort)
  opts=(-m gpu -q -p no:cacheprovider --continue-on-collection-errors)
  if has pytest_timeout; then opts+=(--timeout $((t_tests * 9 / 10))); fi
  has hypothesis || echo "hypothesis is not installed: test files importing it cannot be collected"
  timeout "$t_tests" "$py" -m pytest "${opts[@]}" "${files[@]}" 2>&1 | tee "$out/pytest-gpu.txt" \
    | tail -n 30
  echo "pytest exit ${PIPESTATUS[0]} after $(since)"
else
  echo "pytest is not installed: GPU tests skipped (every benchmark row is still checked)"
fi

# 3. the benchmark through the public CLI -> benchmarks/results/gpu-bench.json
if [ "$t_bench" -gt 0 ]; then
  timeout "$t_bench" "$py" -m benchmarks --only gpu-bench > "$out/benchmark.txt" 2>&1
  echo "benchmark exit $? after $(since)"
  cp benchmarks/results/gpu-bench.json "$out/gpu-bench.json" 2> /dev/null
  reports+=("benchmarks/results/gpu-bench.json")
fi

# 4. the other commands' hot paths
hot=$("$py" -c "from iclr25.core.gpu_bench.ops import hot_path_kernels as h; print(','.join(h()))")
if [ -n "$hot" ] && [ "$t_hot" -gt 0 ]; then
  timeout "$t_hot" "$py" -m iclr25 gpu-bench --quick --ops "$hot" --json --overwrite \
    --save "$out/hot-paths-table.json" --out "$out/hot-paths" > "$out/hot-paths.json" \
    2> "$out/hot-paths.err"
  echo "gpu-bench hot paths exit $? after $(since)"
  reports+=("$out/hot-paths.json")
fi

# 5. the report, and the docs rendered from the new result file
"$py" scripts/gpu_check_report.py "${reports[@]}" | tee "$out/report.txt"
"$py" -m docs > "$out/docs.txt" 2>&1 && echo "docs rendered from benchmarks/results" \
  || echo "python -m docs failed (see $out/docs.txt)"
echo "gpu-check done in $(since); files in $out"
