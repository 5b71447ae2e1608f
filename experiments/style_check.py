"""Studies of ``iclr25 style-check`` quoted by docs/style-check.md."""

from experiments import Study

STUDIES = {
    "style-check-study": Study(
        args=("style-check", "study", "--workers", "2"),
        about="class-conditional DDPM on 8 hard synthetic artists at 32 px, 3 seeds: set "
        "attribution of its samples vs held-out works, other artists' works and an "
        "unconditional model of equal budget, under the style statistics and the SSL-CNN",
    ),
    "style-check-study-quick": Study(
        args=("style-check", "study", "--quick"),
        about="the same study reduced (6 artists at 16 px, shorter training), as the demo runs it",
    ),
    "style-check-hard": Study(
        args=("style-check", "check", "--synthetic", "--difficulty", "hard"),
        about="check on 8 hard synthetic artists (the first pair identical) with new works of "
        "each as its generated set: which styles are unique, which sets are attributed, "
        "and that no artist without a unique style is flagged",
    ),
}
