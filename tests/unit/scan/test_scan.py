"""`Tester.scan()` → `Findings` (issue 64): the families alone, the interactions beyond independence and
the minimal failure modes, each checked against the measured lattice by code of its own here; the
search path when the lattice does not fit the budget; the report's first screen; save and load.

The model is one no other test uses: scikit-learn's random forest on scikit-learn's own 8×8 digits,
behind a prediction function."""

from __future__ import annotations

import re
from itertools import product

import numpy as np
import pytest
import torch

from testnav.errors import UserError
from testnav.findings import MINIMAL_SHARE, ConfigurationOutcomes, minimal_mask

FAMILIES = ["gaussian_blur", "brightness", "contrast"]


def forest_on_digits(n_test: int = 200):
    """A fitted RandomForestClassifier's predict_proba as a function, and held-out digits in [0, 1]."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target
    clf = RandomForestClassifier(n_estimators=30, random_state=0).fit(x[:1200].reshape(1200, -1), y[:1200])

    def predict(batch):
        return clf.predict_proba(batch.reshape(len(batch), -1))

    held = slice(1200, 1200 + n_test)
    return predict, torch.tensor(x[held]), torch.tensor(y[held])


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    import testnav

    predict, x, y = forest_on_digits()
    t = testnav.Tester(
        predict, (x, y), families=FAMILIES, levels=4, cache_dir=tmp_path_factory.mktemp("c"), name="digit_forest"
    )
    findings = t.scan()
    table = t.groundtruth()
    return t, findings, table


def test_minimal_mask_agrees_with_a_brute_force_over_every_sub_configuration():
    from testnav.core.lattice import Lattice

    lat = Lattice(3, 4)
    rng = np.random.default_rng(0)
    damage = rng.uniform(0, 1, lat.size)
    damage[rng.uniform(size=lat.size) < 0.2] = np.nan  # unmeasured
    damage[0] = 0.0
    mask = minimal_mask(lat, damage)
    for i in range(lat.size):
        theta = tuple(lat.theta(i))
        subs = [s for s in product(*(range(t + 1) for t in theta)) if s != theta]
        d = [damage[lat.index(np.array(s))] for s in subs]
        best = max([v for v in d if np.isfinite(v)], default=-np.inf)
        if np.isfinite(damage[i]):
            assert mask[i] == (best < MINIMAL_SHARE * damage[i]), theta


def test_the_whole_lattice_is_measured_when_it_fits_and_the_families_are_the_tables(scanned):
    t, f, table = scanned
    assert f.method["how"] == "lattice" and f.method["measured"] == t.lattice.size == len(table)
    assert f.method["projected_seconds"] <= f.method["budget_seconds"]
    psi = dict(zip(map(tuple, table[["t1", "t2", "t3"]].to_numpy()), table["psi"]))
    clean = psi[(0, 0, 0)]
    assert f.clean["accuracy"] == pytest.approx(clean)
    assert f.clean["low"] < clean < f.clean["high"]
    assert len(f.families) == 3 * 3
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    outcomes = dict(zip(map(tuple, table[["t1", "t2", "t3"]].to_numpy()), table["correct"].map(np.asarray)))
    p = []
    for i, name in enumerate(FAMILIES):
        rows = f.families[f.families["family"] == name]
        for _, r in rows.iterrows():
            theta = [0, 0, 0]
            theta[i] = int(r["level"])
            assert r["accuracy"] == pytest.approx(psi[tuple(theta)])
            assert r["lost_points"] == pytest.approx(100 * (clean - psi[tuple(theta)]))
            assert r["accuracy_low"] <= r["accuracy"] <= r["accuracy_high"]
            assert r["lost_low"] <= r["lost_points"] <= r["lost_high"]
            x, y = outcomes[(0, 0, 0)].astype(bool), outcomes[tuple(theta)].astype(bool)
            cells = [[(x & y).sum(), (x & ~y).sum()], [(~x & y).sum(), (~x & ~y).sum()]]
            p.append(mcnemar(cells, exact=True).pvalue if cells[0][1] + cells[1][0] else 1.0)
    assert f.families["p_value"].to_numpy() == pytest.approx(p)
    reject = multipletests(p, alpha=0.05, method="holm")[0]
    assert f.families["breaks"].tolist() == list(reject & (f.families["lost_low"].to_numpy() >= 1.0))
    assert f.families["breaks"].any()


def test_the_interactions_are_the_excess_over_independence_measured_on_the_lattice(scanned):
    """Every configuration of two or more families is listed with its excess over the product of the
    families alone (each alone's loss counted from 0), in points, and Holm's adjustment of its test."""
    t, f, table = scanned
    n = len(table["correct"].iloc[0])
    psi = dict(zip(map(tuple, table[["t1", "t2", "t3"]].to_numpy()), table["psi"]))
    clean = psi[(0, 0, 0)]
    expected_rows = {}
    for theta, acc in psi.items():
        if sum(1 for v in theta if v) < 2:
            continue
        expect = clean
        for i, level in enumerate(theta):
            if level:
                alone = list((0, 0, 0))
                alone[i] = level
                expect *= min(psi[tuple(alone)], clean) / clean
        expected_rows[theta] = (expect, 100 * (expect - acc))
    from statsmodels.stats.multitest import multipletests

    got = f.interactions
    assert len(got) == len(expected_rows) > 0 and n > 0
    for _, r in got.iterrows():
        expect, excess = expected_rows[(r["t1"], r["t2"], r["t3"])]
        assert r["expected"] == pytest.approx(expect)
        assert r["excess_points"] == pytest.approx(excess)
        assert r["excess_low"] <= r["excess_points"] <= r["excess_high"]
    assert got["p_adjusted"].to_numpy() == pytest.approx(multipletests(got["p_value"], method="holm")[1])
    assert (np.diff(got["excess_points"].to_numpy()) <= 1e-12).all()  # largest first
    strongest = f.strongest_interaction()
    assert strongest is not None and strongest["significant"] and strongest["minimal"]
    assert strongest["p_adjusted"] < 0.05


def test_the_failure_modes_are_minimal_above_the_floor_and_the_most_damaging(scanned):
    t, f, table = scanned
    lat = t.lattice
    psi = table["psi"].to_numpy()
    fid = table["ssim"].to_numpy()
    damage = psi[0] - psi
    floor = f.fidelity["floor"]
    assert floor == 0.25 and "SSIM" in f.fidelity["scale"]

    def minimal(i):
        theta = tuple(lat.theta(i))
        subs = [s for s in product(*(range(v + 1) for v in theta)) if s != theta]
        return all(damage[lat.index(np.array(s))] < MINIMAL_SHARE * damage[i] for s in subs)

    # minimal by points is necessary; by intervals it is what decides, so the modes are an ordered subset
    eligible = [i for i in range(1, lat.size) if damage[i] > 0.01 and fid[i] >= floor and minimal(i)]
    eligible.sort(key=lambda i: (-damage[i], i))
    fm = f.failure_modes
    assert 0 < len(fm) <= 5 and (fm["lost_low"] >= 1.0).all()
    got = [lat.index(np.array(r)) for r in fm[["t1", "t2", "t3"]].to_numpy()]
    assert [i for i in eligible if i in got] == got
    for (_, r), i in zip(fm.iterrows(), got):
        assert r["lost_points"] == pytest.approx(100 * damage[i])
        assert r["fidelity"] == pytest.approx(fid[i])
        clean_right = np.asarray(table["correct"].iloc[0])
        flipped = np.flatnonzero(clean_right & ~np.asarray(table["correct"].iloc[i]))
        assert r["flipped"] == len(flipped) and r["examples"] == list(flipped[:8])
        assert r["configuration"] in f.examples and len(f.examples[r["configuration"]]) == 8


def test_print_fits_a_screen_and_states_the_severities_and_the_method(scanned):
    _, f, _ = scanned
    text = str(f)
    lines = text.splitlines()
    assert len(lines) <= 30, text
    assert lines[0].startswith("What breaks digit_forest?")
    assert "Measured all 64 configurations" in text
    assert text.count("(severities 1, 3, 5 of 1–5)") == 3  # levels=4 spans each five-entry table
    assert re.search(r"Clean accuracy \d+\.\d % \[\d+\.\d, \d+\.\d\]", text)


def test_the_report_opens_with_the_findings(scanned, tmp_path):
    _, f, _ = scanned
    html = f.report(tmp_path / "report.html").read_text()
    head = html[: html.index('id="modes"')]
    assert "What breaks digit_forest?" in head
    assert f"Clean accuracy {100 * f.clean['accuracy']:.1f} %" in head
    assert "Worst family alone" in head and "Strongest interaction" in head
    order = [html.index(f'id="{a}"') for a in ("modes", "alone", "pairs", "front", "tested")]
    assert order == sorted(order)
    assert "stage=" not in html and "benchmark." not in html  # no CLI syntax for a Python user


def test_save_keeps_every_configuration_and_load_reads_it_back(scanned, tmp_path):
    from testnav.findings import Findings

    t, f, table = scanned
    out = f.save(tmp_path / "scan")
    back = Findings.load(out)
    assert len(back.configurations) == len(table)
    assert back.configurations["correct"].map(list).tolist() == [list(c) for c in table["correct"]]
    assert back.digests == f.digests and set(back.digests) >= {"model", "data"}
    assert [vars(i) for i in back.family_info] == [vars(i) for i in f.family_info]
    assert back.failure_modes["examples"].tolist() == f.failure_modes["examples"].tolist()
    assert str(back) == str(f)


def test_a_scan_that_does_not_fit_searches_and_checks_minimality_on_measurements(tmp_path):
    import testnav

    predict, x, y = forest_on_digits(120)
    t = testnav.Tester(predict, (x, y), families=FAMILIES + ["jpeg"], levels=4, cache_dir=tmp_path, progress=False)
    f = t.scan(budget_seconds=0.5, failure_modes=3)
    assert f.method["how"] == "search" and f.method["projected_seconds"] > 0.5
    assert f.method["measured"] < t.lattice.size
    assert f.run is not None and f.run.summary["search"] == "tomonav"
    assert len(f.families) == 4 * 3  # every family alone, measured
    measured = ConfigurationOutcomes.from_oracle(t.session.live_oracles[t.fidelity])
    known = set(measured.index.tolist())
    for levels in f.failure_modes[["t1", "t2", "t3", "t4"]].to_numpy():
        subs = product(*(range(v + 1) for v in levels))
        assert all(t.lattice.index(np.array(s)) in known for s in subs)
    assert "TomoNav measured" in str(f)


@pytest.mark.parametrize(
    "kwargs, expect",
    [
        ({"budget_seconds": -1}, "budget_seconds=-1: a positive number of seconds"),
        ({"failure_modes": 0}, "failure_modes=0: a whole number ≥ 1"),
        ({"fidelity_floor": "high"}, "fidelity_floor=high: a number on the fidelity metric's own scale, auto or None"),
        ({"budget_seconds": None}, "budget_seconds=None: a positive number of seconds, e.g. budget_seconds=600"),
        ({"failure_mode": 3}, "failure_mode: no such setting (valid: budget_seconds, failure_modes,"),
    ],
)
def test_bad_scan_settings_are_one_line_before_any_work(kwargs, expect, tmp_path):
    import testnav

    predict, x, y = forest_on_digits(20)
    t = testnav.Tester(predict, (x, y), families=FAMILIES, levels=2, cache_dir=tmp_path)
    with pytest.raises(UserError) as err:
        t.scan(**kwargs)
    assert expect in str(err.value) and "\n" not in str(err.value)
    assert t._session is None  # nothing was loaded


def test_a_replayed_runs_report_shows_accuracy_points_and_raw_fidelity_not_normalised_values(scanned, tmp_path):
    """The replay contract keeps min–max normalised δ and ρ in the trace; the report shows the
    absolute loss in points and SSIM on its own scale, read back from the ground truth."""
    t, _, table = scanned
    run = t.search("nsga2", budget=60, seed=0, replay=True)
    assert run.trace["delta"].max() == pytest.approx(1.0)  # normalised, as the contract says
    html = t.report(tmp_path / "r.html", run=run).read_text()
    assert "accuracy lost (points)" in html and "fidelity (ssim)" in html and "normalised" not in html
    member = run.front.iloc[0]
    row = table[(table[["t1", "t2", "t3"]] == member[["t1", "t2", "t3"]].to_numpy()).all(axis=1)].iloc[0]
    assert f"{100 * row['delta']:.1f} points lost · ssim {row['ssim']:.3g}" in html


def test_a_long_front_numbers_at_most_ten_points_its_ends_and_its_knee():
    import pandas as pd

    from testnav.report.plots import MAX_LABELS, few

    x = np.linspace(0, 1, 40)
    front = pd.DataFrame({"rho": x, "delta": np.where(x < 0.3, 1 - x, 0.7 * (1 - x) / 0.7)}, index=range(100, 140))
    chosen = few(front, "rho", "delta")
    assert len(chosen) == MAX_LABELS and len(set(chosen)) == MAX_LABELS
    assert {100, 139} <= set(chosen)  # both ends
    knee = 100 + int(np.argmin(np.abs(x - 0.3)))
    assert any(abs(c - knee) <= 1 for c in chosen)
    assert few(front.head(7), "rho", "delta") == list(range(100, 107))


REPORTED = {
    "live": "f2b3c05eab54bd46",
    "replay": "e091c2555fb10916",
}  # tests/helpers/pinned.py's digests of what `testnav report` saved
