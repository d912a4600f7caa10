"""The stopping certificate at the measurement's resolution (docs/tomonav.md, "At the measurement's
resolution"): δ's resolution is the paired difference of two accuracies on the same inputs, read off
the measured front's per-input outcomes, ρ's its own sampling error; below that resolution p_good does
not stop a run and says so in one line; epsilon=auto uses it; p_good is a stopping score whose measured
record the summary carries; the front's members are told apart at the resolution."""

import json
import logging

import numpy as np
import pandas as pd
import pytest

from testnav.core.oracle import TableOracle
from testnav.core.pareto import nondominated_mask
from testnav.core.table import Objectives
from testnav.errors import UserError
from testnav.groundtruth.synthetic import synthetic_table
from testnav.stopping.certificate import (
    HELD_OUT_STOPS,
    Certificate,
    CertificateConfig,
    CertifiedOracle,
    run_certified,
    stop_record,
    verdict,
)
from testnav.stopping.epsilon import (
    PROBED,
    Fixed,
    Resolution,
    eps_complete,
    eps_dominated,
    mean_half_widths,
    representatives,
    tolerance,
)
from testnav.stopping.measured import Measurements
from tests.conftest import ROOT

Z95 = 1.959963984540054


def population_table(n_inputs=200, levels=5, seed=2, jitter=0.15):
    """A generated 4-family table measured on `n_inputs` inputs: its δ is a population loss, each input
    correct under θ when its difficulty (shared by every θ) plus a per-(input, θ) jitter stays below
    θ's accuracy, so two configurations disagree on some inputs as real ones do; `correct` holds the
    outcomes and δ is measured from them (noisy at 1/N, as a real table's)."""
    df = synthetic_table("pairs", n=4, levels=levels, seed=seed)
    rng = np.random.default_rng(seed)
    acc = 0.95 * (1 - 0.8 * df["delta"].to_numpy())
    u = rng.uniform(0, 1, n_inputs)[None] + jitter * rng.standard_normal((len(df), n_inputs))
    correct = u < acc[:, None]
    psi = correct.mean(1)
    clean = int(np.flatnonzero((df[["t1", "t2", "t3", "t4"]].to_numpy() == 0).all(1))[0])
    df["delta"] = np.maximum(psi[clean] - psi, 0.0)
    df["correct"] = list(correct)
    return df


def replay_table(tmp_path, n_inputs=200, outcomes=True, seed=2):
    df = population_table(n_inputs, seed=seed)
    if not outcomes:
        df = df.drop(columns="correct")
    path = tmp_path / f"table{seed}.parquet"
    df.to_parquet(path)
    path.with_suffix(".json").write_text(json.dumps({"n_inputs": n_inputs}))
    obj = Objectives.from_table(df)
    return obj, {"benchmark": "generated", "fidelity": "rho", "table": str(path)}, df


class RhoDouble:
    """ρ's per-θ half-width as a data set would give it (a test double for pipeline.resolution.RhoProbe):
    a fixed value per θ, counting what it was asked."""

    method = "per-input"

    def __init__(self, value=0.01):
        self.value, self.asked = value, []

    def half_widths(self, indices, confidence):
        self.asked += [int(i) for i in indices]
        return self.value * (1 + np.asarray(indices) % 3)


def test_the_paired_half_width_is_the_paired_difference_of_two_accuracies():
    """z · sd(d) / √N over the per-input differences: the textbook paired difference of proportions,
    √(p10 + p01 − (p10 − p01)²) with the N / (N − 1) of an unbiased variance; below two accuracies'
    independent intervals when the configurations agree on most inputs, as clean and perturbed do."""
    rng = np.random.default_rng(0)
    n = 400
    a = rng.uniform(size=n) < 0.9
    b = a.copy()
    flip = rng.choice(n, 60, replace=False)
    b[flip] = ~b[flip]
    d = a.astype(float) - b
    p10, p01 = np.mean(a & ~b), np.mean(~a & b)
    expect = Z95 * np.sqrt((p10 + p01 - (p10 - p01) ** 2) * n / (n - 1) / n)
    assert mean_half_widths(d)[0] == pytest.approx(expect, rel=1e-9)
    independent = Z95 * np.sqrt(a.mean() * (1 - a.mean()) / n + b.mean() * (1 - b.mean()) / n)
    assert mean_half_widths(d)[0] < independent
    assert mean_half_widths(d, 0.99)[0] > mean_half_widths(d)[0]
    assert mean_half_widths(np.zeros((n, 2))).tolist() == [0.0, 0.0]  # two configurations that agree everywhere


