"""``python -m experiments list`` / ``python -m experiments run NAME [NAME ...]``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from experiments import RESULTS, SCHEMA, Study, studies
from iclr25 import atomic
from iclr25.provenance import provenance


def _with_finish(started: dict) -> dict:
    """``started`` plus ``git_at_finish`` when HEAD or the tree changed during the run."""
    from iclr25.provenance import git_state

    finished = git_state()
    return started if finished == started["git"] else {**started, "git_at_finish": finished}


def run_study(name: str, study: Study) -> dict:
    argv = [*study.args, "--json", "--quiet", "--seed", str(study.seed)]
    # provenance of the code the run *started* from (a commit made while a long study runs
    # must not be credited with its result); a change of HEAD meanwhile is recorded apart
    started = provenance(["iclr25", *argv], [study.seed])
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "iclr25", *argv],
        capture_output=True,
        text=True,
        timeout=study.timeout_s,
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"study {name} failed (exit {proc.returncode}): {last}")
    return {
        "schema": SCHEMA,
        "name": name,
        "about": study.about,
        "provenance": _with_finish(started),
        "seconds": seconds,
        "stderr": proc.stderr.splitlines()[-50:],
        "document": json.loads(proc.stdout),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments")
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.add_parser("list", help="the studies and what they measure")
    run = sub.add_parser("run", help="run studies, write experiments/results/NAME.json")
    run.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    known = studies()
    if args.verb == "list":
        for name, study in sorted(known.items()):
            print(f"{name}: {study.about}\n    iclr25 {' '.join(study.args)}")
        return 0
    unknown = [n for n in args.names if n not in known]
    if unknown:
        print(f"Error: unknown study {unknown} — see `python -m experiments list`", file=sys.stderr)
        return 2
    for name in args.names:
        print(f"running {name}: iclr25 {' '.join(known[name].args)}", file=sys.stderr)
        try:
            doc = run_study(name, known[name])
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 1
        atomic.write_json(RESULTS / f"{name}.json", doc)
        print(f"wrote experiments/results/{name}.json ({doc['seconds']:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
