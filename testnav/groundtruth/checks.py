"""What one batch of clean inputs says about the data and the model, checked before any work.

A label the model cannot predict (12 for a 10-class model) would be scored wrong under every
configuration, and a NaN logit would make every prediction arbitrary; both are known only once
the model has run, from the width of its logits and their values. `check_outputs` runs the
first batch of D through it when a benchmark is opened (testnav/groundtruth/session.py), so such
data or models are refused with one line before a ground truth, a search or a tomography starts.
"""

from __future__ import annotations

import torch

from ..errors import UserError


@torch.no_grad()
def first_logits(benchmark, loaded) -> torch.Tensor | None:
    """The model's logits on the first batch of D, for classifiers (None for other tasks)."""
    if hasattr(benchmark, "logits") and hasattr(loaded.inputs, "items"):  # a text classifier
        return benchmark.logits(loaded, list(loaded.inputs.items[: benchmark.batch_size]))
    if not isinstance(loaded.inputs, torch.Tensor) or hasattr(loaded, "boxes") or loaded.labels.dim() != 1:
        return None
    from ..benchmarks.vision import View
    from ..models.monitor import Monitored

    view = View(loaded.inputs[: benchmark.batch_size], loaded.model, benchmark.batch_size, amp=False)
    if isinstance(loaded.model, Monitored):
        return view.outputs[1]
    classifier = getattr(loaded.model, "classifier", None)
    return classifier(view.features) if callable(classifier) else None


def check_outputs(benchmark, loaded) -> None:
    """Refuse non-finite logits and labels outside the model's classes, in one line each."""
    logits = first_logits(benchmark, loaded)
    if logits is None:
        return
    logits = logits.float()
    finite = torch.isfinite(logits)
    if not finite.all():
        rows = (~finite).any(1)
        raise UserError(
            f"the model's outputs are not finite (NaN or ±inf) on {int(rows.sum())} of the first {len(logits)} "
            f"inputs (the first: input {int(rows.nonzero()[0])}); check its weights and its input normalisation"
        )
    classes = int(logits.shape[1])
    labels = loaded.labels
    outside = (labels < 0) | (labels >= classes)
    if outside.any():
        bad = sorted(set(labels[outside].tolist()))
        first = int(outside.nonzero()[0])
        raise UserError(
            f"labels outside the model's {classes} classes (0..{classes - 1}, the width of its logits): "
            f"{', '.join(map(str, bad[:5]))}{' …' if len(bad) > 5 else ''} on {int(outside.sum())} of "
            f"{len(labels)} inputs (the first: input {first})"
        )
