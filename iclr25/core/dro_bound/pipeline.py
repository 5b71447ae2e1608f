"""The three data-in, numbers-out workflows behind ``iclr25 dro-bound risk|fit|certify``.

Each takes plain dataclass specs (data, model, robustness) and returns the JSON-ready
``results`` dict, so a notebook can call them like the CLI does:

- :func:`run_risk`: R_ρ(θ; P_n) of a given (loaded, listed, or ERM-fitted) model;
- :func:`run_fit`: the robust model and the ERM model, optionally saved to a file;
- :func:`run_certify`: the certificate radius ρ_n, the robust risk there and the statement
  (and, on synthetic data, the true risk from a large independent sample).

``rho = None`` means "auto": the certificate radius of :mod:`certificate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from iclr25.core.dro_bound.certificate import (
    CertificateConfig,
    RadiusEstimate,
    bootstrap_radius,
    guarantee,
    statement,
    user_radius,
)
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.data import Dataset, load_dataset
from iclr25.core.dro_bound.entropic import EntropicConfig
from iclr25.core.dro_bound.fit import FitConfig, fit_linear
from iclr25.core.dro_bound.fit_mlp import MLPConfig, train_mlp
from iclr25.core.dro_bound.inner_max import InnerMaxConfig
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import LinearModel, Model, ModelInfo, load_model
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.core.dro_bound.synthetic import (
    SYNTHETIC,
    is_classification,
    sample_synthetic,
    synthetic_dataset,
)
from iclr25.errors import UsageError

MODELS = ("logistic", "linear", "mlp")
TRUE_RISK_SAMPLES = 50_000  # held-out sample for the true risk on synthetic data


@dataclass(frozen=True)
class DataSpec:
    path: Path | None = None
    target: str = "y"
    synthetic: str | None = None  # one of SYNTHETIC
    n: int = 500  # synthetic sample size
    d: int = 5  # synthetic dimension
    standardize: bool = False  # features are used as given unless asked
    seed: int = 0


@dataclass(frozen=True)
class ModelSpec:
    model: str | None = None  # logistic | linear | mlp; None: from the data
    loss: str | None = None  # None: logistic for classification, absolute for regression
    huber_delta: float = 1.0
    load: Path | None = None  # a model file from `fit --save`
    coef: tuple[float, ...] | None = None  # a linear model given on the command line
    intercept: float = 0.0
    mlp: MLPConfig = MLPConfig()


@dataclass(frozen=True)
class RobustSpec:
    rho: float | None = None  # None -> auto (the certificate radius)
    cost: TransportCost = TransportCost()
    entropic: EntropicConfig | None = None
    solver: str = "auto"
    inner: InnerMaxConfig = InnerMaxConfig()
    certificate: CertificateConfig = CertificateConfig()
    device: str = "cpu"
    seed: int = 0


@dataclass
class Prepared:
    data: Dataset
    kind: str  # logistic | linear | mlp
    classification: bool
    loaded: tuple[Model, ModelInfo] | None = None
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# data and model set-up
# ---------------------------------------------------------------------------------------
def prepare(data: DataSpec, model: ModelSpec) -> Prepared:
    """Resolve the model kind and task, then load the data consistently with them."""
    if (data.path is None) == (data.synthetic is None):
        raise UsageError(
            "give exactly one of --data FILE and --synthetic NAME",
            f"e.g. --synthetic gaussian-classes (one of: {', '.join(SYNTHETIC)})",
        )
    loaded = load_model(model.load) if model.load is not None else None
    kind = loaded[0].kind if loaded else (model.model or _default_kind(data))
    if kind not in MODELS:
        raise UsageError(f"unknown model {kind!r}", f"use one of: {', '.join(MODELS)}")
    if loaded:
        classification = loaded[0].loss.kind == "margin"
    elif kind == "mlp":
        classification = get_loss(_loss_name(model, kind, None)).kind == "margin"
    else:
        classification = kind == "logistic"
    if data.synthetic is not None:
        if data.synthetic not in SYNTHETIC:
            raise UsageError(
                f"unknown synthetic data set {data.synthetic!r}",
                f"use one of: {', '.join(SYNTHETIC)}",
            )
        if classification and not is_classification(data.synthetic):
            raise UsageError(
                f"--synthetic {data.synthetic} has a real-valued target",
                "use --model linear, or --synthetic gaussian-classes",
            )
        ds = synthetic_dataset(data.synthetic, data.n, data.d, data.seed)
        std = loaded[1].standardization if loaded else None
        if std is not None or data.standardize:
            from iclr25.core.dro_bound.data import finish_dataset

            ds = finish_dataset(
                ds.X,
                ds.y,
                ds.features,
                ds.target,
                ds.source,
                ds.label_values,
                data.standardize,
                std,
            )
    else:
        info = loaded[1] if loaded else None
        ds = load_dataset(
            data.path,
            info.target if info else data.target,
            classification,
            data.standardize,
            info.features if info else None,
            info.standardization if info else None,
            info.label_values if info else None,
        )
    if loaded and ds.d != len(loaded[1].features):
        raise UsageError(
            f"the data have {ds.d} features, the model {len(loaded[1].features)}",
            "pass data with the model's feature columns",
        )
    return Prepared(ds, kind, classification, loaded)


def _default_kind(data: DataSpec) -> str:
    if data.synthetic is not None and not is_classification(data.synthetic):
        return "linear"
    return "logistic"


def _loss_name(model: ModelSpec, kind: str, classification: bool | None) -> str:
    if model.loss is not None:
        return model.loss
    if kind == "linear" or classification is False:
        return "absolute"
    return "logistic"


def resolve_loss(model: ModelSpec, prep: Prepared):
    loss = get_loss(_loss_name(model, prep.kind, prep.classification), model.huber_delta)
    if prep.kind == "logistic" and loss.kind != "margin":
        raise UsageError(
            f"--loss {loss.name} is a regression loss",
            "use logistic, hinge or ramp with --model logistic",
        )
    if prep.kind == "linear" and loss.kind != "residual":
        raise UsageError(
            f"--loss {loss.name} is a classification loss",
            "use squared, absolute or huber with --model linear",
        )
    return loss


def _check_auto_radius(prep: Prepared, robust: RobustSpec) -> None:
    if robust.rho is None and robust.certificate.radius_constant is None and prep.kind == "mlp":
        raise UsageError(
            "--rho auto for an MLP needs the constant c of ρ_n = c·√(log(1/δ)/n)",
            "pass --radius-constant C (or a numeric --rho)",
        )


def _check_cost(cost: TransportCost, classification: bool) -> None:
    if not cost.labels_fixed and not classification:
        raise UsageError(
            "--kappa (label switching) applies to classification only",
            "drop --kappa for regression (the target is never transported)",
        )


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def _risk_fn(robust: RobustSpec):
    def risk(model, Xb, yb, rho):
        cfg = RiskConfig(
            rho,
            robust.cost,
            robust.solver,
            robust.inner,
            robust.entropic,
            robust.device,
            robust.seed,
        )
        return robust_risk(model, Xb, yb, cfg).robust_risk

    return risk


def resolve_radius(
    prep: Prepared, robust: RobustSpec, fixed: list, refit, on_progress=None
) -> RadiusEstimate | None:
    """None for a numeric --rho; else the certificate radius (user constant or bootstrap)."""
    if robust.rho is not None:
        return None
    cert, n = robust.certificate, prep.data.n
    if cert.radius_constant is not None:
        return user_radius(cert, n)
    _check_auto_radius(prep, robust)
    rng = np.random.default_rng(robust.seed)
    start = 1.0 / math.sqrt(n)
    est = bootstrap_radius(
        prep.data.X,
        prep.data.y,
        fixed,
        _risk_fn(robust),
        lambda m, X, y: m.losses(X, y),
        refit,
        cert,
        rng,
        start,
        on_progress,
    )
    if refit is None:
        est.source += (
            "; the given model held fixed (if it was fitted on these data, leave out --load)"
        )
    return est


def _radius_block(est: RadiusEstimate | None, rho: float, delta: float) -> dict:
    if est is None:
        return {"rho": rho, "source": "given (--rho)"}
    out = {
        "rho": est.rho,
        "constant": est.constant,
        "delta": delta,
        "source": est.source,
        "guarantee": guarantee(est),
    }
    if est.source.startswith("given"):
        out["constant_implied"] = out.pop("constant")
    if est.required is not None:
        req = np.asarray(est.required)
        finite = req[np.isfinite(req)]
        out["bootstrap"] = {
            "replicates": len(req),
            "median_required_rho": float(np.median(finite)) if finite.size else math.inf,
            "uncoverable_share": est.infinite_share,
            "optimism_correction": est.optimism,
        }
    return out


# ---------------------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------------------
def _fit(prep: Prepared, loss, rho: float, robust: RobustSpec, mlp: MLPConfig, on_progress=None):
    """(model, robust objective or None, λ, solver description, converged)."""
    X, y = prep.data.X, prep.data.y
    if prep.kind == "mlp":
        res = train_mlp(
            X,
            y,
            loss,
            rho,
            robust.cost,
            replace(mlp, seed=robust.seed),
            robust.entropic,
            on_progress,
        )
        return res.model, None, res.lam, "Adam (alternating ascent on ζ)", True
    ent = robust.entropic if rho > 0 else None
    res = fit_linear(X, y, prep.kind, loss, FitConfig(rho, robust.cost, ent, seed=robust.seed))
    return res.model, res.robust_objective, res.lam, res.solver, res.converged


def _refitter(prep: Prepared, loss, robust: RobustSpec):
    if prep.kind == "mlp":
        return None

    def refit(Xb, yb, rho):
        res = fit_linear(Xb, yb, prep.kind, loss, FitConfig(rho, robust.cost, seed=robust.seed))
        return [res.model]

    return refit


def _risk_report(model, prep: Prepared, rho: float, robust: RobustSpec, on_progress=None):
    cfg = RiskConfig(
        rho, robust.cost, robust.solver, robust.inner, robust.entropic, robust.device, robust.seed
    )
    return robust_risk(model, prep.data.X, prep.data.y, cfg, on_progress)


def model_summary(model: Model) -> dict:
    out = {"model": model.kind, "loss": model.loss.as_dict()}
    if isinstance(model, LinearModel):
        out["coefficients"] = [float(v) for v in model.coef]
        out["intercept"] = float(model.intercept)
    else:
        out["hidden"] = model.hidden
    return out


def data_summary(ds: Dataset) -> dict:
    return {
        "source": ds.source,
        "n": ds.n,
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


def _model_info(prep: Prepared, training: dict) -> ModelInfo:
    ds = prep.data
    return ModelInfo(ds.features, ds.target, ds.label_values, ds.standardization, training)


# ---------------------------------------------------------------------------------------
# the three workflows
# ---------------------------------------------------------------------------------------
def _given_model(prep: Prepared, model_spec: ModelSpec, robust: RobustSpec, loss):
    """The model whose risk is asked for: loaded, listed (--coef), or ERM on the data."""
    if prep.loaded is not None:
        return prep.loaded[0], f"loaded from {model_spec.load}"
    if model_spec.coef is not None:
        if prep.kind == "mlp":
            raise UsageError("--coef describes a linear model", "drop --coef or use --load")
        coef = np.asarray(model_spec.coef, dtype=np.float64)
        if coef.shape != (prep.data.d,):
            raise UsageError(
                f"--coef has {coef.size} values for {prep.data.d} features",
                "give one coefficient per feature column",
            )
        return LinearModel(prep.kind, loss, coef, float(model_spec.intercept)), "given (--coef)"
    model, *_ = _fit(prep, loss, 0.0, robust, model_spec.mlp)
    return model, "ERM fitted on the data (no --load or --coef given)"


def run_risk(
    data: DataSpec, model_spec: ModelSpec, robust: RobustSpec, on_progress: Callable | None = None
) -> dict:
    prep = prepare(data, model_spec)
    loss = prep.loaded[0].loss if prep.loaded else resolve_loss(model_spec, prep)
    _check_cost(robust.cost, prep.classification)
    _check_auto_radius(prep, robust)
    model, source = _given_model(prep, model_spec, robust, loss)
    est = resolve_radius(prep, robust, [model], None, on_progress)
    rho = est.rho if est is not None else robust.rho
    report = _risk_report(model, prep, rho, robust, on_progress)
    out = {
        "robust_risk": report.robust_risk,
        "empirical_risk": report.empirical_risk,
        "rho": rho,
        "lambda": report.lam,
        "method": report.method,
        "diagnostics": report.diagnostics,
        "radius": _radius_block(est, rho, robust.certificate.delta),
        "model_source": source,
        **model_summary(model),
        "cost": robust.cost.as_dict(),
        "data": data_summary(prep.data),
    }
    truth = true_risk(model, data, prep)
    if truth is not None:
        out["true_risk"] = truth
    return out


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
    prep = prepare(data, model_spec)
    loss = resolve_loss(model_spec, prep)
    _check_cost(robust.cost, prep.classification)
    _check_auto_radius(prep, robust)
    est = resolve_radius(prep, robust, [], _refitter(prep, loss, robust), on_progress)
    rho = est.rho if est is not None else robust.rho
    model, objective, lam, solver, converged = _fit(
        prep, loss, rho, robust, model_spec.mlp, on_progress
    )
    if objective is None or prep.kind == "mlp":  # re-evaluate with the converged dual
        report = _risk_report(model, prep, rho, robust)
        objective, lam = report.robust_risk, report.lam
    erm, erm_block = _erm(prep, loss, rho, robust, model_spec.mlp)
    out = {
        "robust_objective": objective,
        "lambda": lam,
        "rho": rho,
        "empirical_risk": float(np.mean(model.losses(prep.data.X, prep.data.y))),
        **model_summary(model),
        **erm_block,
        "solver": solver,
        "converged": converged,
        "radius": _radius_block(est, rho, robust.certificate.delta),
        "cost": robust.cost.as_dict(),
        "entropic": None
        if robust.entropic is None
        else {"epsilon": robust.entropic.epsilon, "samples": robust.entropic.samples},
        "data": data_summary(prep.data),
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


def _erm(prep: Prepared, loss, rho: float, robust: RobustSpec, mlp: MLPConfig):
    """The ERM model and its result fields (empirical and robust risk at the same ρ)."""
    erm = _fit(prep, loss, 0.0, robust, mlp)[0]
    emp = float(np.mean(erm.losses(prep.data.X, prep.data.y)))
    robust_risk_value = _risk_report(erm, prep, rho, robust).robust_risk if rho > 0 else emp
    summary = model_summary(erm)
    return erm, {
        "erm_objective": emp,
        "erm_robust_risk": robust_risk_value,
        "erm_coefficients": summary.get("coefficients"),
        "erm_intercept": summary.get("intercept"),
    }


def _save(path: Path, model: Model, prep: Prepared, out: dict) -> None:
    from iclr25.core.dro_bound.models import save_model

    training = {k: out[k] for k in ("rho", "cost", "robust_objective", "solver", "data")}
    save_model(path, model, _model_info(prep, training))


def run_certify(
    data: DataSpec, model_spec: ModelSpec, robust: RobustSpec, on_progress: Callable | None = None
) -> dict:
    prep = prepare(data, model_spec)
    loss = prep.loaded[0].loss if prep.loaded else resolve_loss(model_spec, prep)
    _check_cost(robust.cost, prep.classification)
    _check_auto_radius(prep, robust)
    if prep.loaded is not None:
        model, source = prep.loaded[0], f"loaded from {model_spec.load}"
        est = resolve_radius(prep, robust, [model], None, on_progress)
        rho = est.rho if est is not None else robust.rho
    else:
        est = resolve_radius(prep, robust, [], _refitter(prep, loss, robust), on_progress)
        rho = est.rho if est is not None else robust.rho
        model = _fit(prep, loss, rho, robust, model_spec.mlp, on_progress)[0]
        source = "robust model fitted at the certificate radius"
    report = _risk_report(model, prep, rho, robust)
    if est is None:
        est = RadiusEstimate(
            rho / math.sqrt(math.log(1 / robust.certificate.delta) / prep.data.n),
            rho,
            "given (--rho)",
        )
    delta = robust.certificate.delta
    out = {
        "n": prep.data.n,
        "d": prep.data.d,
        "delta": delta,
        "confidence": 1.0 - delta,
        "rho": rho,
        "radius_constant": est.constant,
        "radius_source": est.source,
        "constant_estimated": est.estimated,
        "guarantee": guarantee(est),
        "robust_risk": report.robust_risk,
        "empirical_risk": report.empirical_risk,
        "certified_margin": report.robust_risk - report.empirical_risk,
        "lambda": report.lam,
        "statement": statement(report.robust_risk, report.empirical_risk, est, prep.data.n, delta),
        "radius": _radius_block(est, rho, delta),
        "model_source": source,
        **model_summary(model),
        "cost": robust.cost.as_dict(),
        "data": data_summary(prep.data),
    }
    truth = true_risk(model, data, prep)
    if truth is not None:
        out["true_risk"] = truth
        out["bound_holds"] = bool(report.robust_risk >= truth)
    return out