def test_the_resolution_is_read_over_the_measured_fronts_members(tmp_path):
    """δ's: the median over the measured front of each member's δ half-width (clean against the member on
    the same inputs); ρ's: the median of the probe's over at most PROBED members, each probed once."""
    from testnav.pipeline.resolution import TableOutcomes, table_outcomes

    obj, identity, df = replay_table(tmp_path)
    correct = table_outcomes(identity["table"], obj.lattice)
    values = np.column_stack([obj.delta, obj.rho])
    seen = np.random.default_rng(0).choice(obj.lattice.size, 120, replace=False)
    m = Measurements(obj.lattice.size)
    m.add(seen, values[seen])
    measured = m.read(np.zeros(0, np.int64), 0)
    rho = RhoDouble()
    source = TableOutcomes(correct, 0.95, obj.delta_span, np.ptp(df["rho"]), rho)
    res = source.read(measured)
    own = [mean_half_widths(correct[0].astype(float) - correct[i])[0] for i in measured.members]
    assert res.members == len(measured.members) > 2 and res.delta == pytest.approx(np.median(own))
    assert 0 < res.delta < 1.96 * 0.5 / np.sqrt(200)  # below the widest interval of one accuracy
    assert res.inputs == 200 and res.rho_method == "per-input"
    assert len(set(rho.asked)) == len(rho.asked) == min(PROBED, len(measured.members))  # each θ probed once
    assert res.rho == pytest.approx(np.median(rho.half_widths(np.array(rho.asked), 0.95)))
    np.testing.assert_allclose(res.tolerance(), [res.delta / obj.delta_span, res.rho / np.ptp(df["rho"])])
    asked = len(rho.asked)
    assert source.read(measured) == res and len(rho.asked) == asked  # read again: from its cache
    # a number is a share of each objective's measured range whatever the resolution
    np.testing.assert_allclose(tolerance(0.01, values[seen], res), 0.01 * np.ptp(values[seen], axis=0))


def certify(obj, eps, resolution, stop_at=0.95, seed=7, budget=1000):
    table = TableOracle(obj)
    cert = Certificate(
        obj.lattice, CertificateConfig(stop_at=stop_at, stop_on="good", epsilon=eps), seed, resolution=resolution
    )
    from testnav import searches

    p, columns = run_certified(searches.make("tomonav"), CertifiedOracle(table, cert), budget, seed, table.evaluate)
    return cert, p, columns


def test_below_the_resolution_p_good_does_not_stop_and_says_so_in_one_line(tmp_path, caplog):
    """A generated 5⁴ table measured on 200 inputs: its paired resolution is several % of δ's range, so
    ε = 0.01 is below it. p_good still reaches 0.95 (it is a stopping score) but the run does not stop
    there: it goes on to the budget, says once why, and the summary holds `certifiable: false` and
    the line; an ε above the resolution stops the same run, its front ε-complete."""
    from testnav import pipeline

    obj, identity, _ = replay_table(tmp_path)
    spec = pipeline.RunSpec("tomonav", budget=600, seed=7, certificate=CertificateConfig(stop_at=0.95, stop_on="good"))
    with caplog.at_level(logging.WARNING, logger="testnav"):
        run = pipeline.replay(spec, obj, identity)
    s = run.summary
    assert run.trace["p_good"].max() >= 0.95 and s["stopped_at"] is None and s["proposals"] == 600
    floor = s["resolution_delta"] / obj.delta_span
    assert s["certifiable"] is False and floor > 0.01 * 2 and s["resolution_rho"] is None
    notes = [r.getMessage() for r in caplog.records if "cannot certify" in r.getMessage()]
    assert len(notes) == 1 and notes[0] == s["certificate_note"] and "\n" not in notes[0]
    assert notes[0].startswith("certificate: cannot certify epsilon=0.01") and "200 inputs" in notes[0]
    assert "searching on to the budget" in notes[0] and "cannot certify epsilon=0.01" in verdict(s)
    # above the resolution (a share of the range wider than the paired half-width): it stops, ε-complete
    wide = CertificateConfig(stop_at=0.95, stop_on="good", epsilon=0.3)
    stopped = pipeline.replay(pipeline.RunSpec("tomonav", budget=600, seed=7, certificate=wide), obj, identity)
    t = stopped.summary
    assert t["certifiable"] is True and t["stopped_at"] is not None and "certificate_note" not in t
    values = np.column_stack([obj.delta, obj.rho])
    seen = np.unique(obj.lattice.index(stopped.trace[["t1", "t2", "t3", "t4"]].to_numpy()))
    seen = seen[seen != 0]
    front = values[seen][nondominated_mask(*values[seen].T)]
    rest = np.setdiff1d(np.arange(1, obj.lattice.size), seen)
    assert eps_complete(front, values[rest], 0.3 * np.ptp(values[np.r_[0, seen]], axis=0))


