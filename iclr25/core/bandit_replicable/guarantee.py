"""Checking an (ℓ, δ)-list replicability claim from N executions — a test that can fail.

The claim (Chen et al., ICLR 2025, Definition 2): there is a list of ℓ traces, depending
on the instance only, with P(an execution plays a trace outside it) ≤ δ. Let
q*(m) = the smallest probability mass outside any m traces, and ℓ* = min{m : q*(m) ≤ δ}
the true list size. The claim is ℓ* ≤ ℓ. From N independent executions we bound ℓ* on
both sides with exact binomial (Clopper–Pearson) bounds, each at one-sided confidence
1 - α (α = 0.05 by default):

- **Upper bound ℓ̄ (sample splitting).** The first ⌊N/2⌋ executions (the *selection*
  half) fix an order of traces (most frequent first; ties by first appearance); L_m is
  its first m traces. On the other half (n executions, the *test* half), the number X_m
  of executions outside L_m is Binomial(n, q(L_m)) given the selection half, so
  U_m = CP_upper(X_m, n) bounds q(L_m) ≥ q*(m). ℓ̄ = min{m : U_m ≤ δ}. Valid: X_m falls
  with m, so if ℓ̄ < ℓ* the test accepted at m = ℓ* - 1, where q(L_m) > δ — probability
  ≤ α. (Without the split, choosing the list on the same executions that test it would
  favour the claim.)
- **Lower bound ℓ̲ (all executions).** Y_m = N - (executions on the m most frequent
  traces) is the fewest executions any list of m traces misses, so Y_m is stochastically
  smaller than Binomial(N, q*(m)) and CP_lower(Y_m, N) > δ rejects q*(m) ≤ δ at level α.
  ℓ̲ = 1 + max{m : CP_lower(Y_m, N) > δ}.

Outcome: ``held`` when ℓ̄ ≤ ℓ (the mass outside a list of ℓ traces is ≤ δ at 95%),
``violated`` when ℓ̲ > ℓ (every list of ℓ traces misses more than δ at 95%), otherwise
``untestable``: N executions cannot decide, and :func:`runs_needed` says about how many
would, if the shares observed here persisted. "Held" is never reported without evidence:
with ℓ ≥ N the old check (fewest traces covering 1-δ ≤ ℓ) could not fail; this one says
``untestable`` unless the executions concentrate on few traces.

δ = 0 (ETC's (k, 0) claim): more than ℓ distinct traces is a violation outright (any list
of ℓ misses a trace that occurred); "held" then tests the weaker (ℓ, δ_test) claim at the
run's δ, since probability 1 cannot be confirmed by sampling.

Symbols: ℓ → ``list_bound``, δ → ``delta``, α → ``alpha``, ℓ̄ → ``upper``,
ℓ̲ → ``lower``, U_m → ``outside_upper``, n → ``test_runs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.traces import partition

ALPHA = 0.05  # one-sided: each bound holds with probability ≥ 95%
MAX_RUNS_NEEDED = 10**12  # beyond this a projected run count is reported as None
OUTCOMES = ("held", "violated", "untestable")


def cp_upper(x, n, alpha: float = ALPHA):
    """One-sided Clopper–Pearson upper bound on a binomial p after x successes in n
    (x may be fractional, for projections); 1 when n = 0 or x ≥ n."""
    from scipy import stats

    x, n = np.asarray(x, np.float64), np.asarray(n, np.float64)
    inside = (n > 0) & (x < n)
    a, b = np.where(inside, x + 1, 1.0), np.where(inside, n - x, 1.0)
    return np.where(inside, stats.beta.ppf(1 - alpha, a, b), 1.0)


def cp_lower(x, n, alpha: float = ALPHA):
    """One-sided Clopper–Pearson lower bound; 0 when x = 0."""
    from scipy import stats

    x, n = np.asarray(x, np.float64), np.asarray(n, np.float64)
    inside = (n > 0) & (x > 0)
    a, b = np.where(inside, x, 1.0), np.where(inside, n - x + 1, 1.0)
    return np.where(inside, stats.beta.ppf(alpha, a, b), 0.0)


@dataclass(frozen=True)
class ListSizeBounds:
    """Confidence bounds on the true list size ℓ* from one set of executions."""

    covering: int  # fewest observed traces covering ≥ 1-δ of all executions (point estimate)
    lower: int  # ℓ̲: ℓ* ≥ lower with probability ≥ 1-α
    upper: int | None  # ℓ̄: ℓ* ≤ upper with probability ≥ 1-α (None: no m up to the
    # selection half's traces passes — the list is longer than these executions show)
    runs: int
    selection_runs: int
    test_runs: int
    outside_test: np.ndarray  # (M+1,) X_m, m = 0..M (M = traces seen in the selection half)
    outside_all: np.ndarray  # (D+1,) Y_m, m = 0..D (D = distinct traces overall)
    distinct: int


def list_size_bounds(keys: np.ndarray, delta: float, alpha: float = ALPHA) -> ListSizeBounds:
    """ℓ̲ and ℓ̄ (module docstring) from trace keys in execution order: (runs, 2) or (runs,)."""
    labels = partition(keys) if len(keys) else np.zeros(0, np.int64)  # first appearance
    runs = int(labels.size)
    n_sel = runs // 2
    distinct = int(labels.max()) + 1 if runs else 0
    # selection order: most frequent first, ties by first appearance (a function of the
    # selection half alone, since it is a prefix of the executions)
    sel_counts = np.bincount(labels[:n_sel], minlength=distinct)
    seen = np.flatnonzero(sel_counts)
    order = seen[np.lexsort((seen, -sel_counts[seen]))]
    rank = np.full(distinct, np.iinfo(np.int64).max)
    rank[order] = np.arange(order.size)
    test_rank = np.sort(rank[labels[n_sel:]])  # (n,)
    m = np.arange(order.size + 1)
    outside_test = test_rank.size - np.searchsorted(test_rank, m, side="left")  # (M+1,) X_m
    all_counts = np.sort(np.bincount(labels, minlength=distinct))[::-1]
    outside_all = runs - np.concatenate([[0], np.cumsum(all_counts)])  # (D+1,) Y_m
    upper_ok = np.flatnonzero(cp_upper(outside_test, runs - n_sel, alpha) <= delta)
    rejected = np.flatnonzero(cp_lower(outside_all, runs, alpha) > delta)
    covering = 0
    if runs:
        covering = int(np.searchsorted(-outside_all, -delta * runs * (1 + 1e-12), side="left"))
    return ListSizeBounds(
        covering=covering,
        lower=int(rejected.max()) + 1 if rejected.size else 0,
        upper=int(upper_ok.min()) if upper_ok.size else None,
        runs=runs,
        selection_runs=n_sel,
        test_runs=runs - n_sel,
        outside_test=outside_test,
        outside_all=outside_all,
        distinct=distinct,
    )


@dataclass(frozen=True)
class GuaranteeCheck:
    outcome: str  # held | violated | untestable
    list_bound: int
    delta_claimed: float
    delta_tested: float
    confidence: float
    bounds: ListSizeBounds
    outside_share_upper: float  # U at m = ℓ: upper bound on the mass outside the chosen ℓ
    outside_share_lower: float  # lower bound on the mass outside ANY ℓ traces
    runs_needed: int | None  # untestable: about how many runs would decide
    reason: str

    def as_dict(self) -> dict:
        b = self.bounds
        return {
            "outcome": self.outcome,
            "list_bound": self.list_bound,
            "delta_claimed": self.delta_claimed,
            "delta_tested": self.delta_tested,
            "confidence": self.confidence,
            "list_size_lower": b.lower,
            "list_size_upper": b.upper,
            "outside_share_upper": self.outside_share_upper,
            "outside_share_lower": self.outside_share_lower,
            "selection_runs": b.selection_runs,
            "test_runs": b.test_runs,
            "runs_needed": self.runs_needed,
            "reason": self.reason,
        }


def _at(values: np.ndarray, m: int) -> int:
    """values[m], with m beyond the end meaning the last entry (no more traces to add)."""
    return int(values[min(m, values.size - 1)])


def check_guarantee(
    keys: np.ndarray,
    list_bound: int,
    delta_claimed: float,
    delta_tested: float | None = None,
    alpha: float = ALPHA,
) -> GuaranteeCheck:
    """Test the (list_bound, delta_claimed) claim on executions ``keys`` (module docstring).

    ``delta_tested``: the δ the binomial test uses (defaults to the claim's; for a δ = 0
    claim pass the run's δ)."""
    delta = delta_claimed if delta_tested is None else delta_tested
    bounds = list_size_bounds(keys, delta, alpha)
    ell = int(list_bound)
    x_test = _at(bounds.outside_test, ell)
    y_all = _at(bounds.outside_all, ell)
    upper = float(cp_upper(x_test, bounds.test_runs, alpha))
    lower = float(cp_lower(y_all, bounds.runs, alpha))
    held = bounds.upper is not None and bounds.upper <= ell
    violated = bounds.lower > ell
    if delta_claimed == 0 and bounds.distinct > ell:
        outcome, reason = "violated", f"{bounds.distinct} distinct traces > ℓ = {ell} (δ = 0)"
    elif violated and not held:
        outcome = "violated"
        reason = f"every list of {ell} traces misses > {delta:g} of executions (≥ {lower:.3g})"
    elif held and not violated:
        outcome = "held"
        reason = f"the mass outside {ell} traces is ≤ {upper:.3g} ≤ {delta:g}"
    else:
        outcome = "untestable"
        reason = _untestable_reason(bounds, ell, delta, upper, lower)
    needed = None
    if outcome == "untestable":
        share = x_test / bounds.test_runs if bounds.test_runs else 1.0
        needed = runs_needed(share, ell, delta, alpha)
    return GuaranteeCheck(
        outcome, ell, delta_claimed, delta, 1 - alpha, bounds, upper, lower, needed, reason
    )


def _untestable_reason(bounds, ell, delta, upper, lower) -> str:
    if bounds.runs <= ell:
        return (
            f"{bounds.runs} runs ≤ ℓ = {ell}: no list of ℓ traces can be shown to miss "
            f"more than δ, and the outside-mass bound {upper:.3g} is above δ = {delta:g}"
        )
    return (
        f"the outside mass lies between {lower:.3g} and {upper:.3g}, which straddles "
        f"δ = {delta:g} at this run count"
    )


def runs_needed(share: float, list_bound: int, delta: float, alpha: float = ALPHA) -> int | None:
    """About how many runs would decide, if a list of ``list_bound`` traces chosen from
    half of them missed a ``share`` of the other half (as observed): ``held`` needs
    CP_upper(share·n, n) ≤ δ on a test half of n; ``violated`` needs
    CP_lower(min(share·N, N - ℓ), N) > δ (at most N - ℓ executions lie outside the ℓ most
    frequent traces). None at share = δ or beyond :data:`MAX_RUNS_NEEDED`."""
    if share < delta:
        n = _smallest(lambda n: float(cp_upper(share * n, n, alpha)) <= delta)
        return None if n is None else 2 * n
    if share > delta:

        def decides(n: int) -> bool:
            return float(cp_lower(min(share * n, max(n - list_bound, 0)), n, alpha)) > delta

        return _smallest(decides, start=list_bound + 1)
    return None


def _smallest(ok, start: int = 1) -> int | None:
    """The smallest n ≥ start with ok(n), by doubling then bisection (ok is monotone)."""
    hi = max(start, 1)
    if hi > MAX_RUNS_NEEDED:
        return None
    while not ok(hi):
        if hi > MAX_RUNS_NEEDED:
            return None
        hi *= 2
    lo = max(start, hi // 2)
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
