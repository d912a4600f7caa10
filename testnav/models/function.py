"""A model given as a prediction function: `predict(batch) -> logits or probabilities`.

Whatever computes the outputs (scikit-learn, an ONNX Runtime session, TensorFlow, a remote service)
is tested through one function, as Giskard and CheckList do:

* images: `predict` receives a float32 numpy array of a batch in [0, 1], laid out NCHW (N, C, H, W,
  as testnav holds images) or NHWC (`layout="NHWC"`, as Keras and most image services take them),
  or the torch tensor itself (`array="torch"`);
* text: `predict` receives a list of strings, or for sentence pairs a list of (text_a, text_b) tuples;
* it returns (N, classes) logits or probabilities, as anything numpy can read. Rows that are
  non-negative and sum to 1 are read as probabilities (`output="auto"`; or say `"logits"` or
  `"probabilities"`); their logarithm is used as logits, so the softmax gives them back.

A function shows its outputs, not its features: SSIM, chrF, BERT-F1 and DeepGini apply as they are;
KID reads a fixed feature extractor instead of the model's (16 × 16 area-averaged pixels,
`kid.feature=pixels`); the coverage and surprise signals (NAC, SNAC, KMNC, TKNC, LSA, DSA) need the
model's activations and are refused. `without_features` makes that change and says so in one line.

The ground-truth key identifies a function by its qualified name, its source code, an optional
`key` the caller gives (a version of the weights behind it) and a fingerprint of its outputs on the
first inputs of D, so that a retrained model behind the same function gets a new table.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..core.cache import stable_hash
from ..errors import UserError
from .monitor import Monitored

log = logging.getLogger(__name__)

LAYOUTS = ("NCHW", "NHWC")
OUTPUTS = ("auto", "logits", "probabilities")
ARRAYS = ("numpy", "torch")
PROBE = 64  # inputs of D whose outputs fingerprint the function for the ground-truth key


def resolve(predict, what: str = "benchmark.model.predict"):
    """A callable, or one named in YAML: `package.module.function`, `package.module:function` or
    `path/to/file.py:function` (a file path relative to the folder the command runs in)."""
    if callable(predict):
        return predict
    if not isinstance(predict, str) or not predict:
        raise UserError(f"{what}={predict!r}: give a function, or its name as module.function or file.py:function")
    where, sep, name = predict.rpartition(":") if ":" in predict else predict.rpartition(".")
    if not where or not name:
        raise UserError(f"{what}={predict}: give module.function, module:function or path/to/file.py:function")
    try:
        if where.endswith(".py"):
            path = Path(where).expanduser().resolve()
            if not path.is_file():
                raise UserError(f"{what}={predict}: no such file {path}")
            spec = importlib.util.spec_from_file_location(f"testnav_user_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            module = _import(where)
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"{what}={predict}: cannot import {where} ({type(e).__name__}: {e})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UserError(f"{what}={predict}: {where} has no function {name}")
    return fn


def _import(module: str):
    """A module by name, also from the folder the command runs in (a console script's sys.path
    does not hold it)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module.split(".")[0] or str(Path.cwd()) in sys.path:
            raise
        sys.path.insert(0, str(Path.cwd()))
        return importlib.import_module(module)


def function_name(fn) -> str:
    return f"{getattr(fn, '__module__', None) or type(fn).__module__}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def source_digest(fn) -> str | None:
    try:
        return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        return None  # a builtin, a C extension's callable, a lambda typed at a prompt


def as_logits(out, output: str, n: int) -> torch.Tensor:
    """(N, K) float64 logits from what a function returned."""
    try:
        z = torch.as_tensor(np.asarray(out.detach().cpu() if isinstance(out, torch.Tensor) else out, dtype=np.float64))
    except (TypeError, ValueError) as e:
        raise UserError(
            f"the prediction function returned {type(out).__name__}, not an array of scores ({e})"
        ) from None
    indices = z.numel() == n and bool((z == z.round()).all()) and bool((z >= 0).all())
    if indices and (z.dim() == 1 or (z.dim() == 2 and z.shape[1] == 1)):
        raise UserError(
            f"the prediction function returned shape {tuple(z.shape)} of whole numbers for {n} inputs: class "
            "indices, it seems (as predict() gives); return one score per class, shape (N, classes), e.g. "
            "predict_proba()"
        )
    if z.dim() != 2 or len(z) != n:
        raise UserError(
            f"the prediction function returned shape {tuple(z.shape)} for {n} inputs "
            f"(expected (N, classes): logits or probabilities)"
        )
    if z.shape[1] == 1:
        raise UserError(
            f"the prediction function returned shape {tuple(z.shape)}: one score per input; return one per "
            "class, shape (N, classes) (for a binary classifier both columns, e.g. predict_proba())"
        )
    probabilities = output == "probabilities" or (
        output == "auto" and bool((z >= 0).all()) and torch.allclose(z.sum(1), torch.ones(n, dtype=z.dtype), atol=1e-4)
    )
    return torch.log(z.clamp_min(1e-300)) if probabilities else z


