"""Mufu and plain prompts: content, templates, errors."""

from __future__ import annotations

import pytest

from iclr25.core.mufu.prompts import PromptSpec, check_columns, mufu_prompt, plain_prompt, render
from iclr25.errors import InputError, UsageError

ROW = {
    "source": "ROFF FSTEU",
    "draft": "fu fa",
    "cand.sam": "cu ca",
    "cand.ser": "łu ła",
    "target": "fu fe",
}


def test_mufu_prompt_holds_source_candidates_draft_in_order():
    p = mufu_prompt(ROW, "tel", ["ser", "sam"], names={"tel": "Tel", "src": "Src"})
    assert p.splitlines() == [
        "Correct the possibly inaccurate Tel draft using translations in related languages.",
        "Src: ROFF FSTEU",
        "ser: łu ła",
        "sam: cu ca",
        "Tel draft: fu fa",
        "Tel:",
    ]
    assert "fu fe" not in p  # never the reference


def test_plain_prompt_has_no_candidates_and_no_draft():
    p = plain_prompt(ROW, "tel")
    assert p == "Translate into tel.\nsrc: ROFF FSTEU\ntel:"


def test_custom_template_and_instruction():
    spec = PromptSpec(
        "mufu",
        "tel",
        ("sam",),
        template="{instruction}|{source}|{candidates}|{draft}|{target_lang}",
        instruction="Fix {target_lang}",
    )
    assert render(ROW, spec) == "Fix tel|ROFF FSTEU|sam: cu ca|fu fa|tel"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"format": "mufu", "aux_langs": ("tel",)}, "among the auxiliary"),
        ({"format": "mufu", "aux_langs": ()}, "needs auxiliary"),
        ({"format": "nope", "aux_langs": ("sam",)}, "unknown"),
        (
            {"format": "mufu", "aux_langs": ("sam",), "template": "{source} {target_lang}"},
            "needs the field",
        ),
        ({"format": "plain", "template": "{source} {bogus} {target_lang}"}, "unknown field"),
        ({"format": "plain", "template": "{source {target_lang}"}, "not a valid format"),
    ],
)
def test_bad_specs_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message):
        PromptSpec(target_lang="tel", **kwargs)


def test_missing_candidate_column_names_row_and_column():
    spec = PromptSpec("mufu", "tel", ("sam", "dov"))
    with pytest.raises(InputError, match=r"f\.tsv row 2: column 'cand\.dov' is missing"):
        check_columns([{**ROW, "cand.dov": "x"}, ROW], spec, "f.tsv")
