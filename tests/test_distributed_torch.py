"""Data-parallel training under torchrun (iclr25/distributed_torch.py).

The end-to-end test runs ``diffusion-at train`` under ``torchrun --nproc-per-node 2`` on
the CPU (gloo) and compares every step's loss with one process at the same global batch
and seed, computed in this process from the checkpoint's own configuration.

Tolerance: rtol 1e-5 on each step's loss. Both runs draw the same global minibatch from
the same generator and take the same steps; the one difference is the order of float32
sums: the gradient of the batch mean is two half-batch means averaged by an all-reduce
instead of one mean over the whole batch (and the recorded loss likewise). That moves
results by a few float32 ulps per step (ε = 1.2e-7), which Adam carries forward: 40 free-AT
steps on 8 Gaussians differed by at most 2.3e-7 relative when this test was written. An
actual error (a rank's rows weighted equally with an odd batch split, a δ not merged,
the wrong rows) changes the losses by 1e-3 or more from the first step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.distributed_torch import (
    Context,
    DataParallel,
    context_from_env,
    from_main,
    is_follower,
    launched,
    shard_bounds,
)
from iclr25.errors import UsageError
from iclr25.testing import assert_close, error_line
from iclr25.threads import small_problem_threads

REPO = Path(__file__).resolve().parent.parent
LAUNCH = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


@given(st.integers(0, 10_000), st.integers(1, 64))
def test_shards_tile_the_batch_in_order_and_differ_by_at_most_one(n, world):
    bounds = [shard_bounds(n, r, world) for r in range(world)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    sizes = [stop - start for start, stop in bounds]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_shard_bounds_by_hand():
    assert [shard_bounds(63, r, 2) for r in range(2)] == [(0, 32), (32, 63)]
    assert [shard_bounds(10, r, 4) for r in range(4)] == [(0, 3), (3, 6), (6, 8), (8, 10)]


def test_the_launcher_environment_is_read_not_guessed():
    assert not launched({}) and not is_follower({})
    assert not launched({**LAUNCH, "WORLD_SIZE": "1"})  # one process: nothing to split
    assert not launched({k: v for k, v in LAUNCH.items() if k != "MASTER_PORT"})
    assert launched(LAUNCH) and is_follower(LAUNCH) and not is_follower({**LAUNCH, "RANK": "0"})
    ctx = context_from_env("cpu", {**LAUNCH, "LOCAL_RANK": "1"})
    assert ctx == Context(rank=1, world_size=2, local_rank=1, backend="gloo")
    assert context_from_env("cuda", LAUNCH).backend == "nccl"
    assert context_from_env("cpu", {}) == Context()
    with pytest.raises(UsageError, match="outside WORLD_SIZE"):
        context_from_env("cpu", {**LAUNCH, "RANK": "2"})


def test_a_batch_smaller_than_the_group_is_refused():
    with pytest.raises(UsageError, match="--batch-size 3 is smaller than the 4 processes"):
        DataParallel(Context(0, 4, 0, "gloo"), 3)


def test_uneven_shares_are_weighted_to_the_batch_mean():
    import torch

    weights = [DataParallel(Context(r, 2, r, "gloo"), 63)._weight() for r in range(2)]
    assert weights == pytest.approx([32 * 2 / 63, 31 * 2 / 63])
    rows = DataParallel(Context(1, 2, 1, "gloo"), 63).local(
        {"x": torch.arange(63), "k": torch.tensor(5)}
    )
    assert rows["x"].tolist() == list(range(32, 63)) and int(rows["k"]) == 5


def test_shares_of_other_terms_are_weighted_by_their_counts():
    """A short last batch (38 rows: 19 + 19) and variable token counts (7 of 20 terms on
    this rank): weight = count · world / total, so the DDP average of the scaled means is
    the mean over all terms."""
    dp = DataParallel(Context(1, 2, 1, "gloo"), 100)
    assert dp._weight() == 1.0 and dp._weight(total=38) == 1.0
    assert dp._weight(total=37) == pytest.approx(18 * 2 / 37)  # rank 1 holds rows 19..36
    assert dp._weight(7, 20) == pytest.approx(0.7)
    assert float(dp.scale(torch_tensor(2.0), 7, 20)) == pytest.approx(1.4)


def test_from_main_is_the_value_itself_in_one_process():
    assert from_main(Context(), 3.5) == 3.5


def torch_tensor(x: float):
    import torch

    return torch.tensor(x)


def _cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    full = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, *args], env=full, capture_output=True, text=True, timeout=timeout
    )


def test_a_follower_rank_prints_and_writes_nothing(tmp_path):
    """What the runner does for rank > 0 under a launcher, on any command."""
    out = tmp_path / "run"
    follower = _cli("-m", "iclr25", "info", "--json", "--out", str(out), env=LAUNCH)
    assert follower.returncode == 0, follower.stderr
    assert follower.stdout == "" and not out.exists()
    bad = ["-m", "iclr25", "diffusion-at", "train", "--steps", "0", "--json"]
    silent = _cli(*bad, env=LAUNCH)
    assert silent.returncode == 2 and silent.stdout == "" and "Error" not in silent.stderr
    leader = _cli(*bad, env={**LAUNCH, "RANK": "0"})  # rank 0 reports the same error
    assert leader.returncode == 2 and "--steps" in error_line(leader.stderr)


def _losses(path: Path) -> list[float]:
    from safetensors.torch import load_file

    return load_file(str(path))["losses"].tolist()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_two_gloo_processes_follow_the_one_process_loss_curve(tmp_path):
    """torchrun, 2 CPU processes, free AT (δ merged over ranks), an odd batch (32 + 31
    rows): the same losses step by step as one process; its checkpoints resume in one."""
    import torch

    from iclr25.core.diffusion_at.checkpoints import load_checkpoint
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.pipeline import train

    steps, ckpt_dir = 40, tmp_path / "ckpt"
    args = ["diffusion-at", "train", "--steps", str(steps), "--batch-size", "63"]
    args += ["--width", "32", "--diffusion-steps", "100", "--seed", "3", "--at", "free"]
    args += ["--alpha", "0.05", "--checkpoint-every", "20", "--checkpoint-dir", str(ckpt_dir)]
    torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    two = _cli(*torchrun, "-m", "iclr25", *args, "--json")
    assert two.returncode == 0, two.stderr[-3000:]
    doc = json.loads(two.stdout)  # one document: rank 1 printed nothing
    assert doc["environment"]["distributed"] == {"world_size": 2, "backend": "gloo"}
    assert sorted(p.name for p in ckpt_dir.iterdir()) == [
        "last.safetensors",
        "step-0000020.safetensors",
        "step-0000040.safetensors",
    ]
    assert not [line for line in two.stderr.splitlines() if line.startswith("Error")]

    saved = load_checkpoint(ckpt_dir / "last.safetensors")
    config, dataset = saved.config, load_dataset(saved.config.data)
    assert config.batch_size == 63  # the global batch is the user's --batch-size
    with torch.random.fork_rng(devices=[]), small_problem_threads():
        one = train(config, dataset).state.losses  # one process, in this one
        half = load_checkpoint(ckpt_dir / "step-0000020.safetensors")
        resumed = train(config, dataset, resume=half).state.losses
    assert len(one) == len(resumed) == steps
    assert_close(_losses(ckpt_dir / "last.safetensors"), one, rtol=1e-5, atol=0, what="2 vs 1")
    assert_close(resumed, one, rtol=1e-5, atol=0, what="resumed in one process")
    assert doc["results"]["final_loss"] == pytest.approx(sum(one[-100:]) / len(one), rel=1e-5)


_AVERAGE_GRADIENTS_WORKER = """
import sys, torch
from iclr25.distributed_torch import DataParallel, process_group

