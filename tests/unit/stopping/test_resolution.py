"""epsilon=auto: the stopping certificate and the front at the measurement's resolution (docs/tomonav.md,
"At the measurement's resolution"): the resolution is Wilson's half-width from statsmodels, auto is
resolved live and on replays (the CLI's replays keep 0.01), and the front's members are told apart
at it in Run.front, summary.json and report.html."""

import json

import numpy as np
import pytest

from testnav.core.oracle import TableOracle
from testnav.core.pareto import nondominated_mask
from testnav.core.table import Objectives
from testnav.errors import UserError
from testnav.groundtruth.synthetic import synthetic_table
from testnav.stopping.certificate import Certificate, CertificateConfig, CertifiedOracle, run_certified, verdict
from testnav.stopping.epsilon import Resolution, eps_complete, eps_dominated, representatives, tolerance


def test_the_resolution_is_the_widest_wilson_half_width_of_an_accuracy_at_n():
    from statsmodels.stats.proportion import proportion_confint

    for n in (400, 1000, 5001):
        lo, hi = proportion_confint(n / 2, n, alpha=0.05, method="wilson")
        r = Resolution.at(n)
        assert r.half_width == pytest.approx((hi - lo) / 2, rel=1e-9) and r.inputs == n
        for share in (0.05, 0.3, 0.7, 0.99):  # every other accuracy is measured more finely
            lo, hi = proportion_confint(round(share * n), n, alpha=0.05, method="wilson")
            assert (hi - lo) / 2 < r.half_width
    assert (
        Resolution.at(400, confidence=0.99).half_width > Resolution.at(400).half_width > Resolution.at(1000).half_width
    )


def test_auto_reads_delta_in_accuracy_and_rho_as_a_share_a_number_as_before():
    values = np.array([[0.0, 0.2], [0.5, 1.0], [0.25, 0.6]])
    r = Resolution.at(400, delta_span=0.5)  # a table whose raw δ spans 0.5, normalised to [0, 1]
    np.testing.assert_allclose(tolerance("auto", values, r), [r.half_width / 0.5, r.half_width * 0.8])
    np.testing.assert_allclose(tolerance(0.01, values), [0.005, 0.008])  # a share of each measured range
    np.testing.assert_allclose(tolerance(0.01, values, r), [0.005, 0.008])  # a number ignores the resolution


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
    lattice = Objectives.from_table(synthetic_table("pairs", 3, 4, seed=0)).lattice
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: the number of inputs .* give a number"):
        Certificate(lattice, CertificateConfig(epsilon="auto"))


def test_auto_stops_no_later_than_one_percent_and_its_front_is_complete_at_its_tolerance():
    """TomoNav on generated 4⁴ tables (seeds 7–9, not the study's), stop_on=good: ε = the resolution
    of 400 inputs is wider than 1 % of the range, so the run stops no later, and the front at the stop
    is ε-complete at the tolerances the certificate states."""
    from testnav import searches

    for seed in (7, 8, 9):
        obj = Objectives.from_table(synthetic_table("pairs", n=4, levels=4, seed=seed))
        values = np.column_stack([obj.delta, obj.rho])
        stops = {}
        for eps in (0.01, "auto"):
            table = TableOracle(obj)
            config = CertificateConfig(stop_at=0.95, stop_on="good", epsilon=eps)
            cert = Certificate(obj.lattice, config, seed=seed, resolution=Resolution.at(400, delta_span=obj.delta_span))
            p, _ = run_certified(searches.make("tomonav"), CertifiedOracle(table, cert), 1280, seed, table.evaluate)
            seen = np.unique(p)
            seen = seen[seen != 0]
            stops[eps] = len(seen)
            if eps == "auto":
                used = cert.tolerance()
                assert used[0] == pytest.approx(Resolution.at(400).half_width / obj.delta_span)
                front = values[seen][nondominated_mask(*values[seen].T)]
                assert eps_complete(front, values[np.setdiff1d(np.arange(1, obj.lattice.size), seen)], used)
        assert stops["auto"] <= stops[0.01]


