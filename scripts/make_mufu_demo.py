"""Write the `iclr25 mufu` demo files (iclr25/data/mufu/demo.*) from the synthetic world.

No model is involved: the "teacher" here is the world itself with word errors, so the
demo runs offline in seconds on any installation. Deterministic (world seed 0, numpy
seed [0, 5]); run from the repository root::

    python scripts/make_mufu_demo.py

Written (50 sentences, never in the target's pretraining pool):

- ``demo.tsv``: ``source``, ``target`` (the reference in ``tel``), ``draft`` (the
  reference with each word wrong with probability 0.3: a sister's cognate, a random
  word, or dropped — :func:`iclr25.core.mufu.pretrain.noisy_render`), and
  ``cand.sam`` / ``cand.ser`` / ``cand.dov`` (correct translations into the three
  nearest languages with 5 % word errors);
- ``demo.draft.txt`` / ``demo.ref.txt``: the drafts and the references, one per line;
- ``demo.sister.txt``: the baseline the demo scores the drafts against — the candidate
  of the closest sister (``sam``) copied verbatim as if it were ``tel``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from iclr25.core.mufu.pretrain import noisy_render, target_pool  # noqa: E402
from iclr25.core.mufu.world import SOURCE, TARGET, World  # noqa: E402

ROWS = 50
AUX = ("sam", "ser", "dov")
DRAFT_ERROR = 0.3
CANDIDATE_ERROR = 0.05


def demo_rows(world: World) -> list[dict]:
    rng = np.random.default_rng([world.config.seed, 5])
    sentences = world.sample_many(rng, ROWS, target_pool(world, 200))
    rows = []
    for s in sentences:
        row = {
            "source": world.render(s, SOURCE),
            "target": world.render(s, TARGET),
            "draft": noisy_render(world, s, TARGET, DRAFT_ERROR, rng, sister=AUX[0]),
        }
        for lang in AUX:
            row[f"cand.{lang}"] = noisy_render(world, s, lang, CANDIDATE_ERROR, rng)
        rows.append(row)
    return rows


def main() -> int:
    out = ROOT / "iclr25" / "data" / "mufu"
    out.mkdir(parents=True, exist_ok=True)
    rows = demo_rows(World())
    columns = ["source", "target", "draft", *[f"cand.{a}" for a in AUX]]
    table = (
        "\t".join(columns) + "\n" + "".join("\t".join(r[c] for c in columns) + "\n" for r in rows)
    )
    (out / "demo.tsv").write_text(table)
    (out / "demo.draft.txt").write_text("".join(r["draft"] + "\n" for r in rows))
    (out / "demo.ref.txt").write_text("".join(r["target"] + "\n" for r in rows))
    (out / "demo.sister.txt").write_text("".join(r[f"cand.{AUX[0]}"] + "\n" for r in rows))
    print(f"wrote {len(rows)} demo rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
