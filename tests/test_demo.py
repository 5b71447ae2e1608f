from __future__ import annotations

import sys

from iclr25.commands.demo import _run_step, demo_steps


def test_demo_collects_registered_steps():
    titles = [step.title for step in demo_steps()]
    assert "info" in titles
    assert len(titles) == len(set(titles))
    for step in demo_steps():
        assert "--json" not in step.args and "--out" not in step.args


def test_demo_step_runs_through_the_cli(tmp_path, monkeypatch):
    (info_step,) = [s for s in demo_steps() if s.title == "info"]
    outcome = _run_step(info_step, tmp_path / "info", seed=0, device="cpu")
    assert outcome["status"] == "ok", outcome
    assert "kernels registered" in outcome["headline"]
    assert (tmp_path / "info" / "result.json").exists()


def test_demo_reports_a_failing_step(tmp_path):
    from iclr25.demo import DemoStep

    step = DemoStep("broken", ("cite", "no-such-command"), lambda doc: "never")
    outcome = _run_step(step, tmp_path / "b", seed=0, device="cpu")
    assert outcome["status"] == "exit 2"
    assert sys.executable  # the step ran in a subprocess of this interpreter


def test_a_slow_step_is_reported_over_budget_and_only_a_hung_one_is_stopped(tmp_path, monkeypatch):
    """A busy machine may run a step past its budget: it still counts, with a note; only a
    step past HANG_FACTOR × its budget is stopped."""
    import dataclasses

    import iclr25.commands.demo as demo_command

    (info_step,) = [s for s in demo_steps() if s.title == "info"]
    tight = dataclasses.replace(info_step, timeout_s=0.01)  # `info` takes longer than this
    monkeypatch.setattr(demo_command, "HANG_FACTOR", 1e5)  # hard stop at 1,000 s
    slow = _run_step(tight, tmp_path / "slow", seed=0, device="cpu")
    assert slow["status"] == "ok" and "over its 0 s budget" in slow["headline"], slow
    monkeypatch.setattr(demo_command, "HANG_FACTOR", 1.0)  # hard stop at 0.01 s
    hung = _run_step(tight, tmp_path / "hung", seed=0, device="cpu")
    assert hung["status"] == "timeout" and "hung?" in hung["headline"], hung
