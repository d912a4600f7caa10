"""What a run has measured, as the stopping certificate keeps it (`Measurements`: fed chunk by chunk)
and as each checkpoint hands it to the two rules (`MeasuredSet`: that state read once, with the
measured front). The rules (testnav/stopping/estimators.py) read nothing else of the run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.pareto import nondominated_mask


@dataclass(frozen=True)
class MeasuredSet:
    """The measured set at a checkpoint: all that the rules are handed of the run. The arrays are
    the run's own (read, not copied), so it holds only while the checkpoint is read."""

    values: np.ndarray  # (|Θ|, 2): each θ's (δ, ρ), NaN where unmeasured
    seen: np.ndarray  # bool per θ: measured
    first: np.ndarray  # per θ: u once it was measured (its chunk's end; 0: not measured)
    u: int  # configurations measured
    new: np.ndarray  # configurations first measured since the last checkpoint
    measured: np.ndarray  # every measured θ but θ = 0 (the clean reference is not on P*)
    members: np.ndarray  # the measured front's θ
    remaining: int  # configurations not measured (θ = 0 aside): at most this many can be missing
    window: float  # the dense schedule's trailing window starts after this u (Schedule.window_start)

    @property
    def front(self) -> int:
        """|measured front|."""
        return len(self.members)


class Measurements:
    """What the run has fed the certificate: its proposals in order (`proposals`, `b` of them) and,
    per θ, its (δ, ρ) `values`, whether `seen` and u once it was `first` measured; `u` configurations
    measured, `new` the chunks' configurations first measured since the last checkpoint."""

    def __init__(self, size: int):
        self.values = np.full((size, 2), np.nan)
        self.seen = np.zeros(size, bool)
        # how many configurations were measured once each θ had been (its chunk's end): the age of
        # the measured front (quiet) and, dense, the trailing window; 4 bytes per θ wherever that
        # count fits, as it does on any Θ whose record fits in memory
        self.first = np.zeros(size, np.int32 if size < 2**31 else np.int64)
        self.proposals: list[np.ndarray] = []
        self.b = self.u = 0
        self.new: list[np.ndarray] = []

    def add(self, chunk: np.ndarray, values: np.ndarray) -> None:
        """Record a chunk of proposals and their (δ, ρ)."""
        chunk = np.asarray(chunk, dtype=np.int64)
        new = np.unique(chunk[~self.seen[chunk]])
        self.new.append(new)
        self.values[chunk] = values
        self.seen[chunk] = True
        self.proposals.append(chunk)
        self.b += len(chunk)
        self.u = int(self.seen.sum())
        self.first[new] = self.u

    def take_new(self) -> np.ndarray:
        """The configurations first measured since the last call (a checkpoint), handed over once."""
        new = np.concatenate(self.new) if self.new else np.zeros(0, np.int64)
        self.new = []
        return new

    def read(self, new: np.ndarray, window: float) -> MeasuredSet:
        """The measured set now, with `new` (take_new) and the trailing `window`'s start."""
        seen = np.flatnonzero(self.seen)
        measured = seen[seen != 0]
        remaining = len(self.seen) - len(seen) - (not self.seen[0])
        members = measured
        if len(measured):
            pts = self.values[measured]
            members = measured[nondominated_mask(pts[:, 0], pts[:, 1])]
        return MeasuredSet(self.values, self.seen, self.first, self.u, new, measured, members, remaining, window)
