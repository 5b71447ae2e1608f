"""Studies of `iclr25 mufu` whose documents docs/mufu.md quotes.

The embedded experiment (``iclr25 mufu experiment``) runs on the bundled base model
(``iclr25/data/mufu/model``, built by ``scripts/train_mufu_model.py``); the quick run
(2 seeds, plain / mufu / shuffled), the 5-seed run with every arm, gain vs k
(``mufu-k-sweep``) and the 3x budget (``mufu-budget``); the last two run only the plain
and mufu arms (``--arms``), so their shuffled condition is "not evaluated".
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
    "mufu-experiment-quick": Study(
        args=("mufu", "experiment", "--quick"),
        about="the embedded experiment, 2 seeds, arms plain / mufu / shuffled and the teacher: "
        "test chrF, gains with seeds x sentences bootstrap intervals, pass conditions, verdict",
    ),
    "mufu-experiment": Study(
        args=("mufu", "experiment", "--workers", "2"),
        about="the embedded experiment at the issue's size: 5 seeds, arms plain / mufu / "
        "shuffled / unrelated and the teacher, k = 3; pass conditions fixed in code",
    ),
    "mufu-experiment-3seeds": Study(
        args=("mufu", "experiment", "--quick", "--seeds", "3"),
        about="the quick arms (plain / mufu / shuffled, teacher) on 3 seeds; the first two "
        "are the quick run's (same derived seeds, read back from the task cache)",
    ),
    "mufu-k-sweep": Study(
        args=("mufu", "experiment", "--arms", "plain,mufu", "--k", "1,3,5", "--seeds", "3"),
        about="gain vs k on the shipped model: mufu with the k = 1, 3, 5 nearest auxiliary "
        "languages against plain, 3 seeds, default budget (6 epochs); no shuffled arm",
    ),
    "mufu-budget": Study(
        args=("mufu", "experiment", "--arms", "plain,mufu", "--epochs", "18", "--seeds", "2"),
        about="does a longer finetuning budget close the Mufu arm's gap? plain and mufu at 3x "
        "the default epochs (18), equal budget asserted, 2 seeds; per-epoch validation chrF",
    ),
}
