"""Activations and logits of any `nn.Module`, read by forward hooks.

A user's classifier (a torchvision ResNet, a timm model, their own network) only has to
return logits from `forward`. The feature space that KID, LSA and DSA use, and the layers the
coverage signals monitor, are read on the way by hooks on named modules: by default the input
of the last `nn.Linear` (the penultimate representation, what torchvision's
`create_feature_extractor` on `fc` and timm's `forward_head(pre_logits=True)` return), or the
outputs of the modules named in `layer`. Logits and activations come from one forward pass.

`Monitored` is the contract `View` (testnav/benchmarks/vision.py) relies on for such models;
testnav's own networks (LeNet-5, WRN, CNN-SE) keep their `hidden()` / `classifier` interface.
"""

from __future__ import annotations

import hashlib

import torch
from torch import nn

from ..core.cache import stable_hash
from ..errors import UserError
from .preprocess import Preprocess


class Monitored(nn.Module):
    """A classifier that returns its monitored activations together with its logits."""

    def monitor(self, x: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """([activations (N, d_i) per monitored layer, the last being the feature space], logits (N, K))."""
        raise NotImplementedError


def penultimate(net: nn.Module) -> str:
    """The name of the last `nn.Linear` in module order: its input is the feature space."""
    names = [name for name, m in net.named_modules() if isinstance(m, nn.Linear)]
    if not names:
        raise UserError(
            f"{type(net).__name__} has no nn.Linear head: name the feature layer with "
            f"benchmark.model.layer=<module name> (e.g. one of "
            f"{', '.join(n for n, _ in list(net.named_children())[-3:]) or 'its modules'})"
        )
    return names[-1]


class Hooked(Monitored):
    """`net` behind the model's input pipeline (`prepare`: resize, mean/std), monitored by hooks.

    layer: None (the input of the last nn.Linear), a module name (its output, flattened), or a
    list of module names (the last being the feature space)."""

    def __init__(self, net: nn.Module, prepare=None, layer=None):
        super().__init__()
        self.net = net
        self.pipeline = prepare  # an nn.Module mapping [0, 1] images to the net's input, or None
        modules = dict(net.named_modules())
        if layer is None:
            self.layers, self.input_of = [penultimate(net)], True
        else:
            self.layers = [layer] if isinstance(layer, str) else [str(n) for n in layer]
            self.input_of = False
        for name in self.layers:
            if name not in modules:
                valid = [n for n in modules if n and "." not in n]
                raise UserError(
                    f"benchmark.model.layer={name}: {type(net).__name__} has no such module "
                    f"(top-level modules: {', '.join(valid)})"
                )
        self._modules_by_name = modules

    def prepare(self, x):
        return x if self.pipeline is None else self.pipeline(x)

    def forward(self, x):
        return self.net(self.prepare(x))

    def monitor(self, x):
        seen: dict[str, torch.Tensor] = {}
        handles = []
        for name in self.layers:
            module = self._modules_by_name[name]
            if self.input_of:
                handles.append(
                    module.register_forward_pre_hook(lambda _m, args, name=name: seen.__setitem__(name, args[0]))
                )
            else:
                handles.append(
                    module.register_forward_hook(lambda _m, _args, out, name=name: seen.__setitem__(name, out))
                )
        try:
            logits = self.forward(x)
        finally:
            for h in handles:
                h.remove()
        if isinstance(logits, (tuple, list)):
            logits = logits[0]
        elif hasattr(logits, "logits"):  # a ModelOutput
            logits = logits.logits
        return [seen[n].flatten(1) for n in self.layers], logits


def weights_digest(module: nn.Module) -> str:
    """Identifies a model by its weights (every parameter and buffer: name, dtype, shape and bytes),
    so a ground truth is never served for other weights under the same name."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        t = t.detach().cpu().contiguous().reshape(-1)
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:16]


class GivenModel:
    """A model spec around a module already in memory (the Python entry point): `build()` returns
    it monitored, `key()` hashes its weights and its input pipeline."""

    def __init__(self, module: nn.Module, mean=None, std=None, input_size=None, interpolation="bilinear", layer=None):
        self.module, self.layer = module, layer
        self.mean, self.std, self.input_size, self.interpolation = mean, std, input_size, interpolation

    def build(self) -> nn.Module:
        if getattr(self.module, "training", False):
            from ..errors import note

            note(
                f"{type(self.module).__name__} was in training mode: testnav switched it to eval mode "
                "(dropout off, batch-norm statistics frozen)"
            )

        if isinstance(self.module, Monitored) and self.layer is None and self.mean is None and self.input_size is None:
            return self.module.eval()
        pipeline = None
        if self.mean is not None or self.input_size is not None:
            pipeline = Preprocess(
                self.mean or (0.0, 0.0, 0.0), self.std or (1.0, 1.0, 1.0), self.input_size, self.interpolation
            )
        return Hooked(self.module, pipeline, self.layer).eval()

    def code_parts(self) -> list:
        """What computes its outputs, for the ground-truth key: the wrapper and the module itself."""
        return [self, self.module]

    def key(self) -> str:
        return stable_hash(
            {
                "weights": weights_digest(self.module),
                "class": type(self.module).__qualname__,
                "mean": self.mean,
                "std": self.std,
                "input_size": self.input_size,
                "interpolation": self.interpolation,
                "layer": self.layer,
            }
        )


_TWINS: dict = {}  # id(model) → (weakref to the model, its parameters' versions, the float64 copy)


def float64_twin(model: nn.Module) -> nn.Module:
    """A float64 copy of `model` (made once per model, and again if its weights change), for
    the activations that the coverage signals bin: float32 kernels round differently on other
    CPUs (AVX-512 against AVX2, another oneDNN path), by up to 1e-5 on LeNet-5's hidden layers,
    which moves a value across one of KMNC's section edges; float64 rounding is 2⁻²⁹ of that."""
    import copy
    import weakref

    version = tuple(int(t._version) for t in [*model.parameters(), *model.buffers()])
    held = _TWINS.get(id(model))
    if held is not None and held[0]() is model and held[1] == version:
        return held[2]
    from .float64 import fuse

    twin = fuse(copy.deepcopy(model).double().eval())  # conv → ReLU → pool runs as one compiled loop
    key = id(model)
    _TWINS[key] = (weakref.ref(model, lambda _r: _TWINS.pop(key, None)), version, twin)
    return twin


def float64_layers(model: nn.Module, images, batch_size: int) -> list[torch.Tensor]:
    """The monitored layers of `model` (`monitor` of a `Monitored` model, else `hidden`) on
    `images` (one tensor, or a list of stacked sets), computed in float64 from the images."""
    twin = float64_twin(model)
    parts = list(images) if isinstance(images, (list, tuple)) else [images]
    chunks = []
    with torch.inference_mode():
        for x in parts:
            for i in range(0, len(x), batch_size):
                batch = x[i : i + batch_size].double()
                chunks.append(twin.monitor(batch)[0] if isinstance(twin, Monitored) else twin.hidden(batch))
    return [torch.cat(layer) for layer in zip(*chunks)]
