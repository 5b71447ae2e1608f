"""Attribution of generated images: same generator with new works is attributed, an
unseen generator is not attributed with high confidence; conformal p-values; the set
classification."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.style_check.check import (
    CheckConfig,
    attribute,
    conformal_p_values,
    fit_attributor,
    set_attribution,
)
from iclr25.testing import assert_close

from .conftest import embed_folder  # noqa: TID252


def _attributor(corpus):
    ref = corpus.ref
    return fit_attributor(ref.embeddings, ref.artists, ref.encoder.feature_groups, CheckConfig())


def test_new_works_of_known_artists_are_attributed(corpus):
    att = _attributor(corpus)
    emb, _, made_for = embed_folder(corpus.generated)
    out = attribute(att, emb, CheckConfig())
    truth = np.array([att.names.index(m) for m in made_for])
    assert (out["best"] == truth).mean() >= 0.9
    assert (out["attributed"] >= 0).mean() >= 0.8  # confident: probability and typicality


def test_unseen_generator_is_not_attributed_confidently(corpus):
    att = _attributor(corpus)
    emb, _, _ = embed_folder(corpus.unseen)
    out = attribute(att, emb, CheckConfig())
    assert (out["attributed"] >= 0).mean() <= 0.1
    assert np.median(out["typicality"]) < CheckConfig().alpha


def test_conformal_p_value_known_answer():
    cal = np.array([0.1, 0.2, 0.3])
    # #{s_j >= s}: s = 0.25 -> 1, s = 0.05 -> 3, s = 0.3 -> 1 (ties count), s = 0.9 -> 0
    assert_close(conformal_p_values(cal, [0.25, 0.05, 0.3, 0.9]), [0.5, 1.0, 0.5, 0.25])


@given(st.lists(st.floats(0, 2), min_size=1, max_size=30), st.floats(0, 2), st.floats(0, 2))
def test_conformal_p_value_bounds_and_monotone(cal, s1, s2):
    cal = np.sort(np.array(cal))
    p = conformal_p_values(cal, [min(s1, s2), max(s1, s2)])
    assert 1 / (len(cal) + 1) <= p[1] <= p[0] <= 1.0


def test_set_attribution_known_answer():
    """Summed log-probabilities decide; the margin is to the best other artist; half the
    set must be typical of the target."""
    names = ["a", "b", "c"]
    log_p = np.log(np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.5, 0.4, 0.1]]))
    # sums: a = log .06, b = log .084, c = log .001 -> b wins; margin of a = log(.06/.084)
    out = set_attribution(log_p, 0, np.array([0.5, 0.5, 0.5]), names, 0.05)
    assert out["artist"] == "b" and not out["matches_target"] and not out["attributed"]
    assert abs(out["log_margin"] - np.log(0.06 / 0.084)) < 1e-12
    hit = set_attribution(log_p, 1, np.array([0.5, 0.01, 0.5]), names, 0.05)
    assert hit["attributed"] and abs(hit["typical_share"] - 2 / 3) < 1e-12
    atypical = set_attribution(log_p, 1, np.array([0.01, 0.01, 0.5]), names, 0.05)
    assert atypical["matches_target"] and not atypical["attributed"]
    assert set_attribution(log_p, 1, np.zeros(3), names, 0.0)["attributed"]  # alpha 0: no gate


def test_images_for_indistinguishable_artists_split_between_the_twins(hard_corpus):
    from iclr25.core.style_check.checking import CheckRequest, run_check
    from iclr25.core.style_check.deepmatch import DeepMatchConfig

    request = CheckRequest(hard_corpus.generated, hard_corpus.db)
    res = run_check(request, CheckConfig(), DeepMatchConfig(), 0, "cpu")
    rows = {r["name"]: r for r in res["artists"]}
    leader, follower, _ = hard_corpus.pairs[0]
    tops = {r["top_matches"][0]["artist"] for r in res["images"] if r["made_for"] == leader}
    tops |= {r["top_matches"][0]["artist"] for r in res["images"] if r["made_for"] == follower}
    assert tops == {leader, follower}  # new works of the twins go to either name
    assert (rows[leader]["top1_share"] + rows[follower]["top1_share"]) / 2 <= 0.75
    far = hard_corpus.pairs[2][:2]  # closeness 0.8: separable
    assert all(rows[n]["top1_share"] >= 0.75 for n in far)
    assert 0.5 < res["attribution_accuracy"] < 0.9


def test_no_readable_generated_image_names_the_first_reason(corpus, tmp_path):
    import pytest

    from iclr25.core.style_check.checking import CheckRequest, run_check
    from iclr25.core.style_check.deepmatch import DeepMatchConfig
    from iclr25.errors import InputError

    (tmp_path / "a.png").write_bytes(b"")
    (tmp_path / "b.jpg").write_text("not a picture")
    with pytest.raises(InputError) as info:
        run_check(CheckRequest(tmp_path, corpus.db), CheckConfig(), DeepMatchConfig(), 0, "cpu")
    assert "none of the 2 generated images could be read" in info.value.what
    assert "a.png: empty file" in info.value.what
