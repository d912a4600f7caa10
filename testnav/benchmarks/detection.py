"""Object detection under DeepTest transformations: TestifAI's driving benchmark `roboflow`
(YOLOv11s on 1,000 images of Roboflow's Udacity self-driving-car export).

Correctness of one image (the per-input outcome TestifAI needs, and ψ = its mean over D):
predictions with confidence ≥ `conf` (0.25) are matched greedily, in decreasing confidence,
each to the still-unmatched ground-truth box of the *same class* with the highest IoU
(torchvision.ops.box_iou), provided that IoU ≥ `iou` (0.5). The image is correct iff every
ground-truth box is matched and no confident prediction is left unmatched: a miss, a wrong
class, a badly placed box or an extra confident box each make it incorrect. An image without
objects is correct iff nothing is predicted with confidence ≥ `conf`.

Geometric families move the objects, so the ground truth of a perturbed image is the original
boxes mapped through the configuration θ: every family's `map_boxes(boxes, level, size)` in
the order the families are applied. Photometric families leave the boxes where they are; the
geometric ones (`moves_content`: DeepTestTranslate, DeepTestScale) move them, and boxes that
leave the frame are dropped (testnav.families.boxes). A family that moves content without its
own `map_boxes` (affine scale, shear) is refused. `score` therefore takes θ (the harness passes it; no θ means the clean set).

Fidelity: SSIM on the images, and KID on the detector's own features (`feature: model`): the
global-average-pooled maps its detection head reads (testnav.models.detector). No input-level
signals (they are defined for classifiers).

`psi: map50` reports ψ as torchmetrics' MeanAveragePrecision at IoU 0.5 (COCO's 101-point
interpolation, every prediction down to the detector's min_score) instead of the share of
correct images; the per-input outcomes stay the rule above, since tomography needs one per
image. docs/paper-benchmarks.md says which of the two the paper's 82.2 % most likely is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch
from torchvision.ops import box_iou

from ..core.cache import stable_hash
from ..errors import UserError
from ..families import Family
from .base import Benchmark
from .vision import Loaded, VisionBenchmark


@dataclass
class DetectionLoaded(Loaded):
    boxes: list = field(default_factory=list)  # per image: (K, 5) float array (class, x1, y1, x2, y2) in pixels


def image_correct(gt, boxes, scores, classes, conf: float = 0.25, iou: float = 0.5) -> bool:
    """The correctness rule above for one image. gt: (K, 5) (class, x1, y1, x2, y2);
    boxes (M, 4) xyxy, scores (M,), classes (M,) of the predictions."""
    gt = torch.as_tensor(np.asarray(gt, dtype=np.float64).reshape(-1, 5), dtype=torch.float64)
    boxes = torch.as_tensor(boxes).detach().to("cpu", torch.float64).reshape(-1, 4)
    scores = torch.as_tensor(scores).detach().to("cpu", torch.float64).reshape(-1)
    classes = torch.as_tensor(classes).detach().to("cpu").long().reshape(-1)
    keep = scores >= conf
    boxes, scores, classes = boxes[keep], scores[keep], classes[keep]
    if len(boxes) != len(gt):  # every prediction must match a distinct box and vice versa
        return False
    if len(gt) == 0:
        return True
    ious = box_iou(boxes, gt[:, 1:])
    ious[classes[:, None] != gt[None, :, 0].long()] = -1.0
    free = torch.ones(len(gt), dtype=torch.bool)
    for p in torch.argsort(scores, descending=True, stable=True).tolist():
        row = torch.where(free, ious[p], torch.full_like(ious[p], -1.0))
        j = int(row.argmax())
        if row[j] < iou:
            return False
        free[j] = False
    return True


class DetectionView:
    """One image set as the metrics see it: detections and detector features from one pass."""

    sets = 1  # never stacked: each set has its own boxes (ObjectDetection.score_sets)

    def __init__(self, images: torch.Tensor, model, batch_size: int):
        self.images, self.model, self.batch_size = images, model, batch_size

    @cached_property
    def _outputs(self):
        dets, feats = [], []
        with torch.inference_mode():
            for i in range(0, len(self.images), self.batch_size):
                d, f = self.model.run(self.images[i : i + self.batch_size])
                dets += d
                feats.append(f)
        return dets, (torch.cat(feats).float() if feats and all(f is not None for f in feats) else None)

    @property
    def parts(self) -> list[torch.Tensor]:
        return [self.images]

    @property
    def detections(self):
        return self._outputs[0]

    @property
    def features(self) -> torch.Tensor:
        f = self._outputs[1]
        if f is None:
            raise UserError("this detector exposes no features: drop benchmark.metrics.kid (keep ssim)")
        return f


PSI = ("images_correct", "map50")


def map50(gt: list, detections: list) -> float:
    """mAP at IoU 0.5 over a set of images (torchmetrics, COCO's protocol)."""
    from torchmetrics.detection import MeanAveragePrecision

    metric = MeanAveragePrecision(iou_thresholds=[0.5], backend="pycocotools")
    preds = [
        {
            "boxes": b.detach().cpu().float().reshape(-1, 4),
            "scores": sc.detach().cpu().float().reshape(-1),
            "labels": c.detach().cpu().long().reshape(-1),
        }
        for b, sc, c in detections
    ]
    target = [
        {
            "boxes": torch.as_tensor(np.asarray(g, dtype=np.float32).reshape(-1, 5)[:, 1:]),
            "labels": torch.as_tensor(np.asarray(g).reshape(-1, 5)[:, 0], dtype=torch.int64),
        }
        for g in gt
    ]
    metric.update(preds, target)
    return max(float(metric.compute()["map_50"]), 0.0)  # -1 when D holds no box at all


class ObjectDetection(VisionBenchmark):
    def __init__(
        self,
        name,
        families,
        levels,
        data,
        model,
        metrics=None,
        signals=None,
        conf=0.25,
        iou=0.5,
        min_box_size=1.0,
        perturb_seed=0,
        batch_size=16,
        amp=False,
        psi="images_correct",
    ):
        if signals:
            raise UserError(
                f"benchmark {name}: input-level signals are defined for classifiers, not detectors "
                f"(drop benchmark.signals)"
            )
        super().__init__(name, families, levels, metrics, None, perturb_seed, batch_size, amp)
        self.data, self.model_spec = data, model
        self.conf, self.iou, self.min_box_size = float(conf), float(iou), float(min_box_size)
        if psi not in PSI:
            raise UserError(f"benchmark.psi={psi} (valid: {', '.join(PSI)})")
        self.psi = psi
        for fam in self.families:
            if fam.moves_content and type(fam).map_boxes is Family.map_boxes:
                raise UserError(
                    f"family {fam.name} ({type(fam).__name__}) moves objects but has no map_boxes: "
                    f"detection ground truth needs one"
                )

    def data_description(self) -> dict:
        return {
            "test": self.data.describe(),
            "conf": self.conf,
            "iou": self.iou,
            "min_box_size": self.min_box_size,
            **({"psi": self.psi} if self.psi != "images_correct" else {}),
        }

    def code_parts(self, signals: bool = True) -> list:
        return [*super().code_parts(signals), self.data, self.model_spec]

    def load(self, cache_dir) -> DetectionLoaded:
        x, boxes = self.data.load()
        model = self.model_spec.build()
        return DetectionLoaded(
            inputs=x, labels=torch.arange(len(x)), model=model, model_key=self.model_spec.key(), boxes=boxes
        )

    def view(self, loaded, perturbed) -> DetectionView:
        return DetectionView(perturbed, loaded.model, self.batch_size)

    def prepare_metrics(self, loaded) -> None:
        clean = self.view(loaded, loaded.inputs)
        for m in self.metrics.values():
            m.prepare(clean)

    def ground_truth(self, loaded, theta=None) -> list[np.ndarray]:
        """The boxes of every image after configuration θ (original boxes when θ is None)."""
        size = tuple(loaded.inputs.shape[-2:])
        out = []
        for b in loaded.boxes:
            for fam, level in zip(self.families, theta or ()):
                if int(level) > 0:
                    b = fam.map_boxes(b, int(level), size, self.min_box_size)
            out.append(b)
        return out

    score_sets = Benchmark.score_sets  # one set at a time: the true boxes move with θ

    def score(self, loaded, perturbed: torch.Tensor, theta=None) -> dict:
        view = self.view(loaded, perturbed)
        gt = self.ground_truth(loaded, theta)
        correct = np.array(
            [image_correct(g, *d, conf=self.conf, iou=self.iou) for g, d in zip(gt, view.detections)], dtype=bool
        )
        psi = map50(gt, view.detections) if self.psi == "map50" else float(correct.mean())
        out = {"psi": psi, "correct": correct}
        for name, metric in self.metrics.items():
            out[name] = metric(view)
        return out

    def __repr__(self):
        return f"ObjectDetection({self.name}, {stable_hash(self.data_description(), 8)})"
