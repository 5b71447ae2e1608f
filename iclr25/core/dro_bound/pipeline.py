"""The three data-in, numbers-out workflows behind ``iclr25 dro-bound risk|fit|certify``.

Each takes plain dataclass specs (:mod:`setup`) and returns the JSON-ready ``results``
dict, so a notebook can call them like the CLI does:

- :func:`run_risk`: R_ρ(θ; P_n) of a given (loaded, listed, or ERM-fitted) model;
- :func:`run_fit`: the robust model and the ERM model on the same rows, optionally saved;
- :func:`run_certify`: the radius (of its kind), the robust risk there and the statement
  (and, on synthetic data, the true risk from a large independent sample).

Every result names its radius kind (``radius.kind``: calibrated, theory or user) and what
its robust risk is (``risk_kind``: exact, entropic or estimate). With the calibrated kind
the rows are split first: the held-out rows calibrate c, the others are fitted and scored
(``data.certified_rows``). ``notes`` lists warnings for the command to print.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from iclr25.core.dro_bound.certificate import (
    Radius,
    calibrated_radius,
    statement,
    user_radius,
)
from iclr25.core.dro_bound.data import Dataset
from iclr25.core.dro_bound.fit import FitConfig, fit_linear
from iclr25.core.dro_bound.fit_mlp import MLPConfig, train_mlp
from iclr25.core.dro_bound.models import LinearModel, Model, ModelInfo
from iclr25.core.dro_bound.risk import RiskReport, robust_risk
from iclr25.core.dro_bound.setup import (
    DataSpec,
    ModelSpec,
    Prepared,
    RobustSpec,
    certified_rows,
    losses_fn,
    prepare,
    resolve_loss,
    risk_config,
    risk_fn,
    with_reference_sigma,
)
from iclr25.core.dro_bound.synthetic import sample_synthetic
from iclr25.core.dro_bound.theory import THEOREM, check_support, theory_radius
from iclr25.errors import RunFailure, UsageError

TRUE_RISK_SAMPLES = 50_000  # held-out sample for the true risk on synthetic data

__all__ = ["DataSpec", "ModelSpec", "RobustSpec", "run_certify", "run_fit", "run_risk"]


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def _calibrated(prep, robust, cal: Dataset, cert: Dataset, fixed, refit, on_progress) -> Radius:
    radius = _calibrate(robust, cal, cert, fixed, refit, on_progress)
    share = radius.bootstrap["uncoverable_share"]
    if share > robust.certificate.delta:
        prep.notes.append(
            f"{share:.0%} of the bootstrap resamples could not be covered at any radius (the "
            "robust risk saturates below the target): the calibrated radius is the largest "
            "finite one and its level is below 1 − δ"
        )
    return radius


def _calibrate(robust, cal: Dataset, cert: Dataset, fixed, refit, on_progress) -> Radius:
    return calibrated_radius(
        cal.X,
        cal.y,
        cert.n,
        fixed,
        risk_fn(robust),
        losses_fn(robust),
        refit,
        robust.certificate,
        robust.seed,
        on_progress,
    )


def _theory(model: Model, prep: Prepared, robust: RobustSpec) -> Radius:
    cfg = robust.certificate.theory
    check_support(prep.data.X, prep.data.y, model.loss, cfg)
    delta = robust.certificate.delta
    th = theory_radius(model.coef, model.intercept, prep.data.n, delta, model.loss, cfg)
    if not math.isfinite(th.rho):
        raise RunFailure(
            "the theory radius of a flat model (w = 0) is +∞: its robust and empirical risks "
            "coincide, so no radius certifies it",
            "certify a model with w ≠ 0 (e.g. fit with a smaller --rho and --load it)",
        )
    how = (
        f"ρ = ε(θ)/(Lip·‖w‖₂) with ε(θ) the uniform deviation bound of θ's cell "
        f"(support ‖x‖₂ ≤ {cfg.support_radius:g}"
        + (f", |y| ≤ {cfg.target_bound:g}" if cfg.target_bound is not None else "")
        + ")"
    )
    terms = {**th.as_dict(), "theorem": THEOREM, "support_radius": cfg.support_radius}
    if cfg.target_bound is not None:
        terms["target_bound"] = cfg.target_bound
    return Radius("theory", th.rho, prep.data.n, delta, None, how, theory=terms)


def _fit_refit(prep: Prepared, loss, robust: RobustSpec):
    """The robust estimator as the bootstrap refits it: (X, y, ρ) -> [model]."""

    def refit(Xb, yb, rho):
        config = FitConfig(rho, robust.cost, robust.entropic if rho > 0 else None, seed=robust.seed)
        return [fit_linear(Xb, yb, prep.kind, loss, config).model]

    return refit


# ---------------------------------------------------------------------------------------
# fitting and scoring
# ---------------------------------------------------------------------------------------
def _fit(ds: Dataset, prep, loss, rho: float, robust: RobustSpec, mlp: MLPConfig, **kw):
    """(model, fit details): the linear fit, or MLP training (warm-started from ``init``)."""
    if prep.kind == "mlp":
        res = train_mlp(
            ds.X,
            ds.y,
            loss,
            rho,
            robust.cost,
            replace(mlp, seed=robust.seed),
            robust.entropic if rho > 0 else None,
            kw.get("on_progress"),
            kw.get("init"),
        )
        return res.model, {"solver": "Adam (alternating ascent on ζ)", "epochs": res.epochs}
    ent = robust.entropic if rho > 0 else None
    res = fit_linear(
        ds.X, ds.y, prep.kind, loss, FitConfig(rho, robust.cost, ent, seed=robust.seed)
    )
    return res.model, {
        "solver": res.solver,
        "converged": res.converged,
        "start_objective": res.start_objective,
        "improved": res.improved,
        **({"note": res.details["note"]} if "note" in res.details else {}),
    }


def _score(model: Model, ds: Dataset, rho: float, robust: RobustSpec, on_progress=None):
    return robust_risk(model, ds.X, ds.y, risk_config(robust, rho), on_progress)


def risk_kind(report: RiskReport) -> str:
    if not report.exact:
        return "estimate"
    return "entropic" if "entropic" in report.method else "exact"


def model_summary(model: Model) -> dict:
    out = {"model": model.kind, "loss": model.loss.as_dict()}
    if isinstance(model, LinearModel):
        out["coefficients"] = [float(v) for v in model.coef]
        out["intercept"] = float(model.intercept)
    else:
        out["hidden"] = model.hidden
    return out


def data_summary(prep: Prepared, cert: Dataset) -> dict:
    ds = prep.data
    return {
        "source": ds.source,
        "n": ds.n,
        "certified_rows": cert.n,
        "d": ds.d,
        "target": ds.target,
        "features": list(ds.features),
        "standardized": ds.standardization is not None,
    }


def true_risk(model: Model, data: DataSpec, prep: Prepared) -> float | None:
    """E_P ℓ(θ) from a large independent sample, for synthetic data only."""
    if data.synthetic is None:
        return None
    X, y = sample_synthetic(
        data.synthetic, TRUE_RISK_SAMPLES, data.d, np.random.default_rng([data.seed, 7919])
    )
    if prep.data.standardization is not None:
        X = prep.data.standardization.apply(X)
    return float(np.mean(model.losses(X, y)))


def _common(report: RiskReport, radius: Radius, prep, cert, robust) -> dict:
    out = {
        "risk_kind": risk_kind(report),
        "radius_kind": radius.kind,
        "radius": radius.as_dict(),
        "cost": robust.cost.as_dict(),
        "data": data_summary(prep, cert),
    }
    if robust.entropic is not None:
        out["entropic"] = {
            "epsilon": report.diagnostics.get("epsilon", robust.entropic.epsilon),
            "sigma": report.diagnostics.get("sigma", robust.entropic.sigma),
            "samples": robust.entropic.samples,
            "bounds": "the smoothed risk E_P E_π₀ ℓ (features + N(0, σ²I)), not E_P ℓ",
        }
    return out


# ---------------------------------------------------------------------------------------
# the three workflows
# ---------------------------------------------------------------------------------------
def _given_model(prep: Prepared, model_spec: ModelSpec, robust, loss, ds: Dataset):
    """(model, source, fixed?): loaded, listed (--coef), or ERM fitted on ``ds``."""
    if prep.loaded is not None:
        return prep.loaded[0], f"loaded from {model_spec.load}", True
    if model_spec.coef is not None:
        if prep.kind == "mlp":
            raise UsageError("--coef describes a linear model", "drop --coef or use --load")
        coef = np.asarray(model_spec.coef, dtype=np.float64)
        if coef.shape != (prep.data.d,):
            raise UsageError(
                f"--coef has {coef.size} values for {prep.data.d} features",
                "give one coefficient per feature column",
            )
        model = LinearModel(prep.kind, loss, coef, float(model_spec.intercept))
        return model, "given (--coef)", True
    model, _ = _fit(ds, prep, loss, 0.0, robust, model_spec.mlp)
    return model, f"ERM fitted on the {ds.n} certified rows (no --load or --coef)", False


def _setup(data: DataSpec, model_spec: ModelSpec, robust: RobustSpec):
    prep = prepare(data, model_spec)
    loss = resolve_loss(model_spec, prep, robust)
    cal, cert = certified_rows(prep, robust)
    return prep, loss, cal, cert, with_reference_sigma(robust, cert.n, prep.data.d)


def run_risk(
    data: DataSpec, model_spec: ModelSpec, robust: RobustSpec, on_progress: Callable | None = None
) -> dict:
    prep, loss, cal, cert, robust = _setup(data, model_spec, robust)
    model, source, fixed = _given_model(prep, model_spec, robust, loss, cert)
    if robust.kind == "theory":
        radius = _theory(model, prep, robust)
    elif robust.kind == "calibrated":
        refit = None if fixed else _erm_refit(prep, loss, robust)
        radius = _calibrated(prep, robust, cal, cert, [model] if fixed else [], refit, on_progress)
    else:
        radius = user_radius(robust.certificate, cert.n, robust.rho)
    report = _score(model, cert, radius.rho, robust, on_progress)
    out = {
        "robust_risk": report.robust_risk,
        "empirical_risk": report.empirical_risk,
        "rho": radius.rho,
        "lambda": report.lam,
        "method": report.method,
        "diagnostics": report.diagnostics,
        "model_source": source,
        **model_summary(model),
        **_common(report, radius, prep, cert, robust),
        "notes": prep.notes,
    }
    truth = true_risk(model, data, prep)
    if truth is not None:
        out["true_risk"] = truth
    return out


def _erm_refit(prep: Prepared, loss, robust: RobustSpec):
    def refit(Xb, yb, rho):
        return [fit_linear(Xb, yb, prep.kind, loss, FitConfig(0.0, robust.cost)).model]

    return refit


def run_fit(
    data: DataSpec,
    model_spec: ModelSpec,
    robust: RobustSpec,
    save: Path | None = None,
    on_progress: Callable | None = None,
) -> dict:
    if model_spec.load is not None:
        raise UsageError(
            "fit trains a new model; --load is for risk and certify",
            "drop --load (use --save to store the fitted model)",
        )
    if save is not None and Path(save).exists():
        raise UsageError(f"{save}: file exists", "choose another --save path or delete the file")
    if robust.kind == "theory":
        raise UsageError(
            "the theory radius depends on the model it certifies, so no model can be fitted at it",
            "fit at --rho calibrated or a number, then `certify --rho theory --load MODEL`",
        )
    prep, loss, cal, cert, robust = _setup(data, model_spec, robust)
    if robust.kind == "calibrated":
        radius = _calibrated(
            prep, robust, cal, cert, [], _fit_refit(prep, loss, robust), on_progress
        )
    else:
        radius = user_radius(robust.certificate, cert.n, robust.rho)
    rho = radius.rho
    erm, _ = _fit(cert, prep, loss, 0.0, robust, model_spec.mlp)
    model, details = _fit(
        cert, prep, loss, rho, robust, model_spec.mlp, on_progress=on_progress, init=erm
    )
    report = _score(model, cert, rho, robust)
    erm_report = _score(erm, cert, rho, robust)
    erm_robust = erm_report.robust_risk
    if prep.kind == "mlp":  # the monotone check on the re-evaluated objective
        details = _mlp_check(details, report.robust_risk, erm_robust)
        if not details["improved"]:
            model, report = erm, erm_report
    out = {
        "robust_objective": report.robust_risk,
        "lambda": report.lam,
        "rho": rho,
        "diagnostics": report.diagnostics,
        "empirical_risk": report.empirical_risk,
        **model_summary(model),
        "erm_objective": float(np.mean(erm.losses(cert.X, cert.y))),
        "erm_robust_risk": erm_robust,
        "erm_coefficients": model_summary(erm).get("coefficients"),
        "erm_intercept": model_summary(erm).get("intercept"),
        **details,
        "converged": _converged(details),
        **_common(report, radius, prep, cert, robust),
        "notes": prep.notes + ([details["note"]] if "note" in details else []),
    }
    if prep.kind == "mlp":
        out["coefficients"] = None
    truth = true_risk(model, data, prep)
    if truth is not None:
        out["true_risk"], out["erm_true_risk"] = truth, true_risk(erm, data, prep)
    if save is not None:
        _save(Path(save), model, prep, out)
        out["saved_to"] = str(save)
    return out


def _converged(details: dict) -> bool | None:
    """False when the fit fell back to its start, None when no convergence test exists (the
    MLP's fixed epoch budget), else the solver's own flag."""
    if not details.get("improved", True):
        return False
    flag = details.get("converged", True)
    return None if flag is None else bool(flag)


def _mlp_check(details: dict, objective: float, start_objective: float) -> dict:
    """The MLP's monotone check on the re-evaluated estimate; Adam runs a fixed number of
    epochs with no convergence test, so ``converged`` is None (unknown), never True."""
    improved = objective <= start_objective + 1e-9 * max(1.0, abs(start_objective))
    out = {
        **details,
        "start_objective": start_objective,
        "improved": improved,
        "converged": None,
        "stopping": "a fixed budget of --epochs Adam epochs (no convergence test)",
    }
    if not improved:
        out["note"] = (
            f"robust training ended at estimated objective {objective:.6g}, above its ERM "
            f"starting point's {start_objective:.6g}: the ERM network is returned"
        )
    return out


def _save(path: Path, model: Model, prep: Prepared, out: dict) -> None:
    from iclr25.core.dro_bound.models import save_model

    training = {k: out[k] for k in ("rho", "cost", "robust_objective", "solver", "data")}
    training["radius_kind"] = out["radius_kind"]
    ds = prep.data
    info = ModelInfo(ds.features, ds.target, ds.label_values, ds.standardization, training)
    save_model(path, model, info)


def run_certify(
    data: DataSpec, model_spec: ModelSpec, robust: RobustSpec, on_progress: Callable | None = None
) -> dict:
    prep, loss, cal, cert, robust = _setup(data, model_spec, robust)
    model, source = (
        (prep.loaded[0], f"loaded from {model_spec.load}") if prep.loaded else (None, "")
    )
    if robust.kind == "theory":
        if model is None:  # the bound is uniform over θ: it covers a data-dependent ERM
            model, _ = _fit(cert, prep, loss, 0.0, robust, model_spec.mlp)
            source = "ERM fitted on the data (the theory bound holds for every θ at once)"
        radius = _theory(model, prep, robust)
    elif robust.kind == "calibrated":
        refit = None if model is not None else _fit_refit(prep, loss, robust)
        radius = _calibrated(prep, robust, cal, cert, [model] if model else [], refit, on_progress)
    else:
        radius = user_radius(robust.certificate, cert.n, robust.rho)
    if model is None:
        model, _ = _fit(cert, prep, loss, radius.rho, robust, model_spec.mlp)
        source = f"robust model fitted on the {cert.n} certified rows at the radius"
    report = _score(model, cert, radius.rho, robust)
    entropic = _common(report, radius, prep, cert, robust).get("entropic")
    out = {
        "n": cert.n,
        "d": prep.data.d,
        "delta": radius.delta,
        "confidence": 1.0 - radius.delta,
        "rho": radius.rho,
        "radius_constant": radius.constant,
        "guarantee": radius.guarantee,
        "robust_risk": report.robust_risk,
        "empirical_risk": report.empirical_risk,
        "certified_margin": report.robust_risk - report.empirical_risk,
        "lambda": report.lam,
        "diagnostics": report.diagnostics,
        "statement": statement(
            report.robust_risk, report.empirical_risk, radius, entropic, not report.exact
        ),
        "model_source": source,
        **model_summary(model),
        **_common(report, radius, prep, cert, robust),
        "notes": prep.notes,
    }
    _add_truth(out, model, data, prep, robust, report)
    return out


def _add_truth(out: dict, model, data: DataSpec, prep, robust: RobustSpec, report) -> None:
    """On synthetic data: the true risk (and, for the entropic risk, the smoothed true risk
    it actually bounds) and whether the bound held."""
    truth = true_risk(model, data, prep)
    if truth is None:
        return
    out["true_risk"] = truth
    target = truth
    if robust.entropic is not None:
        sigma = out["entropic"]["sigma"]
        smooth = replace(robust, entropic=replace(robust.entropic, sigma=sigma))
        X, y = sample_synthetic(
            data.synthetic,
            TRUE_RISK_SAMPLES // 10,
            data.d,
            np.random.default_rng([data.seed, 7919]),
        )
        if prep.data.standardization is not None:
            X = prep.data.standardization.apply(X)
        target = float(np.mean(losses_fn(smooth)(model, X, y)))
        out["smoothed_true_risk"] = target
    out["bound_holds"] = bool(report.robust_risk >= target)


def certify_headline(results: dict) -> str:
    """One line on a certify result (the demo and the docs use this same line)."""
    kind, risk = results["radius_kind"], results["risk_kind"]
    line = f"[{kind}, {risk}] ρ = {results['rho']:.3g}: robust risk {results['robust_risk']:.3f}"
    if "bound_holds" not in results:
        return line + f" (empirical {results['empirical_risk']:.3f})"
    target = results.get("smoothed_true_risk", results["true_risk"])
    name = "smoothed true risk" if "smoothed_true_risk" in results else "true risk"
    if results["bound_holds"]:
        return line + f" ≥ {name} {target:.3f}: the bound holds on this sample"
    return line + f" < {name} {target:.3f}: the bound FAILED on this sample"
