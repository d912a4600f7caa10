"""Object detectors behind one interface: `predict(images) -> [(boxes xyxy, scores, classes)]`.

Images arrive as (B, 3, H, W) floats in [0, 1] at the data set's size; boxes come back in
pixels of those images, classes as 0-based data-set class indices. `run(images)` also
returns one feature vector per image for KID (`feature: model`): the global-average-pooled
feature maps the detection head reads (concatenated over pyramid levels), captured by a hook
during the same forward pass.

`DetectorSpec` builds one from YAML:
* `type: ultralytics`: a YOLO checkpoint (.pt) through the `ultralytics` package, imported
  only then; the paper's model is YOLOv11s fine-tuned on Roboflow's Udacity export;
* `type: torchvision`: `torchvision.models.detection.<arch>(weights=None,
  weights_backbone=None, num_classes=num_classes + 1, **kwargs)` (torchvision reserves label 0
  for the background) with an optional local state-dict checkpoint.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..core.cache import stable_hash
from ..errors import UserError
from .checkpoint import file_digest, load_into

log = logging.getLogger(__name__)


def pooled(out) -> torch.Tensor:
    """Global average pool of a feature map, or of every map in a dict/list, concatenated."""
    if isinstance(out, torch.Tensor):
        return out.float().mean(dim=(-2, -1)) if out.dim() == 4 else out.float().flatten(1)
    maps = list(out.values()) if isinstance(out, dict) else list(out)
    return torch.cat([pooled(m) for m in maps], dim=1)


class TorchvisionDetector(nn.Module):
    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    @torch.no_grad()
    def run(self, images: torch.Tensor):
        captured = []
        hook = self.net.backbone.register_forward_hook(lambda m, i, o: captured.append(pooled(o)))
        try:
            out = self.net(list(images))
        finally:
            hook.remove()
        dets = [(o["boxes"].float(), o["scores"].float(), o["labels"].long() - 1) for o in out]
        return dets, torch.cat(captured)[-len(images) :]

    def predict(self, images):
        return self.run(images)[0]


class UltralyticsDetector(nn.Module):
    """A YOLO .pt checkpoint through ultralytics' own predictor. Each image goes in as the
    uint8 BGR frame ultralytics reads from a file (cv2.imread), so ultralytics letterboxes it
    to `imgsz` and maps the boxes back to the frame's pixels, exactly as `yolo predict` does.

    The `YOLO` wrapper is deliberately not a sub-module: `nn.Module.eval()` calls `train(False)`
    on every child, and `YOLO.train` starts a training run (on coco8, downloading it)."""

    def __init__(self, path, min_score: float = 0.001, iou: float = 0.7, imgsz: int = 640):
        super().__init__()
        from ultralytics import YOLO

        yolo = YOLO(str(path), task="detect")
        self.__dict__["yolo"] = yolo  # outside nn.Module's registry (see above)
        self.net = yolo.model  # the DetectionModel: .eval(), .to() and parameters() reach it
        self.min_score, self.iou, self.imgsz = float(min_score), float(iou), int(imgsz)

    @staticmethod
    def frames(images: torch.Tensor) -> list:
        """(B, 3, H, W) floats in [0, 1] → uint8 HWC BGR arrays, ultralytics' numpy convention."""
        u8 = images.detach().mul(255).round_().clamp_(0, 255).to("cpu", torch.uint8)
        return [np.ascontiguousarray(f.permute(1, 2, 0).numpy()[..., ::-1]) for f in u8]

    def _predict(self, images: torch.Tensor):
        device = "cpu" if images.device.type == "cpu" else str(images.device.index or 0)
        return self.yolo.predict(
            self.frames(images),
            imgsz=self.imgsz,
            conf=self.min_score,
            iou=self.iou,
            device=device,
            verbose=False,
            save=False,
        )

    @torch.no_grad()
    def run(self, images: torch.Tensor):
        if self.yolo.predictor is None:  # the predictor runs its own (fused) copy of the model, made on first use
            self._predict(images[:1])
        captured = []
        head = self.yolo.predictor.model.model.model[-1]  # AutoBackend → DetectionModel → Detect: reads the pyramid
        hook = head.register_forward_pre_hook(lambda m, args: captured.append(pooled(args[0])))
        try:
            results = self._predict(images)
        finally:
            hook.remove()
        dets = [(r.boxes.xyxy.float(), r.boxes.conf.float(), r.boxes.cls.long()) for r in results]
        feats = torch.cat(captured)[-len(images) :] if captured else None
        return dets, feats

    def predict(self, images):
        return self.run(images)[0]


