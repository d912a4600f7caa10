"""Generated ground-truth tables (testnav/groundtruth/synthetic.py), the calibrated surrogate intervals and
the stopping certificate (testnav/stopping/certificate.py): p_complete in the trace and summary, and
search.stop_at ending a run."""

import numpy as np
import pandas as pd
import pytest

from testnav import searches
from testnav.core.oracle import TableOracle
from testnav.core.pareto import nondominated_mask
from testnav.core.table import Objectives
from testnav.errors import UserError
from testnav.groundtruth.synthetic import PROFILES, profile_table, synthetic_table
from testnav.stopping.certificate import (
    Certificate,
    CertificateConfig,
    CertifiedOracle,
    run_certified,
)
from testnav.stopping.estimators import dominated_draws
from testnav.stopping.level_surrogate import Surrogate
from testnav.stopping.tuning import TUNED


def test_generator_is_deterministic_and_seeded():
    a, b = synthetic_table("pairs", seed=3), synthetic_table("pairs", seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["delta"], synthetic_table("pairs", seed=4)["delta"])
    assert list(a.columns) == ["t1", "t2", "t3", "t4", "delta", "rho"] and len(a) == 6**4
    assert len(synthetic_table(n=3, levels=8)) == 512
    Objectives.from_table(a)  # a valid replay table


def test_dominated_draws_is_weak_pareto_dominance_by_any_front_point():
    """Draw (d, r) is dominated when some front point has δ ≥ d and ρ ≥ r, one of them strictly:
    checked point by point on small grids, where ties in δ, in ρ and in both are common."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        grid = rng.integers(2, 12)
        front = rng.integers(0, grid, (rng.integers(1, 15), 2)) / grid
        draws = rng.integers(-1, grid + 1, (rng.integers(1, 6), rng.integers(1, 20), 2)) / grid
        d, r = draws[..., :1], draws[..., 1:]
        fd, fr = front[:, 0], front[:, 1]
        want = (((fd >= d) & (fr >= r)) & ((fd > d) | (fr > r))).any(-1)
        assert np.array_equal(dominated_draws(draws, front), want)


def test_generator_structure():
    def interaction(df):  # what a main-effects fit of −log(1 − δ) leaves unexplained
        t = df[[c for c in df if c.startswith("t")]].to_numpy()
        x = np.concatenate(
            [np.ones((len(t), 1))] + [(t[:, [i]] == np.arange(1, 6)).astype(float) for i in range(t.shape[1])], 1
        )
        y = -np.log1p(-df["delta"].to_numpy().clip(max=1 - 1e-9))
        return np.abs(y - x @ np.linalg.lstsq(x, y, rcond=None)[0]).max()

    assert interaction(synthetic_table("additive", seed=1)) < 1e-9
    assert interaction(synthetic_table("pairs", seed=1)) > 0.05
    assert synthetic_table("additive", ties=10, seed=1)[["delta", "rho"]].nunique().max() <= 11
    size = {
        p: np.mean([len(Objectives.from_table(profile_table(p, s)).pstar) for s in range(3)])
        for p in ("concentrated", "spread")
    }
    assert size["concentrated"] < size["spread"] / 2
    with pytest.raises(UserError, match="structure=cubic"):
        synthetic_table("cubic")
    with pytest.raises(UserError, match="profile=nope"):
        profile_table("nope", 0)
    assert len(PROFILES) >= 8


def test_conformal_intervals_cover_at_their_nominal_level():
    """Fit on a random half of two small generated tables, count how often the other half falls
    inside the 68 % and 95 % intervals (coverage must sit within ±8 points of nominal)."""
    cover = {0.68: [], 0.95: []}
    for seed in (0, 1):
        obj = Objectives.from_table(synthetic_table("pairs", n=3, levels=8, seed=seed))
        y = np.column_stack([obj.delta, obj.rho])
        fit = np.random.default_rng(seed).choice(obj.lattice.size, 256, replace=False)
        test = np.setdiff1d(np.arange(obj.lattice.size), fit)
        model = Surrogate(obj.lattice, "forest", seed=seed).fit(fit, y[fit])
        for level in cover:
            lo, hi = model.interval(level, test)
            cover[level].append(((y[test] >= lo) & (y[test] <= hi)).mean())
    for level, c in cover.items():
        assert abs(np.mean(c) - level) < 0.08, (level, c)


def test_conformal_scores_are_grouped_by_the_order_of_theta():
    """Mondrian conformal: θ of order k is calibrated on the measured points of order k, widened
    to the nearest orders only while fewer than MIN_GROUP are measured; its draws are its
    group's scores (joint δ, ρ pairs) on its own μ and σ."""
    from testnav.stopping.level_surrogate import MIN_GROUP

    obj = Objectives.from_table(synthetic_table("pairs", seed=1))
    lat, y = obj.lattice, np.column_stack([obj.delta, obj.rho])
    rng = np.random.default_rng(0)
    low = np.flatnonzero(lat.orders <= 1)  # 21 points: orders 0 and 1 need their neighbours
    fit = np.r_[
        low,
        rng.choice(np.flatnonzero(lat.orders == 4), 200, replace=False),
        rng.choice(np.flatnonzero(lat.orders == 2), 5, replace=False),
    ]
    model = Surrogate(lat, "forest", n_estimators=60, seed=0).fit(fit, y[fit])
    test = np.setdiff1d(np.arange(lat.size), fit)
    sizes = {}
    for pos, scores in model.groups(test):
        k = int(lat.orders[test[pos[0]]])
        assert (lat.orders[test[pos]] == k).all()
        sizes[k] = len(scores)
        assert len(scores) >= min(MIN_GROUP, len(model.scores))
    n4 = int((model.score_orders == 4).sum())
    assert n4 >= MIN_GROUP and sizes[4] == n4  # enough of its own: nothing borrowed
    assert sizes[2] > int((model.score_orders == 2).sum())  # 5 of its own: borrowed from orders 1 and 3
    mean, sd = model.predict(test)
    d = model.draws(test, mean=mean, sd=sd, samples=50)
    i = int(np.flatnonzero(lat.orders[test] == 4)[0])
    e = (d[:, i] - mean[i]) / np.maximum(sd[i], model.sd_floor)
    own = model.scores[model.score_orders == 4]
    assert all(np.isclose(own, row).all(axis=1).any() for row in e)


