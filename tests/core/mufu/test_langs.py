"""Auxiliary language choice: URIEL family distance (lang2vec data) and the world's table."""

from __future__ import annotations

import pytest

from iclr25.core.mufu import langs
from iclr25.errors import InputError, UsageError

# the paper's Table 1 example: Acehnese with Malay, Javanese, Sundanese, Indonesian,
# Minangkabau; measured distances (paper note): Balinese 0.17, Sundanese 0.27, Minangkabau,
# Malay, Indonesian 0.28, Banjar 0.35
POOL = ["ban", "sun", "min", "zsm", "ind", "bjn", "jav", "eng", "fra", "tgl", "vie"]


def test_uriel_nearest_to_acehnese_is_the_papers_group():
    assert langs.nearest("ace", POOL, 5) == ["ban", "sun", "min", "zsm", "ind"]
    fam, _ = langs.uriel_distance("ace", "ban")
    assert fam == pytest.approx(0.167, abs=1e-3)
    assert langs.uriel_distance("ace", "fra")[0] == 1.0  # different families


def test_codes_are_normalised():
    assert (
        langs.iso3("fra_Latn") == "fra" and langs.iso3("fr") == "fra" and langs.iso3("swh") == "swh"
    )


def test_world_codes_use_the_world_table():
    pool = ["ubo", "dil", "sam", "dov", "ser"]
    assert langs.nearest("tel", pool, 3) == ["sam", "ser", "dov"]
    assert langs.distances("tel", ["sam", "ubo"]) == {"sam": 0.25, "ubo": 1.0}


def test_errors():
    with pytest.raises(InputError, match="unknown language code 'qqq'"):
        langs.nearest("qqq", ["fra", "deu"], 1)
    with pytest.raises(UsageError, match="--k 4 is larger than the 2 languages"):
        langs.nearest("fra", ["deu", "fra", "ita"], 4)
    with pytest.raises(UsageError, match="among the auxiliary"):
        langs.parse_aux("tel,sam", "tel", [], 2)
    with pytest.raises(UsageError, match="repeats"):
        langs.parse_aux("sam,sam", "tel", [], 2)
    assert langs.parse_aux("all", "tel", ["tel", "sam", "dov"], 2) == ["sam", "dov"]


def test_seq2seq_pool_reads_language_tokens():
    class Tok:
        def get_vocab(self):
            return {"fra_Latn": 1, "__de__": 2, "hello": 3, "zho_Hans": 4}

    assert langs.seq2seq_pool(Tok()) == ["de", "fra_Latn", "zho_Hans"]
