"""The one way scripts and the pre-flight check time code.

Repeated timings are interleaved (a, b, a, b, …): on a shared host whose speed drifts by up to 2×
within minutes, every side then sees the same slow and fast spells, and ratios between them are
steadier than from sides timed one after the other. `sync` (e.g. torch.cuda.synchronize) brackets
each call so that asynchronous device work is inside the time.
"""

from __future__ import annotations

import statistics
import time


def timed(fn, sync=None):
    """(fn()'s result, seconds it took)."""
    if sync:
        sync()
    t0 = time.perf_counter()
    out = fn()
    if sync:
        sync()
    return out, time.perf_counter() - t0


def interleaved(fns: dict, repeat: int, warmup: int = 0, sync=None) -> dict[str, list[float]]:
    """Seconds of each of `fns` ({name: callable}) over `repeat` rounds, one call of each per round,
    after `warmup` untimed rounds."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            times[k].append(timed(fn, sync)[1])
    return times


def spread(seconds: list[float]) -> dict:
    """Median and range of repeated timings."""
    return {"median": statistics.median(seconds), "min": min(seconds), "max": max(seconds)}
