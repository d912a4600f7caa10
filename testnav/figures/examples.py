"""The perturbed images behind Figs. 5–6: one test input under every Pareto-optimal θ.

Why it rebuilds the benchmark: a ground-truth table holds scores, not images. The
benchmark (from `conf/benchmark/<name>.yaml`, or as a run of it composed it, its data and
cached model) is built again
and its families are applied along prefixes with the same per-prefix generators as the
ground-truth pass (`testnav.groundtruth.compute.PrefixWalker`), to the whole of D, so the chosen
input looks exactly as it did when its row of the table was computed (random families
draw per block of D, so perturbing the input alone would give other draws).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import benchmarks
from ..paths import CONF


def build_benchmark(name: str):
    """The benchmark as `python run.py benchmark=<name>` would build it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if not (CONF / "benchmark" / f"{name}.yaml").exists():
        raise FileNotFoundError(f"no conf/benchmark/{name}.yaml")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"benchmark={name}"])
    return benchmarks.make(cfg.benchmark)


def run_benchmark(name: str, root) -> tuple[object, str | None] | None:
    """The benchmark as a run under `root` composed it (its .hydra/config.yaml: the user's own config
    directory, command-line overrides), and the directory that run started in (relative data paths
    are relative to it); None if no run of `name` is there."""
    from omegaconf import OmegaConf

    for cfg_path in sorted(Path(root).rglob(".hydra/config.yaml"), reverse=True):  # newest first
        cfg = OmegaConf.load(cfg_path)
        if OmegaConf.select(cfg, "benchmark.name", default=None) != name:
            continue
        hydra = cfg_path.with_name("hydra.yaml")
        cwd = OmegaConf.select(OmegaConf.load(hydra), "hydra.runtime.cwd", default=None) if hydra.exists() else None
        return benchmarks.make(cfg.benchmark), cwd
    return None


def any_benchmark(name: str, root=None) -> tuple[object, str | None]:
    """The packaged benchmark `name` (as the committed figures were drawn), else the one a run under
    `root` composed: so Figs. 5–6 work for a benchmark from `--config-dir` or the generic presets."""
    try:
        return build_benchmark(name), None
    except Exception:
        found = run_benchmark(name, root) if root is not None else None
        if found is None:
            raise
        return found


def perturbed_inputs(benchmark, loaded, thetas, index: int = 0) -> dict[tuple, np.ndarray]:
    """θ → the perturbed `index`-th input (C×H×W in [0, 1]) for each θ, walking prefixes in lattice order."""
    import torch

    from ..groundtruth.walk import PrefixWalker

    walker = PrefixWalker(benchmark.families, loaded.inputs, benchmark.perturb_seed)
    out = {}
    with torch.inference_mode():
        for theta in sorted(tuple(int(t) for t in th) for th in thetas):
            out[theta] = walker.images(theta)[index].detach().cpu().float().numpy()
    return out


def example_items(name: str, gt, cache_dir, index: int = 0, root=None) -> tuple[list[dict], str]:
    """Items for `plot_examples` (P* of `gt`, labelled with raw δ and normalised ρ), and a note."""
    import contextlib

    benchmark, cwd = any_benchmark(name, root)
    if getattr(benchmark, "modality", "") != "image":
        raise ValueError(f"benchmark {name} is not an image benchmark (modality {benchmark.modality})")
    with contextlib.chdir(cwd) if cwd and Path(cwd).is_dir() else contextlib.nullcontext():
        loaded = benchmark.load(cache_dir)
        now = benchmark.key(loaded)  # describes the data files, relative to the run's directory too
    note = ""
    key = gt.meta.get("key")
    if key and now != key:
        note = f"images from the current code; the table was computed under key {key} (now {now})"
    front = gt.pstar
    tcols = [c for c in front.columns if c[:1] == "t" and c[1:].isdigit()]
    thetas = [tuple(int(v) for v in r) for r in front[tcols].to_numpy()]
    images = perturbed_inputs(benchmark, loaded, thetas, index)
    items = [
        {
            "theta": th,
            "order": int(r["order"]),
            "delta": float(r["delta_raw"]),
            "rho": float(r["rho"]),
            "image": images[th],
        }
        for th, (_, r) in zip(thetas, front.iterrows())
    ]
    return items, note