def test_auto_reads_the_resolution_and_its_stop_is_eps_complete_there(tmp_path):
    """epsilon=auto: δ's tolerance is the paired half-width over the table's δ range, ρ's the probe's
    over ρ's; the summary states both; the front at the stop is ε-complete at those tolerances."""
    from testnav.pipeline.resolution import TableOutcomes, table_outcomes

    obj, identity, df = replay_table(tmp_path)
    values = np.column_stack([obj.delta, obj.rho])
    source = TableOutcomes(
        table_outcomes(identity["table"], obj.lattice), 0.95, obj.delta_span, np.ptp(df["rho"]), RhoDouble()
    )
    cert, p, columns = certify(obj, "auto", source)
    assert cert.stopped is not None
    last = cert.reading()
    np.testing.assert_allclose(last.eps, last.resolution.tolerance())
    seen = np.unique(p)
    seen = seen[seen != 0]
    front = values[seen][nondominated_mask(*values[seen].T)]
    assert eps_complete(front, values[np.setdiff1d(np.arange(1, obj.lattice.size), seen)], last.eps)
    from testnav.stopping.certificate import summary_fields

    s = summary_fields(cert, columns)
    assert s["epsilon_setting"] == "auto" and s["epsilon"] == s["resolution_delta"] == last.resolution.delta
    assert s["epsilon_delta"] == pytest.approx(s["resolution_delta"] / obj.delta_span)
    assert s["epsilon_rho"] == pytest.approx(s["resolution_rho"] / np.ptp(df["rho"])) and s["certifiable"] is True
    assert (s["epsilon_inputs"], s["resolution_rho_method"]) == (200, "per-input")


def test_auto_needs_outcomes_and_rho_and_says_which_in_one_line(tmp_path):
    from testnav import pipeline

    lattice = Objectives.from_table(synthetic_table("pairs", 3, 4, seed=0)).lattice
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: the per-input outcomes .* give a number"):
        Certificate(lattice, CertificateConfig(epsilon="auto"))
    obj, identity, _ = replay_table(tmp_path, outcomes=False)
    spec = pipeline.RunSpec("random", budget=10, certificate=CertificateConfig(epsilon="auto"))
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: \S+table2.parquet holds no per-input outcomes"):
        pipeline.replay(spec, obj, identity)
    obj, identity, _ = replay_table(tmp_path, seed=3)
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: ρ's sampling error is not known here"):
        pipeline.replay(spec, obj, identity)  # a table alone: δ's resolution, not ρ's
    # a number on the same table: δ's resolution is read and stated, ρ's is not known
    plain = pipeline.replay(pipeline.RunSpec("random", budget=60, seed=0), obj, identity).summary
    assert plain["epsilon"] == 0.01 and not any(k.startswith("epsilon_") for k in plain)
    assert plain["resolution_delta"] > 0 and plain["resolution_rho"] is None and plain["resolution_inputs"] == 200


def test_epsilon_is_auto_or_a_share_and_the_yaml_default_is_auto_on_stage_live_only():
    from testnav.pipeline import compose_config

    assert CertificateConfig(epsilon="auto").epsilon == "auto" and CertificateConfig().epsilon == 0.01
    for bad in ("best", 1.0, -0.1, True, None):
        with pytest.raises(
            UserError, match=r"^certificate.epsilon=\S+: a share of each objective's range in \[0, 1\), or auto"
        ):
            CertificateConfig(epsilon=bad)
    assert CertificateConfig.from_node(compose_config().certificate).epsilon == 0.01  # replays: the papers' ε
    assert CertificateConfig.from_node(compose_config(["stage=live"]).certificate).epsilon == "auto"
    mine = compose_config(["stage=live", "certificate.epsilon=0.05"]).certificate
    assert CertificateConfig.from_node(mine).epsilon == 0.05


