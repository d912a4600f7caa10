"""The perturbed images behind Figs. 5–6: one test input under every Pareto-optimal θ.

Why it rebuilds the benchmark: a ground-truth table holds scores, not images. The
benchmark (from `conf/benchmark/<name>.yaml`, its data and cached model) is built again
and its families are applied along prefixes with the same per-prefix generators as the
ground-truth pass (`testnav.groundtruth.PrefixWalker`), to the whole of D, so the chosen
input looks exactly as it did when its row of the table was computed (random families
draw per block of D, so perturbing the input alone would give other draws).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CONF = Path(__file__).resolve().parents[2] / "conf"


def build_benchmark(name: str):
    """The benchmark as `python run.py benchmark=<name>` would build it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.utils import instantiate

    if not (CONF / "benchmark" / f"{name}.yaml").exists():
        raise FileNotFoundError(f"no conf/benchmark/{name}.yaml")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"benchmark={name}"])
    return instantiate(cfg.benchmark, _convert_="all")


def perturbed_inputs(benchmark, loaded, thetas, index: int = 0) -> dict[tuple, np.ndarray]:
    """θ → the perturbed `index`-th input (C×H×W in [0, 1]) for each θ, walking prefixes in lattice order."""
    import torch

    from ..groundtruth import PrefixWalker

    walker = PrefixWalker(benchmark.families, loaded.inputs, benchmark.perturb_seed)
    out = {}
    with torch.inference_mode():
        for theta in sorted(tuple(int(t) for t in th) for th in thetas):
            out[theta] = walker.images(theta)[index].detach().cpu().float().numpy()
    return out


def example_items(name: str, gt, cache_dir, index: int = 0) -> tuple[list[dict], str]:
    """Items for `plot_examples` (P* of `gt`, labelled with raw δ and normalised ρ), and a note."""
    benchmark = build_benchmark(name)
    if getattr(benchmark, "modality", "") != "vision":
        raise ValueError(f"benchmark {name} is not an image benchmark (modality {benchmark.modality})")
    loaded = benchmark.load(cache_dir)
    note = ""
    key = gt.meta.get("key")
    if key and benchmark.key(loaded) != key:
        note = (f"images from the current code; the table was computed under key {key} "
                f"(now {benchmark.key(loaded)})")
    front = gt.pstar
    tcols = [c for c in front.columns if c[:1] == "t" and c[1:].isdigit()]
    thetas = [tuple(int(v) for v in r) for r in front[tcols].to_numpy()]
    images = perturbed_inputs(benchmark, loaded, thetas, index)
    items = [{"theta": th, "order": int(r["order"]), "delta": float(r["delta_raw"]), "rho": float(r["rho"]),
              "image": images[th]} for th, (_, r) in zip(thetas, front.iterrows())]
    return items, note
