"""The bodies of `pi-dion train` and `pi-dion solve` (imported lazily by the command
module, so `iclr25 --help` never loads torch)."""

from __future__ import annotations

from pathlib import Path

from iclr25.errors import InputError, UsageError
from iclr25.runner import Run


def _training_file(data_dir: Path | None, measurements: Path | None) -> Path:
    if (data_dir is None) == (measurements is None):
        raise UsageError("give exactly one of --data DIR and --measurements FILE",
                         "e.g. --data DIR from `iclr25 pi-dion generate`")  # fmt: skip
    if measurements is not None:
        return Path(measurements)
    path = Path(data_dir) / "train.npz"
    if not path.is_file():
        raise InputError(f"{path} does not exist", "write it with `iclr25 pi-dion generate --out`")
    return path


def _held_out(data_dir: Path | None, saved_like, x) -> dict | None:
    """Errors on DIR/test.npz (labels used for scoring only), when it exists."""
    import numpy as np

    from iclr25.core.pi_dion import problem, train

    path = None if data_dir is None else Path(data_dir) / "test.npz"
    if path is None or not path.is_file():
        return None
    with np.load(path) as npz:
        if "f" not in npz or not np.allclose(np.ravel(npz["x"]), x):
            return None  # another layout, or a darcy test set (g, not f)
        d, grid, f, u = npz["u"], npz["grid"], npz["f"], npz["u_true"]
    u_hat, f_hat = train.predict(saved_like, d, grid)
    return {"file": str(path), "instances": len(d),
            "rel_l2_f": float(problem.rel_l2(f_hat, f).mean()),
            "rel_l2_u": float(problem.rel_l2(u_hat, u).mean())}  # fmt: skip


def grid_points(grid):
    """(G², 2) points of the square grid ``grid`` × ``grid``, row-major (x slowest)."""
    import numpy as np

    x, y = np.meshgrid(grid, grid, indexing="ij")
    return np.stack([x.ravel(), y.ravel()], axis=1)


def _train_2d(data, p, cfg, labels: int, seed: int, advance, labelled):
    """The 2-D PI-DION (label-free) or, with labels, its supervised CNN DeepONet."""
    from iclr25.core.pi_dion import train2d

    if not labels:
        return train2d.train_pi_dion_2d(data.u, data.x, p.c, cfg, seed, advance)
    grid, f = labelled
    f = f.reshape(len(f), -1)
    return train2d.train_supervised_2d(data.u[:labels], data.x, f, grid_points(grid), p.c, cfg,
                                       seed, advance)  # fmt: skip


def _held_out_2d(data_dir: Path | None, model, x) -> dict | None:
    """2-D errors on DIR/test.npz (f, u_true on the grid × grid points), when it exists."""
    import numpy as np

    from iclr25.core.pi_dion import train2d

    path = None if data_dir is None else Path(data_dir) / "test.npz"
    if path is None or not path.is_file():
        return None
    with np.load(path) as npz:
        if npz["x"].shape != x.shape or not np.allclose(npz["x"], x):
            return None
        d, grid, f, u = npz["u"], npz["grid"], npz["f"], npz["u_true"]
    u_hat, f_hat = train2d.predict_2d(model, d, x, grid_points(grid))
    f, u = f.reshape(len(f), -1), u.reshape(len(u), -1)

    def rel(a, b):
        return float((np.linalg.norm(a - b, axis=1) / np.linalg.norm(b, axis=1)).mean())

    return {"file": str(path), "instances": len(d), "rel_l2_f": rel(f_hat, f),
            "rel_l2_u": rel(u_hat, u)}  # fmt: skip


def _train_darcy(data, cfg, labels: int, seed: int, advance, labelled):
    """darcy PI-DION (label-free) or, with labels, its supervised DeepONet (target g)."""
    from iclr25.core.pi_dion import darcy_model

    if not labels:
        return darcy_model.train_darcy(data.u, data.x, cfg, seed, advance)
    grid, g = labelled
    return darcy_model.train_supervised_darcy(data.u[:labels], data.x, g, grid, cfg, seed,
                                              advance)  # fmt: skip


