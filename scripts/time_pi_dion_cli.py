"""Wall and CPU time of ``iclr25 pi-dion solve`` and ``compare --quick`` (issue 27: ≤ 60 s).

    nice -n 5 python scripts/time_pi_dion_cli.py [--rounds 3]

Issue 27 asks for ``solve`` and ``compare --quick`` to take ≤ 60 s on the 2-core machine.
The measurements ``solve`` reads are written first (not timed) by the console command

    iclr25 pi-dion generate --n-train 1 --n-test 500 --seed 20250101 --out TMP

(reaction-diffusion 1-D, k = 1, 64 full sensors, noise 0.01: the bundled model's problem).
Then each round runs, in an order rotated every round (so neither always runs first on a
machine whose load drifts), the console commands

    iclr25 pi-dion solve --measurements TMP/test.npz --model bundled --json --quiet
    iclr25 pi-dion compare --quick --json --no-cache --quiet --seed 0

each as a subprocess of this checkout with ``OMP_NUM_THREADS=1`` (what the 2-core machine's
rules ask for), so the time includes Python start-up and the torch import a user pays. CPU
time is user + sys of the run and every process it started (this process is a child
subreaper, as in ``scripts/time_pn_gail_quick.py``; rounds and summary:
``scripts/cli_timing.py``). The machine is shared: the 1-minute load average before each
run is recorded; wall times move with it, CPU times much less.

``--pde darcy`` times darcy's instead (written to ``pi-dion-cli-timing-darcy.json``): the
data are ``generate --pde darcy --n-train 1 --n-test 500 --seed 20251203`` (the darcy
studies' held-out seed), the commands

    iclr25 pi-dion solve --pde darcy --measurements TMP/test.npz --model bundled --json --quiet
    iclr25 pi-dion compare --pde darcy --quick --json --no-cache --quiet --seed 0

(the bundled darcy model; ``compare --quick`` trains its 9 small networks and runs
Tikhonov–Gauss–Newton on 40 instances), with the fingerprints rel. L² of a and u
(``solve``) and every method's mean rel. L² of a (``compare --quick``).

Writes ``experiments/results/pi-dion-cli-timing.json``: provenance, per-run wall and CPU
seconds, medians per command, the 60 s target and each run's results fingerprint
(``solve``: relative L² of f and u against the 500 instances' truth, which ``solve`` never
reads; ``compare --quick``: every method's mean relative L² error of f, the GCV Tikhonov row
included), so the figures show the runs did the full work.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_timing import Command, argv, env, run_rounds, write_document  # noqa: E402
from time_pn_gail_quick import become_subreaper, reap_orphans  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "pi-dion-cli-timing.json"
TARGET_S = 60.0  # issue 27: `solve` and `compare --quick` ≤ 60 s
TEST_SEED = 20250101
N_TEST = 500
GENERATE = ("pi-dion", "generate", "--n-train", "1", "--n-test", str(N_TEST),
            "--seed", str(TEST_SEED), "--quiet")  # fmt: skip
SOLVE = ("pi-dion", "solve", "--measurements", "{data}/test.npz", "--model", "bundled",
         "--json", "--quiet")  # fmt: skip
COMPARE = ("pi-dion", "compare", "--quick", "--json", "--no-cache", "--quiet", "--seed", "0")


def solve_fingerprint(doc: dict, data: Path) -> dict:
    from iclr25.core.pi_dion import problem

    res, test = doc["results"], np.load(data / "test.npz")
    f, u = np.asarray(res["f"]), np.asarray(res["u"])
    if not np.allclose(res["grid"], test["grid"]):
        raise SystemExit("Error: solve's grid is not the test set's grid")
    return {
        "instances": len(f),
        "method": res["method"],
        "rel_l2_f": float(problem.rel_l2(f, test["f"]).mean()),
        "rel_l2_u": float(problem.rel_l2(u, test["u_true"]).mean()),
    }


def compare_fingerprint(doc: dict, data: Path) -> dict:
    res = doc["results"]
    return {
        "methods": res["methods"],
        "rel_l2_f": {m: res["rel_l2_f"][m]["mean"] for m in res["methods"]},
        "nmse_f": res["nmse_f"],
        "labels_to_match": res["labels_to_match"],
    }


COMMANDS = {
    "solve": Command(SOLVE, solve_fingerprint, TARGET_S),
    "compare_quick": Command(COMPARE, compare_fingerprint, TARGET_S),
}

# --pde darcy
OUT_DARCY = OUT.with_name("pi-dion-cli-timing-darcy.json")
TEST_SEED_DARCY = 20251203  # iclr25.core.pi_dion.darcy_compare.TEST_SEED
GENERATE_DARCY = ("pi-dion", "generate", "--pde", "darcy", "--n-train", "1", "--n-test",
                  str(N_TEST), "--seed", str(TEST_SEED_DARCY), "--quiet")  # fmt: skip
SOLVE_DARCY = ("pi-dion", "solve", "--pde", "darcy", "--measurements", "{data}/test.npz",
               "--model", "bundled", "--json", "--quiet")  # fmt: skip
COMPARE_DARCY = ("pi-dion", "compare", "--pde", "darcy", "--quick", "--json", "--no-cache",
                 "--quiet", "--seed", "0")  # fmt: skip


def solve_fingerprint_darcy(doc: dict, data: Path) -> dict:
    from iclr25.core.pi_dion import problem

    res, test = doc["results"], np.load(data / "test.npz")
    a, u = np.asarray(res["a"]), np.asarray(res["u"])
    if not np.allclose(res["grid"], test["grid"]):
        raise SystemExit("Error: solve's grid is not the test set's grid")
    return {
        "instances": len(a),
        "method": res["method"],
        "model_sha256": res["model"]["sha256"],
        "rel_l2_a": float(problem.rel_l2(a, test["a"]).mean()),
        "rel_l2_u": float(problem.rel_l2(u, test["u_true"]).mean()),
    }


def compare_fingerprint_darcy(doc: dict, data: Path) -> dict:
    res = doc["results"]
    return {
        "methods": res["methods"],
        "rel_l2_a": {m: res["rel_l2_a"][m]["mean"] for m in res["methods"]},
        "labels_to_match": res["labels_to_match"],
    }


COMMANDS_DARCY = {
    "solve": Command(SOLVE_DARCY, solve_fingerprint_darcy, TARGET_S),
    "compare_quick": Command(COMPARE_DARCY, compare_fingerprint_darcy, TARGET_S),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help=f"default {OUT.name} ({OUT_DARCY.name})")
    parser.add_argument("--pde", choices=("reaction-diffusion", "darcy"),
                        default="reaction-diffusion")  # fmt: skip
    args = parser.parse_args()
    darcy = args.pde == "darcy"
    generate, commands = (GENERATE_DARCY, COMMANDS_DARCY) if darcy else (GENERATE, COMMANDS)
    out = args.out or (OUT_DARCY if darcy else OUT)

    counted = become_subreaper()
    with tempfile.TemporaryDirectory(prefix="pi-dion-timing-") as tmp:
        data = Path(tmp) / "data"
        gen = subprocess.run([*argv(generate, data), "--out", str(data)], env=env(), cwd=ROOT,
                             capture_output=True, text=True)  # fmt: skip
        reap_orphans()
        if gen.returncode != 0:
            raise SystemExit(f"Error: generate exited {gen.returncode}: {gen.stderr[-500:]}")
        runs = run_rounds(commands, args.rounds, data)
    pde = " --pde darcy" if darcy else ""
    about = (
        f"wall and CPU seconds of `iclr25 pi-dion solve{pde}` (500 instances, the bundled "
        f"model) and `iclr25 pi-dion compare{pde} --quick --no-cache`, as subprocesses, "
        "against issue 27's 60 s target, interleaved on the shared machine"
    )
    name = "pi-dion-cli-timing" + ("-darcy" if darcy else "")
    seeds = [0, TEST_SEED_DARCY if darcy else TEST_SEED]
    write_document(out, name, about, seeds, args.rounds, counted, commands, runs,
                   generate=["iclr25", *generate, "--out", "DATA"],
                   instances=N_TEST)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
