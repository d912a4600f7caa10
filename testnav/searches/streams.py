"""Per-run random streams for the lock-step replay engine, read ahead in blocks.

Each run owns a `numpy.random.Generator`; the engine asks every run for a few uniform doubles
many times per generation, and one `Generator.random` call per run and per request made a
Python loop over the runs on the replay's hot path. A Generator's `random(a)` followed by
`random(b)` yields exactly the numbers of one `random(a + b)`, so each run's stream is read
ahead into a row of a buffer and every request is served for all runs at once by one gather.
A run sees the numbers of its unbuffered stream, in the same order: its trace still depends on
its seed and settings only, never on the block size or on the runs beside it.

Only uniform doubles are read ahead (one 64-bit PCG64 output each). Before any other kind of
draw (`choice`) each generator is stepped back over the numbers it read ahead and nobody used
(`PCG64.advance` modulo 2¹²⁸), so interleaving the two kinds is exact too.
"""

from __future__ import annotations

import math

import numpy as np

BLOCK = 4096  # doubles read ahead per run at a refill: a refill loops over runs, a request does not
PERIOD = 1 << 128  # PCG64's state space: advancing by PERIOD − k steps back k outputs


class Streams:
    """One independent random stream per run. Each run draws only what it needs itself
    (`lengths[r]` rows), padded to a common (R, max length, *tail) array, so a run consumes
    the same random numbers whether it is stepped alone or beside others."""

    def __init__(self, seeds, block: int = BLOCK):
        self.gens = [np.random.default_rng(int(s)) for s in seeds]
        self.block = int(block)
        self._buf = np.empty((len(self.gens), 0))
        self._cursor = np.zeros(len(self.gens), dtype=np.int64)  # next unread position per row
        self._end = np.zeros(len(self.gens), dtype=np.int64)  # end of the read-ahead numbers per row

    def draw(self, lengths, *tail) -> np.ndarray:
        r = len(self.gens)
        lengths = np.maximum(np.broadcast_to(np.asarray(lengths, dtype=np.int64), (r,)), 0)
        need = lengths * math.prod(tail)
        most = int(need.max(initial=0))
        if most == 0:
            return np.full((r, int(lengths.max(initial=0)), *tail), 0.5)
        if (self._cursor + need > self._end).any():
            self._ensure(need)
        width = self._buf.shape[1]
        start = self._cursor + np.arange(0, r * width, width)  # each row's next unread number, in the flat buffer
        flat = self._buf.reshape(-1).take(start[:, None] + np.arange(most), mode="clip")
        if need.min() < most:  # shorter rows are padded with 0.5, as an unbuffered draw pads them
            flat[np.arange(most)[None, :] >= need[:, None]] = 0.5
        self._cursor += need
        return flat.reshape(r, most // max(math.prod(tail), 1), *tail)

    def _ensure(self, need: np.ndarray) -> None:
        """Refill the rows whose unread numbers are fewer than `need`: keep the unread ones at
        the front and read the row full from the generator, which stands right after them."""
        width = max(self.block, int(need.max()))
        if width > self._buf.shape[1]:
            grown = np.empty((len(self.gens), width))
            grown[:, : self._buf.shape[1]] = self._buf
            self._buf = grown
        for i in np.flatnonzero(self._cursor + need > self._end):
            left = self._buf[i, self._cursor[i] : self._end[i]].copy()
            self._buf[i, : len(left)] = left
            self._buf[i, len(left) :] = self.gens[i].random(self._buf.shape[1] - len(left))
            self._cursor[i], self._end[i] = 0, self._buf.shape[1]

    def _rewind(self) -> None:
        """Step every generator back over its unread numbers, to where an unbuffered stream stands."""
        for i, g in enumerate(self.gens):
            behind = int(self._end[i] - self._cursor[i])
            if behind:
                state = g.bit_generator.state
                g.bit_generator.advance(PERIOD - behind)
                moved = g.bit_generator.state  # advance() clears the spare 32-bit half; doubles never touch it
                moved["has_uint32"], moved["uinteger"] = state["has_uint32"], state["uinteger"]
                g.bit_generator.state = moved
        self._cursor[:] = self._end[:] = 0

    def choice(self, size: int, k: int) -> np.ndarray:
        self._rewind()
        return np.stack([g.choice(size, k, replace=False) for g in self.gens])
