"""Perturbation families T_i. One family per module, instantiated from YAML.

A family maps a batch (B, C, H, W) of float images in [0, 1] to a batch of the same
shape, dtype and device, at an integer level: level 0 is the identity, level k applies the
k-th entry of the family's severity table. Random families draw their per-image randomness
from a CPU `torch.Generator` handed in by the caller, so the same generator seed gives the
same output on CPU and GPU, and the ground-truth pass can seed each prefix independently.

On the CPU a batch is processed in blocks of about `CPU_BLOCK_ELEMENTS` values (`cpu_blocks`)
so that every temporary stays cache-resident: for elementwise and separable families this is
3–30× faster than one pass over a 1,000-image batch, whose temporaries stream through memory
(and page-fault on every allocation). Deterministic families are blocked here; random ones
draw their randomness for the whole batch first (so the stream does not depend on the block
size) and block their own arithmetic. On a GPU the whole batch is one block.
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
        param = self.params[level - 1]
        blocks = [slice(None)] if self.random else cpu_blocks(x)
        if len(blocks) == 1:
            return self.apply(x, param, generator)
        return torch.cat([self.apply(x[s], param, generator) for s in blocks])

    def apply(self, x: torch.Tensor, param, generator: torch.Generator) -> torch.Tensor:
        raise NotImplementedError

    def describe(self) -> dict:
        """What the ground-truth cache key must hash for this family."""
        return {"class": f"{type(self).__module__}.{type(self).__qualname__}", "name": self.name, "params": list(self.params)}


CPU_BLOCK_ELEMENTS = 1 << 18


def cpu_blocks(x: torch.Tensor) -> list[slice]:
    """Slices of the batch dimension holding ~CPU_BLOCK_ELEMENTS values each on the CPU; one
    slice (the whole batch) on any other device."""
    if x.device.type != "cpu" or x.dim() == 0 or len(x) == 0:
        return [slice(None)]
    per = max(1, CPU_BLOCK_ELEMENTS // max(1, x[0].numel()))
    return [slice(i, i + per) for i in range(0, len(x), per)]


def blockwise(fn, x: torch.Tensor, *per_image: torch.Tensor) -> torch.Tensor:
    """fn(x[s], *(t[s] for t in per_image)) over `cpu_blocks(x)`, concatenated: how random
    families block their arithmetic after drawing per-image randomness for the whole batch."""
    blocks = cpu_blocks(x)
    if len(blocks) == 1:
        return fn(x, *per_image)
    return torch.cat([fn(x[s], *(t[s] for t in per_image)) for s in blocks])


def uniform(generator: torch.Generator, n: int, low: float, high: float, device) -> torch.Tensor:
    """n uniform draws on the CPU generator, moved to `device` (identical on every device)."""
    return (low + (high - low) * torch.rand(n, generator=generator, dtype=torch.float64)).to(device)


def random_signs(generator: torch.Generator, n: int, device) -> torch.Tensor:
    return (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).to(device=device, dtype=torch.float64)