def missing(obj, measured):
    cert = Certificate(obj.lattice, seed=0)
    cert.measured.values[measured] = np.column_stack([obj.delta, obj.rho])[measured]
    cert.measured.seen[measured] = True
    return cert.missing()


def test_missing_tells_a_complete_front_from_one_with_members_missing():
    """The surrogate's expected number of unmeasured front members: far higher with half of P*
    unmeasured than with only dominated θ unmeasured, and 0 with nothing left."""
    obj = Objectives.from_table(synthetic_table("pairs", n=3, levels=8, seed=2))
    everything = np.arange(obj.lattice.size)
    pstar = obj.pstar
    far = np.argsort(obj.delta + obj.rho)[:100]  # low on both counts
    far = far[~np.isin(far, pstar)]
    complete, half = (
        missing(obj, np.setdiff1d(everything, far)),
        missing(obj, np.setdiff1d(everything, pstar[::2])),
    )
    assert 0 <= complete < half
    assert missing(obj, everything) == 0.0  # nothing left unmeasured: p_complete = 1


def test_tomonav_stops_complete_and_soon_after_full_recall():
    """On small generated tables, TomoNav with stop_at=0.95 stops with all of P* found, and
    within 2× the unique configurations it needed to find them (median over the tables)."""
    from testnav.core.recall import first_sightings, recall_curve, unique_to_full_recall

    ratios = []
    for seed in (7, 8, 9):
        obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=seed))
        table = TableOracle(obj)
        cert = Certificate(obj.lattice, CertificateConfig(stop_at=0.95), seed=seed)
        p, _ = run_certified(
            searches.make("tomonav"), CertifiedOracle(table, cert), 5 * obj.lattice.size, seed, table.evaluate
        )
        full = unique_to_full_recall(recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size))
        assert cert.stopped is not None and full is not None and len(np.unique(p)) >= full
        ratios.append(len(np.unique(p)) / full)
    assert np.median(ratios) <= 2


