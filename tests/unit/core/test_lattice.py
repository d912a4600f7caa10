from math import comb

import numpy as np
import pytest

from testnav.core.lattice import Lattice


def test_index_tuple_roundtrip_and_row_major_order():
    lat = Lattice(4, 6)
    assert lat.size == 1296
    idx = np.arange(lat.size)
    assert (lat.index(lat.theta(idx)) == idx).all()
    assert lat.index([0, 0, 0, 1]) == 1 and lat.index([1, 0, 0, 0]) == 216  # t1 varies slowest
    assert lat.theta(lat.size - 1).tolist() == [5, 5, 5, 5]


def test_orders_match_binomial_counts():
    lat = Lattice(4, 6)
    for k in range(5):
        assert len(lat.members_of_order(k)) == comb(4, k) * 5**k
    assert lat.order_counts(lat.members_of_order(2)) == [0, 0, 150, 0, 0]


def test_out_of_range_levels_rejected():
    lat = Lattice(2, 3)
    with pytest.raises(ValueError, match="outside 0..2"):
        lat.index([0, 3])
    with pytest.raises(ValueError):
        Lattice(2, 1)
