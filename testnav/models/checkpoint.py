"""Loading weights from local files only: a .safetensors or .pt/.pth state dict, or a Hugging
Face snapshot directory (model.safetensors / pytorch_model.bin). The cache key of a model
hashes the file's bytes, so new weights under the same name give a new ground truth."""

from __future__ import annotations

from pathlib import Path

import torch

from .. import cache
from ..errors import UserError


def weights_file(path) -> Path:
    p = Path(str(path)).expanduser()
    if p.is_dir():
        for name in ("model.safetensors", "pytorch_model.bin", "model.pt", "model.pth"):
            if (p / name).exists():
                return p / name
        snapshots = sorted(p.glob("snapshots/*/model.safetensors")) + sorted(p.glob("snapshots/*/pytorch_model.bin"))
        if snapshots:
            return snapshots[-1]
        raise UserError(f"{p} holds no model.safetensors or pytorch_model.bin (a Hugging Face snapshot directory was expected)")
    if not p.exists():
        raise UserError(f"checkpoint {p} does not exist: put the weights there (.safetensors, .pt or .pth state dict, "
                        f"or a Hugging Face snapshot directory) or point benchmark.model.checkpoint at them")
    return p


def file_digest(path) -> str:
    return cache.file_digest(weights_file(path))[:16]


def load_state_dict(path) -> dict:
    f = weights_file(path)
    try:
        if f.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(f))
        else:
            state = torch.load(f, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(f"checkpoint {f} is unreadable ({type(e).__name__}): give a state dict saved by "
                        f"torch.save or safetensors") from None
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(state, dict) and key in state and isinstance(state[key], dict):
            state = state[key]
    return {k.removeprefix("module.").removeprefix("model."): v for k, v in state.items()}


def load_into(module: torch.nn.Module, path) -> None:
    state = load_state_dict(path)
    missing, unexpected = module.load_state_dict(state, strict=False)
    if missing:
        raise UserError(f"checkpoint {weights_file(path)} does not fit {type(module).__name__}: "
                        f"{len(missing)} weights missing (e.g. {missing[0]}), {len(unexpected)} unexpected")
