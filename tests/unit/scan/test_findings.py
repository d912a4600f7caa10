"""testnav/findings.py on its own: the three tables read off configurations whose outcomes are made up
here, so each number is known before it is computed (families alone, the interaction beyond
independence, minimal failure modes above the fidelity floor); what `save` writes and `load` reads;
and the one-screen text. No model runs: test_scan.py drives the same code through `Tester.scan()`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from testnav.core.intervals import half_width
from testnav.core.lattice import Lattice
from testnav.errors import UserError
from testnav.families.severities import spread_family
from testnav.findings import (
    FLOORS,
    MINIMAL_SHARE,
    ConfigurationOutcomes,
    Findings,
    build,
    fidelity_settings,
    passes_floor,
)
from testnav.pipeline import ScanSpec

N = 400
LOST = {(1, 0): 8, (2, 0): 100, (0, 1): 4, (0, 2): 60, (1, 1): 12, (2, 1): 104, (1, 2): 66, (2, 2): 300}


@pytest.fixture(scope="module")
def families():
    from testnav.families import make

    return [spread_family(make(name, image_size=(8, 8), channels=1), 3) for name in ("brightness", "contrast")]


def made_up(fidelity=None, lost_under=LOST) -> ConfigurationOutcomes:
    """Two families × 3 levels on 400 inputs, all right when clean; under θ the first LOST[θ] are wrong.
    (2, 2) loses 300 where the families alone lose 100 and 60: far more than independence predicts."""
    lat = Lattice(2, 3)
    index = np.arange(lat.size)
    correct = np.ones((lat.size, N), bool)
    for theta, lost in lost_under.items():
        correct[lat.index(np.array(theta)), :lost] = False
    fid = np.linspace(1.0, 0.2, lat.size) if fidelity is None else fidelity
    return ConfigurationOutcomes(lat, index[::-1], correct[::-1], fid[::-1])  # any order: sorted by index


def findings_of(families, floor=None, lost_under=LOST, **spec) -> Findings:
    measured = made_up(lost_under=lost_under)
    fid = fidelity_settings("ssim", floor, True)
    method = {"how": "lattice", "budget_seconds": 600.0}
    return build(measured, families, "made_up", fid, method, ScanSpec.given(**spec), {"digests": {"model": "m"}})


def test_outcomes_are_sorted_by_configuration_and_need_the_clean_set():
    m = made_up()
    assert (np.diff(m.index) > 0).all() and m.accuracy[0] == 1.0 and m.n == N
    assert m.accuracy_of()[int(m.lattice.index(np.array((2, 2))))] == pytest.approx(100 / N)
    with pytest.raises(UserError, match="the clean configuration"):
        ConfigurationOutcomes(Lattice(2, 3), np.array([1, 2]), np.ones((2, 3), bool), np.ones(2))


def test_a_level_breaks_when_mcnemar_rejects_and_its_paired_loss_is_shown_at_least_min_loss(families):
    from scipy.stats import binomtest

    f = findings_of(families)
    assert f.resolution == pytest.approx(half_width(N, 0.95)) and f.levels == 3 and f.min_loss == 0.01
    rows = f.families.set_index(["family", "level"])
    for (name, level), lost in (
        (("brightness", 1), 8),
        (("brightness", 2), 100),
        (("contrast", 1), 4),
        (("contrast", 2), 60),
    ):
        row = rows.loc[(name, level)]
        assert row["accuracy"] == pytest.approx(1 - lost / N) and row["lost_points"] == pytest.approx(100 * lost / N)
        assert row["accuracy_low"] < row["accuracy"] <= row["accuracy_high"]
        assert row["lost_low"] < row["lost_points"] < row["lost_high"]
        # clean is all right, so McNemar's exact test is a sign test on the `lost` flips
        assert row["p_value"] == pytest.approx(binomtest(lost, lost, 0.5).pvalue)
        assert row["breaks"] == (row["p_adjusted"] < 0.05 and row["lost_low"] >= 1.0)
    # brightness 1 (2 points, McNemar p 0.008, Holm 0.016) is shown to lose something but not 1 point
    assert rows.loc[("brightness", 1), "p_adjusted"] < 0.05 and rows.loc[("brightness", 1), "lost_low"] < 1.0
    assert f.families["breaks"].tolist() == [False, True, False, True]
    # every level that breaks is marked, not only the first: at min_loss 0.5 points both of brightness's do
    lower = findings_of(families, min_loss=0.005).families
    assert lower["breaks"].tolist() == [True, True, False, True]  # contrast 1: 1 point, p 0.125, not shown
    assert findings_of(families, min_loss=0.3).families["breaks"].tolist() == [False] * 4


def test_the_paired_loss_interval_is_newcombes_and_agrees_with_statsmodels_where_uncorrelated():
    from statsmodels.stats.proportion import confint_proportions_2indep

    from testnav.core.paired import paired_loss_interval

    # a table with ad = bc (φ = 0): method 10 for paired data reduces to Newcombe's interval for two
    # independent proportions, which statsmodels implements
    a, b, c, d = 40, 20, 10, 5  # ad = 200 = bc
    before = np.r_[np.ones(a + b, bool), np.zeros(c + d, bool)]
    after = np.r_[np.ones(a, bool), np.zeros(b, bool), np.ones(c, bool), np.zeros(d, bool)]
    n = a + b + c + d
    loss, low, high = paired_loss_interval(before, after, 0.95)
    ref = confint_proportions_2indep(a + b, n, a + c, n, method="newcomb", compare="diff")
    assert loss == pytest.approx((b - c) / n) and (low, high) == pytest.approx(tuple(map(float, ref)), abs=1e-12)
    # positive correlation of the outcomes (the usual case) narrows it
    same = np.r_[np.ones(60, bool), np.zeros(15, bool)]
    moved = same.copy()
    moved[:5] = False
    _, lo2, hi2 = paired_loss_interval(same, moved, 0.95)
    _, lo1, hi1 = (5 / 75, *confint_proportions_2indep(60, 75, 55, 75, method="newcomb", compare="diff"))
    assert hi2 - lo2 < hi1 - lo1 and lo2 > 0


def test_the_interaction_is_the_excess_over_the_relative_product(families):
    f = findings_of(families)
    top = f.interactions.iloc[0]
    assert (top["t1"], top["t2"]) == (2, 2) and top["families"] == "brightness + contrast"
    expected = (1 - 100 / N) * (1 - 60 / N)  # clean accuracy 1: the relative product is the plain one
    assert top["expected"] == pytest.approx(expected) and top["accuracy"] == pytest.approx(1 - 300 / N)
    assert top["excess_points"] == pytest.approx(100 * (expected - (1 - 300 / N)))
    assert top["significant"] and top["minimal"] and top["p_adjusted"] < 1e-6 and top["direction"] == "costs more"
    assert top["excess_low"] < top["excess_points"] < top["excess_high"]
    # every pair measured with its families alone is tested, in both directions; one not shown to interact
    # is reported with the excess its test would have detected, never as independent
    assert len(f.interactions) == 4 and f.interactions["excess_points"].is_monotonic_decreasing
    quiet = f.interactions[~f.interactions["significant"]]
    assert (quiet["direction"] == "not shown").all() and (quiet["detectable_points"] > 0).all()
    # (2, 2) at the product (the first 145 of 400 wrong where 100 and 60 alone are, 0.75 · 0.85 = 0.6375):
    # nothing is shown, and the sentence says what the test could have seen, not "independent"
    none = findings_of(families, lost_under={**LOST, (2, 2): 145})
    said = none.interaction_sentence()
    assert not none.interactions["significant"].any() and none.strongest_interaction() is None
    assert (
        said.startswith("No combination of families is shown to cost more") and "not shown is not independent" in said
    )
    low, high = none.interactions["detectable_points"].min(), none.interactions["detectable_points"].max()
    assert f"an excess of {low:.1f}–{high:.1f} points would have been detected with 80 % power" in said


def test_the_interaction_test_holds_its_size_under_independence():
    """Under independence (each family's failures drawn independently per input, the pair failing where
    either does), the delta-method test rejects about 5 % of the time: the product's own noise and its
    correlation with the pair's are in the standard error."""
    from testnav.core.paired import product_excess, z_pvalue

    rng = np.random.default_rng(3)
    p = []
    for _ in range(400):
        clean = rng.random(400) < 0.9
        one, two = clean & (rng.random(400) < 0.85), clean & (rng.random(400) < 0.8)
        _, excess, se = product_excess(clean, [one, two], one & two)  # E[one & two] = r0·(r1/r0)·(r2/r0)
        p.append(z_pvalue(excess, se))
    size = np.mean(np.array(p) < 0.05)
    assert 0.02 <= size <= 0.09, size


