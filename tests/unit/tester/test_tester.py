"""testnav/tester.py, the facade, on its own. Each verb is an adapter of a few lines: its keywords
become the verb's spec (a keyword left at None is conf/settings/<verb>.yaml's default, as the command
line composes it; the confidence left at None is the Tester's), handed with the Tester's Session to
the pipeline. Spies stand in for the pipeline's verbs and record what they were given, so no model
runs here beyond two small searches; errors come back in the Python words."""

from __future__ import annotations

from pathlib import Path

import pytest

import testnav
from testnav import pipeline
from testnav.errors import UserError
from testnav.pipeline import CompareSpec, QuerySpec, ReportSpec, ScanSpec, certificate_for, compose_config
from testnav.pipeline import tomography as testnav_tomography
from testnav.tester import Tester, baseline_record, python_words, report_k
from tests.unit.pipeline.test_compare import record
from tests.unit.scan.test_scan import forest_on_digits


def make_tester(tmp_path, **kw) -> Tester:
    predict, x, y = forest_on_digits(30)
    return Tester(
        predict, (x, y), families=["brightness", "contrast"], levels=3, cache_dir=tmp_path, progress=False, **kw
    )


@pytest.fixture
def spied(tmp_path, monkeypatch):
    """A Tester whose pipeline verbs are spies: `calls` holds (verb, args) for each call."""
    t = make_tester(tmp_path, confidence=0.9)
    calls = []

    class Gated:  # what pipeline.compare returns to the gate: a comparison whose verdict is a pass
        verdict = type("V", (), {"decision": "pass", "line": "no regression"})()

    def spy(name, result):
        def verb(*args, **kwargs):
            calls.append((name, args))
            return result

        return verb

    monkeypatch.setattr(Tester, "session", property(lambda self: "the session"))
    monkeypatch.setattr(Tester, "_cached_groundtruth", lambda self: None)
    monkeypatch.setattr(Tester, "tomography", lambda self, source=None: "the tomography")
    monkeypatch.setattr(pipeline, "scan", spy("scan", type("F", (), {"run": None})()))
    monkeypatch.setattr(pipeline, "compare", spy("compare", Gated()))
    monkeypatch.setattr(testnav_tomography, "answer", spy("answer", {}))
    monkeypatch.setattr(testnav_tomography, "gate", spy("gate", {"decision": "pass"}))
    return t, calls


def test_every_verb_left_at_its_defaults_hands_the_pipeline_the_yamls_spec(spied):
    t, calls = spied
    cfg = compose_config()
    theirs = 0.9  # the Tester's confidence: every verb's default
    t.scan()
    assert calls[-1] == ("scan", ("the session", ScanSpec.from_node({**cfg.scan, "confidence": theirs}), "ssim"))
    base = record([[True, False]] * 9)
    t.compare(base)
    assert calls[-1] == (
        "compare",
        ("the session", base, CompareSpec.from_node({**cfg.compare, "confidence": theirs}), "ssim", None),
    )
    n = len(calls)
    t.assert_no_regression(base)  # the same baseline and settings: the same comparison, nothing more asked
    assert len(calls) == n
    t.assert_no_regression(base, max_drop=0.05)
    assert calls[-1][0] == "compare" and calls[-1][1][2] == CompareSpec.from_node(
        {**cfg.compare, "confidence": theirs, "max_drop": 0.05}
    )
    t.query("brightness >= 1")
    assert calls[-1] == (
        "answer",
        ("the tomography", QuerySpec.from_node({**cfg.query, "expr": "brightness >= 1", "confidence": theirs})),
    )
    t.assert_robust("brightness >= 1", min_accuracy=0.5)
    spec = calls[-1][1][1]
    assert spec == QuerySpec.from_node(
        {**cfg.query, "expr": "brightness >= 1", "min_accuracy": 0.5, "confidence": theirs}
    )
    assert spec.measure == "auto" and spec.sample == 0
    assert report_k(None) == ReportSpec.from_node(cfg.report).k and report_k(3) == 3  # examples(), report()


def test_a_keyword_given_wins_over_the_yaml_and_none_takes_it(spied):
    t, calls = spied
    t.scan(budget_seconds=30, fidelity_floor=None, stop_at=None, confidence=0.99)
    spec = calls[-1][1][1]
    assert (spec.budget_seconds, spec.fidelity_floor, spec.stop_at, spec.confidence) == (30.0, None, None, 0.99)
    assert (spec.failure_modes, spec.examples) == (ScanSpec().failure_modes, ScanSpec().examples)
    t.compare(record([[True]] * 9), max_drop=0.05, correction="bh", measure="all", min_change=None)
    spec = calls[-1][1][2]
    assert (spec.max_drop, spec.correction, spec.measure, spec.min_change) == (
        0.05,
        "bh",
        "all",
        CompareSpec().min_change,
    )
    t.query("contrast <= 1", sample=4)
    assert calls[-1][1][1].sample == 4