def test_missing_is_the_surrogates_sum_rescaled_by_its_own_record():
    """At the stop, missing is the raw sum over the unmeasured θ times (found + 1) / (expected
    + 1), where expected is what each fit predicted among the configurations measured after it.
    On a smooth table the surrogate expects members there that never come: the factor is < 1."""

    obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=6, seed=7))
    table = TableOracle(obj)
    cert = Certificate(obj.lattice, CertificateConfig(stop_at=0.95), seed=7)
    run_certified(searches.make("tomonav"), CertifiedOracle(table, cert), 5 * obj.lattice.size, 7, table.evaluate)
    assert cert.stopped is not None and cert.measured.u < obj.lattice.size  # an early stop, at a quiet checkpoint
    assert cert.complete.expected > cert.complete.found + 1
    raw = cert.missing()  # the same state, the same fit
    assert cert.records[-1].complete.missing == pytest.approx(
        raw * (cert.complete.found + 1) / (cert.complete.expected + 1), rel=1e-12
    )
    assert cert.records[-1].complete.missing < raw


def test_a_record_of_unforeseen_members_keeps_the_run_from_stopping_short():
    """`threshold` on 4⁶ (a tuning seed): the surrogate's raw sum falls to 0.1 × the front while
    2 of P*'s 90 members are still unmeasured (the fixed tolerance used before this record stopped
    TomoNav there, after 1,025 configurations, full recall after 1,341). Members it did not expect
    kept turning up after its fits, so the calibrated certificate waits until P* is complete."""
    from testnav.core.recall import first_sightings, recall_curve, unique_to_full_recall

    obj = Objectives.from_table(synthetic_table(**PROFILES["threshold"], n=6, levels=4, seed=9))
    table = TableOracle(obj)
    cert = Certificate(obj.lattice, CertificateConfig(stop_at=0.95), seed=9)
    p, _ = run_certified(
        searches.make("tomonav"), CertifiedOracle(table, cert), 5 * obj.lattice.size, 9, table.evaluate
    )
    full = unique_to_full_recall(recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size))
    assert cert.stopped is not None and full is not None and full <= len(np.unique(p)) < obj.lattice.size
    assert cert.complete.found > 0  # the record: members found after fits


def test_a_settled_front_doubles_the_tolerance():
    """At every quiet checkpoint p_complete = exp(−missing / (share · |front| · f)), f = quiet_relax
    where the run has measured `quiet` × as many configurations as when its front's newest member
    was measured (read back from the run's own record), else 1. On `pairs` 4⁴, seed 8 (a tuning
    seed), that stops TomoNav complete after 162 configurations instead of 203 (full recall: 73)."""
    from dataclasses import replace

    from testnav.core.recall import first_sightings, recall_curve, unique_to_full_recall

    def stop(relax):
        obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=8))
        table = TableOracle(obj)
        cert = Certificate(
            obj.lattice, CertificateConfig(stop_at=0.95), seed=8, tuning=replace(TUNED, quiet_relax=relax)
        )
        p, _ = run_certified(
            searches.make("tomonav"), CertifiedOracle(table, cert), 5 * obj.lattice.size, 8, table.evaluate
        )
        full = unique_to_full_recall(recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size))
        return cert, full

    cert, full = stop(2.0)
    assert full == 73 and cert.measured.u == 162  # complete, and 2.2× full recall where f = 1 stops at 2.8×
    settled, proposals, m = [], np.concatenate(cert.measured.proposals), cert.measured
    for r in cert.records:
        if not np.isfinite(r.complete.missing):  # a window that found members, or too few points
            continue
        u = int(m.first[proposals[: r.proposals]].max())  # configurations measured at this checkpoint
        assert u == r.unique
        measured = np.flatnonzero((m.first > 0) & (m.first <= u))
        measured = measured[measured != 0]
        front = measured[nondominated_mask(m.values[measured, 0], m.values[measured, 1])]
        settled.append(u >= TUNED.quiet * m.first[front].max())
        assert len(front) == r.front
        tolerance = cert.config.share * r.front * (TUNED.quiet_relax if settled[-1] else 1)
        assert r.complete.p == pytest.approx(np.exp(-r.complete.missing / tolerance), rel=1e-12)
    assert any(settled) and not all(settled)
    assert settled == [r.complete.settled for r in cert.records if np.isfinite(r.complete.missing)]  # as recorded
    assert stop(1.0)[0].measured.u == 203