def test_failure_modes_are_minimal_ranked_by_damage_and_keep_their_flipped_inputs(families):
    f = findings_of(families, examples=5)
    modes = f.failure_modes
    assert modes["configuration"].str.startswith(("brightness=5", "contrast=5")).all()  # levels=3: severities 1, 5
    levels = [tuple(r) for r in modes[["t1", "t2"]].to_numpy()]
    # (2, 1) costs 104 where (2, 0) alone costs 100 (≥ 90 %): not minimal; nor (1, 2) beside (0, 2)
    assert levels == [(2, 2), (2, 0), (0, 2)] and (2, 1) not in levels and MINIMAL_SHARE == 0.9
    assert modes["lost_points"].is_monotonic_decreasing
    assert modes["examples"].map(len).tolist() == [5, 5, 5] and modes["examples"].iloc[0] == [0, 1, 2, 3, 4]
    assert modes.loc[0, "largest_part"] == "brightness=5 (+0.5) · contrast=1 (×0.75)"  # (2, 1): 104 lost
    assert modes.loc[0, "largest_part_points"] == pytest.approx(26.0)
    fewer = findings_of(families, failure_modes=1).failure_modes
    assert len(fewer) == 1 and (fewer.t1[0], fewer.t2[0]) == (2, 2)


def test_the_fidelity_floor_leaves_destroyed_inputs_out(families):
    measured = made_up()
    floor = float(measured.fidelity[int(measured.lattice.index(np.array((2, 2))))]) + 0.01
    f = findings_of(families, floor=floor)
    assert (2, 2) not in [tuple(r) for r in f.failure_modes[["t1", "t2"]].to_numpy()]
    assert fidelity_settings("ssim", "auto", True)["floor"] == FLOORS["ssim"]
    assert fidelity_settings("kid", None, False) == {
        "name": "kid",
        "scale": "KID, 0 = same distribution, lower is closer",
        "higher_is_better": False,
        "floor": None,
    }
    assert passes_floor(np.array([0.1, 0.5, np.nan]), 0.3, True).tolist() == [False, True, True]
    assert passes_floor(np.array([0.1, 0.5]), 0.3, False).tolist() == [True, False]