@pytest.mark.parametrize(
    "verb, kwargs, expect",
    [
        ("scan", {"failure_mode": 3}, "failure_mode: no such setting (valid: budget_seconds, failure_modes,"),
        ("scan", {"examples": -1}, "examples=-1: a whole number ≥ 0"),
        ("compare", {"max_drop": 2}, "max_drop=2: a share of the accuracy in [0, 1), e.g. max_drop=0.02"),
        ("compare", {"tolerance": -1}, "tolerance=-1: a share of the baseline's configurations"),
        ("query", {"sample": -1}, "sample=-1: a whole number of tests ≥ 0"),
        ("assert_robust", {"min_accuracy": 2}, "min_accuracy=2: an accuracy in [0, 1], e.g. min_accuracy=0.8"),
        ("assert_robust", {"min_accuracy": 0.5, "measure": "often"}, "measure=often (valid: auto, never)"),
        ("examples", {"k": 0}, "k=0: the number of inputs shown per configuration"),
    ],
)
def test_errors_name_the_python_arguments_before_any_work(spied, verb, kwargs, expect):
    t, calls = spied
    first = {"scan": (), "compare": (record([[True]] * 9),), "query": ("brightness >= 1",)}.get(
        verb, ("brightness >= 1",) if verb == "assert_robust" else ("brightness=1",)
    )
    with pytest.raises(UserError) as e:
        getattr(t, verb)(*first, **kwargs)
    text = str(e.value)
    assert text.startswith(expect) and "\n" not in text
    assert not any(w in text for w in ("scan.", "compare.", "query.", "report.", "null")), text
    assert calls == []  # refused before the pipeline was asked for anything


def test_python_words_translates_the_command_lines_keys():
    with pytest.raises(UserError) as e, python_words():
        raise UserError("compare.max_drop=2: a share, e.g. compare.max_drop=0.02; scan.stop_at=null; report.k")
    assert str(e.value) == "max_drop=2: a share, e.g. max_drop=0.02; stop_at=None; k"


def test_a_baseline_is_a_record_a_tester_or_a_directory(tmp_path):
    rec = record([[True, False]] * 9)
    assert baseline_record(rec) is rec
    assert baseline_record(rec.save(tmp_path / "v1")).thetas.tolist() == rec.thetas.tolist()
    with pytest.raises(UserError, match=r"^baseline=int: give a directory Tester.save"):
        baseline_record(3)


def test_epsilon_has_one_default_auto_live_and_001_replayed_as_on_the_command_line(tmp_path):
    """Tester.search(replay=True) read epsilon="auto" before issue 73 while run.py's replays read 0.01."""
    t = make_tester(tmp_path)
    live = t.search("random", budget=5, seed=0)
    assert live.summary["epsilon_setting"] == certificate_for(live=True).epsilon == "auto"  # the resolution
    replayed = t.search("random", budget=5, seed=0, replay=True)
    assert "epsilon_setting" not in replayed.summary
    assert replayed.summary["epsilon"] == certificate_for(live=False).epsilon == 0.01
    assert t.search("random", budget=5, seed=0, replay=True, epsilon="auto").summary["epsilon_setting"] == "auto"
    assert isinstance(testnav.Tester, type)  # the facade the package exports


def test_the_default_cache_is_the_user_cache_folder_never_the_current_one(tmp_path, monkeypatch):
    """Tester() wrote ./results/cache into whatever folder the user was in (issue 75, item 5)."""
    from testnav.core.cache import user_cache_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TESTNAV_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "testnav"
    monkeypatch.setenv("TESTNAV_CACHE", str(tmp_path / "env"))
    assert user_cache_dir() == tmp_path / "env" and user_cache_dir(tmp_path / "given") == tmp_path / "given"
    predict, x, y = forest_on_digits(30)
    t = Tester(predict, (x, y), families=["brightness"], levels=2, progress=False)
    t.groundtruth()  # a cached table
    assert Path(t.cache_dir) == tmp_path / "env" and (tmp_path / "env").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env"]  # nothing in the current folder


def test_assert_robust_after_a_full_scan_measures_nothing_new(tmp_path):
    """After a scan measured all 9 configurations, the gate read them (it measured 273 configurations
    again in 113 s before, issue 75, item 5), and its line says so."""
    predict, x, y = forest_on_digits(30)
    calls = []

    def counted(batch):
        calls.append(len(batch))
        return predict(batch)

    t = Tester(counted, (x, y), families=["brightness", "contrast"], levels=3, cache_dir=tmp_path, progress=False)
    assert t.scan().method["how"] == "lattice"
    calls.clear()
    res = t.assert_robust("brightness >= 1", min_accuracy=0.0, seed=0)
    assert res["reused"] == 9 and "none measured now" in res["line"]
    assert sum(calls) <= 2 * len(y)  # the model key and the clean set at most, never a configuration
