"""Wall and CPU time of the `iclr25 exicl` commands that issue 24 gives a time target.

    nice -n 5 python scripts/time_exicl_cli.py [--rounds 1]

Targets (issue 24, "on 2 cores"):

- ``train-prior`` on 2,000 trajectories of horizon ≤ 32 (the defaults, on the built-in
  ``wall`` layout): ≤ 3 min;
- ``recover`` without ``--demos`` (the ``wall`` demo, bundled prior, K = 5, 20 rounds ×
  32 samples): ≤ 60 s; ``recover --k 4`` on the 16×16 grid: ≤ 90 s;
- ``experiment --quick`` (2 seeds, K = 3, 6 rounds × 16 samples, ``--workers 2``,
  ``--no-cache``): ≤ 5 min.

Each command runs as a subprocess with ``OMP_NUM_THREADS=1`` (``scripts/cli_timing.py``:
rotated order per round, CPU of every child process counted, load before each run
recorded). The machine is shared, so wall times move with its load; CPU times much less.

Writes ``experiments/results/exicl-cli-timing.json`` with provenance, per-run wall and CPU
seconds and each run's results fingerprint (prior: final loss and legal-move rate;
recover: exact-feasible and distinct counts; experiment: the verdict and the four
conditions' values), which must be the same in every round.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_timing import Command, run_rounds, write_document  # noqa: E402
from time_pn_gail_quick import become_subreaper  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "exicl-cli-timing.json"
COMMON = ("--json", "--quiet", "--seed", "0")


def prior_fingerprint(doc: dict, data: Path) -> dict:
    res = doc["results"]
    return {k: res[k] for k in ("final_loss", "legal_move_rate", "train_trajectories")}


def recover_fingerprint(doc: dict, data: Path) -> dict:
    res = doc["results"]
    keys = ("n_exact_feasible", "n_distinct_feasible", "exact_feasible_share")
    return {"k": len(res["constraints"]), **{k: res[k] for k in keys}}


def experiment_fingerprint(doc: dict, data: Path) -> dict:
    res = doc["results"]
    return {"verdict": res["verdict"],
            "conditions": {n: c["value"] for n, c in res["conditions"].items()}}  # fmt: skip


COMMANDS = {
    "train_prior": Command(
        ("exicl", "train-prior", "--save", "{data}/prior.safetensors", "--overwrite", *COMMON),
        prior_fingerprint,
        180.0,
    ),
    "recover": Command(("exicl", "recover", *COMMON), recover_fingerprint, 60.0),
    "recover_k4": Command(("exicl", "recover", "--k", "4", *COMMON), recover_fingerprint, 90.0),
    "experiment_quick": Command(
        ("exicl", "experiment", "--quick", "--workers", "2", "--no-cache", *COMMON),
        experiment_fingerprint,
        300.0,
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    counted = become_subreaper()
    with tempfile.TemporaryDirectory(prefix="exicl-timing-") as tmp:
        runs = run_rounds(COMMANDS, args.rounds, Path(tmp))
    about = (
        "wall and CPU seconds of `iclr25 exicl` train-prior, recover (K = 5 and 4) and "
        "experiment --quick as subprocesses, against issue 24's targets, on the shared machine"
    )
    write_document(args.out, "exicl-cli-timing", about, [0], args.rounds, counted, COMMANDS, runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
