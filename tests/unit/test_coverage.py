"""The usage census (docs/census/census.json) and the usage-weighted coverage computed from it (tapejax/census.py)."""

from __future__ import annotations

import pytest

import tapejax as tf
from tapejax import census
from tapejax._src.errors import NotImplementedSymbolError


def test_the_census_has_at_least_200_programs_each_with_its_source():
    data = census.load()
    programs = data["programs"]
    assert len(programs) >= 200
    for p in programs:
        assert p["repo"].count("/") == 1 and p["path"] and len(p["commit"]) == 40
        assert p["uses"]["tf.GradientTape"] >= 1  # every program uses the tape, by definition of the census
        assert all(isinstance(n, int) and n >= 1 for n in p["uses"].values())
    sources = [(p["repo"], p["path"]) for p in programs]
    assert len(set(sources)) == len(sources)


def test_implemented_follows_the_path_and_stops_at_placeholders():
    assert census.implemented("tf.reduce_sum") and census.implemented("tf.math.reduce_sum")
    assert census.implemented("tf.GradientTape.gradient") and census.implemented("tf.Tensor.numpy")
    with pytest.raises(NotImplementedSymbolError):
        tf.no_such_symbol_anywhere  # noqa: B018
    assert not census.implemented("tf.no_such_symbol_anywhere")  # a missing_symbols placeholder
    assert not census.implemented("tf.nn.no_such_symbol_anywhere")
    assert not census.implemented("tf.GradientTape.no_such_member")  # a plain AttributeError


def test_parts_split_data_and_keras_from_the_rest():
    assert census.part("tf.data.Dataset.batch") == census.part("tf.data") == "data"
    assert census.part("tf.keras.layers.Dense") == census.part("tf.optimizers.Adam") == "keras"
    assert census.part("tf.losses.mean_squared_error") == "keras"
    assert census.part("tf.nn.relu") == census.part("tf.database_like_name") == census.part("tf.Tensor.numpy") == "core"


def test_coverage_weights_each_symbol_by_its_uses():
    synthetic = {
        "not_in_tensorflow": ["tf.Session"],
        "programs": [
            {"repo": "a/b", "path": "x.py", "commit": "0" * 40,
             "uses": {"tf.GradientTape": 2, "tf.fancy": 3, "tf.data.Dataset.batch": 1, "tf.Session": 9}},
            {"repo": "a/b", "path": "y.py", "commit": "0" * 40,
             "uses": {"tf.GradientTape": 1, "tf.fancy": 1, "tf.rare": 1, "tf.keras.layers.Dense": 4}},
        ],
    }
    has = {"tf.GradientTape", "tf.keras.layers.Dense"}.__contains__
    cov = census.coverage(synthetic, has)
    # core: GradientTape 3 uses (implemented), fancy 4, rare 1 (missing); tf.Session is not TF2 and not counted
    assert cov["core"] == {"uses": 8, "implemented": 3, "symbols": 3,
                           "missing": [("tf.fancy", 4, 2), ("tf.rare", 1, 1)]}
    assert cov["data"] == {"uses": 1, "implemented": 0, "symbols": 1, "missing": [("tf.data.Dataset.batch", 1, 1)]}
    assert cov["keras"] == {"uses": 4, "implemented": 4, "symbols": 1, "missing": []}
    assert census.percent(cov["core"]) == pytest.approx(37.5)
    assert census.percent(cov["keras"]) == 100.0


def test_the_usage_section_reports_the_figures_it_computes():
    data = census.load()
    cov = census.coverage(data)
    text = census.markdown(data)
    assert f"**{len(data['programs'])} public TF2 programs**" in text
    for name, _ in census.PARTS:
        assert f"**{census.percent(cov[name]):.1f}%**" in text
        if cov[name]["missing"]:
            symbol, uses, programs = cov[name]["missing"][0]
            assert f"| `{symbol}` | {uses} | {programs} |" in text
