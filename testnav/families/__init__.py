"""Perturbation families T_i. One family per module, instantiated from YAML.

A family maps a batch (B, C, H, W) of float images in [0, 1] to a batch of the same
shape, dtype and device, at an integer level: level 0 is the identity, level k applies the
k-th entry of the family's severity table. Random families draw their per-image randomness
from a CPU `torch.Generator` handed in by the caller, so the same generator seed gives the
same output on CPU and GPU, and the ground-truth pass can seed each prefix independently.
"""

from __future__ import annotations

import torch

from ..errors import UserError


class Family:
    name: str = "family"
    random: bool = False

    def __init__(self, params, name: str | None = None):
        self.params = [tuple(p) if isinstance(p, (list, tuple)) else p for p in params]
        if name:
            self.name = name

    @property
    def max_level(self) -> int:
        return len(self.params)

    def __call__(self, x: torch.Tensor, level: int, generator: torch.Generator | None = None) -> torch.Tensor:
        if level == 0:
            return x
        if not 0 < level <= self.max_level:
            raise UserError(f"level {level} of family {self.name} is outside its table (valid: 0..{self.max_level})")
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        return self.apply(x, self.params[level - 1], generator)

    def apply(self, x: torch.Tensor, param, generator: torch.Generator) -> torch.Tensor:
        raise NotImplementedError

    def describe(self) -> dict:
        """What the ground-truth cache key must hash for this family."""
        return {"class": f"{type(self).__module__}.{type(self).__qualname__}", "name": self.name, "params": list(self.params)}


def uniform(generator: torch.Generator, n: int, low: float, high: float, device) -> torch.Tensor:
    """n uniform draws on the CPU generator, moved to `device` (identical on every device)."""
    return (low + (high - low) * torch.rand(n, generator=generator, dtype=torch.float64)).to(device)


def random_signs(generator: torch.Generator, n: int, device) -> torch.Tensor:
    return (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).to(device=device, dtype=torch.float64)
