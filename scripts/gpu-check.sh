#!/usr/bin/env bash
# The GPU evidence in one short run (a lent GPU machine, under 10 minutes): the GPU-marked
# tests, the quick gpu-bench tables (our kernels against cuBLAS / SDPA / PyTorch, then the
# other commands' hot paths), the issue's target ratios, and the nvcc compile check.
#
# Usage: [PYTHON=python3] scripts/gpu-check.sh [OUTDIR]     (OUTDIR: $OUT, else ./gpu-check)
#
# Needs only what iclr25 itself needs (torch, typer, rich, numpy; cupy to run our kernels).
# pytest, pytest-timeout, hypothesis and nvcc are used when present and skipped otherwise: a
# test file importing a missing package is reported as a collection error and the others
# still run; without pytest, the bench's "ok" column still checks every kernel against its
# fp32 reference. Each step has its own time limit (180 + 170 + 120 + 50 s by default; set
# GPU_CHECK_LIMITS="TESTS KERNELS HOT COMPILE" to change them, 0 skips a step), so a slow
# step cannot eat the next, and the tables print whatever was measured. Rerunnable: files
# in OUTDIR are overwritten.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-check}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"
start=$(date +%s)
read -r t_tests t_kernels t_hot t_compile <<< "${GPU_CHECK_LIMITS:-180 170 120 50}"
since() { echo "$(($(date +%s) - start)) s"; }
has() { "$py" -c "import $1" > /dev/null 2>&1; }

nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi is not available"
if ! "$py" -c "import iclr25.cli" 2> "$out/import.err"; then
  echo "iclr25 does not import with $py:"
  tail -n 5 "$out/import.err"
  exit 1
fi
"$py" -m iclr25 info --json > "$out/info.json" 2> "$out/info.err" \
  || echo "iclr25 info failed (see $out/info.err)"

# 1. correctness: every test file with gpu-marked tests (kernels against fp32 references)
if [ "$t_tests" -eq 0 ]; then
  echo "GPU tests skipped (GPU_CHECK_LIMITS)"
elif has pytest; then
  mapfile -t files < <(grep -rlE --include='test_*.py' 'pytest\.mark\.gpu' tests | sort)
  opts=(-m gpu -q -p no:cacheprovider --continue-on-collection-errors)
  if has pytest_timeout; then opts+=(--timeout $((t_tests * 9 / 10))); fi
  has hypothesis || echo "hypothesis is not installed: test files importing it cannot be collected"
  timeout "$t_tests" "$py" -m pytest "${opts[@]}" "${files[@]}" 2>&1 | tee "$out/pytest-gpu.txt" \
    | tail -n 40
  echo "pytest exit ${PIPESTATUS[0]} after $(since)"
else
  echo "pytest is not installed: GPU tests skipped (the bench's 'ok' column still checks them)"
fi

# 2. the quick bench: GEMM 4096^3, attention N=4096 D=128, linear attention N=4096 (the
#    evidence for the targets), then the hot paths other commands register
bench() {  # name, time limit (s), --ops
  if [ "$2" -eq 0 ]; then echo "gpu-bench $1 skipped (GPU_CHECK_LIMITS)"; return; fi
  timeout "$2" "$py" -m iclr25 gpu-bench --quick --ops "$3" --json --overwrite \
    --save "$out/$1-table.json" --out "$out/$1" > "$out/$1.json" 2> "$out/$1.err"
  local rc=$?
  echo "gpu-bench $1 exit $rc after $(since)"
  if [ "$rc" -ne 0 ]; then tail -n 5 "$out/$1.err"; fi
}
bench kernels "$t_kernels" gemm,attention,linear-attention
hot=$("$py" -c "from iclr25.core.gpu_bench.ops import hot_path_kernels as h; print(','.join(h()))")
if [ -n "$hot" ]; then bench hot-paths "$t_hot" "$hot"; fi

# 3. registers and spills with nvcc (when the machine has it; cached)
reports=("$out/kernels.json")
if [ -n "$hot" ]; then reports+=("$out/hot-paths.json"); fi
if [ "$t_compile" -eq 0 ]; then
  echo "compile check skipped (GPU_CHECK_LIMITS)"
elif "$py" -c "from iclr25.gpu.compile import nvcc_path as n; raise SystemExit(n() is None)"; then
  timeout "$t_compile" "$py" -m iclr25 gpu-bench --compile-only --json > "$out/compile.json" \
    2> "$out/compile.err"
  echo "compile check exit $? after $(since)"
  reports+=("$out/compile.json")
else
  echo "nvcc is not on PATH: compile check skipped"
fi

"$py" scripts/gpu_check_report.py "${reports[@]}"
echo "gpu-check done in $(since); files in $out"