def _held_out_darcy(data_dir: Path | None, model, x) -> dict | None:
    """darcy errors (a, g, u) on DIR/test.npz (labels used for scoring only), when it exists."""
    import numpy as np

    from iclr25.core.pi_dion import darcy_model, problem

    path = None if data_dir is None else Path(data_dir) / "test.npz"
    if path is None or not path.is_file():
        return None
    with np.load(path) as npz:
        if "g" not in npz or not np.allclose(np.ravel(npz["x"]), x):
            return None
        d, grid, g, u = npz["u"], npz["grid"], npz["g"], npz["u_true"]
    u_hat, g_hat = darcy_model.predict(model, d, grid)
    return {"file": str(path), "instances": len(d),
            "rel_l2_a": float(problem.rel_l2(np.exp(g_hat), np.exp(g)).mean()),
            "rel_l2_g": float(problem.rel_l2(g_hat, g).mean()),
            "rel_l2_u": float(problem.rel_l2(u_hat, u).mean())}  # fmt: skip


def _held_out_of(p):
    if p.pde == "darcy":
        return _held_out_darcy
    return _held_out_2d if p.dim == 2 else _held_out


def run_train(run: Run, p, cfg, data_dir, measurements, labels: int, save: Path | None) -> None:
    """Label-free training on measurements only (``--labels N``: supervised on the first N
    labelled instances of an NPZ with grid and f)."""
    from iclr25.core.pi_dion import measurements as meas
    from iclr25.core.pi_dion import saved, train
    from iclr25.threads import set_torch_threads

    set_torch_threads(1)
    source = _training_file(data_dir, measurements)
    if save is not None and Path(save).exists():
        raise UsageError(f"--save {save} exists", "choose a new path (nothing is overwritten)")
    data = meas.read(source, p.dim)
    if labels < 0 or labels > len(data.u):
        raise UsageError(f"--labels {labels}", f"use 0 (label-free) to {len(data.u)}")
    key = "g" if p.pde == "darcy" else "f"
    if labels:
        if measurements is None:
            raise UsageError(
                "--labels N reads labels from --measurements FILE",
                f"give an NPZ with grid and {key} (e.g. generate's test.npz)",
            )
        grid, f = meas.read_labels(source, labels, key)
    if meas.identifiable_fraction(data.x) < 1:
        run.warn("the sensors cover part of Ω only: f outside their hull is not determined "
                 f"(identifiable_fraction {meas.identifiable_fraction(data.x):.3f})")  # fmt: skip
    with run.progress("training steps", total=cfg.steps) as advance, run.timer("train_s"):
        if p.pde == "darcy":
            model, loss = _train_darcy(data, cfg, labels, run.seed, advance,
                                       (grid, f) if labels else None)  # fmt: skip
        elif p.dim == 2:
            model, loss = _train_2d(data, p, cfg, labels, run.seed, advance,
                                    (grid, f) if labels else None)  # fmt: skip
        elif labels:
            model, loss = train.train_supervised(data.u[:labels], f, grid, p.c, cfg, run.seed,
                                                 advance)  # fmt: skip
        else:
            model, loss = train.train_pi_dion(data.u, data.x, p.c, cfg, run.seed, advance)
    results = {"mode": "supervised" if labels else "label-free", "labels": labels,
               "instances": len(data.u), "sensors": len(data.x), "final_loss": loss,
               "steps": cfg.steps, "dim": p.dim,
               "held_out": _held_out_of(p)(data_dir, model, data.x),
               "saved": None, "sha256": None}  # fmt: skip
    if save is not None:
        meta = {"train": cfg.__dict__, "labels": labels, "instances": len(data.u),
                "seed": run.seed, "noise": p.noise, "nu": p.nu, "ell": p.ell}  # fmt: skip
        saved.save(Path(save), model, data.x, p.pde, p.c, meta)
        results["saved"], results["sha256"] = str(save), saved.sha256_of(Path(save))
    run.finish(results, {"problem": p, "train": cfg, "source": str(source)})


