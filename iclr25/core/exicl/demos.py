"""Demonstrations (``--demos``, ``--nominal``): reading and validation.

Formats:

- ``.npz``: ``states`` (N, T, 2) as (x, y); ``actions`` (N, T−1, 2) = state differences
  (optional: derived when absent); ``lengths`` (N,) optional — episode i is
  ``states[i, :lengths[i]]`` (the rest is padding and ignored).
- ``.parquet``: one row per (episode, t) with columns ``episode``, ``t``, the state columns
  (``--state-columns``, default ``x,y``) and optionally the action columns
  (``--action-columns``, default ``dx,dy``; an episode's last row carries no action).

Every check names the episode and the step: NaN, episodes shorter than 2 states, states
off the grid / on a wall / not on a cell (grid2d), moves longer than a cell or cutting a
corner, actions that are not the state differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.spec import GridSpec, PointSpec, Spec
from iclr25.errors import InputError

FORMATS = (".npz", ".parquet")


@dataclass
class Demos:
    """Episodes of (x, y) states, each (T_i, 2), T_i ≥ 2."""

    episodes: list[np.ndarray]
    source: str = "built-in"

    def __len__(self) -> int:
        return len(self.episodes)

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(e) for e in self.episodes], dtype=np.int64)

    @property
    def starts(self) -> np.ndarray:
        return np.stack([e[0] for e in self.episodes])

    @property
    def goals(self) -> np.ndarray:
        return np.stack([e[-1] for e in self.episodes])

    def subset(self, index) -> Demos:
        return Demos([self.episodes[int(i)] for i in index], self.source)

    def padded(self, horizon: int) -> np.ndarray:
        """(N, horizon, 2): each episode followed by copies of its last state (staying at
        the goal costs nothing), the trajectory form of the diffusion prior."""
        out = np.empty((len(self.episodes), horizon, 2))
        for i, e in enumerate(self.episodes):
            out[i, : len(e)] = e
            out[i, len(e) :] = e[-1]
        return out


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------
def _npz(path: Path, flag: str) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    try:
        data = np.load(path, allow_pickle=False)
        states = np.asarray(data["states"], dtype=np.float64)
        actions = np.asarray(data["actions"], dtype=np.float64) if "actions" in data else None
        lengths = np.asarray(data["lengths"]) if "lengths" in data else None
    except KeyError:
        raise InputError(f"{flag} {path}: no 'states' array", "save states (N, T, 2)") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{flag} {path}: not a readable .npz ({exc})", "fix the file") from None
    if states.ndim != 3 or states.shape[2] != 2:
        raise InputError(f"{flag} {path}: states has shape {states.shape}", "need (N, T, 2)")
    n, t = states.shape[:2]
    if actions is not None and actions.shape != (n, max(t - 1, 0), 2):
        raise InputError(
            f"{flag} {path}: actions has shape {actions.shape}, states {states.shape}",
            f"actions must be (N, T−1, 2) = ({n}, {t - 1}, 2)",
        )
    if lengths is None:
        lengths = np.full(n, t)
    if lengths.shape != (n,) or not np.issubdtype(lengths.dtype, np.integer):
        raise InputError(f"{flag} {path}: lengths must be (N,) integers", "fix 'lengths'")
    if (lengths > t).any() or (lengths < 0).any():
        raise InputError(f"{flag} {path}: a length exceeds T = {t} or is negative", "fix it")
    eps = [states[i, : lengths[i]] for i in range(n)]
    acts = [None if actions is None else actions[i, : max(lengths[i] - 1, 0)] for i in range(n)]
    return eps, acts


def _columns(text: str, flag: str) -> list[str]:
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if len(cols) != 2:
        raise InputError(f"{flag} {text!r} names {len(cols)} columns", "name two, e.g. x,y")
    return cols


def _parquet(path: Path, flag: str, state_cols: str, action_cols: str):
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise InputError(f"{flag} {path}: not a readable Parquet file ({exc})", "fix it") from None
    names = set(table.column_names)
    s_cols = _columns(state_cols, "--state-columns")
    a_cols = _columns(action_cols, "--action-columns")
    missing = [c for c in ("episode", "t", *s_cols) if c not in names]
    if missing:
        raise InputError(
            f"{flag} {path}: missing columns {missing} (has {sorted(names)})",
            "name them with --state-columns / --action-columns, or add episode and t",
        )
    has_actions = all(c in names for c in a_cols)
    episode = np.asarray(table["episode"].to_numpy(zero_copy_only=False))
    t = np.asarray(table["t"].to_numpy(zero_copy_only=False), dtype=np.int64)
    xy = np.stack([_floats(table, c) for c in s_cols], axis=1)
    act = np.stack([_floats(table, c) for c in a_cols], axis=1) if has_actions else None
    order = np.lexsort((t, episode))
    eps, acts = [], []
    keys, first = np.unique(episode[order], return_index=True)
    bounds = list(first) + [len(order)]
    for key, lo, hi in zip(keys, bounds[:-1], bounds[1:], strict=True):
        rows = order[lo:hi]
        if not np.array_equal(t[rows], np.arange(len(rows))):
            raise InputError(f"{flag} {path}: episode {key}: t is not 0, 1, 2, ...", "fix t")
        eps.append(xy[rows])
        acts.append(None if act is None else act[rows[:-1]])
    return eps, acts


def _floats(table, column: str) -> np.ndarray:
    arr = table[column].to_numpy(zero_copy_only=False)
    return np.asarray([np.nan if v is None else v for v in arr], dtype=np.float64)


def read_episodes(path: Path, flag: str = "--demos", state_columns: str = "x,y",
                  action_columns: str = "dx,dy"):  # fmt: skip
    """(episodes, actions or None per episode) from a .npz or .parquet file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{flag} {path}: no such file", "give a .npz or .parquet file")
    if path.suffix not in FORMATS:
        raise InputError(f"{flag} {path}: unknown format {path.suffix!r}", "use .npz or .parquet")
    if path.suffix == ".npz":
        return _npz(path, flag)
    return _parquet(path, flag, state_columns, action_columns)


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------
def _check_common(eps, acts, flag: str) -> None:
    if not eps:
        raise InputError(f"{flag}: no episodes", "give at least one demonstration")
    for i, (e, a) in enumerate(zip(eps, acts, strict=True)):
        if len(e) < 2:
            raise InputError(f"{flag}: episode {i} has {len(e)} state(s)", "need ≥ 2 states")
        bad = np.nonzero(~np.isfinite(e).all(axis=1))[0]
        if bad.size:
            raise InputError(f"{flag}: episode {i}, t = {bad[0]}: NaN or inf state", "fix it")
        if a is None:
            continue
        if not np.isfinite(a).all():
            t = int(np.nonzero(~np.isfinite(a).all(axis=1))[0][0])
            raise InputError(f"{flag}: episode {i}, t = {t}: NaN or inf action", "fix it")
        diff = np.abs(a - np.diff(e, axis=0)).max(axis=1)
        bad = np.nonzero(diff > 1e-6)[0]
        if bad.size:
            t = int(bad[0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: action {a[t].tolist()} ≠ state difference "
                f"{(e[t + 1] - e[t]).tolist()}",
                "actions must be s[t+1] − s[t]",
            )


def _check_grid(spec: GridSpec, eps, flag: str) -> list[np.ndarray]:
    out = []
    for i, e in enumerate(eps):
        off = np.nonzero(np.abs(e - np.round(e)).max(axis=1) > 1e-9)[0]
        if off.size:
            raise InputError(
                f"{flag}: episode {i}, t = {off[0]}: state {e[off[0]].tolist()} is not a cell",
                "grid2d states are integer (x, y) cells",
            )
        c = np.round(e).astype(np.int64)
        outside = (c[:, 0] < 0) | (c[:, 0] >= spec.width) | (c[:, 1] < 0) | (c[:, 1] >= spec.height)
        if outside.any():
            t = int(np.nonzero(outside)[0][0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: state {c[t].tolist()} is off the "
                f"{spec.width}×{spec.height} grid",
                "use 0 ≤ x < width, 0 ≤ y < height",
            )
        on_wall = spec.walls[c[:, 1], c[:, 0]]
        if on_wall.any():
            t = int(np.nonzero(on_wall)[0][0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: state {c[t].tolist()} is a wall", "fix it"
            )
        bad = grid.illegal_moves(spec, c, spec.walls)
        if bad.any():
            t = int(np.nonzero(bad)[0][0])
            d = (c[t + 1] - c[t]).tolist()
            why = (
                "longer than a cell"
                if np.abs(c[t + 1] - c[t]).max() > 1
                or (spec.moves == 4 and np.abs(c[t + 1] - c[t]).sum() > 1)
                else "cuts a wall's corner"
            )
            raise InputError(
                f"{flag}: episode {i}, t = {t}: move {d} from {c[t].tolist()} is {why}",
                f"moves are single steps ({spec.moves}-connected, no corner cutting)",
            )
        out.append(c)
    return out


def _check_point(spec: PointSpec, eps, flag: str) -> list[np.ndarray]:
    from iclr25.core.exicl.geometry import illegal_segments, inside_any

    for i, e in enumerate(eps):
        outside = (
            (e[:, 0] < 0) | (e[:, 0] > spec.width - 1) | (e[:, 1] < 0) | (e[:, 1] > spec.height - 1)
        )
        if outside.any():
            t = int(np.nonzero(outside)[0][0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: state {e[t].tolist()} is off the map", "fix it"
            )
        inside = inside_any(e, spec.polygons)
        if inside.any():
            t = int(np.nonzero(inside)[0][0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: state {e[t].tolist()} is inside a wall", "fix it"
            )
        step = np.linalg.norm(np.diff(e, axis=0), axis=1)
        if (step > spec.max_step + 1e-9).any():
            t = int(np.nonzero(step > spec.max_step + 1e-9)[0][0])
            raise InputError(
                f"{flag}: episode {i}, t = {t}: a move of {step[t]:.3g} exceeds "
                f"max_step {spec.max_step:g}",
                "split long moves",
            )
        cross = illegal_segments(e[:-1], e[1:], spec.polygons)
        if cross.any():
            t = int(np.nonzero(cross)[0][0])
            raise InputError(f"{flag}: episode {i}, t = {t}: the move crosses a wall", "fix it")
    return [np.asarray(e, dtype=np.float64) for e in eps]


def load_demos(path: Path, spec: Spec, flag: str = "--demos", state_columns: str = "x,y",
               action_columns: str = "dx,dy") -> Demos:  # fmt: skip
    """Read and validate demonstrations against ``spec`` (every check before any training)."""
    eps, acts = read_episodes(path, flag, state_columns, action_columns)
    _check_common(eps, acts, f"{flag} {path}")
    checked = (
        _check_grid(spec, eps, f"{flag} {path}")
        if isinstance(spec, GridSpec)
        else _check_point(spec, eps, f"{flag} {path}")
    )
    return Demos(checked, str(path))


def save_npz(path: Path, demos: Demos) -> None:
    """Write demos in the .npz format above (padded with the last state, with lengths)."""
    import io

    from iclr25 import atomic

    horizon = int(demos.lengths.max())
    states = demos.padded(horizon)
    buf = io.BytesIO()
    np.savez(buf, states=states, actions=np.diff(states, axis=1), lengths=demos.lengths)
    atomic.write_bytes(Path(path), buf.getvalue())