def test_p_complete_bounded_rising_and_the_same_online_or_after_the_run():
    obj = Objectives.from_table(synthetic_table("pairs", n=3, levels=8, seed=2))
    table = TableOracle(obj)
    every = CertificateConfig(every=64)
    online = CertifiedOracle(table, Certificate(obj.lattice, every, seed=1))
    p1, col1 = run_certified(searches.make("random"), online, 1024, 1, table.evaluate)
    # the same proposals, never shown to the oracle (as the vectorised engine does)
    p2, col2 = Certificate(obj.lattice, every, seed=1).finish(p1, table.evaluate)
    col1, col2 = col1["p_complete"], col2["p_complete"]
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(col1, col2)
    assert ((col1 >= 0) & (col1 <= 1)).all() and col1[0] == 0
    assert col1[obj.lattice.size - 1] == 1.0  # Θ exhausted after |Θ| proposals of a permutation
    assert col1[: obj.lattice.size // 4].max() < 0.5  # a quarter of Θ seen at random: P* surely not all found


def test_stop_at_stops_before_evaluating_more():
    obj = Objectives.from_table(synthetic_table("pairs", n=3, levels=8, seed=2))

    class Counting(TableOracle):
        asked = 0

        def evaluate(self, indices, names=("delta", "rho")):
            Counting.asked += len(indices)
            return super().evaluate(indices, names)

    inner = Counting(obj)
    oracle = CertifiedOracle(
        inner, Certificate(obj.lattice, CertificateConfig(stop_at=0.3, every=64, share=50), seed=0)
    )
    values = oracle.evaluate(np.random.default_rng(0).permutation(obj.lattice.size))
    cert = oracle.certificate
    assert oracle.stopped and cert.stopped == Counting.asked <= obj.lattice.size and cert.records[-1].complete.p >= 0.3
    # what was evaluated has its values; what was asked after the stop was not evaluated and is NaN
    assert np.isfinite(values[: cert.stopped]).all() and np.isnan(values[cert.stopped :]).all()
    with pytest.raises(UserError, match="stop_at=1.5"):
        CertificateConfig(stop_at=1.5)


@pytest.mark.slow  # run.py end to end with stop_at: make test-all
def test_certificate_figure_and_its_sentence(tmp_path):
    from testnav.figures.build import _fig_certificate
    from testnav.figures.loader import load_results
    from tests.unit.figures.test_figures import is_png, tiny_results

    root = tmp_path / "results"
    tiny_results(root, searches=("nsga2",), seeds=(0,))
    for trace in root.rglob("trace.csv"):
        t = pd.read_csv(trace)
        t.assign(p_complete=t["unique"] / t["unique"].max()).to_csv(trace, index=False)
    e = _fig_certificate(load_results(root), "tiny", tmp_path)
    assert is_png(e.path) and "p_complete reaches 0.95 after" in e.sentence and "TestNav on SSIM" in e.sentence


# ---- p_good: the ε-certificate ----


def test_eps_dominance_is_the_additive_epsilon_shift_of_weak_dominance():
    """x is ε-dominated when some front point f has f + ε ≥ x on both objectives: checked point by
    point on small grids (ties common); ε = 0 is weak dominance, and a complete front ε-dominates all."""
    from testnav.stopping.epsilon import eps_complete, eps_dominated

    rng = np.random.default_rng(0)
    for _ in range(100):
        grid = rng.integers(2, 12)
        front = rng.integers(0, grid, (rng.integers(1, 15), 2)) / grid
        points = rng.integers(-1, grid + 1, (rng.integers(1, 30), 2)) / grid
        eps = rng.choice([0.0, 1 / grid, 0.5 / grid]), rng.choice([0.0, 1 / grid])
        want = ((front[:, 0] + eps[0] >= points[:, :1]) & (front[:, 1] + eps[1] >= points[:, 1:])).any(-1)
        assert np.array_equal(eps_dominated(points, front, eps), want)
    assert not eps_dominated(np.array([[0.5, 0.5]]), np.zeros((0, 2)), 0.1).any()
    obj = Objectives.from_table(synthetic_table("pairs", n=3, levels=5, seed=0))
    values = np.column_stack([obj.delta, obj.rho])
    assert eps_complete(values[obj.pstar], values[1:], 0.0)  # P* weakly dominates every θ (θ = 0 aside)
    short = np.setdiff1d(obj.pstar, obj.pstar[np.argmax(obj.delta[obj.pstar])])  # the δ-best member missing
    assert not eps_complete(values[short], values[1:], 0.0) and eps_complete(values[short], values[1:], 1.0)


def test_with_k_unmeasured_at_most_k_are_missing_and_none_at_k_0():
    """Both certificates count at most the k configurations still unmeasured: with 2 left of a
    4⁴ lattice neither can read below exp(−2) on the discovery count (NSGA-II on `pairs` seed 8
    read 0.05 there before), and with none left both are 1."""
    obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=8))
    table = TableOracle(obj)
    for config in (CertificateConfig(), CertificateConfig(stop_on="good")):
        cert = Certificate(obj.lattice, config, seed=1)
        rest = np.random.default_rng(0).permutation(np.arange(1, obj.lattice.size))
        for chunk in cert.split(np.r_[0, rest[:-2]]):
            cert.feed(chunk, table.evaluate(chunk))
        r = cert.records[-1]
        assert r.unique == obj.lattice.size - 2 and r.remaining == 2
        assert min(r.complete.p, r.good.p) >= np.exp(-2) - 1e-12
        assert not r.complete.missing > 2 and not r.good.missing > 2  # NaN where the discovery count was read
        for chunk in cert.split(rest[-2:]):
            cert.feed(chunk, table.evaluate(chunk))
        r = cert.records[-1]
        assert r.remaining == 0 and r.complete.p == r.good.p == 1.0

    cert = Certificate(obj.lattice, seed=1)
    run_certified(searches.make("nsga2"), CertifiedOracle(table, cert), 5 * obj.lattice.size, 1, table.evaluate)
    for r in cert.records:
        assert r.complete.p >= np.exp(-r.remaining) - 1e-12 or (r.complete.fresh == 0 and r.front > 0)
        assert not r.complete.missing > r.remaining and not r.good.missing > r.remaining


