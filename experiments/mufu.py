"""Studies of `iclr25 mufu` whose documents docs/mufu.md quotes.

The embedded experiment (``iclr25 mufu experiment``) needs the embedded base model, which
this checkout does not ship (``scripts/train_mufu_model.py`` builds it); its study is
added here once the model is built and the run fits the shared machine.
"""

from __future__ import annotations

from experiments import Study

DEMO = "iclr25/data/mufu/"

STUDIES = {
    "mufu-score-demo": Study(
        args=(
            "mufu",
            "score",
            "--hyp",
            DEMO + "demo.draft.txt",
            "--ref",
            DEMO + "demo.ref.txt",
            "--baseline",
            DEMO + "demo.sister.txt",
        ),  # fmt: skip
        about="the demo's synthetic drafts into tel (30 % word errors) against copying the "
        "closest sister's candidate: chrF, chrF++, sacrebleu's paired bootstrap (50 sentences)",
    ),
}