def test_p_good_is_a_stopping_score_with_its_measured_record():
    """The summary calls p_good what it is and carries its record at stops on held-out lattices, with
    the Clopper–Pearson interval (statsmodels, method="beta"); the record is the study's table's."""
    from statsmodels.stats.proportion import proportion_confint

    rows = pd.read_csv(ROOT / "results" / "tables" / "resolution_study.csv")
    stops = rows[rows["stopped_at"].notna() & rows["stop_rule"].eq("good") & rows["unique"].lt(rows["size"])]
    stops = stops[~stops["model"].isin(("mlp", "cnn"))]  # the lattices that chose the neighbour rule
    assert HELD_OUT_STOPS == (int(stops["eps_complete"].sum()), len(stops)) and len(stops) >= 20
    rec = stop_record()
    lo, hi = proportion_confint(*HELD_OUT_STOPS, alpha=0.05, method="beta")
    assert (rec["low"], rec["high"]) == pytest.approx((lo, np.nan_to_num(hi, nan=1.0)))
    said = verdict(
        dict(unique=412, space_size=625, p_good=0.96, p_complete=0.4, epsilon=0.01, stop_at=0.95, stopped_at=500)
        | dict(stop_on="good", p_good_record=rec)
    )
    assert "stopping score p_good = 0.96 (not a probability)" in said
    assert f"ε-complete in {HELD_OUT_STOPS[0]} of {HELD_OUT_STOPS[1]}" in said and "Clopper–Pearson" in said


def test_a_fixed_resolution_reads_the_same_at_every_checkpoint():
    """Fixed: a generated table read as if measured on some N (the studies' generated tables)."""
    obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=7))
    res = Fixed(Resolution(delta=0.05, rho=0.02, inputs=400, rho_method="per-input"))
    cert, _, columns = certify(obj, "auto", res)
    assert {r.eps for r in cert.records if r.resolution is not None} == {(0.05, 0.02)}
    cert, _, _ = certify(obj, 0.01, res)
    # 0.01 of the range is below 0.05: refused, searched on until Θ was exhausted (the front exact)
    assert cert.refused is not None and cert.refused.unique < cert.records[-1].unique == obj.lattice.size


def test_representatives_tell_apart_the_members_beyond_the_resolution():
    front = np.array([[0.10, 0.90], [0.12, 0.80], [0.30, 0.70], [0.33, 0.50], [0.60, 0.10]])  # δ up, ρ down
    keep = representatives(front, (0.05, 0.01))
    # from the most faithful: 0.12 is within 0.05 of 0.10 (and less faithful), 0.33 of 0.30
    assert keep.tolist() == [True, False, True, False, True]
    assert eps_dominated(front, front[keep], (0.05, 0.01)).all()  # every member is within ε of a kept one
    assert representatives(front, 0).all() and representatives(front, (1.0, 1.0)).sum() == 1
    assert representatives(front[[4, 0, 2, 1, 3]], (0.05, 0.01)).tolist() == [True, True, True, False, False]


def test_a_replay_at_auto_tells_the_front_apart_in_the_run_and_its_report(tmp_path):
    from testnav import pipeline, report

    obj, identity, _ = replay_table(tmp_path)
    spec = pipeline.RunSpec("random", budget=60, seed=0, certificate=CertificateConfig(epsilon="auto"))
    run = pipeline.replay(spec, obj, identity, probe=RhoDouble())
    s, front = run.summary, run.front
    told = representatives(front[["delta", "rho"]].to_numpy(), (s["epsilon_delta"], s["epsilon_rho"]))
    assert front["distinguishable"].tolist() == told.tolist() and 0 < told.sum() < len(front)
    assert [m["distinguishable"] for m in s["front"]] == told.tolist()
    assert f"{s['epsilon']:.3f} of accuracy (the 95% half-width of a paired difference at N = 200)" in verdict(s)
    html = report.for_run(tmp_path / "report.html", run, k=8).read_text()
    assert f"<b>{told.sum()} of the {len(told)} front members are told apart</b>" in html
    assert html.count('<li class="within">') == len(told) - told.sum()
    # a number: no field, column or mark of auto's
    plain = pipeline.replay(pipeline.RunSpec("random", budget=60, seed=0), obj, identity, probe=RhoDouble())
    assert "distinguishable" not in plain.front and "distinguishable" not in plain.summary["front"][0]
    assert "told apart" not in report.for_run(tmp_path / "plain.html", plain, k=8).read_text()


def test_a_bad_confidence_of_a_run_is_one_line():
    from testnav import pipeline

    with pytest.raises(UserError, match=r"^confidence=1.5: a probability in \(0, 1\)"):
        pipeline.RunSpec(confidence=1.5)
