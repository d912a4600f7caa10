"""The roboflow detection benchmark: box maps of the geometric DeepTest families, the per-image
correctness rule, the YOLO-folder reader, and `stage=groundtruth` end to end on synthetic files
with a random-weights torchvision detector."""

import numpy as np
import pytest
import torch
from PIL import Image

from testnav.benchmarks.detection import image_correct
from testnav.families.deeptest_scale import DeepTestScale
from testnav.families.deeptest_translate import DeepTestTranslate

BOXES = np.array([[0, 10, 10, 20, 30], [1, 40, 5, 60, 15]], dtype=float)  # (class, x1, y1, x2, y2)


def test_translate_shifts_clips_and_drops_boxes():
    fam = DeepTestTranslate([[5, 10], [30, 30]])
    assert np.array_equal(fam.map_boxes(BOXES, 0, (64, 64)), BOXES)
    np.testing.assert_allclose(fam.map_boxes(BOXES, 1, (64, 64)), [[0, 15, 20, 25, 40], [1, 45, 15, 64, 25]])
    np.testing.assert_allclose(fam.map_boxes(BOXES, 2, (64, 64)), [[0, 40, 40, 50, 60]])  # class 1 left the frame
    half = DeepTestTranslate([[10, 10]], frame_size=[128, 128])  # offsets given on a 128-px frame
    np.testing.assert_allclose(half.map_boxes(BOXES[:1], 1, (64, 64)), [[0, 15, 15, 25, 35]])


def test_translated_box_follows_the_pixels():
    x = torch.zeros(1, 3, 64, 64)
    x[..., 10:30, 10:20] = 1.0  # a white object where BOXES[0] is
    fam = DeepTestTranslate([[7, 3]])
    y = fam(x, 1)[0, 0]
    _, x1, y1, x2, y2 = fam.map_boxes(BOXES[:1], 1, (64, 64))[0].astype(int)
    assert y[y1:y2, x1:x2].min() == 1.0 and y.sum() == (x2 - x1) * (y2 - y1)


def test_scale_zooms_about_the_centre():
    fam = DeepTestScale([[2.0, 2.0], [6.0, 6.0]])
    centre = np.array([[2, 24, 24, 40, 40]], dtype=float)
    np.testing.assert_allclose(fam.map_boxes(centre, 1, (64, 64)), [[2, 16, 16, 48, 48]])  # u·2 − 32
    np.testing.assert_allclose(fam.map_boxes(BOXES, 1, (64, 64)), [[0, 0, 0, 8, 28]])  # class 1 zoomed out
    assert len(fam.map_boxes(BOXES, 2, (64, 64))) == 0  # zoomed out of the frame
    np.testing.assert_allclose(fam.map_boxes(centre, 2, (64, 64)), [[2, 0, 0, 64, 64]])


def test_scaled_box_follows_the_pixels():
    x = torch.zeros(1, 1, 64, 64)
    x[..., 24:40, 28:36] = 1.0
    fam = DeepTestScale([[2.0, 2.0]])
    y = fam(x, 1)[0, 0]
    _, x1, y1, x2, y2 = fam.map_boxes([[0, 28, 24, 36, 40]], 1, (64, 64))[0]
    ys, xs = torch.nonzero(y > 0.5, as_tuple=True)
    assert (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1) == (x1, y1, x2, y2)


GT = np.array([[0, 10, 10, 30, 30], [2, 40, 40, 60, 60]], dtype=float)


def preds(*rows):
    """rows of (x1, y1, x2, y2, score, class)"""
    a = torch.tensor(rows, dtype=torch.float32).reshape(-1, 6)
    return a[:, :4], a[:, 4], a[:, 5].long()


@pytest.mark.parametrize(
    "rows, correct",
    [
        ([(11, 10, 30, 31, 0.9, 0), (40, 41, 60, 60, 0.8, 2)], True),  # all matched
        ([(11, 10, 30, 31, 0.9, 0), (40, 41, 60, 60, 0.8, 2), (0, 0, 5, 5, 0.1, 1)], True),  # extra box below conf
        ([(11, 10, 30, 31, 0.9, 0)], False),  # a miss
        ([(11, 10, 30, 31, 0.9, 0), (40, 41, 60, 60, 0.8, 2), (0, 0, 5, 5, 0.3, 1)], False),  # an extra confident box
        ([(11, 10, 30, 31, 0.9, 0), (40, 41, 60, 60, 0.8, 2), (12, 10, 30, 30, 0.7, 0)], False),  # a duplicate
        ([(11, 10, 30, 31, 0.9, 1), (40, 41, 60, 60, 0.8, 2)], False),  # wrong class
        ([(20, 20, 40, 40, 0.9, 0), (40, 41, 60, 60, 0.8, 2)], False),  # IoU < 0.5
        ([(11, 10, 30, 31, 0.2, 0), (40, 41, 60, 60, 0.8, 2)], False),  # the match is not confident
    ],
)
def test_correctness_rule(rows, correct):
    assert image_correct(GT, *preds(*rows)) is correct