def test_save_writes_the_same_layout_and_load_reads_it_back(families, tmp_path):
    f = findings_of(families)
    out = f.save(tmp_path / "f")
    meta = json.loads((out / "findings.json").read_text())
    assert list(meta) == [
        "format",
        "model",
        "families",
        "levels",
        "clean",
        "confidence",
        "resolution",
        "fidelity",
        "method",
        "digests",
        "data",
        "notes",
    ]
    assert meta["levels"] == 3 and meta["resolution"] == f.resolution and meta["digests"] == {"model": "m"}
    back = Findings.load(out)
    for name in ("families", "interactions", "failure_modes"):
        pd.testing.assert_frame_equal(
            getattr(back, name).drop(columns="examples", errors="ignore"),
            getattr(f, name).drop(columns="examples", errors="ignore"),
            check_dtype=False,
        )
    assert back.failure_modes["examples"].tolist() == f.failure_modes["examples"].tolist()
    assert back.configurations["correct"].map(list).tolist() == f.configurations["correct"].tolist()
    assert (back.levels, back.resolution, back.digests, back.data) == (f.levels, f.resolution, f.digests, f.data)
    assert back.text() == f.text() and back.session is None and back.run is None
    (out / "findings.json").write_text(json.dumps({**meta, "format": 99}))
    with pytest.raises(UserError, match="findings format 99"):
        Findings.load(out)


def test_the_text_fits_a_screen_and_says_python_only_where_asked(families):
    f = findings_of(families)
    text = f.text()
    assert len(text.splitlines()) <= 25
    assert text.startswith(f"What breaks made_up? {N} inputs, 2 families × 3 levels (9 configurations)")
    assert "Strongest interaction: brightness=5" in text and "findings.report(" in text.splitlines()[-1]
    assert "findings.report(" not in f.text(hint=False) and str(f) == repr(f) == text
    assert f._repr_html_().startswith("<pre>What breaks made_up?")


def test_findings_without_a_session_draw_their_report(families, tmp_path):
    """Made up here or loaded from disk, findings have no model to read inputs from; the page says what
    they hold. (Two faults this found: a loaded one's page asked for the number of classes, and a
    clean accuracy of 1, whose Wilson bound rounds to 1 − 1e-16, drew a negative error bar.)"""
    f = findings_of(families)
    assert f.session is None and f.clean["accuracy"] == 1.0
    html = f.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "What breaks made_up?" in html and "brightness=5" in html and f"{N:,} images</div>" in html
    back = Findings.load(f.save(tmp_path / "f"))
    assert back.report(tmp_path / "back.html").read_text(encoding="utf-8").count("brightness=5") == html.count(
        "brightness=5"
    )