out = sys.argv[1]
with process_group("cpu") as ctx:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(63, 5, generator=gen), torch.randn(63, generator=gen)
    torch.manual_seed(ctx.rank)  # the ranks start different: broadcast makes them rank 0's
    model = torch.nn.Linear(5, 1)
    parallel = DataParallel(ctx, 63)
    parallel.broadcast(list(model.parameters()))
    torch.save([p.detach().clone() for p in model.parameters()], f"{out}/start{ctx.rank}.pt")
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    parallel.average_gradients(opt)
    rows = parallel.rows(63)  # 32 + 31: uneven shares
    for _ in range(3):
        opt.zero_grad()
        ((model(x[rows]).squeeze(1) - y[rows]) ** 2).mean().backward()
        opt.step()
    torch.save([p.detach().clone() for p in model.parameters()], f"{out}/end{ctx.rank}.pt")
"""


def test_averaged_gradients_are_the_global_batch_gradient(tmp_path):
    """:meth:`DataParallel.broadcast` and :meth:`DataParallel.average_gradients` (the
    SB3 SAC script's data parallelism, without DDP) on 2 gloo processes: a linear model,
    3 SGD steps on the mean squared error of 63 rows split 32 + 31. Both ranks end with
    bit-identical parameters, equal (to float32 rounding, atol 1e-6) to one process's
    steps on the mean over all 63 rows (equal weights for the two shares: 6.1e-3 off)."""
    import torch

    worker = tmp_path / "worker.py"
    worker.write_text(_AVERAGE_GRADIENTS_WORKER)
    torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    done = _cli(*torchrun, str(worker), str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    start = [torch.load(tmp_path / f"start{r}.pt") for r in range(2)]
    end = [torch.load(tmp_path / f"end{r}.pt") for r in range(2)]
    for a, b in zip(*start, strict=True):
        assert torch.equal(a, b)  # broadcast: rank 1 holds rank 0's initial parameters
    for a, b in zip(*end, strict=True):
        assert torch.equal(a, b)  # the same update on every rank

    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(63, 5, generator=gen), torch.randn(63, generator=gen)
    model = torch.nn.Linear(5, 1)
    with torch.no_grad():
        for param, value in zip(model.parameters(), start[0], strict=True):
            param.copy_(value)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        ((model(x).squeeze(1) - y) ** 2).mean().backward()
        opt.step()
    for name, param, two in zip(("weight", "bias"), model.parameters(), end[0], strict=True):
        assert_close(two, param.detach(), rtol=0, atol=1e-6, what=name)
