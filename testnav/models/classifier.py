"""Any image classifier behind the interface the ground truth needs: monitored activations
(the last being the feature space) and logits. testnav's own nets expose `hidden(x)` and
`classifier(features)`, timm's `forward_features` / `forward_head`; any other `nn.Module` is
read by forward hooks (`Hooked`, testnav/models/monitor.py).

`ModelSpec` builds one from YAML: an architecture (a timm model name, or a class path such
as testnav.models.wrn.WideResNet) and a local checkpoint. Inputs arrive in [0, 1] at the
data set's size (perturbations act on the data as stored, e.g. 64-px Tiny-ImageNet); the
wrapper then applies the model's own input pipeline (`prepare`): the resize its publisher
evaluates with, then the mean and std. docs/paper-benchmarks.md gives each benchmark's.
"""

from __future__ import annotations

import importlib
import logging

from torch import nn

from ..core.cache import stable_hash
from ..errors import UserError
from .checkpoint import file_digest, load_into
from .monitor import Hooked
from .preprocess import Preprocess

log = logging.getLogger(__name__)


class Classifier(nn.Module):
    """A net with testnav's own interface (`hidden()`, `classifier`) or a timm model
    (`forward_features`, `forward_head`) behind its input pipeline (`Preprocess`)."""

    def __init__(
        self, net: nn.Module, mean, std, input_size=None, interpolation: str = "bilinear", uint8: bool = False
    ):
        super().__init__()
        self.net = net
        self.prepare = Preprocess(mean, std, input_size, interpolation, uint8)

    def hidden(self, x):
        net = self.net
        if hasattr(net, "forward_features") and hasattr(net, "forward_head"):  # timm
            return [net.forward_head(net.forward_features(self.prepare(x)), pre_logits=True)]
        return net.hidden(self.prepare(x))

    @property
    def classifier(self):
        return self.net.get_classifier() if hasattr(self.net, "get_classifier") else self.net.classifier

    def forward(self, x):
        return self.classifier(self.hidden(x)[-1])


class ModelSpec:
    """arch: a timm model name, or a dotted path to a class or builder called with num_classes
    (testnav.models.wrn.WideResNet, torchvision.models.resnet18, your own module); checkpoint:
    local weights (required unless random_weights, which only tests use). layer: where the
    features are read (testnav/models/monitor.py): null takes the net's own `hidden()` or timm's
    pre-logits when it has them, else the input of its last nn.Linear; a module name (or a list)
    reads that module's output by a forward hook."""

    def __init__(
        self,
        arch: str,
        num_classes: int,
        checkpoint: str | None = None,
        input_size=None,
        mean=(0.5, 0.5, 0.5),
        std=(0.5, 0.5, 0.5),
        kwargs: dict | None = None,
        random_weights: bool = False,
        interpolation: str = "bilinear",
        uint8: bool = False,
        trust_pickle: bool = False,
        layer=None,
    ):
        self.layer = layer if layer is None or isinstance(layer, str) else [str(n) for n in layer]
        if num_classes is None:
            raise UserError(f"benchmark.model.num_classes is not set: give the number of classes {arch} predicts")
        self.arch, self.num_classes, self.checkpoint = arch, int(num_classes), checkpoint
        self.input_size = (
            None
            if input_size is None
            else tuple(input_size)
            if not isinstance(input_size, int)
            else (input_size, input_size)
        )
        self.mean, self.std, self.kwargs, self.random_weights = (
            list(mean),
            list(std),
            dict(kwargs or {}),
            random_weights,
        )
        self.interpolation, self.uint8, self.trust_pickle = interpolation, bool(uint8), bool(trust_pickle)

    def build(self) -> nn.Module:
        if "." in self.arch:
            module, _, cls = self.arch.rpartition(".")
            try:
                builder = getattr(importlib.import_module(module), cls)
            except (ImportError, AttributeError) as e:
                raise UserError(f"model.arch={self.arch}: no such class ({e})") from None
            try:
                net = builder(num_classes=self.num_classes, **self.kwargs)
            except TypeError as e:
                raise UserError(
                    f"model.arch={self.arch} cannot be built with num_classes={self.num_classes} and "
                    f"benchmark.model.kwargs={self.kwargs} ({e})"
                ) from None
        else:
            import timm

            if not timm.is_model(self.arch):
                raise UserError(
                    f"model.arch={self.arch} is not a timm model (e.g. cait_s36_384, resnet18) "
                    f"nor a class path (e.g. testnav.models.wrn.WideResNet)"
                )
            net = timm.create_model(self.arch, pretrained=False, num_classes=self.num_classes, **self.kwargs)
        if self.checkpoint:
            load_into(net, self.checkpoint, trust_pickle=self.trust_pickle)
        elif not self.random_weights:
            raise UserError(
                f"model {self.arch} needs weights: set benchmark.model.checkpoint=<path to a .safetensors/"
                f".pt state dict or a Hugging Face snapshot directory>"
            )
        else:
            log.warning("model %s has RANDOM weights (random_weights=true): for tests only", self.arch)
        own = hasattr(net, "hidden") or (hasattr(net, "forward_features") and hasattr(net, "forward_head"))
        if own and self.layer is None:
            return Classifier(net, self.mean, self.std, self.input_size, self.interpolation, self.uint8).eval()
        pipeline = Preprocess(self.mean, self.std, self.input_size, self.interpolation, self.uint8)
        return Hooked(net, pipeline, self.layer).eval()

    def code_parts(self) -> list:
        """What computes its outputs, for the ground-truth key: this spec, and the module of an
        architecture given as a class path into this package (its code is the model)."""
        own = [self.arch.rpartition(".")[0]] if self.arch.startswith("testnav.") else []
        return [self, *own]

    def key(self) -> str:
        return stable_hash(
            {
                "arch": self.arch,
                "classes": self.num_classes,
                "input_size": self.input_size,
                "mean": self.mean,
                "std": self.std,
                "kwargs": self.kwargs,
                **(
                    {"interpolation": self.interpolation, "uint8": self.uint8}
                    if (self.interpolation, self.uint8) != ("bilinear", False)
                    else {}
                ),
                **({"layer": self.layer} if self.layer is not None else {}),
                "weights": file_digest(self.checkpoint) if self.checkpoint else "random",
            }
        )