def test_stop_on_good_waits_for_the_fronts_neighbours_and_stops_within_epsilon():
    """TomoNav on generated 4⁴ tables (seeds 7–9, not the study's): p_good stops the run only at a
    checkpoint where every unit-step neighbour of the measured front is measured (it reaches 0.95 before
    that on some seed, and the run goes on), and the front at the stop is ε-complete (ε = 0.01)."""
    from testnav import searches
    from testnav.stopping.epsilon import eps_complete
    from testnav.stopping.pool import neighbours

    passed_over = 0
    for seed in (7, 8, 9):
        obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=seed))
        values = np.column_stack([obj.delta, obj.rho])
        table = TableOracle(obj)
        cert = Certificate(obj.lattice, CertificateConfig(stop_at=0.95, stop_on="good"), seed=seed)
        p, columns = run_certified(searches.make("tomonav"), CertifiedOracle(table, cert), 1280, seed, table.evaluate)
        assert cert.stopped == len(p) and columns["p_good"][-1] >= 0.95 and cert.records[-1].unexplored == 0
        passed_over += any(r.good.p >= 0.95 and r.unexplored for r in cert.records)
        seen = np.unique(p)
        seen = seen[seen != 0]
        front = seen[nondominated_mask(*values[seen].T)]
        near = neighbours(obj.lattice, front)
        assert np.isin(near[near != 0], p).all()  # what `unexplored` counts, read again off the proposals
        assert eps_complete(values[front], values[np.setdiff1d(np.arange(1, obj.lattice.size), seen)], 0.01)
    assert passed_over >= 1