def quiet_ultralytics() -> None:
    """Before ultralytics is first imported: no online checks, no pip installs (its patched
    PIL Image.open installs pi-heif on the first unreadable image, unless YOLO_AUTOINSTALL is
    false), and its settings.json in a throwaway folder rather than the user's ~/.config (a
    run writes nothing outside its run directory)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    if "YOLO_CONFIG_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="testnav-ultralytics-")
        atexit.register(shutil.rmtree, folder, True)
        os.environ["YOLO_CONFIG_DIR"] = folder


class DetectorSpec:
    def __init__(
        self,
        type: str = "ultralytics",
        arch: str = "yolo11s",
        num_classes: int = 11,
        checkpoint: str | None = None,
        kwargs: dict | None = None,
        random_weights: bool = False,
        min_score: float = 0.001,
        seed: int = 0,
        imgsz: int = 640,
    ):
        """min_score: the lowest confidence ultralytics returns (torchvision models keep their own
        box_score_thresh / score_thresh, settable in kwargs); the benchmark's `conf` decides."""
        if type not in ("ultralytics", "torchvision"):
            raise UserError(f"benchmark.model.type={type} (valid: ultralytics, torchvision)")
        self.type, self.arch, self.num_classes, self.checkpoint = type, arch, int(num_classes), checkpoint
        self.kwargs, self.random_weights, self.min_score, self.seed = (
            dict(kwargs or {}),
            bool(random_weights),
            float(min_score),
            int(seed),
        )
        self.imgsz = int(imgsz)  # ultralytics' letterbox size (its predictor's imgsz)

    def build(self) -> nn.Module:
        return (self._ultralytics() if self.type == "ultralytics" else self._torchvision()).eval()

    def _ultralytics(self):
        if not self.checkpoint:
            raise UserError(
                f"model {self.arch} needs a YOLO checkpoint: set ROBOFLOW_YOLO or benchmark.model.checkpoint"
                f"=<path to {self.arch}.pt trained on the Roboflow Udacity export>"
            )
        p = Path(str(self.checkpoint)).expanduser()
        if not p.is_file():
            raise UserError(
                f"checkpoint {p} does not exist: put the YOLO weights (.pt) there or point "
                f"ROBOFLOW_YOLO / benchmark.model.checkpoint at them"
            )
        quiet_ultralytics()
        try:
            import ultralytics  # noqa: F401
        except ImportError:
            raise UserError(
                f"benchmark.model.type=ultralytics needs the ultralytics package: pip install ultralytics "
                f"(weights are read from {p}; nothing is downloaded)"
            ) from None
        return UltralyticsDetector(p, self.min_score, imgsz=self.imgsz)

    def _torchvision(self):
        import torchvision.models.detection as det

        builder = getattr(det, self.arch, None)
        if builder is None or not callable(builder):
            raise UserError(
                f"model.arch={self.arch} is not a torchvision detection model "
                f"(e.g. fasterrcnn_mobilenet_v3_large_320_fpn, ssdlite320_mobilenet_v3_large)"
            )
        if not self.checkpoint and not self.random_weights:
            raise UserError(
                f"model {self.arch} needs weights: set benchmark.model.checkpoint=<path to a .pt/"
                f".safetensors state dict>"
            )
        torch.manual_seed(self.seed)  # random weights are reproducible
        net = builder(weights=None, weights_backbone=None, num_classes=self.num_classes + 1, **self.kwargs)
        if self.checkpoint:
            load_into(net, self.checkpoint)
        else:
            log.warning("detector %s has RANDOM weights (random_weights=true): for tests only", self.arch)
        return TorchvisionDetector(net)

    def key(self) -> str:
        return stable_hash(
            {
                "type": self.type,
                "arch": self.arch,
                "classes": self.num_classes,
                "kwargs": self.kwargs,
                "min_score": self.min_score,
                **({"imgsz": self.imgsz} if self.type == "ultralytics" else {}),
                "weights": file_digest(self.checkpoint) if self.checkpoint else f"random-{self.seed}",
            }
        )
