"""What the practitioner's verbs give a person, pinned (issue 73: outputs byte-identical before and
after the verbs moved into the pipeline). A scan that measures the whole lattice, a scan that has to
search, a comparison with a warm start and one in full, the regression gate, and a query with its
gate, on a small model no other test uses: scikit-learn's logistic regression on 150 of its 8×8
digits, behind a prediction function. Each digest (tests/helpers/pinned.py) covers the tables, the
summaries and the printed text; the digests were computed on the code before the move.

When a change is meant to alter these outputs, recompute the digests (`PINNED`) and say so in
CHANGELOG.md."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.helpers.pinned import comparison_digest, digest, findings_digest

FAMILIES = ["gaussian_blur", "brightness", "contrast"]

PINNED = {
    "scan, the whole lattice": "498b09eda8bc8e5f",
    "scan, a search": "6c2b7e337d4b668c",
    "comparison, warm": "05953e322e9e1b53",
    "comparison, in full": "823ef3791391e978",
    "gate": "5eed8383f30bf563",
    "query": "3ffdbca02ccb13b5",
}


def logistic_on_digits(n_test: int = 150):
    """A fitted LogisticRegression's predict_proba as a function, and held-out digits in [0, 1]."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    clf = LogisticRegression(max_iter=300).fit(x[:1000].reshape(1000, -1), d.target[:1000])

    def predict(batch):
        return clf.predict_proba(batch.reshape(len(batch), -1))

    held = slice(1000, 1000 + n_test)
    return predict, torch.tensor(x[held]), torch.tensor(d.target[held])


def make_tester(predict, data, cache, families=FAMILIES):
    import testnav

    return testnav.Tester(predict, data, families=families, levels=3, cache_dir=cache, progress=False, name="lr")


@pytest.fixture(scope="module")
def model():
    return logistic_on_digits()


def test_a_scan_of_the_whole_lattice_is_as_pinned(model, tmp_path):
    predict, x, y = model
    f = make_tester(predict, (x, y), tmp_path / "c").scan()
    assert f.method["how"] == "lattice"
    assert findings_digest(f.save(tmp_path / "f")) == PINNED["scan, the whole lattice"]


def test_a_scan_that_searches_is_as_pinned(model, tmp_path):
    """A budget too small for anything: TomoNav gets its fewest proposals (n·(ℓ − 1) + 20), so what it
    measures does not depend on how fast this machine is."""
    predict, x, y = model
    f = make_tester(predict, (x, y), tmp_path / "c", FAMILIES + ["jpeg"]).scan(budget_seconds=1e-9, failure_modes=3)
    assert f.method["how"] == "search" and not f.method["pairs"]
    assert findings_digest(f.save(tmp_path / "f")) == PINNED["scan, a search"]


def test_a_comparison_and_its_gate_are_as_pinned(model, tmp_path):
    predict, x, y = model
    base = make_tester(predict, (x, y), tmp_path / "c")
    base.search("random", budget=27, seed=0)
    path = base.save(tmp_path / "v1")

    def washed_out(batch):  # the new version: contrast halved before the model
        return predict(0.5 * (batch - 0.5) + 0.5)

    new = make_tester(washed_out, (x, y), tmp_path / "c2")
    got = {
        "comparison, warm": comparison_digest(new.compare(path)),
        "comparison, in full": comparison_digest(new.compare(path, measure="all", min_change=0.01)),
    }
    with pytest.raises(AssertionError) as e:
        new.assert_no_regression(path, max_drop=0.02)
    assert str(e.value) == new._comparison.verdict.line
    got["gate"] = comparison_digest(new._comparison)
    assert got == {k: PINNED[k] for k in got}


def test_a_query_and_its_gate_are_as_pinned(model, tmp_path):
    predict, x, y = model
    t = make_tester(predict, (x, y), tmp_path / "c")
    answers = {
        "answer": t.query("brightness >= 1 & contrast <= 1", seed=0),
        "sampled": t.query("gaussian_blur >= 5", sample=3, seed=1),  # severity 5: level 2 of levels=3
        "gate": t.assert_robust("brightness <= 1", min_accuracy=0.5, seed=2),
    }
    assert digest({"tomography": t.tomography().table}, answers) == PINNED["query"]