def test_representatives_tell_apart_the_members_beyond_the_resolution():
    front = np.array([[0.10, 0.90], [0.12, 0.80], [0.30, 0.70], [0.33, 0.50], [0.60, 0.10]])  # δ up, ρ down
    keep = representatives(front, (0.05, 0.01))
    # from the most faithful: 0.12 is within 0.05 of 0.10 (and less faithful), 0.33 of 0.30
    assert keep.tolist() == [True, False, True, False, True]
    assert eps_dominated(front, front[keep], (0.05, 0.01)).all()  # every member is within ε of a kept one
    assert representatives(front, 0).all() and representatives(front, (1.0, 1.0)).sum() == 1
    assert representatives(front[[4, 0, 2, 1, 3]], (0.05, 0.01)).tolist() == [True, True, True, False, False]


def replay_table(tmp_path, n_inputs):
    """A generated 3⁴ table as a ground-truth parquet file (raw δ spanning 0.4), with its metadata's N."""
    df = synthetic_table("pairs", n=4, levels=3, seed=1)
    df["delta"] = 0.4 * df["delta"] / df["delta"].max()
    path = tmp_path / "table.parquet"
    df.to_parquet(path)
    if n_inputs:
        path.with_suffix(".json").write_text(json.dumps({"n_inputs": n_inputs}))
    obj = Objectives.from_table(df)
    return obj, {"benchmark": "generated", "fidelity": "rho", "table": str(path)}


def test_a_replay_at_auto_states_its_resolution_and_tells_the_front_apart(tmp_path):
    from testnav import pipeline, report

    obj, identity = replay_table(tmp_path, n_inputs=400)
    assert obj.delta_span == pytest.approx(0.4)
    spec = pipeline.RunSpec("random", budget=60, seed=0, certificate=CertificateConfig(epsilon="auto"))
    run = pipeline.replay(spec, obj, identity)
    s, h = run.summary, Resolution.at(400).half_width
    assert (s["epsilon_setting"], s["epsilon_inputs"], s["epsilon_confidence"]) == ("auto", 400, 0.95)
    assert s["epsilon"] == pytest.approx(h) and s["epsilon_delta"] == pytest.approx(h / 0.4)
    seen = run.trace.drop_duplicates(["t1", "t2", "t3", "t4"])
    assert s["epsilon_rho"] == pytest.approx(h * np.ptp(seen["rho"]))
    front = run.front
    told = representatives(front[["delta", "rho"]].to_numpy(), (s["epsilon_delta"], s["epsilon_rho"]))
    assert front["distinguishable"].tolist() == told.tolist() and 0 < told.sum() < len(front)
    assert [m["distinguishable"] for m in s["front"]] == told.tolist()
    assert "0.049 of accuracy (the 95% interval half-width at N = 400)" in verdict(s)
    html = report.for_run(tmp_path / "report.html", run, k=8).read_text()
    assert f"<b>{told.sum()} of the {len(told)} front members are told apart</b>" in html
    assert html.count('<li class="within">') == len(told) - told.sum()
    assert "beats it by more than 0.049 of accuracy, the resolution of an accuracy measured on its 400 inputs" in html
    # a number: today's reading, and no field, column or mark added
    spec = pipeline.RunSpec("random", budget=60, seed=0, certificate=CertificateConfig(epsilon=0.01))
    plain = pipeline.replay(spec, obj, identity)
    assert plain.summary["epsilon"] == 0.01 and not any(k.startswith("epsilon_") for k in plain.summary)
    assert "distinguishable" not in plain.front and "distinguishable" not in plain.summary["front"][0]
    assert "told apart" not in report.for_run(tmp_path / "plain.html", plain, k=8).read_text()
    # at another confidence, the half-width at that confidence
    spec = pipeline.RunSpec("random", budget=60, certificate=CertificateConfig(epsilon="auto"), confidence=0.99)
    wider = pipeline.replay(spec, obj, identity).summary
    assert (
        wider["epsilon"] == pytest.approx(Resolution.at(400, 0.99).half_width) and wider["epsilon_confidence"] == 0.99
    )
    with pytest.raises(UserError, match=r"^confidence=1.5: a probability in \(0, 1\)"):
        pipeline.RunSpec(confidence=1.5)


def test_auto_on_a_table_that_does_not_say_its_n_is_refused_in_one_line(tmp_path):
    from testnav import pipeline

    obj, identity = replay_table(tmp_path, n_inputs=None)
    spec = pipeline.RunSpec("random", budget=10, certificate=CertificateConfig(epsilon="auto"))
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: \S+table.parquet does not say how many inputs .*"):
        pipeline.replay(spec, obj, identity)
