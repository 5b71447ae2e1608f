"""The ph-dgn headline sweep: the ``copy`` transfer task at the command's default budget.

    nice -n 10 python scripts/ph_dgn_sweep.py [--out benchmarks/results/ph_dgn_sweep.json]

Line (scored), ring and crossed-ring (reported alongside, not scored): distances 3, 5, 10,
all seven models (phdgn-c, phdgn, gcn, gin, adgn, graphcon, mlp), 3 seeds, width 16,
L = distance, 500/100/100 graphs, 300 full-batch Adam epochs, one torch thread, one
process. The pass conditions are the ones fixed in :mod:`iclr25.core.ph_dgn.transfer`
(``verdict``) before this ran; nothing here changes or re-reads them:

  1. control: MLP ≥ 0.8·chance at every distance, else ``void: solvable without edges``;
  2. the PH-DGN variant with the lower validation MSE ≤ 0.35·chance at distance 10;
  3. GCN and GIN ≥ 0.6·chance at distance 10, 95 % intervals disjoint from that PH-DGN's.

Every module is imported before the first run, and the file is rewritten after each
topology (line first). Each finished task is appended to a checkpoint
(``<out>.tasks.jsonl``: task label, config, seed, result, and a digest of the ph-dgn core
sources); a rerun reuses only entries with the same config, seed and digest, so an
interrupted sweep resumes with identical results. A line per task goes to stderr.
``--quick`` (tiny sizes, no verdict) checks the script end to end in seconds;
``--status`` prints, per topology, how many tasks the checkpoint already holds for the
current code (what a rerun would reuse) and trains nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from iclr25 import atomic
from iclr25.core.ph_dgn.transfer import (
    BASELINE_MIN,
    CONTROL_MIN,
    PHDGN_MAX,
    TransferConfig,
    headline,
    summarise,
    tasks,
)
from iclr25.output import to_jsonable
from iclr25.parallel import Task
from iclr25.provenance import provenance

TOPOLOGIES = ("line", "ring", "crossed-ring")  # line scored; the others reported
SEED = 0  # the CLI's default --seed; task seeds derive from it (iclr25.parallel)
QUICK = {"distances": (3,), "graphs": (8, 4, 4), "epochs": 3, "seeds": 1}


CORE = Path(__file__).resolve().parent.parent / "iclr25" / "core" / "ph_dgn"
CORE_FILES = ("transfer.py", "transfer_data.py", "models.py", "phdgn.py", "baselines.py",
              "graphs.py")  # fmt: skip


def code_digest() -> str:
    """What a cached task result depends on: the sources of the transfer task."""
    h = hashlib.sha256()
    for name in CORE_FILES:
        h.update(name.encode() + (CORE / name).read_bytes())
    return h.hexdigest()[:16]


class Checkpoint:
    """Finished tasks, one JSON line each, reused when config, seed and code match."""

    def __init__(self, path: Path, digest: str):
        self.path, self.digest, self.done = path, digest, {}
        if path.exists():
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                if entry["digest"] == digest:
                    self.done[self.key(entry["config"], entry["seed"])] = entry["result"]

    @staticmethod
    def key(config: dict, seed: int) -> str:
        return json.dumps([config, seed], sort_keys=True)

    def run(self, task: Task) -> dict:
        key = self.key(task.config, task.seed)
        if key not in self.done:
            t0 = time.process_time()
            self.done[key] = task.fn(task.config, task.seed)
            entry = {"label": task.label, "config": task.config, "seed": task.seed,
                     "digest": self.digest, "result": self.done[key],
                     "cpu_s": time.process_time() - t0}  # fmt: skip
            with self.path.open("a") as fh:
                fh.write(json.dumps(entry) + "\n")
            print(f"{task.config['topology']} {task.label}: test MSE "
                  f"{self.done[key]['test_mse']:.4g}, {entry['cpu_s']:.0f} CPU-s",
                  file=sys.stderr, flush=True)  # fmt: skip
        return self.done[key]


def run_topology(topology: str, quick: bool, checkpoint: Checkpoint) -> dict:
    cfg = TransferConfig(topology, "copy", **(QUICK if quick else {}), quick=quick)
    task_list = tasks(cfg, SEED)
    t0 = time.process_time()
    outcomes = [checkpoint.run(task) for task in task_list]
    results = summarise(cfg, task_list, outcomes)
    results["headline"] = headline(results)
    config = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()}
    return {"config": config, "results": results, "cpu_s_this_process": time.process_time() - t0}


def status(quick: bool, checkpoint: Checkpoint) -> str:
    """``topology: done/total`` per topology for the current code digest."""
    parts = []
    for topology in TOPOLOGIES:
        cfg = TransferConfig(topology, "copy", **(QUICK if quick else {}), quick=quick)
        task_list = tasks(cfg, SEED)
        done = sum(checkpoint.key(t.config, t.seed) in checkpoint.done for t in task_list)
        parts.append(f"{topology} {done}/{len(task_list)}")
    return f"checkpoint (digest {checkpoint.digest}): " + ", ".join(parts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ph_dgn_sweep.json"))
    parser.add_argument("--quick", action="store_true", help="tiny sizes, no verdict")
    parser.add_argument("--status", action="store_true", help="tasks done so far; no training")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    doc = {
        "schema": "iclr25-sweep/1",
        "name": "ph_dgn_sweep",
        "about": "copy transfer task, default budget, 3 seeds; line scored, rings reported",
        "provenance": provenance(seeds=[SEED]),
        "pass_conditions": {
            "topology": "line",
            "distance": 10,
            "control_min_x_chance": CONTROL_MIN,
            "phdgn_max_x_chance": PHDGN_MAX,
            "baselines_min_x_chance": BASELINE_MIN,
        },
        "topologies": {},
        "verdict": None,
    }
    digest = code_digest()
    doc["code_digest"] = digest
    checkpoint = Checkpoint(args.out.with_suffix(".tasks.jsonl"), digest)
    print(status(args.quick, checkpoint), file=sys.stderr, flush=True)
    if args.status:
        return 0
    for topology in TOPOLOGIES:
        doc["topologies"][topology] = run_topology(topology, args.quick, checkpoint)
        doc["verdict"] = doc["topologies"]["line"]["results"]["verdict"]
        atomic.write_json(args.out, to_jsonable(doc))  # numpy bools in the checks
        print(f"{topology}: {doc['topologies'][topology]['results']['headline']}", flush=True)
    print(f"verdict (line, distance 10): {doc['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
