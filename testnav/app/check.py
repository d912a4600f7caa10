"""`stage=check`: the pre-flight before any ground truth is spent.

It loads every artifact a benchmark needs (data, weights, the families' corpora, the fidelity
metrics' models), says what it found, computes the clean ψ(D) with the same `score` the
ground truth uses, compares it with the paper's Table 1, and projects the ground truth's time
from the measured clean pass. A wrong label order, preprocessing or checkpoint shows here, in
a minute, rather than in a table that disagrees with the paper after GPU-hours.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig

from .. import benchmarks, pipeline
from ..benchmarks.paper import PAPER_PSI
from ..core.cache import write_json_atomic
from ..core.timing import timed
from ..errors import UserError

# ψ(D) of each paper benchmark as the papers report it (Table 1 of each).
CAUSES = {
    "image": "the label order (class indices as the checkpoint was trained: e.g. sorted wnids), the preprocessing "
    "(benchmark.model.input_size / interpolation / uint8 / mean / std, the data's image_size or roi), "
    "the wrong checkpoint, or a fallback feature model",
    "text": "the label order (id2label), the tokenizer or its max_length, the decoding settings, the wrong "
    "checkpoint, or a missing corpus",
}


def parameters(model) -> int | None:
    return sum(p.numel() for p in model.parameters()) if isinstance(model, torch.nn.Module) else None


def run_check(cfg: DictConfig, out_dir: Path) -> dict:
    device = pipeline.resolve_device(cfg.device)
    report = {"benchmark": cfg.benchmark.name, "device": device}
    print(f"pre-flight check · {cfg.benchmark.name} · device {device}")
    benchmark = benchmarks.make(cfg.benchmark)  # families and metrics: WordNet, Inception, fidelity models
    fams = ", ".join(f.name for f in benchmark.families)
    print(f"  families   {fams} at {benchmark.levels} levels → {benchmark.lattice.size:,} configurations")
    session = pipeline.open(benchmark, cfg.cache_dir, device)
    loaded = session.loaded
    labels = loaded.labels.cpu().numpy()
    report.update(
        data=benchmark.data_description(),
        inputs=int(len(labels)),
        model_key=loaded.model_key,
        parameters=parameters(loaded.model),
    )
    classes = (
        f", {len(np.unique(labels))} classes"
        if benchmark.modality == "image" and len(np.unique(labels)) < len(labels)
        else ""
    )
    print(f"  data       {len(labels):,} inputs{classes}  ({compact(benchmark.data_description())})")
    size = f"{report['parameters'] / 1e6:.2f} M parameters, " if report["parameters"] else ""
    print(f"  model      {size}key {loaded.model_key}")
    _ = session.clean, session.signals_clean  # metrics and signals prepared (the first, untimed pass)
    report["metrics"] = {k: m.describe() for k, m in {**benchmark.metrics, **benchmark.signals}.items()}
    print(f"  metrics    {'; '.join(f'{k} ({compact(d)})' for k, d in report['metrics'].items()) or 'none'}")
    sync = torch.cuda.synchronize if device.startswith("cuda") else None
    clean, seconds = timed(lambda: benchmark.score(loaded, loaded.inputs), sync)
    psi = float(clean["psi"])
    rate = len(labels) / seconds
    projected = seconds * benchmark.lattice.size
    report.update(
        psi=psi,
        clean_pass_s=round(seconds, 3),
        inputs_per_s=round(rate, 2),
        projected_groundtruth_h=round(projected / 3600, 3),
    )
    print(f"  clean ψ    {100 * psi:.2f} % on {len(labels):,} inputs")
    print(
        f"  speed      {rate:,.1f} inputs/s ({seconds:.2f} s a pass, every metric included) → ground truth "
        f"≈ {benchmark.lattice.size:,} × {seconds:.2f} s ≈ {hours(projected)} on {device} (perturbation not counted)"
    )
    expect, source = (
        (cfg.check.expect, "check.expect")
        if cfg.check.expect is not None
        else PAPER_PSI.get(cfg.benchmark.name, (None, None))
    )
    tolerance = float(cfg.check.tolerance)
    report.update(expected=expect, expected_from=source, tolerance=tolerance)
    write_json_atomic(out_dir / "check.json", report)
    if expect is None:
        print("  paper      no published ψ for this benchmark (set check.expect=… to compare): nothing to compare")
        return report
    gap = psi - float(expect)
    if abs(gap) > tolerance:
        raise UserError(
            f"clean ψ {100 * psi:.2f} % is {100 * abs(gap):.2f} points off the paper's "
            f"{100 * float(expect):.1f} % ({source}; tolerance ±{100 * tolerance:.1f}, check.tolerance): "
            f"likely causes: {CAUSES.get(benchmark.modality, CAUSES['image'])}"
        )
    print(f"  paper      {100 * float(expect):.1f} % ({source}): within ±{100 * tolerance:.1f} points → OK")
    return report


def compact(d: dict) -> str:
    return ", ".join(
        f"{k}={json.dumps(v, default=str) if isinstance(v, (dict, list)) else v}" for k, v in d.items() if v is not None
    )[:300]


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"
