"""scripts/ph_dgn_sweep.py: the checkpoint reuses a task only for the same config, seed and
code digest, and ``--status`` counts what a rerun would reuse without training."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ph_dgn_sweep.py"


def load_sweep():
    spec = importlib.util.spec_from_file_location("ph_dgn_sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_status_counts_only_entries_of_the_current_code(tmp_path, capsys):
    sweep = load_sweep()
    out = tmp_path / "sweep.json"
    assert sweep.main(["--quick", "--status", "--out", str(out)]) == 0
    assert "line 0/7, ring 0/7, crossed-ring 0/7" in capsys.readouterr().err
    cfg = sweep.TransferConfig("ring", "copy", **sweep.QUICK, quick=True)
    first, second = sweep.tasks(cfg, sweep.SEED)[:2]
    with out.with_suffix(".tasks.jsonl").open("w") as fh:
        for task, digest in ((first, sweep.code_digest()), (second, "older code")):
            entry = {"config": task.config, "seed": task.seed, "result": {}, "digest": digest}
            fh.write(json.dumps(entry) + "\n")
    assert sweep.main(["--quick", "--status", "--out", str(out)]) == 0
    assert "line 0/7, ring 1/7, crossed-ring 0/7" in capsys.readouterr().err
    assert not out.exists()  # --status writes no result
