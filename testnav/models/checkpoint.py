"""Loading weights from local files only: a .safetensors or .pt/.pth state dict, or a Hugging
Face snapshot directory (model.safetensors / pytorch_model.bin). The cache key of a model
hashes the file's bytes, so new weights under the same name give a new ground truth."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import torch

from ..core import cache
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
        raise UserError(
            f"{p} holds no model.safetensors or pytorch_model.bin (a Hugging Face snapshot directory was expected)"
        )
    if not p.exists():
        raise UserError(
            f"checkpoint {p} does not exist: put the weights there (.safetensors, .pt or .pth state dict, "
            f"or a Hugging Face snapshot directory) or point benchmark.model.checkpoint at them"
        )
    return p


def file_digest(path) -> str:
    return cache.file_digest(weights_file(path))[:16]


def load_state_dict(path, trust_pickle: bool = False) -> dict:
    """The state dict in a checkpoint: a plain one, or the one under `state_dict`, `model` or
    `model_state_dict` (RobustBench, timm's train script, ehuynh1106/TinyImageNet-Transformers),
    with DataParallel's `module.` prefix dropped. torch.load runs with weights_only=True, which
    refuses pickled Python objects (e.g. an argparse Namespace saved beside the weights), since
    unpickling runs code; `trust_pickle` lifts that for a file the user trusts."""
    f = weights_file(path)
    try:
        if f.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(f))
        else:
            state = torch.load(f, map_location="cpu", weights_only=not trust_pickle)
    except pickle.UnpicklingError as e:
        found = re.search(r"GLOBAL ([\w.]+)", str(e))  # torch names the class it refused to unpickle
        if trust_pickle or not found:
            raise UserError(
                f"checkpoint {f} is unreadable (UnpicklingError): give a state dict saved by torch.save or safetensors"
            ) from None
        raise UserError(
            f"checkpoint {f} holds pickled Python objects ({found.group(1)}) that "
            f"weights_only loading refuses: if you trust the file, set benchmark.model.trust_pickle=true, "
            f"or re-save its state dict alone"
        ) from None
    except Exception as e:
        raise UserError(
            f"checkpoint {f} is unreadable ({type(e).__name__}): give a state dict saved by torch.save or safetensors"
        ) from None
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(state, dict) and key in state and isinstance(state[key], dict):
            state = state[key]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise UserError(
            f"checkpoint {f} holds no state dict of tensors (found {type(state).__name__}): save "
            f"model.state_dict(), alone or under 'state_dict' / 'model_state_dict'"
        )
    return {k.removeprefix("module.").removeprefix("model."): v for k, v in state.items()}


def load_into(module: torch.nn.Module, path, trust_pickle: bool = False) -> None:
    state = load_state_dict(path, trust_pickle)
    missing, unexpected = module.load_state_dict(state, strict=False)
    if missing:
        raise UserError(
            f"checkpoint {weights_file(path)} does not fit {type(module).__name__}: "
            f"{len(missing)} weights missing (e.g. {missing[0]}), {len(unexpected)} unexpected"
        )
