"""The lock-step engine's read-ahead streams give each run exactly the numbers of its own
unbuffered Generator, in order, whatever the block size, the request sizes and the other runs."""

import numpy as np
import pytest

from testnav.searches.streams import Streams


def unbuffered(gens, lengths, *tail):
    """One `Generator.random` per run and request: the reference the buffered draw must equal."""
    lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (len(gens),))
    out = np.full((len(gens), int(lengths.max(initial=0)), *tail), 0.5)
    for g, row, n in zip(gens, out, lengths):
        if n > 0:
            row[:n] = g.random((int(n), *tail))
    return out


@pytest.mark.parametrize("block", [1, 7, 64, 4096])
def test_buffered_draws_equal_unbuffered_ones(block):
    rng = np.random.default_rng(block)
    for _ in range(10):
        seeds = rng.integers(0, 1000, rng.integers(1, 6))
        ref = [np.random.default_rng(int(s)) for s in seeds]
        rs = Streams(seeds, block=block)
        for _ in range(150):
            if rng.random() < 0.05:  # another kind of draw in between: the generators are stepped back first
                assert (rs.choice(40, 5) == np.stack([g.choice(40, 5, replace=False) for g in ref])).all()
                continue
            lengths = rng.integers(0, 30, len(seeds))
            tail = () if rng.random() < 0.5 else (int(rng.integers(1, 5)),)
            a, b = unbuffered(ref, lengths, *tail), rs.draw(lengths, *tail)
            assert a.shape == b.shape and (a == b).all()


def test_a_run_draws_the_same_alone_or_beside_others():
    alone, together = Streams([5]), Streams([1, 5, 9])
    for n in (3, 50, 5000, 2):
        assert (alone.draw([n], 4)[0] == together.draw([7, n, 0], 4)[1, :n]).all()
