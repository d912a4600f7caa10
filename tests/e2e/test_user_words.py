"""The user's words (issue 64): reports name the model as its author does, errors from Python name
the Python arguments, each notice comes once, and nothing is said about what nobody asked for."""

from __future__ import annotations

import functools
import logging

import pytest
import torch

from testnav.core.naming import own_name
from testnav.errors import UserError
from tests.unit.scan.test_scan import forest_on_digits


class Net(torch.nn.Module):
    def forward(self, x):
        return x.flatten(1)[:, :3]


def test_a_model_is_named_by_its_own_name_never_by_a_wrapper():
    from sklearn.linear_model import LogisticRegression

    from testnav.models.function import Predicting

    clf = LogisticRegression()
    assert own_name(clf.predict_proba) == "LogisticRegression"
    assert own_name(functools.partial(clf.predict_proba)) == "LogisticRegression"

    def my_predict(batch):
        return batch

    assert own_name(my_predict) == "my_predict"
    assert own_name(Predicting(my_predict, "NCHW", "auto")) == "my_predict"
    assert own_name(Net()) == "Net"
    assert own_name(torch.nn.Sequential(Net())) == "Sequential"  # the user's own choice of class
    assert own_name(lambda b: b) == "function"


def make_tester(tmp_path, **kw):
    import testnav

    predict, x, y = forest_on_digits(30)
    return testnav.Tester(predict, (x, y), families=["brightness", "contrast"], levels=3, cache_dir=tmp_path, **kw)


class DigitReader:
    """A user's own class around a fitted classifier."""

    def __init__(self, predict):
        self.predict = predict

    def predict_proba(self, batch):
        return self.predict(batch)


def test_the_report_title_names_the_model_or_name(tmp_path):
    import testnav

    predict, x, y = forest_on_digits(30)
    reader = DigitReader(predict)
    t = testnav.Tester(reader.predict_proba, (x, y), families=["contrast"], levels=2, cache_dir=tmp_path)
    t.search("random", budget=3, seed=0)
    html = t.report(tmp_path / "r.html").read_text()
    assert "What breaks DigitReader?" in html and "Predicting" not in html
    named = make_tester(tmp_path, name="digits v2")
    assert named.benchmark.model_name == "digits v2"


@pytest.mark.parametrize(
    "kw, expect",
    [
        ({"stop_on": "soon"}, "stop_on=soon (valid: auto, complete, good)"),
        ({"stop_at": 2}, "stop_at=2: a probability in (0, 1], or None"),
        ({"epsilon": 1.5}, "epsilon=1.5: a share of each objective's range in [0, 1), or auto"),
        ({"seed": "a"}, "seed=a: must be a whole number"),
        ({"budget": 0}, "budget=0: must be a positive whole number of proposals (or None"),
        ({"pop_size": 0}, "pop_size=0: the population needs at least 2 members"),
    ],
)
def test_search_errors_name_the_python_arguments(kw, expect, tmp_path):
    t = make_tester(tmp_path)
    with pytest.raises(UserError) as err:
        t.search("nsga2", **{"budget": 10, **kw})
    text = str(err.value)
    assert expect in text and "\n" not in text
    assert not any(k in text for k in ("certificate.", "search.", "benchmark.", "null", "-m "))
    assert t._session is None  # before any work


def test_notices_come_once_and_a_budget_beyond_the_lattice_is_capped(tmp_path, caplog):
    t = make_tester(tmp_path)
    with caplog.at_level(logging.WARNING):
        run = t.search("nsga2", budget=1000, seed=0)
    notes = [r.getMessage() for r in caplog.records]
    assert sum("pop_size" in n for n in notes) == 1, notes
    capped = [n for n in notes if n.startswith("budget=1,000")]
    assert capped == [
        "budget=1,000 proposals on 9 configurations: capped at 5 × |Θ| = 45, beyond which a "
        "search only proposes again what it has measured"
    ]
    assert run.summary["budget"] == 45
    assert not any("NAC" in n or "activations" in n for n in notes)  # signals nobody asked for
