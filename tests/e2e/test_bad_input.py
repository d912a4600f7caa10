"""Bad input (issue 64): each case either one line naming the value and what is valid, before any
work, or accepted with a one-line note where the intent is unambiguous."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from testnav.errors import UserError
from tests.unit.scan.test_scan import forest_on_digits

FAMILIES = ["brightness", "contrast"]


def notes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "testnav"]


def pil_digits(n=12, mode="L"):
    from PIL import Image

    predict, x, y = forest_on_digits(n)
    images = [Image.fromarray((255 * im[0].numpy()).astype(np.uint8)).convert(mode) for im in x]
    return predict, images, y, x


def make_tester(model, data, tmp_path, **kw):
    import testnav

    return testnav.Tester(model, data, families=FAMILIES, levels=2, cache_dir=tmp_path, **kw)


def test_a_list_of_pil_images_is_read_with_a_note_and_grayscale_stays_grayscale(tmp_path, caplog):
    predict, images, y, x = pil_digits()
    with caplog.at_level(logging.WARNING):
        t = make_tester(predict, (images, y.tolist()), tmp_path)
    assert notes(caplog) == ["image data: a list of 12 PIL (L) images read as one (N, C, H, W) batch"]
    got = t.benchmark.data.images
    assert got.shape == (12, 1, 8, 8) and torch.allclose(got, x, atol=1 / 255)
    pairs = make_tester(predict, list(zip(images, y.tolist())), tmp_path)  # [(image, label), …]
    assert torch.equal(pairs.benchmark.data.images, got)
    assert t.search("random", budget=2, seed=0).summary["evaluations"] >= 1  # the function reads 64 pixels


def test_grayscale_pil_images_in_a_hugging_face_dataset_reach_the_function_as_one_channel(tmp_path, caplog):
    import datasets

    predict, images, y, x = pil_digits()
    ds = datasets.Dataset.from_dict({"image": images, "label": y.tolist()})
    t = make_tester(predict, ds, tmp_path)
    assert t.benchmark.data.images.shape[1] == 1
    run = t.search("random", budget=2, seed=0)  # scikit-learn receives its 64 features, not 192
    assert run.summary["psi_clean"] > 0.5
    mixed = datasets.Dataset.from_dict({"image": [images[0].convert("RGB"), *images[1:]], "label": y.tolist()})
    with caplog.at_level(logging.WARNING):
        assert make_tester(predict, mixed, tmp_path).benchmark.data.images.shape[1] == 3
    assert "11 of 12 PIL images are grayscale; all are read as RGB" in " ".join(notes(caplog))


def test_uint8_arrays_in_a_tuple_are_divided_by_255_with_a_note(tmp_path, caplog):
    predict, x, y = forest_on_digits(12)
    raw = (x.numpy() * 255).round().astype(np.uint8)
    with caplog.at_level(logging.WARNING):
        t = make_tester(predict, (raw, y.numpy()), tmp_path)
    assert "image data: 8-bit images (uint8) divided by 255 to floats in [0, 1]" in notes(caplog)
    assert torch.allclose(t.benchmark.data.images, x, atol=1 / 255)


class Named(torch.nn.Module):
    """An image classifier that names its classes, as a Hugging Face one does (config.label2id)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3)
        self.config = type("Config", (), {"label2id": {"cat": 0, "dog": 1}})()

    def forward(self, x):
        return self.conv(x).mean((2, 3))


def test_string_labels_as_numbers_or_the_models_class_names_are_read_else_one_line(tmp_path, caplog):
    predict, x, y = forest_on_digits(12)
    with caplog.at_level(logging.WARNING):
        t = make_tester(predict, (x, [str(int(v)) for v in y]), tmp_path)
    assert torch.equal(t.benchmark.data.labels, y)
    assert any(n.startswith("image data: labels written as text") for n in notes(caplog))
    caplog.clear()
    labels = ["dog", "cat"] * 6
    with caplog.at_level(logging.WARNING):
        t = make_tester(Named(), (x, labels), tmp_path)
    assert t.benchmark.data.labels.tolist() == [1, 0] * 6
    assert "image data: labels mapped to the model's classes: cat → 0, dog → 1" in notes(caplog)
    with pytest.raises(UserError) as err:
        make_tester(predict, (x, np.array(["seven", "one"] * 6)), tmp_path)
    assert str(err.value) == (
        "image data: labels are text ('one', 'seven', …) and the model names no classes: give class indices "
        "0..K−1 in the order of the model's outputs"
    )


@pytest.mark.parametrize(
    "output, expect",
    [
        (lambda z: z.argmax(1)[:, None], r"returned shape \(12, 1\) of whole numbers for 12 inputs: class indices"),
        (lambda z: z.argmax(1), r"returned shape \(12,\) of whole numbers for 12 inputs: class indices"),
        (lambda z: z[:, :1], r"returned shape \(12, 1\): one score per input; return one per class"),
    ],
)
def test_a_function_returning_class_indices_or_one_score_is_one_line(output, expect, tmp_path):
    predict, x, y = forest_on_digits(12)
    t = make_tester(lambda b: output(predict(b)), (x, y), tmp_path)
    with pytest.raises(UserError, match=expect) as err:
        t.search("random", budget=2)
    assert "\n" not in str(err.value)


def test_a_function_that_fails_names_the_batch_it_was_given(tmp_path):
    predict, x, y = forest_on_digits(12)
    rgb = x.expand(-1, 3, -1, -1)
    with pytest.raises(UserError) as err:
        make_tester(predict, (rgb, y), tmp_path).search("random", budget=2)
    text = str(err.value)
    assert text.startswith("the prediction function raised ValueError on a batch of shape (12, 3, 8, 8) (NCHW")
    assert "features" in text and "\n" not in text  # scikit-learn's own words: 192 features, expecting 64


def test_three_channel_images_for_a_one_channel_module_are_one_line_before_any_work(tmp_path):
    _, x, y = forest_on_digits(12)
    with pytest.raises(UserError) as err:
        make_tester(Named(), (x.expand(-1, 3, -1, -1), y % 2), tmp_path)
    assert str(err.value) == (
        "image data: the images have 3 channels but the model's first convolution (conv) takes 1: "
        "x.mean(1, keepdim=True) makes RGB images grayscale"
    )

    class Adapts(Named):  # a module that makes its input grayscale itself passes
        def forward(self, x):
            return super().forward(x.mean(1, keepdim=True))

    assert make_tester(Adapts(), (x.expand(-1, 3, -1, -1), y % 2), tmp_path).benchmark.data.images.shape[1] == 3


def test_a_text_query_says_it_measures_the_whole_lattice_first(tmp_path, caplog):
    import testnav

    texts = ["good film", "bad film", "fine", "awful plot"]

    def predict(batch):
        return np.array([[0.2, 0.8] if "good" in t or "fine" in t else [0.8, 0.2] for t in batch])

    t = testnav.Tester(predict, (texts, [1, 0, 1, 0]), families=["typo"], levels=2, cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING):
        t.query("typo >= 3")  # levels=2: the middle of the table, severity 3
        t.query("typo <= 3")
    said = [n for n in notes(caplog) if n.startswith("text: the tomography")]
    assert said == [
        "text: the tomography replays the ground truth, so all 2 configurations are measured first (a live "
        "text tomography is not written yet)"
    ]
