"""The preview budget of `train --out`: at most 10% of the training time, probe included."""

from __future__ import annotations

from iclr25.core.diffusion_at.preview import BUDGET_FRACTION, CAP, PROBE_N, plan_preview


class FakeClock:
    """A clock that advances by ``cost_s`` per sample and NFE whenever ``draw`` runs."""

    def __init__(self, cost_s: float) -> None:
        self.now, self.cost_s, self.calls = 0.0, cost_s, []

    def __call__(self) -> float:
        return self.now

    def draw(self, n: int, nfe: int) -> None:
        self.calls.append((n, nfe))
        self.now += self.cost_s * n * nfe


def test_preview_stays_within_a_tenth_of_training():
    clock = FakeClock(cost_s=1e-3)  # 1 ms per sample and NFE
    plan = plan_preview(100.0, "image", [5, 20], clock.draw, clock=clock)
    assert clock.calls == [(PROBE_N, 5)]  # only the probe ran
    spent = plan.probe_s + plan.n * 1e-3 * (5 + 20)
    assert plan.n == 64 == CAP["image"]  # 10 s of budget, the figure shows 64 at most
    assert spent <= BUDGET_FRACTION * 100.0
    clock = FakeClock(cost_s=1e-3)
    plan = plan_preview(3.0, "points", [5, 20], clock.draw, clock=clock)  # 0.3 s of budget
    assert plan.probe_s + plan.n * 1e-3 * 25 <= 0.3 and plan.n == 10  # (0.3 − 0.04)/0.025


def test_preview_is_skipped_when_nothing_fits_and_exact_when_asked():
    clock = FakeClock(cost_s=1.0)
    assert plan_preview(1.0, "image", [5, 20], clock.draw, clock=clock).n == 0
    asked = plan_preview(1.0, "image", [5, 20], clock.draw, requested=7, clock=clock)
    assert asked.n == 7 and asked.budget_s is None and len(clock.calls) == 1
