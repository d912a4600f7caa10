"""From a composed config to live objects: the layer below every stage.

`app.py` (TestNav's stages) and `tomography/stage.py` (TestifAI's) both need these, and tests
build benchmarks and ground truths with them directly, without going through the CLI.
"""

from __future__ import annotations

from pathlib import Path

import torch
from hydra.utils import instantiate
from omegaconf import DictConfig

from .paths import CONF
from .errors import UserError
from .groundtruth.compute import compute_groundtruth


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise UserError(f"device={name} (valid: auto, cpu, cuda, cuda:N)")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device={name} but no CUDA device is available (use device=cpu or device=auto)")
    return name


def build(node: DictConfig, **kwargs):
    """instantiate() from YAML, surfacing our UserError instead of Hydra's wrapped, multi-line one."""
    try:
        return instantiate(node, _convert_="all", **kwargs)
    except Exception as e:
        cause = e
        while cause is not None and not isinstance(cause, UserError):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            raise cause from None
        raise


def build_groundtruth(cfg: DictConfig) -> tuple[Path, object]:
    benchmark = build(cfg.benchmark)
    path = compute_groundtruth(benchmark, cfg.cache_dir, resolve_device(cfg.device), progress=cfg.progress)
    return path, benchmark


def compose_config(overrides=()):
    """The composed run config from conf/ with Hydra overrides, outside any Hydra app."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def compose_benchmark(overrides=()):
    """A benchmark from conf/ with Hydra overrides (tests, scripts, golden checks)."""
    return build(compose_config(overrides).benchmark)