def test_stop_on_is_auto_by_path_and_settings_are_checked_in_one_line():
    assert CertificateConfig().stop_on == "auto" and CertificateConfig().epsilon == 0.01
    assert CertificateConfig().rule(live=True) == "good" and CertificateConfig().rule(live=False) == "complete"
    assert CertificateConfig(stop_on="complete").for_run(live=True).stop_on == "complete"
    assert Certificate(Objectives.from_table(synthetic_table("pairs", 3, 4, seed=0)).lattice).stop_on == "complete"
    with pytest.raises(UserError, match=r"certificate.stop_on=best \(valid: auto, complete, good\)"):
        CertificateConfig(stop_on="best")
    with pytest.raises(UserError, match=r"certificate.epsilon=1.5: a share"):
        CertificateConfig(epsilon=1.5)
    with pytest.raises(UserError, match=r"certificate.every=0"):
        CertificateConfig(every=0)


def test_verdict_is_one_sentence_naming_the_rule_and_both_readings():
    from testnav.stopping.certificate import verdict

    base = dict(unique=412, space_size=625, p_good=0.96, p_complete=0.41, epsilon=0.01, stop_at=0.95)
    stopped = verdict({**base, "stopped_at": 500, "stop_on": "good"})
    assert stopped.startswith("Certificate: stopped after 412 of 625 configurations, the front within ε of complete")
    assert "stopping score p_good = 0.96 (not a probability)" in stopped and "more than 1% of" in stopped
    assert "p_complete = 0.41" in stopped
    assert "not stopped" in verdict({**base, "stopped_at": None, "stop_on": "complete"})
    assert "every configuration was measured" in verdict({**base, "unique": 625, "stopped_at": None, "stop_on": "good"})
    assert stopped.count(". ") == 0 and stopped.endswith(").")


def test_stopping_figure_from_the_study_table(tmp_path):
    from testnav.figures import stopping
    from tests.unit.figures.test_figures import is_png

    rows = [
        {
            "split": "test",
            "table": table,
            "size": 625,
            "search": search,
            "rule": rule,
            "runs": 5,
            "fired": fired,
            "median_stop_of_lattice": 0.4 if fired else np.nan,
            "median_u_eps_of_lattice": 0.2,
            "eps_complete": 1.0 if fired else np.nan,
        }
        for table in ("a", "b")
        for search, rule, fired in (
            ("tomonav", "p_good", 5),
            ("nsga2", "p_good", 5),
            ("nsga2", "pymoo_default", 0),
            ("nsga2", "pymoo_robust", 3),
        )
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "s.csv", index=False)
    path, sentence = stopping.draw(tmp_path / "s.csv", tmp_path / "s.png")
    assert is_png(path) and "40%–40% of the lattice" in sentence
    assert stopping.draw(tmp_path / "absent.csv", tmp_path / "x.png") is None


def test_report_sentence_names_the_rule_that_stopped_and_prices_a_ground_truth():
    """report.html's verdict: the stop is credited to p_good when the run stopped on it, the advice
    follows that certificate, and a live run says what measuring every configuration would cost."""
    from testnav.report.page import verdict_sentence

    live = {
        "p_complete": 0.10,
        "p_good": 0.97,
        "epsilon": 0.01,
        "unique": 250,
        "space_size": 1296,
        "stopped_at": 260,
        "stop_at": 0.95,
        "stop_on": "good",
        "live": True,
        "wall_seconds": 50.0,
    }
    said = verdict_sentence(live)
    assert "the stopping score reached 0.95" in said and "You may stop testing" in said
    assert "it is a score, not a probability" in said
    assert "at most about 4 min, 5.2× what this search spent at its 0.20 s per configuration" in said
    exact = verdict_sentence({**live, "stop_on": "complete", "live": False, "stopped_at": None})
    assert "probably incomplete" in exact and "ground truth" not in exact and "stopped" not in exact