class Predicting(Monitored):
    """A prediction function behind the interface every image benchmark reads: logits, no layers."""

    has_features = False

    def __init__(self, predict, layout: str = "NCHW", output: str = "auto", array: str = "numpy"):
        super().__init__()
        self.predict, self.layout, self.output, self.array = predict, layout, output, array

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch = x.float()
        if self.layout == "NHWC":
            batch = batch.permute(0, 2, 3, 1)
        batch = batch.detach().cpu().contiguous()
        try:
            out = self.predict(batch.numpy() if self.array == "numpy" else batch)
        except Exception as e:  # the user's code: say what it was given, in one line; its traceback chained
            raise UserError(
                f"the prediction function raised {type(e).__name__} on a batch of shape {tuple(batch.shape)} "
                f"({self.layout}, float32 in [0, 1]): {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")
            ) from e
        return as_logits(out, self.output, len(x)).to(device=x.device, dtype=torch.float32)

    def monitor(self, x):
        return [], self.forward(x)


class FunctionModel:
    """A model spec around a prediction function (testnav.Tester, or a benchmark YAML's `model:` with
    `_target_: testnav.models.function.FunctionModel` and `predict: module.function`)."""

    features = False  # what the benchmark adapts its metrics and signals to (without_features)

    def __init__(self, predict, layout: str = "NCHW", output: str = "auto", array: str = "numpy", key=None):
        for name, value, valid in (("layout", layout, LAYOUTS), ("output", output, OUTPUTS), ("array", array, ARRAYS)):
            if value not in valid:
                raise UserError(f"benchmark.model.{name}={value} (valid: {', '.join(valid)})")
        self.predict = resolve(predict)
        self.layout, self.output, self.array, self.user_key = layout, output, array, key

    def build(self) -> Predicting:
        return Predicting(self.predict, self.layout, self.output, self.array)

    def code_parts(self) -> list:
        return [self]

    def key(self) -> str:
        return self.key_of(None, None)

    def key_of(self, inputs, model) -> str:
        """Name, source, the caller's key, and the outputs on the first inputs of D (when given)."""
        outputs = None
        if inputs is not None and model is not None and len(inputs):
            with torch.inference_mode():
                z = model(inputs[:PROBE])
            outputs = hashlib.sha256(np.round(z.double().cpu().numpy(), 5).tobytes()).hexdigest()[:16]
        return stable_hash(
            {
                "function": function_name(self.predict),
                "source": source_digest(self.predict),
                "key": self.user_key,
                "layout": self.layout,
                "output": self.output,
                "outputs": outputs,
            }
        )


class PredictingText:
    """A prediction function for text behind the interface TextClassification reads."""

    config = None  # no label2id: labels are class indices
    tokenizer = None

    def __init__(self, predict, output: str = "auto"):
        self.predict, self.output = predict, output

    def eval(self):
        return self

    def scores(self, items: list[tuple[str, ...]]) -> torch.Tensor:
        """(N, K) logits of sentences (1-tuples) or pairs (2-tuples)."""
        batch = [i[0] for i in items] if all(len(i) == 1 for i in items) else [tuple(i) for i in items]
        return as_logits(self.predict(batch), self.output, len(items))


class FunctionTextModel:
    """A text model spec around `predict(list of str, or of (text_a, text_b)) -> logits or probabilities`."""

    features = False

    def __init__(self, predict, output: str = "auto", key=None):
        if output not in OUTPUTS:
            raise UserError(f"benchmark.model.output={output} (valid: {', '.join(OUTPUTS)})")
        self.predict, self.output, self.user_key = resolve(predict), output, key

    def build(self):
        model = PredictingText(self.predict, self.output)
        return model, None, None  # the key needs the texts: key_of

    def key_of(self, items, model) -> str:
        z = model.scores(list(items[:PROBE])) if items else None
        outputs = None if z is None else hashlib.sha256(np.round(z.numpy(), 5).tobytes()).hexdigest()[:16]
        return stable_hash(
            {
                "function": function_name(self.predict),
                "source": source_digest(self.predict),
                "key": self.user_key,
                "output": self.output,
                "outputs": outputs,
            }
        )


def without_features(name: str, metrics: dict, signals: dict) -> tuple[dict, dict]:
    """A benchmark's metrics and signals for a model that shows no features: KID on the fixed pixel
    extractor (one line says so), the signals that need activations refused."""
    refused = sorted(n for n, s in signals.items() if getattr(s, "needs_features", True))
    if refused:
        kept = sorted(n for n in signals if n not in refused)
        raise UserError(
            f"benchmark {name}: the signals {', '.join(refused)} need the model's activations, which a "
            f"prediction function does not show (valid for it: {', '.join(kept) or 'deepgini'})"
        )
    out, swapped = {}, []
    for column, metric in metrics.items():
        if getattr(metric, "needs_features", False):
            metric = copy.copy(metric)
            metric.feature = "pixels"
            swapped.append(column)
        out[column] = metric
    if swapped:  # a change to what was asked for; the signals nobody asked for go unmentioned
        log.warning(
            "%s: the model is a prediction function (no features): %s on 16×16 pixels instead of the model's features",
            name,
            ", ".join(swapped),
        )
    return out, dict(signals)


def is_function(model) -> bool:
    """A prediction function (any callable that is not an nn.Module, a Hugging Face model included)."""
    return callable(model) and not isinstance(model, nn.Module)