def run_solve(run: Run, p, dim: int, cfg, measurements: Path, model: str) -> None:
    """f and u on a grid for every instance of the user's measurements."""
    from iclr25.core.pi_dion import measurements as meas
    from iclr25.core.pi_dion import saved, solve
    from iclr25.threads import set_torch_threads

    set_torch_threads(1)
    solve.check(cfg)
    if dim == 2:
        _solve_2d(run, p, cfg, measurements, model)
        return
    if dim != 1:
        raise UsageError(f"--dim {dim}", "use --dim 1 or --dim 2")
    if p.pde == "darcy":
        _solve_darcy(run, p, cfg, measurements, model)
        return
    data = meas.read(Path(measurements), dim)
    model_info = None
    loaded = None
    if cfg.method == "pi-dion":
        path = saved.BUNDLED if model == "bundled" else Path(model)
        loaded = saved.load(path)
        saved.check_compatible(loaded, data.x, p.pde, p.c, dim)
        model_info = {"path": str(path), "sha256": saved.sha256_of(path),
                      "labels": loaded.meta.get("labels", 0)}  # fmt: skip
    results = solve.solve(data, p, cfg, loaded)
    if results["identifiable_fraction"] < 1:
        run.warn(
            f"the sensors cover {results['identifiable_fraction']:.3f} of Ω: f outside their "
            "hull is not determined by the data (no stability estimate holds there)"
        )
    results["model"] = model_info
    run.finish(results, {"problem": p, "solve": cfg, "measurements": str(measurements)})


def _solve_2d(run: Run, p, cfg, measurements: Path, model: str) -> None:
    """--dim 2: a 2-D PI-DION (`train --dim 2 --save`, or the bundled one that
    `scripts/train_pi_dion.py --dim 2` writes), Tikhonov or the Bayes mean."""
    from dataclasses import replace

    from iclr25.core.pi_dion import measurements as meas
    from iclr25.core.pi_dion import saved, solve2d

    p = replace(p, dim=2)
    loaded, model_info = None, None
    data = meas.read(Path(measurements), 2)
    if cfg.method == "pi-dion":
        path = saved.resolve(model, 2)
        loaded = saved.load(path)
        saved.check_compatible(loaded, data.x, p.pde, p.c, 2)
        model_info = {"path": str(path), "sha256": saved.sha256_of(path),
                      "labels": loaded.meta.get("labels", 0)}  # fmt: skip
    results = solve2d.solve(data, p, cfg.method, cfg.grid, cfg.noise_std, loaded)
    if results["identifiable_fraction"] < 1:
        run.warn(f"the sensors cover about {results['identifiable_fraction']:.3f} of Ω (bounding "
                 "box): f outside their hull is not determined by the data")  # fmt: skip
    results["model"] = model_info
    run.finish(results, {"problem": p, "solve": cfg, "measurements": str(measurements)})


def _solve_darcy(run: Run, p, cfg, measurements: Path, model: str) -> None:
    """darcy: a trained darcy PI-DION (``bundled``: the one `scripts/train_pi_dion.py
    --pde darcy` wrote, or a `train --pde darcy --save` file) or Tikhonov–Gauss–Newton;
    --method bayes is refused (nonlinear)."""
    from iclr25.core.pi_dion import darcy_solve, saved
    from iclr25.core.pi_dion import measurements as meas

    darcy_solve.check(cfg.method)
    data = meas.read(Path(measurements), 1)
    loaded, model_info = None, None
    if cfg.method == "pi-dion":
        path = saved.resolve(model, 1, "darcy")
        loaded = saved.load(path)
        saved.check_compatible(loaded, data.x, p.pde, p.c, 1)
        model_info = {"path": str(path), "sha256": saved.sha256_of(path),
                      "labels": loaded.meta.get("labels", 0)}  # fmt: skip
    results = darcy_solve.solve(data, p, cfg, loaded)
    if results["identifiable_fraction"] < 1:
        run.warn(f"the sensors cover {results['identifiable_fraction']:.3f} of Ω: a outside "
                 "their hull is not determined by the data")  # fmt: skip
    results["model"] = model_info
    run.finish(results, {"problem": p, "solve": cfg, "measurements": str(measurements)})
