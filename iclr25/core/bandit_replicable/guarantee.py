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
would, simulating the test on the population these executions suggest (observed shares
plus a Good–Turing / Chao1 estimate of the traces not seen yet). "Held" is never reported
without evidence: with ℓ ≥ N the old check (fewest traces covering 1-δ ≤ ℓ) could not
fail; this one says ``untestable`` unless the executions concentrate on few traces.

Both bounds are computed through the Clopper–Pearson duality — CP_upper(x, n) ≤ δ iff
P(Bin(n, δ) ≤ x) ≤ α, and CP_lower(y, N) > δ iff P(Bin(N, δ) ≥ y) < α — as one
binomial quantile per sample size, not one beta quantile per m.

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
MAX_RUNS_NEEDED = 2_000_000  # beyond this a projected run count is reported as None
PROJECTION_REPLICATES = 12  # simulated run sets per candidate count in runs_needed
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


def most_outside_for_upper(n: int, delta: float, alpha: float = ALPHA) -> int:
    """The largest x with CP_upper(x, n) ≤ δ, i.e. P(Bin(n, δ) ≤ x) ≤ α (-1: none)."""
    from scipy import stats

    if n <= 0:
        return -1
    x = int(stats.binom.ppf(alpha, n, delta))  # smallest x with cdf ≥ α
    while x >= 0 and stats.binom.cdf(x, n, delta) > alpha:
        x -= 1
    while stats.binom.cdf(x + 1, n, delta) <= alpha:
        x += 1
    return x


def fewest_outside_for_lower(n: int, delta: float, alpha: float = ALPHA) -> int:
    """The smallest y with CP_lower(y, n) > δ, i.e. P(Bin(n, δ) ≥ y) < α (n + 1: none)."""
    from scipy import stats

    if n <= 0:
        return 1
    y = max(1, int(stats.binom.isf(alpha, n, delta)))
    while y > 1 and stats.binom.sf(y - 2, n, delta) < alpha:  # P(X ≥ y-1) = sf(y-2)
        y -= 1
    while y <= n and stats.binom.sf(y - 1, n, delta) >= alpha:
        y += 1
    return y


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
    upper_ok = np.flatnonzero(outside_test <= most_outside_for_upper(runs - n_sel, delta, alpha))
    rejected = np.flatnonzero(outside_all >= fewest_outside_for_lower(runs, delta, alpha))
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
    project: bool = True,
) -> GuaranteeCheck:
    """Test the (list_bound, delta_claimed) claim on executions ``keys`` (module docstring).

    ``delta_tested``: the δ the binomial test uses (defaults to the claim's; for a δ = 0
    claim pass the run's δ). ``project``: estimate :func:`runs_needed` when untestable."""
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
    if outcome == "untestable" and project:
        needed = runs_needed(keys, ell, delta_claimed, delta, alpha)
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


def runs_needed(
    keys: np.ndarray,
    list_bound: int,
    delta_claimed: float,
    delta_tested: float,
    alpha: float = ALPHA,
) -> int | None:
    """About how many runs would decide the test if the population were as these runs
    suggest: the observed traces with their shares, plus the Good–Turing unseen mass
    (singletons / N) spread evenly over Chao1's estimate of the unseen traces
    (f1²/(2 f2), or f1(f1-1)/2 without doubletons). The smallest N (doubling, then
    bisection) at which at least half of :data:`PROJECTION_REPLICATES` simulated sets of
    N runs reach ``held`` or ``violated``; None beyond :data:`MAX_RUNS_NEEDED`."""
    model = _Population.estimate(keys)

    def decides(n: int) -> bool:
        rng = np.random.default_rng([0x5EED, n])  # common numbers per n: a stable search
        done = 0
        for _ in range(PROJECTION_REPLICATES):
            sample = model.draw(n, rng)
            check = check_guarantee(
                sample, list_bound, delta_claimed, delta_tested, alpha, project=False
            )
            done += check.outcome != "untestable"
        return 2 * done >= PROJECTION_REPLICATES

    return _smallest(decides, start=max(2, 2 * len(keys)))


@dataclass(frozen=True)
class _Population:
    """Trace probabilities estimated from one sample (see :func:`runs_needed`)."""

    shares: np.ndarray  # (D,) observed traces' shares of the seen mass
    unseen_mass: float  # m0 = f1 / N
    unseen_traces: int  # F, Chao1

    @classmethod
    def estimate(cls, keys: np.ndarray) -> _Population:
        labels = partition(keys)
        counts = np.bincount(labels).astype(np.float64)
        f1, f2 = int((counts == 1).sum()), int((counts == 2).sum())
        unseen = f1 * f1 / (2.0 * f2) if f2 else f1 * (f1 - 1) / 2.0
        return cls(counts / counts.sum(), f1 / labels.size, max(1, int(np.ceil(unseen))))

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """(n,) trace labels: observed ones 0..D-1, unseen ones D, D+1, ..."""
        labels = rng.choice(self.shares.size, size=n, p=self.shares)
        fresh = rng.random(n) < self.unseen_mass
        labels[fresh] = self.shares.size + rng.integers(0, self.unseen_traces, int(fresh.sum()))
        return labels


def _smallest(ok, start: int = 1) -> int | None:
    """The smallest n ≥ start with ok(n), by doubling then bisection (ok ~ monotone)."""
    hi = max(start, 1)
    while not ok(hi):
        if hi > MAX_RUNS_NEEDED:
            return None
        hi *= 2
    lo = max(start, hi // 2)
    if lo == hi or ok(lo):
        return lo
    while hi - lo > max(1, hi // 64):  # about 1.5% precision is enough for a projection
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