def test_empty_image_is_correct_iff_nothing_confident():
    assert image_correct(np.zeros((0, 5)), *preds((0, 0, 5, 5, 0.2, 1)))
    assert not image_correct(np.zeros((0, 5)), *preds((0, 0, 5, 5, 0.5, 1)))


def test_greedy_matching_uses_the_best_free_box():
    gt = np.array([[0, 0, 0, 20, 20], [0, 10, 0, 30, 20]], dtype=float)
    assert image_correct(gt, *preds((10, 0, 30, 20, 0.9, 0), (0, 0, 20, 20, 0.8, 0)))


def write_roboflow(root, n=6, size=80):
    """A Roboflow YOLO export in miniature: coloured rectangles on a smooth background,
    every other image without objects."""
    rng = np.random.default_rng(0)
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for i in range(n):
        img = np.kron(rng.random((4, 4, 3)), np.ones((size // 4, size // 4, 1))) * 120
        lines = []
        if i % 2:
            for c, (x1, y1, x2, y2) in enumerate([(8, 8, 30, 40), (44, 20, 70, 50)]):
                img[y1:y2, x1:x2] = 255 * np.eye(3)[c]
                lines.append(f"{c} {(x1 + x2) / 2 / size} {(y1 + y2) / 2 / size} {(x2 - x1) / size} {(y2 - y1) / size}")
        Image.fromarray(img.astype(np.uint8)).save(root / "images" / f"frame_{i}.jpg", quality=95)
        (root / "labels" / f"frame_{i}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


def test_yolo_folder_reads_resized_pixel_boxes(tmp_path):
    from testnav.data.yolo_folder import YoloFolder

    write_roboflow(tmp_path)
    x, boxes = YoloFolder(tmp_path, n=4, image_size=64).load()
    assert x.shape == (4, 3, 64, 64) and 0 <= x.min() and x.max() <= 1 and len(boxes) == 4
    all_boxes = np.concatenate(boxes)
    np.testing.assert_allclose(all_boxes[:2], [[0, 6.4, 6.4, 24, 32], [1, 35.2, 16, 56, 40]])


DETECTOR = [
    "benchmark.model.type=torchvision",
    "benchmark.model.arch=fasterrcnn_mobilenet_v3_large_320_fpn",
    "benchmark.model.random_weights=true",
    "+benchmark.model.kwargs.min_size=64",
    "+benchmark.model.kwargs.max_size=64",
    "+benchmark.model.kwargs.rpn_pre_nms_top_n_test=50",
    "+benchmark.model.kwargs.rpn_post_nms_top_n_test=20",
    "benchmark.metrics.kid.subsets=2",
]


def test_missing_data_says_what_to_put_where(tmp_path):
    """In process (the CLI prints a UserError as one line: test_benchmarks checks that path)."""
    from testnav.data.yolo_folder import YoloFolder
    from testnav.errors import UserError

    with pytest.raises(UserError, match="nowhere holds no images/ and labels/ folders: put a Roboflow YOLO export"):
        YoloFolder(tmp_path / "nowhere").load()
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    with pytest.raises(UserError, match="holds no .jpg/.png images"):
        YoloFolder(tmp_path).load()


def test_missing_weights_are_named(tmp_path):
    from testnav.errors import UserError
    from testnav.models.detector import DetectorSpec

    with pytest.raises(UserError, match=f"checkpoint {tmp_path}/yolo11s.pt does not exist"):
        DetectorSpec("ultralytics", checkpoint=str(tmp_path / "yolo11s.pt")).build()
    with pytest.raises(UserError, match="set ROBOFLOW_YOLO or benchmark.model.checkpoint"):
        DetectorSpec("ultralytics").build()
    with pytest.raises(UserError, match="needs weights"):
        DetectorSpec("torchvision", "ssdlite320_mobilenet_v3_large").build()
    with pytest.raises(UserError, match="not a torchvision detection model"):
        DetectorSpec("torchvision", "yolo11s", random_weights=True).build()


def test_ultralytics_missing_package_says_pip_install(tmp_path, monkeypatch):
    import sys

    from testnav.errors import UserError
    from testnav.models.detector import DetectorSpec

    (tmp_path / "yolo11s.pt").write_bytes(b"x")
    monkeypatch.setitem(sys.modules, "ultralytics", None)  # as if not installed
    with pytest.raises(UserError, match="pip install ultralytics"):
        DetectorSpec("ultralytics", checkpoint=str(tmp_path / "yolo11s.pt")).build()
