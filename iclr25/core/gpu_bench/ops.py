"""The op registry: what ``gpu-bench --ops`` accepts and the cases each op expands to.

First-class ops (sizes from ``--sizes``):

- ``gemm``: C = A B, sizes ``S`` (M = N = K = S) or ``MxNxK``;
- ``attention``: forward, sizes are sequence lengths N (self-attention, N_q = N_kv);
  batch and heads default to the FlashAttention benchmark convention, 16k tokens per batch
  (B = 16384 / N) and H = 2048 / D; ``--kv-heads`` for grouped-query attention;
- ``attention-backward``: dQ, dK, dV from O, the LSE and dO (the forward is not timed),
  against each SDPA backend's backward; same shapes;
- ``linear-attention``: causal, chunked, sizes are N; B = 8, H = 16, D_k = D_v = head dim;
  with and without per-head decay (ALiBi slopes) unless ``--decay`` picks one;
- ``based``: Based's causal linear attention with the 2nd-order Taylor feature map
  (ThunderKittens' ``based`` benchmark shape): sizes are N; B = 8, H = 16, feature dim
  d' = 16, D_v = 64; runs on the linear-attention kernel (kernels/linear_attention/based.py).

Plus every registered kernel's ``hot_path_cases`` (iclr25/gpu/hotpath.py) under the
kernel's name, except the kernels the first-class ops already cover. Each case carries
its FLOP count (flops.py) and a memory estimate used to refuse sizes that do not fit.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from iclr25.core.gpu_bench import builders
from iclr25.errors import UsageError
from iclr25.gpu import flops

ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
#: kernels whose hot paths the first-class ops measure (with more references and sizes)
COVERED_KERNELS = {
    "gemm_bf16": "gemm",
    "gemm_hopper": "gemm",
    "gemm_wgmma": "gemm",
    "attention_fwd": "attention",
    "attention_bwd": "attention-backward",
    "linear_attention": "linear-attention",
}


@dataclass(frozen=True)
class OpOptions:
    dtype: str = "bf16"  # "bf16" or "fp16" on the GPU; CPU references run in fp32
    causal: bool = False
    head_dim: int = 128
    batch: int | None = None  # None: the op's convention (module docstring)
    heads: int | None = None
    #: attention: key/value heads (grouped-query attention when fewer than the query heads;
    #: None: as many as the query heads)
    kv_heads: int | None = None
    decay: str = "both"  # linear attention: "both", "yes" or "no"
    #: GEMM operand storage: A then B, "n" row-major, "t" the transpose of a row-major
    #: matrix ("nt" is x @ W.T); the reference multiplies the same views
    gemm_layout: str = "nn"
    quick: bool = False
    seed: int = 0


@dataclass(frozen=True)
class BenchCase:
    op: str
    shape: str
    dtype: str
    flops: float
    set_bytes: int  # one input set (the unit of rotation)
    extra_bytes: int  # outputs and reference temporaries, estimated
    kernel: str | None  # our kernel
    #: (sets, with_ours) -> Built; runs on the device the case was made for
    build: Callable[[int, bool], builders.Built]
    rotate: bool = True  # False: the case owns its inputs (hot paths)


# --- sizes ------------------------------------------------------------------------------
def parse_gemm_size(token: str) -> tuple[int, int, int]:
    if m := re.fullmatch(r"(\d+)x(\d+)x(\d+)", token):
        dims = tuple(int(g) for g in m.groups())
    elif token.isdigit():
        dims = (int(token),) * 3
    else:
        raise UsageError(
            f"gemm size {token!r} is not S or MxNxK", "e.g. --sizes 4096,2048x4096x1024"
        )
    if min(dims) < 1:
        raise UsageError(f"gemm size {token!r} has a zero dimension", "use sizes >= 1")
    return dims  # type: ignore[return-value]


def parse_length(op: str, token: str) -> tuple[int]:
    if not token.isdigit() or int(token) < 1:
        raise UsageError(f"{op} size {token!r} is not a sequence length", "e.g. --sizes 1024,4096")
    return (int(token),)


DEFAULT_SIZES = {  # (device, quick) -> sizes
    "gemm": {
        ("cuda", True): ["4096"],
        ("cuda", False): ["1024", "2048", "4096", "8192"],
        ("cpu", True): ["256"],
        ("cpu", False): ["256", "512"],
    },
    "attention": {
        ("cuda", True): ["4096"],
        ("cuda", False): ["1024", "2048", "4096", "8192"],
        ("cpu", True): ["256"],
        ("cpu", False): ["256", "512"],
    },
    "attention-backward": {
        ("cuda", True): ["4096"],
        ("cuda", False): ["1024", "4096", "8192"],
        ("cpu", True): ["256"],
        ("cpu", False): ["256", "512"],
    },
    "linear-attention": {
        ("cuda", True): ["4096"],
        ("cuda", False): ["1024", "4096", "16384"],
        ("cpu", True): ["512"],
        ("cpu", False): ["512", "1024"],
    },
    "based": {
        ("cuda", True): ["4096"],
        ("cuda", False): ["1024", "4096", "16384"],
        ("cpu", True): ["128"],
        ("cpu", False): ["256"],
    },
}


# --- case construction ------------------------------------------------------------------
def gemm_cases(size: str, opts: OpOptions, device: str) -> list[BenchCase]:
    m, n, k = parse_gemm_size(size)
    dtype = opts.dtype if device == "cuda" else "fp32"
    e = ELEMENT_BYTES[dtype]
    set_bytes = (m * k + k * n) * e
    extra = 3 * m * n * 4 + (m * k + k * n) * 8  # outputs + upcast copies for the exact product
    if device == "cuda":
        build = partial(
            _gpu, builders.build_gemm_gpu, m, n, k, opts.dtype, seed=opts.seed,
            layout=opts.gemm_layout,
        )  # fmt: skip
    else:
        build = partial(_cpu, builders.build_gemm_cpu, m, n, k, seed=opts.seed)
    shape = f"M={m} N={n} K={k}" + (f" {opts.gemm_layout}" if opts.gemm_layout != "nn" else "")
    kernel = "gemm_bf16" if device == "cuda" else None
    return [
        BenchCase("gemm", shape, dtype, flops.gemm_flops(m, n, k), set_bytes, extra, kernel, build)
    ]


#: the attention and linear-attention kernels put batch x heads on gridDim.y
MAX_BATCH_TIMES_HEADS = 65535


def _check_grid(op: str, n: int, b: int, h: int, device: str) -> None:
    if device == "cuda" and b * h > MAX_BATCH_TIMES_HEADS:
        raise UsageError(
            f"{op} N={n}: batch x heads = {b} x {h} = {b * h} exceeds the kernel's grid limit "
            f"of {MAX_BATCH_TIMES_HEADS}",
            "pass a smaller --batch or --heads",
        )


def _attention_dims(n: int, opts: OpOptions, device: str) -> tuple[int, int]:
    if device == "cuda":
        b, h = opts.batch or max(1, 16384 // n), opts.heads or max(1, 2048 // opts.head_dim)
    else:
        b, h = opts.batch or 1, opts.heads or 4
    _check_grid("attention", n, b, h, device)
    return b, h


def _kv_heads(h: int, opts: OpOptions) -> int:
    hkv = opts.kv_heads or h
    if hkv < 1 or h % hkv:
        raise UsageError(
            f"--kv-heads {hkv} does not divide the {h} query heads",
            "pass a divisor of --heads (e.g. --heads 16 --kv-heads 4)",
        )
    return hkv


def attention_cases(
    size: str, opts: OpOptions, device: str, backward: bool = False
) -> list[BenchCase]:
    op = "attention-backward" if backward else "attention"
    (n,) = parse_length(op, size)
    b, h = _attention_dims(n, opts, device)
    hkv = _kv_heads(h, opts)
    d, dtype = opts.head_dim, (opts.dtype if device == "cuda" else "fp32")
    q_tokens, kv_tokens = b * h * n * d, b * hkv * n * d
    e = ELEMENT_BYTES[dtype]
    set_bytes = (2 * q_tokens + 2 * kv_tokens) * e if backward else (q_tokens + 2 * kv_tokens) * e
    chunk_scores = min(b * h, max(1, builders.REFERENCE_CHUNK_BYTES // (12 * n * n))) * 12 * n * n
    extra = 6 * q_tokens * 4 + chunk_scores  # outputs, fp32 copies, one chunk of fp32 scores
    if backward:  # per set: O, LSE and a saved graph; exact: per kv head 4 fp32 score matrices
        extra = 12 * q_tokens * 4 + 4 * (h // hkv) * n * n * 4
    if device != "cuda":
        extra = 8 * q_tokens * 8 + 4 * b * h * n * n * 8  # fp64 exact, whole score matrices
    kind = "attention_bwd" if backward else "attention"
    if device == "cuda":
        build = partial(
            _gpu, getattr(builders, f"build_{kind}_gpu"), b, h, hkv, n, d, opts.causal, opts.dtype,
            seed=opts.seed,
        )  # fmt: skip
    else:
        build = partial(
            _cpu, getattr(builders, f"build_{kind}_cpu"), b, h, hkv, n, d, opts.causal,
            seed=opts.seed,
        )  # fmt: skip
    shape = f"B={b} H={h}" + (f" Hkv={hkv}" if hkv != h else "") + f" N={n} D={d}"
    shape += " causal" if opts.causal else ""
    fl_fn = flops.attention_backward_flops if backward else flops.attention_forward_flops
    fl = fl_fn(b, h, n, n, d, opts.causal)
    kernel = ("attention_bwd" if backward else "attention_fwd") if device == "cuda" else None
    return [BenchCase(op, shape, dtype, fl, set_bytes, extra, kernel, build)]


def attention_backward_cases(size: str, opts: OpOptions, device: str) -> list[BenchCase]:
    return attention_cases(size, opts, device, backward=True)


def linear_cases(size: str, opts: OpOptions, device: str) -> list[BenchCase]:
    (n,) = parse_length("linear-attention", size)
    b, h = (
        (opts.batch or 8, opts.heads or 16)
        if device == "cuda"
        else (opts.batch or 1, opts.heads or 4)
    )
    _check_grid("linear-attention", n, b, h, device)
    d, dtype = opts.head_dim, (opts.dtype if device == "cuda" else "fp32")
    tokens = b * h * n * d
    set_bytes = 3 * tokens * ELEMENT_BYTES[dtype]
    chunk = 64
    extra = 8 * tokens * 4 + 3 * b * h * n * (chunk + d) * 4  # outputs, fp32 copies, temporaries
    if device != "cuda":
        extra += 2 * b * h * n * n * 8  # the quadratic fp64 definition
    cases = []
    for decay in {"both": (False, True), "yes": (True,), "no": (False,)}[opts.decay]:
        if device == "cuda":
            build = partial(
                _gpu, builders.build_linear_gpu, b, h, n, d, decay, opts.dtype, seed=opts.seed
            )
        else:
            build = partial(_cpu, builders.build_linear_cpu, b, h, n, d, decay, seed=opts.seed)
        shape = f"B={b} H={h} N={n} D={d} decay={'yes' if decay else 'no'}"
        fl = flops.linear_attention_flops(b, h, n, d, d, chunk)
        kernel = "linear_attention" if device == "cuda" else None
        cases.append(
            BenchCase("linear-attention", shape, dtype, fl, set_bytes, extra, kernel, build)
        )
    return cases


#: Based's projections and value width (Based / ThunderKittens' benchmark)
BASED_FEATURE_DIM, BASED_VALUE_DIM = 16, 64


def based_cases(size: str, opts: OpOptions, device: str) -> list[BenchCase]:
    (n,) = parse_length("based", size)
    b, h = (
        (opts.batch or 8, opts.heads or 16)
        if device == "cuda"
        else (opts.batch or 1, opts.heads or 4)
    )
    d, dv = BASED_FEATURE_DIM, BASED_VALUE_DIM
    blocks = -(-(1 + d + d * d) // 128)
    _check_grid("based", n, b, h * blocks, device)
    dtype = opts.dtype if device == "cuda" else "fp32"
    set_bytes = b * h * n * (2 * d + dv) * ELEMENT_BYTES[dtype]
    # features and the blocked value copies, outputs, the chunked peer's temporaries
    heads_blocked = b * h * blocks
    extra = heads_blocked * n * (2 * 128 + 2 * (dv + 8)) * 4
    extra += 3 * heads_blocked * n * (64 + 128) * 4
    if device != "cuda":
        extra += 2 * b * h * n * n * 8  # the quadratic fp64 definition
    builder = builders.build_based_gpu if device == "cuda" else builders.build_based_cpu
    wrap = _gpu if device == "cuda" else _cpu
    extra_args = (opts.dtype,) if device == "cuda" else ()
    build = partial(wrap, builder, b, h, n, d, dv, *extra_args, seed=opts.seed)
    shape = f"B={b} H={h} N={n} d'={d} Dv={dv}"
    fl = flops.based_flops(b, h, n, d, dv)
    kernel = "linear_attention" if device == "cuda" else None
    return [BenchCase("based", shape, dtype, fl, set_bytes, extra, kernel, build)]


#: where the "cuda" cases put their tensors (tests run the GPU code path on "cpu")
GPU_TENSOR_DEVICE = "cuda"


def _gpu(builder, *args, seed: int, sets: int, with_ours: bool, **options):
    return builder(
        *args, sets=sets, seed=seed, with_ours=with_ours, device=GPU_TENSOR_DEVICE, **options
    )


def _cpu(builder, *args, seed: int, sets: int, with_ours: bool):
    return builder(*args, sets=sets, seed=seed)


FIRST_CLASS: dict[str, Callable[[str, OpOptions, str], list[BenchCase]]] = {
    "gemm": gemm_cases,
    "attention": attention_cases,
    "attention-backward": attention_backward_cases,
    "linear-attention": linear_cases,
    "based": based_cases,
}


# --- hot paths of registered kernels ----------------------------------------------------
#: kernels whose gpu-bench case is measured against a core module's CPU/CuPy path: the
#: case lives in core (``iclr25/gpu/`` never imports ``iclr25/core/``)
CORE_HOT_PATHS = {
    "bandit_sequential": "iclr25.core.bandit_replicable.gpu_cases",
    "rhm_bp": "iclr25.core.diffusion_probe.gpu_cases",
}


def _hot_path_module(spec):
    return importlib.import_module(CORE_HOT_PATHS.get(spec.name, spec.package))


def hot_path_kernels() -> list[str]:
    """Registered kernels that offer ``hot_path_cases``, minus the covered ones."""
    from iclr25.gpu.registry import all_kernels

    names = []
    for spec in all_kernels():
        module = _hot_path_module(spec)
        if hasattr(module, "hot_path_cases") and spec.name not in COVERED_KERNELS:
            names.append(spec.name)
    return names


def hot_path_cases(kernel: str, quick: bool) -> list[BenchCase]:
    from iclr25.gpu.registry import get_kernel

    module = _hot_path_module(get_kernel(kernel))
    cases = []
    for case in module.hot_path_cases(quick):
        build = partial(_hot, case)
        cases.append(
            BenchCase(kernel, case.shape, "", case.flops, 0, 0, kernel, build, rotate=False)
        )
    return cases


def _hot(case, sets: int, with_ours: bool):
    return builders.build_hot_path(case, with_ours)


# --- the registry -----------------------------------------------------------------------
def all_ops() -> list[str]:
    return [*FIRST_CLASS, *hot_path_kernels()]


def resolve_ops(requested: list[str] | None) -> list[str]:
    """Validate ``--ops``; UsageError listing the valid names for an unknown one."""
    valid = all_ops()
    if not requested:
        return valid
    unknown = [op for op in requested if op not in valid]
    if unknown:
        raise UsageError(
            f"unknown op{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}",
            f"choose from: {', '.join(valid)}",
        )
    return list(dict.fromkeys(requested))


def expand_cases(
    ops: list[str], sizes: list[str] | None, opts: OpOptions, device: str
) -> list[BenchCase]:
    """Every case of ``ops`` on ``device`` ("cuda" or "cpu"; hot paths only on "cuda")."""
    cases: list[BenchCase] = []
    for op in ops:
        if op in FIRST_CLASS:
            for size in sizes or DEFAULT_SIZES[op][(device, opts.quick)]:
                cases.extend(FIRST_CLASS[op](size, opts, device))
        elif sizes:  # refused on any device, so a CPU dry run catches it too
            raise UsageError(
                f"--sizes does not apply to the hot-path op {op}",
                "leave --sizes out or drop the op from --ops",
            )
        elif device == "cuda":
            cases.extend(hot_path_cases(op, opts.quick))
    return cases
