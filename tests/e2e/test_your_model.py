"""A practitioner's own model: hooks on any nn.Module, torchvision/timm/class-path classifiers from
config, families by registry name, the user's own config directories, the generic text preset and
testnav.Tester on models and data in memory (small sizes: the contributor tier)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
import torchvision
from torch import nn

from testnav import searches
from testnav.errors import UserError
from tests.conftest import ROOT
from tests.helpers.user_models import SENTENCES, image_folder, resnet18_state_dict, tiny_bert

CONF = ROOT / "conf"


def test_hooks_read_the_penultimate_layer_and_the_logits_of_one_pass():
    from torchvision.models.feature_extraction import create_feature_extractor

    from testnav.models.monitor import Hooked

    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=5).eval()
    x = torch.rand(3, 3, 32, 32)
    layers, logits = Hooked(net).monitor(x)
    with torch.no_grad():
        expect = create_feature_extractor(net, {"flatten": "f"})(x)["f"]
        torch.testing.assert_close(layers[-1], expect)
        torch.testing.assert_close(logits, net(x))
    named, _ = Hooked(net, layer=["layer3", "layer4"]).monitor(x)
    assert [t.shape[1] for t in named] == [256 * 2 * 2, 512 * 1 * 1]
    with pytest.raises(UserError, match="benchmark.model.layer=layer9: ResNet has no such module"):
        Hooked(net, layer="layer9")
    with pytest.raises(UserError, match="has no nn.Linear head"):
        Hooked(nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten()))


def test_a_torchvision_state_dict_from_config_predicts_as_torchvision_does(tmp_path):
    from testnav.benchmarks.vision import View
    from testnav.models.classifier import ModelSpec

    path = resnet18_state_dict(tmp_path / "model.pt")
    spec = ModelSpec(
        "torchvision.models.resnet18", 5, checkpoint=str(path), mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]
    )
    x = torch.rand(6, 3, 32, 32)
    view = View(x, spec.build(), batch_size=4)
    net = torchvision.models.resnet18(num_classes=5).eval()
    net.load_state_dict(torch.load(path))
    mean, std = (
        torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1),
        torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1),
    )
    with torch.no_grad():
        logits = net((x - mean) / std)
    torch.testing.assert_close(view.probabilities, torch.softmax(logits.double(), 1), atol=1e-6, rtol=1e-5)
    assert view.features.shape == (6, 512)
    resnet18_state_dict(tmp_path / "other.pt", seed=1)
    assert ModelSpec("torchvision.models.resnet18", 5, checkpoint=str(tmp_path / "other.pt")).key() != spec.key()
    with pytest.raises(UserError, match="benchmark.model.num_classes is not set"):
        ModelSpec("torchvision.models.resnet18", None)


def test_families_by_name_carry_the_published_table_for_the_image_size():
    from omegaconf import OmegaConf

    from testnav.families import make as family
    from testnav.families import names

    for size, file in ((32, "imagenet_c_32"), (64, "imagenet_c_64"), (224, "imagenet_c_224")):
        table = {
            n["_target_"].rsplit(".", 1)[1]: n["params"]
            for n in OmegaConf.to_container(OmegaConf.load(CONF / "families" / f"{file}.yaml"))["families"]
        }
        assert family("gaussian_blur", image_size=size + 3).params == table["GaussianBlur"]
        assert family("jpeg", image_size=size).params == table["JPEG"]
    assert family("brightness", image_size=28, channels=1).params == [0.1, 0.2, 0.3, 0.4, 0.5]  # MNIST-C's
    assert family("zoom", image_size=28, channels=1).name == "zoom"
    assert family("typo", modality="text").name == "typo"
    assert "gaussian_blur" in names() and "shear" not in names()
    with pytest.raises(UserError, match=r"unknown family 'blurr' for image data \(valid: brightness, contrast"):
        family("blurr")


def user_configs(tmp_path):
    conf = tmp_path / "my_conf" / "benchmark"
    conf.mkdir(parents=True)
    (conf / "my5.yaml").write_text(
        "defaults:\n  - image_classification\n  - _self_\nname: my5\nmodel:\n  num_classes: 5\n"
    )
    return tmp_path / "my_conf"


def precheck_error(argv, capsys) -> str | None:
    from testnav.app.cli import precheck

    try:
        precheck(argv, CONF)
    except SystemExit:
        return capsys.readouterr().err.strip()
    return None


def test_the_override_guard_composes_the_users_config_dirs(tmp_path, capsys):
    mine = user_configs(tmp_path)
    for where in (["--config-dir", str(mine)], [f"--config-dir={mine}"], [f"hydra.searchpath=[file://{mine}]"]):
        assert precheck_error(where + ["benchmark=my5", "benchmark.model.checkpoint=m.pt"], capsys) is None
        err = precheck_error(where + ["benchmark=my6"], capsys)
        assert err.startswith("error: unknown benchmark 'my6' (valid: ") and "my5" in err and "_template" not in err
        err = precheck_error(where + ["benchmark=my5", "benchmark.model.chekpoint=m.pt"], capsys)
        assert "unknown config key 'benchmark.model.chekpoint' with benchmark=my5" in err and "\n" not in err
    assert precheck_error(["benchmark=cifar10", "benchmark.model.checkpoint=w.pt"], capsys) is None
    assert "no such directory" in precheck_error(["--config-dir", str(tmp_path / "nowhere")], capsys)


def test_text_preset_selects_chrf_unless_told_and_runs_are_named_after_their_stage():
    from testnav.app.cli import run_name
    from testnav.pipeline import compose_config

    assert compose_config(["benchmark=text_classification"]).fidelity.name == "chrf"
    assert compose_config(["benchmark=text_classification", "fidelity=bertf1"]).fidelity.name == "bertf1"
    assert compose_config([]).fidelity.name == "ssim"
    assert run_name("search", "mnist5k", "ssim", "nsga2", 0) == "mnist5k_ssim_nsga2_s0"
    assert run_name("live", "my5", "ssim", "nsga2", 3) == "my5_ssim_nsga2_s3"
    assert run_name("tomography", "my5", "ssim", "nsga2", 0) == "my5_tomography"


def test_a_run_that_raises_is_marked_failed_and_a_user_error_leaves_nothing(tmp_path):
    from testnav.app.cli import FAILED, guarded

    out = tmp_path / "run"
    out.mkdir()
    with pytest.raises(ZeroDivisionError):
        guarded(lambda: 1 / 0, lambda: out)
    assert "ZeroDivisionError" in (out / FAILED).read_text()

    def bad():
        raise UserError("bad value")

    with pytest.raises(SystemExit):
        guarded(bad, lambda: out)
    assert not out.exists()


def test_the_default_population_fits_a_small_lattice(caplog):
    from testnav.core.lattice import Lattice

    search = searches.make("nsga2")
    search.fit(Lattice(4, 3), 405)
    assert search.pop_size == 27 and "using μ=27" in caplog.text
    search.check(Lattice(4, 3), 405)
    big = searches.make("nsga2")
    big.fit(Lattice(4, 6), 6480)
    assert big.pop_size == 110


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert") / "bert", [t for t, _ in SENTENCES])


def test_text_classification_reads_sentences_or_pairs_and_class_names(bert, tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from testnav.benchmarks.text_classification import SequenceClassifier, TextClassification, TextTable

    pd.DataFrame(SENTENCES, columns=["text", "label"]).to_csv(tmp_path / "s.csv", index=False)
    b = TextClassification(data=TextTable(str(tmp_path / "s.csv")), model=SequenceClassifier(path=str(bert)))
    loaded = b.load(None)
    assert loaded.inputs.items[0] == (SENTENCES[0][0],) and loaded.labels.tolist() == [y for _, y in SENTENCES]
    model, tok = AutoModelForSequenceClassification.from_pretrained(bert), AutoTokenizer.from_pretrained(bert)
    with torch.no_grad():
        expect = model(**tok([t for t, _ in SENTENCES], padding=True, return_tensors="pt")).logits.argmax(-1).numpy()
    assert (b.predict(loaded, list(loaded.inputs.items)) == expect).all()  # one segment: no pair encoding

    names = {0: "neg", 1: "mixed", 2: "pos"}
    pairs = pd.DataFrame(
        {
            "text_a": [t for t, _ in SENTENCES],
            "text_b": ["so it goes"] * len(SENTENCES),
            "label": [names[y] for _, y in SENTENCES],
        }
    )
    pairs.to_json(tmp_path / "p.jsonl", orient="records", lines=True)
    model.config.label2id = {v: k for k, v in names.items()}
    model.save_pretrained(tmp_path / "named")
    tok.save_pretrained(tmp_path / "named")
    b2 = TextClassification(
        data=TextTable(str(tmp_path / "p.jsonl")), model=SequenceClassifier(path=str(tmp_path / "named"))
    )
    loaded = b2.load(None)
    assert loaded.inputs.items[0] == (SENTENCES[0][0], "so it goes") and loaded.inputs.editable == (0, 1)
    assert loaded.labels.tolist() == [y for _, y in SENTENCES]
    pairs.assign(label="other").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(UserError, match="labels other are neither class indices nor names"):
        TextClassification(data=TextTable(str(tmp_path / "bad.csv")), model=SequenceClassifier(path=str(bert))).load(
            None
        )
    with pytest.raises(UserError, match="has no 'text' column nor 'text_a' and 'second'"):
        TextClassification(
            data=TextTable(str(tmp_path / "p.jsonl"), label="label", text_b="second"),
            model=SequenceClassifier(path=str(bert)),
        ).load(None)


class Small(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.body(x))


def test_tester_on_tensors_live_replay_groundtruth_and_queries(tmp_path):
    import testnav

    torch.manual_seed(0)
    model = Small()
    images, labels = torch.rand(12, 3, 32, 32), torch.arange(12) % 3
    t = testnav.Tester(
        model, (images, labels), families=["brightness", "contrast"], levels=3, cache_dir=tmp_path / "cache"
    )
    live = t.search("nsga2", budget=20, seed=0)
    assert live.summary["live"] and live.summary["evaluations"] <= 9 and len(live.trace) == 20
    # epsilon="auto" by default: the resolution of an accuracy on its 12 inputs, live and replayed
    assert live.summary["epsilon_setting"] == "auto" and live.summary["epsilon_inputs"] == 12
    assert "distinguishable" in live.front
    assert set(live.front["rank"]) == {0} and {"t1", "t2", "delta", "rho"} <= set(live.ranked.columns)
    table = t.groundtruth()
    assert len(table) == 9 and {"psi", "delta", "ssim", "correct"} <= set(table.columns)
    # ψ's interval on the 12 inputs, at the Tester's confidence (0.95): Wilson's, as statsmodels gives it
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(np.rint(table.psi * 12), 12, alpha=0.05, method="wilson")
    assert np.allclose(table.psi_low, low) and np.allclose(table.psi_high, high)
    assert list(table.columns).index("psi_low") == list(table.columns).index("psi") + 1
    run = t.search("random", seed=1, replay=True)
    for field in (
        "benchmark",
        "fidelity",
        "search",
        "seed",
        "budget",
        "proposals",
        "unique",
        "pstar_size",
        "auc_recall",
        "final_recall",
        "unique_to_full_recall",
        "budget_to_full_recall",
    ):
        assert field in run.summary
    assert run.summary["budget"] == 45 and run.summary["final_recall"] == 1.0
    # replayed, ε is the command line's replay default (0.01, conf/settings/certificate.yaml); auto on request
    assert "epsilon_setting" not in run.summary and run.summary["epsilon"] == 0.01
    auto = t.search("random", seed=1, replay=True, epsilon="auto")
    assert auto.summary["epsilon_setting"] == "auto" and auto.summary["epsilon"] == live.summary["epsilon"]
    out = run.save(tmp_path / "run")
    assert json.loads((out / "summary.json").read_text())["search"] == "random"
    res = t.query("brightness >= 1 & contrast <= 1")
    assert res["tests"] == 4 and res["R_predicted"] is not None
    with pytest.raises(UserError, match="unknown family 'blurr'"):
        t.query("blurr >= 1")
    # the cache key is the weights: the same weights reuse the table, others get their own
    files = sorted((tmp_path / "cache" / "groundtruth").glob("*.parquet"))
    same = testnav.Tester(
        Small().load_state_dict(model.state_dict()) and model,
        (images, labels),
        families=["brightness", "contrast"],
        cache_dir=tmp_path / "cache",
    )
    same.groundtruth()
    assert sorted((tmp_path / "cache" / "groundtruth").glob("*.parquet")) == files
    torch.manual_seed(1)
    testnav.Tester(
        Small(), (images, labels), families=["brightness", "contrast"], cache_dir=tmp_path / "cache"
    ).groundtruth()
    assert len(list((tmp_path / "cache" / "groundtruth").glob("*.parquet"))) == len(files) + 1
    with pytest.raises(UserError, match="images must be floats in \\[0, 1\\]"):
        testnav.Tester(model, (images * 255, labels), families=["brightness"])
    with pytest.raises(UserError, match="unknown search 'nsga9'"):
        t.search("nsga9")


def test_tester_on_an_image_folder_and_on_texts(bert, tmp_path):
    import testnav

    photos = image_folder(tmp_path / "photos", classes=3, per_class=2)
    t = testnav.Tester(
        Small(), photos, families=["jpeg", "brightness"], levels=2, image_size=32, cache_dir=tmp_path / "cache"
    )
    assert t.benchmark.load(None).inputs.shape == (6, 3, 32, 32)
    assert t.search("nsga2", budget=6).summary["evaluations"] == 4
    with pytest.raises(UserError, match="set the reader's image_size"):
        testnav.Tester(Small(), photos, families=["jpeg"], cache_dir=tmp_path / "cache").search()

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model, tok = AutoModelForSequenceClassification.from_pretrained(bert), AutoTokenizer.from_pretrained(bert)
    t = testnav.Tester(
        model, SENTENCES, tokenizer=tok, families=["typo", "punctuation"], levels=3, cache_dir=tmp_path / "cache"
    )
    run = t.search("nsga2", seed=0, stop_at=0.95)
    assert run.summary["fidelity"] == "chrf" and run.summary["evaluations"] <= 9
    assert t.query("typo >= 1")["R_true"] is not None


def test_the_preset_names_what_is_missing():
    from testnav.pipeline import compose_benchmark

    with pytest.raises(UserError, match=r"benchmark.data.root is not set: give your image folder"):
        compose_benchmark(["benchmark=image_classification", "benchmark.model.num_classes=5"]).load(None)
    with pytest.raises(UserError, match="benchmark.model.num_classes is not set"):
        compose_benchmark(["benchmark=image_classification"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_figures_for_one_folder_of_a_users_benchmark(tmp_path):
    """A replay of a --config-dir benchmark, then scripts/figures.py --results on its folder: Figs. 5–6
    rebuilt from the run's own composed config, written beside the run; results/figures untouched."""
    import subprocess
    import sys

    from tests.helpers.user_models import image_scenario

    files = image_scenario(tmp_path)
    conf = tmp_path / "my_conf" / "benchmark"
    conf.mkdir(parents=True)
    (conf / "my5.yaml").write_text(
        f"defaults: [image_classification, _self_]\nname: my5\nlevels: 2\n"
        f"data: {{root: photos, image_size: 32}}\n"
        f"model: {{num_classes: 5, checkpoint: {files['model'].name}}}\n"
    )
    committed = sorted((p.name, p.stat().st_mtime) for p in (ROOT / "results" / "figures").glob("*"))
    out = tmp_path / "mine"
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "run.py"),
            "--config-dir",
            "my_conf",
            "benchmark=my5",
            "search=tomonav",
            "progress=false",
            f"hydra.run.dir={out}/run",
            f"cache_dir={out}/cache",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "figures.py"), "--results", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    drawn = {p.name for p in (out / "figures").glob("*.png")}
    assert {"fig1_my5.png", "fig5_my5_ssim.png"} <= drawn and "minimal mnist5k sweep" not in r.stdout
    assert not (out / "default_run").exists()
    assert sorted((p.name, p.stat().st_mtime) for p in (ROOT / "results" / "figures").glob("*")) == committed
