"""The bundled expert: the file the docs name, and the acceptance check it was trained to."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from iclr25.core.pn_gail import expert, pendulum

ROOT = Path(__file__).resolve().parents[3]


def test_bundled_expert_is_the_file_the_docs_and_log_name():
    digest = expert.sha256_of(expert.bundled_expert_path())
    assert digest in (ROOT / "docs" / "pn-gail.md").read_text()
    log = json.loads(expert.bundled_expert_path().with_name("expert_log.json").read_text())
    assert log["sha256"] == digest


def test_bundled_expert_passes_its_acceptance_check():
    # scripts/train_pn_gail_expert.py: mean return >= -200 on 64 episodes from seed 20250101
    starts = pendulum.initial_states(64, np.random.default_rng(20250101))
    returns = pendulum.rollout_returns(expert.load_expert(), starts)
    log = json.loads(expert.bundled_expert_path().with_name("expert_log.json").read_text())
    assert returns.mean() >= -200
    assert abs(returns.mean() - log["return_mean"]) < 1e-3  # the numpy actor = the logged one
