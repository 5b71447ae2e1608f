"""`python -m experiments`: a study's provenance names the code it started from."""

from __future__ import annotations

from experiments.__main__ import _with_finish


def test_provenance_is_the_start_and_a_head_change_is_recorded_apart(monkeypatch):
    import iclr25.provenance as prov

    started = {"command_line": ["iclr25"], "git": {"commit": "a" * 40, "dirty": False}}
    monkeypatch.setattr(prov, "git_state", lambda *a, **k: {"commit": "a" * 40, "dirty": False})
    assert _with_finish(started) == started  # nothing changed: nothing added
    moved = {"commit": "b" * 40, "dirty": False}
    monkeypatch.setattr(prov, "git_state", lambda *a, **k: moved)
    out = _with_finish(started)
    assert out["git"] == started["git"] and out["git_at_finish"] == moved
