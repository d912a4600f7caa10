"""Perturbing D under each θ: the prefix walk that the ground truth, live searches and the
live tomography share.

Configurations are walked in lattice order, so T1 → T1T2 → T1T2T3 → … is computed once per
prefix and reused by every configuration that shares it. Randomness is tied to the prefix, not
to the walk: family i at a node draws from a generator seeded by (perturb_seed, θ1..θi), so a
prefix gives the same images however (and in whichever process) it is reached.
"""

from __future__ import annotations

import torch

from ..core.cache import stable_hash


def prefix_generator(seed: int, prefix: tuple[int, ...], batch: int | None = None) -> torch.Generator:
    """The generator of the last family of `prefix`; `batch` seeds one batch of D on its own
    (the live tomography executor perturbs D batch by batch)."""
    payload = {"seed": seed, "prefix": list(prefix)}
    if batch is not None:
        payload["batch"] = batch
    return torch.Generator().manual_seed(int(stable_hash(payload, 15), 16))


class PrefixWalker:
    """Applies families along prefixes, keeping the current path's images on a stack."""

    def __init__(self, families, inputs: torch.Tensor, seed: int):
        self.families, self.seed = families, seed
        self.stack: list[tuple[tuple[int, ...], torch.Tensor]] = [((), inputs)]
        self.applications = 0  # non-identity family applications performed

    def images(self, theta: tuple[int, ...]) -> torch.Tensor:
        depth = 0
        while depth + 1 < len(self.stack) and self.stack[depth + 1][0] == theta[: depth + 1]:
            depth += 1
        del self.stack[depth + 1 :]
        x = self.stack[-1][1]
        for i in range(depth, len(theta)):
            prefix = theta[: i + 1]
            if theta[i] > 0:
                x = self.families[i](x, theta[i], prefix_generator(self.seed, prefix))
                self.applications += 1
            self.stack.append((prefix, x))
        return x


STACK_BYTES = {"cpu": 1 << 26, "cuda": 1 << 30}  # images of sibling sets scored together (per call)


def stack_size(inputs, device: str) -> int:
    """How many perturbed sets of D fit in one scoring call (testnav/core/sets.py): all ℓ siblings of a
    prefix for small images, one set at a time when D alone is that large."""
    if not isinstance(inputs, torch.Tensor) or inputs.numel() == 0:
        return 1
    return max(1, STACK_BYTES["cuda" if str(device).startswith("cuda") else "cpu"] // (inputs.numel() * 4))


def sibling_groups(thetas, size: int):
    """Consecutive configurations that differ only in the last family, at most `size` at a time."""
    group: list[tuple[int, ...]] = []
    for theta in thetas:
        theta = tuple(int(t) for t in theta)
        if group and (len(group) == size or group[-1][:-1] != theta[:-1]):
            yield group
            group = []
        group.append(theta)
    if group:
        yield group
