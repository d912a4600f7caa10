"""Perturbing D under each θ: the prefix walk that the ground truth, live searches and the
live tomography share.

Configurations are walked in lattice order, so T1 → T1T2 → T1T2T3 → … is computed once per
prefix and reused by every configuration that shares it. Randomness is tied to the prefix, not
to the walk: family i at a node draws from a generator seeded by (perturb_seed, θ1..θi), so a
prefix gives the same images however (and in whichever process) it is reached.
"""

from __future__ import annotations

from collections import OrderedDict

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
    """Applies families along prefixes, keeping the current path's images on a stack.

    `cache_bytes` > 0 also keeps the images of recently used inner prefixes (not whole
    configurations) in a least-recently-used cache of that many bytes, for walks that do not come
    in lattice order: a live search asks generation by generation, and each generation revisits
    prefixes an earlier one walked. A prefix's images do not depend on how it is reached, so a
    cached prefix gives the same images as walking it again. The ground truth walks in lattice
    order, where the stack alone shares every prefix, and keeps no cache. Only tensors are cached
    (text and code inputs, lists of strings, are walked again)."""

    def __init__(self, families, inputs: torch.Tensor, seed: int, cache_bytes: int = 0):
        self.families, self.seed = families, seed
        self.stack: list[tuple[tuple[int, ...], torch.Tensor]] = [((), inputs)]
        self.applications = 0  # non-identity family applications performed
        self.cache_bytes = int(cache_bytes)
        self.cache: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self.cached_bytes = 0

    def images(self, theta: tuple[int, ...]) -> torch.Tensor:
        theta = tuple(theta)
        keep = 0  # the stack is a path of prefixes, each extending the one before
        while keep + 1 < len(self.stack) and theta[: len(self.stack[keep + 1][0])] == self.stack[keep + 1][0]:
            keep += 1
        del self.stack[keep + 1 :]
        start, x = len(self.stack[-1][0]), self.stack[-1][1]
        for depth in range(len(theta) - 1, start, -1) if self.cache else ():
            hit = self.cache.get(theta[:depth])
            if hit is not None:
                self.cache.move_to_end(theta[:depth])
                self.stack.append((theta[:depth], hit))
                start, x = depth, hit
                break
        for i in range(start, len(theta)):
            prefix = theta[: i + 1]
            if theta[i] > 0:
                x = self.families[i](x, theta[i], prefix_generator(self.seed, prefix))
                self.applications += 1
                if self.cache_bytes and i + 1 < len(theta) and isinstance(x, torch.Tensor):
                    self._remember(prefix, x)
            self.stack.append((prefix, x))
        return x

    def _remember(self, prefix: tuple[int, ...], x: torch.Tensor) -> None:
        size = x.numel() * x.element_size()
        if size > self.cache_bytes:
            return
        self.cache[prefix] = x
        self.cached_bytes += size
        while self.cached_bytes > self.cache_bytes:
            _, old = self.cache.popitem(last=False)
            self.cached_bytes -= old.numel() * old.element_size()


STACK_BYTES = {"cpu": 1 << 26, "cuda": 1 << 30}  # images of sibling sets scored together (per call)
PREFIX_CACHE_BYTES = 1 << 30  # a live oracle's walker: its cache of inner prefixes (requests come out of lattice order)


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
