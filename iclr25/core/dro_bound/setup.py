"""What the risk/fit/certify workflows share: their specs, the data and model set-up, and
the radius of the requested kind (:mod:`certificate`) with the rows it is computed on.

``RobustSpec.rho`` given -> kind ``user``; ``certificate.radius_constant`` given -> ``user``;
otherwise ``RobustSpec.radius`` (``calibrated``, the default, or ``theory``). For the
calibrated kind the data are split once (:func:`certificate.split_rows`): the held-out
rows calibrate c and nothing else; every model is fitted, scored and certified on the
other rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from iclr25.core.dro_bound.certificate import CertificateConfig, split_rows
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.data import Dataset, finish_dataset, load_dataset
from iclr25.core.dro_bound.entropic import EntropicConfig, smoothed_losses
from iclr25.core.dro_bound.fit import check_loss_cost
from iclr25.core.dro_bound.fit_mlp import MLPConfig
from iclr25.core.dro_bound.inner_max import InnerMaxConfig
from iclr25.core.dro_bound.losses import Loss, get_loss
from iclr25.core.dro_bound.models import Model, ModelInfo, load_model
from iclr25.core.dro_bound.risk import RiskConfig, robust_risk
from iclr25.core.dro_bound.synthetic import SYNTHETIC, is_classification, synthetic_dataset
from iclr25.core.dro_bound.theory import unavailable_reason
from iclr25.errors import RunFailure, UsageError

MODELS = ("logistic", "linear", "mlp")
SCALE_RATIO_WARNING = 100.0  # feature scales differing by more than this: warn


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
    rho: float | None = None  # given ρ (kind user); None: the kind below
    radius: str = "calibrated"  # calibrated | theory, when neither ρ nor c is given
    cost: TransportCost = TransportCost()
    entropic: EntropicConfig | None = None
    solver: str = "auto"
    inner: InnerMaxConfig = InnerMaxConfig()
    certificate: CertificateConfig = CertificateConfig()
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.radius not in ("calibrated", "theory"):
            raise UsageError(
                f"unknown radius kind {self.radius!r}", "use calibrated, theory or a number"
            )

    @property
    def kind(self) -> str:
        if self.rho is not None or self.certificate.radius_constant is not None:
            return "user"
        return self.radius


@dataclass
class Prepared:
    data: Dataset
    kind: str  # logistic | linear | mlp
    classification: bool
    loaded: tuple[Model, ModelInfo] | None = None
    notes: list[str] = field(default_factory=list)  # warnings for the command to print


# ---------------------------------------------------------------------------------------
# data and model
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
        classification = get_loss(loss_name(model, kind, None)).kind == "margin"
    else:
        classification = kind == "logistic"
    if data.synthetic:
        ds = _synthetic(data, loaded, classification)
    else:
        ds = _table(data, loaded, classification)
    if loaded and ds.d != len(loaded[1].features):
        raise UsageError(
            f"the data have {ds.d} features, the model {len(loaded[1].features)}",
            "pass data with the model's feature columns",
        )
    prep = Prepared(ds, kind, classification, loaded)
    _note_scales(prep)
    return prep


def _synthetic(data: DataSpec, loaded, classification: bool) -> Dataset:
    if data.synthetic not in SYNTHETIC:
        raise UsageError(
            f"unknown synthetic data set {data.synthetic!r}", f"use one of: {', '.join(SYNTHETIC)}"
        )
    if classification and not is_classification(data.synthetic):
        raise UsageError(
            f"--synthetic {data.synthetic} has a real-valued target",
            "use --model linear, or --synthetic gaussian-classes",
        )
    ds = synthetic_dataset(data.synthetic, data.n, data.d, data.seed)
    std = loaded[1].standardization if loaded else None
    if std is None and not data.standardize:
        return ds
    return finish_dataset(
        ds.X, ds.y, ds.features, ds.target, ds.source, ds.label_values, data.standardize, std
    )


def _table(data: DataSpec, loaded, classification: bool) -> Dataset:
    info = loaded[1] if loaded else None
    return load_dataset(
        data.path,
        info.target if info else data.target,
        classification,
        data.standardize,
        info.features if info else None,
        info.standardization if info else None,
        info.label_values if info else None,
    )


def _note_scales(prep: Prepared) -> None:
    """Warn when unstandardised feature scales differ by more than 100×: the transport cost
    (and so c and ρ) then weighs the features very unequally."""
    ds = prep.data
    if ds.standardization is not None or ds.n < 2 or ds.d < 2:
        return
    sd = ds.X.std(axis=0)
    positive = sd[sd > 0]
    if positive.size >= 2 and positive.max() > SCALE_RATIO_WARNING * positive.min():
        hi, lo = int(np.argmax(sd)), int(np.argmin(np.where(sd > 0, sd, np.inf)))
        prep.notes.append(
            f"feature scales differ by {positive.max() / positive.min():.3g}× "
            f"({ds.features[hi]!r} sd {sd[hi]:.3g}, {ds.features[lo]!r} sd {sd[lo]:.3g}): the "
            "transport cost ‖x − x'‖ and so c and ρ depend on these units — pass "
            "--standardize to measure them in standard deviations"
        )


def _default_kind(data: DataSpec) -> str:
    if data.synthetic is not None and not is_classification(data.synthetic):
        return "linear"
    return "logistic"


def loss_name(model: ModelSpec, kind: str, classification: bool | None) -> str:
    if model.loss is not None:
        return model.loss
    if kind == "linear" or classification is False:
        return "absolute"
    return "logistic"


def resolve_loss(model: ModelSpec, prep: Prepared, robust: RobustSpec) -> Loss:
    """The loss, checked against the model kind, the task and the cost."""
    if prep.loaded:
        loss = prep.loaded[0].loss
    else:
        loss = get_loss(loss_name(model, prep.kind, prep.classification), model.huber_delta)
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
    if not robust.cost.labels_fixed and not prep.classification:
        raise UsageError(
            "--kappa (label switching) applies to classification only",
            "drop --kappa for regression (the target is never transported)",
        )
    check_loss_cost(loss, robust.cost, robust.rho if robust.kind == "user" else None)
    _check_kind(prep, loss, robust)
    return loss


def _check_kind(prep: Prepared, loss: Loss, robust: RobustSpec) -> None:
    kind = robust.kind
    if kind == "calibrated" and prep.kind == "mlp":
        raise UsageError(
            "the calibrated radius refits the estimator hundreds of times, too slow for an MLP",
            "pass --rho R or --radius-constant C",
        )
    if kind == "theory":
        reason = unavailable_reason(prep.kind, loss, robust.cost, robust.entropic is not None)
        if reason is not None:
            raise UsageError(f"--rho theory is not offered here: {reason}", "use --rho calibrated")
        if robust.certificate.theory is None:
            raise UsageError(
                "--rho theory needs the support of the data distribution",
                "pass --support-radius X (‖x‖₂ ≤ X for every possible x)",
            )


# ---------------------------------------------------------------------------------------
# rows: calibration / certified
# ---------------------------------------------------------------------------------------
def subset(ds: Dataset, rows: np.ndarray) -> Dataset:
    return Dataset(
        ds.X[rows], ds.y[rows], ds.features, ds.target, ds.source, ds.label_values,
        ds.standardization,
    )  # fmt: skip


def certified_rows(prep: Prepared, robust: RobustSpec) -> tuple[Dataset | None, Dataset]:
    """(calibration rows or None, the rows that are fitted and certified)."""
    if robust.kind != "calibrated":
        return None, prep.data
    cal, cert = split_rows(prep.data.n, robust.certificate.calibration_split, robust.seed)
    return subset(prep.data, cal), subset(prep.data, cert)


def with_reference_sigma(robust: RobustSpec, n: int, d: int) -> RobustSpec:
    """For an entropic run whose ρ is not given, fix σ before the radius is known: the
    default σ = ρ^(1/q)/√d at the nominal ρ = 1/√n (stated in the output)."""
    ent = robust.entropic
    if ent is None or ent.sigma is not None or robust.kind != "calibrated":
        return robust
    sigma = (1.0 / math.sqrt(n)) ** (1.0 / robust.cost.q) / math.sqrt(max(d, 1))
    return replace(robust, entropic=replace(ent, sigma=sigma))


# ---------------------------------------------------------------------------------------
# the functions the bootstrap calls
# ---------------------------------------------------------------------------------------
def risk_config(robust: RobustSpec, rho: float) -> RiskConfig:
    return RiskConfig(
        rho, robust.cost, robust.solver, robust.inner, robust.entropic, robust.device, robust.seed
    )


def risk_fn(robust: RobustSpec):
    """(model, X, y, ρ) -> R_ρ; for the entropic risk −∞ where the dual is unbounded below
    (ρ = 0, or ρ below the samples' closest transport cost)."""

    def risk(model, Xb, yb, rho):
        if robust.entropic is not None:
            if rho <= 0:
                return -math.inf
            try:
                return robust_risk(model, Xb, yb, risk_config(robust, rho)).robust_risk
            except RunFailure:
                return -math.inf
        return robust_risk(model, Xb, yb, risk_config(robust, rho)).robust_risk

    return risk


def losses_fn(robust: RobustSpec):
    """Per-sample losses the bound is about: ℓ, or the smoothed ℓ for the entropic risk."""
    ent = robust.entropic
    if ent is None:
        return lambda m, X, y: m.losses(X, y)

    def smoothed(model, X, y):
        import torch

        dtype = torch.float64
        xt = torch.as_tensor(np.asarray(X, np.float64), dtype=dtype)
        yt = torch.as_tensor(np.asarray(y, np.float64), dtype=dtype)
        switch = not robust.cost.labels_fixed and model.loss.kind == "margin"
        gen = torch.Generator().manual_seed(robust.seed + 31)
        if ent.sigma is None:
            raise ValueError("smoothed losses need σ fixed (with_reference_sigma)")
        sigma = ent.sigma
        fn = model.torch_loss_fn(dtype, "cpu")
        return smoothed_losses(fn, xt, yt, robust.cost, sigma, ent.samples, gen, switch)

    return smoothed
