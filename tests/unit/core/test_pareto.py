import numpy as np
import pytest

from testnav.core.pareto import dominates_bruteforce, leading_fronts, nondominated_mask, nondominated_rank


@pytest.mark.parametrize("seed", range(30))
def test_front_matches_bruteforce_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    # coarse values force many ties in δ, in ρ and in both
    d = rng.integers(0, 12, n) / 11 if seed % 2 else rng.random(n)
    r = rng.integers(0, 12, n) / 11 if seed % 3 else rng.random(n)
    assert (nondominated_mask(d, r) == dominates_bruteforce(d, r)).all()


def test_identical_points_do_not_dominate_each_other():
    d = np.array([1.0, 1.0, 0.5, 0.2])
    r = np.array([0.3, 0.3, 0.5, 0.5])
    assert nondominated_mask(d, r).tolist() == [True, True, True, False]


def test_anticorrelated_line_is_all_front():
    d = np.linspace(0, 1, 50)
    assert nondominated_mask(d, 1 - d).all()
    assert nondominated_mask(d, d).sum() == 1


def test_leading_fronts_peel_the_fronts_nondominated_rank_names():
    """The first k fronts peeled one at a time are the points of rank < k, front by front
    (ties in (δ, ρ) included: identical points share a front)."""
    rng = np.random.default_rng(0)
    f = np.round(rng.random((300, 2)), 1)  # coarse: many ties
    rank = nondominated_rank(f[None])[0]
    got = leading_fronts(f[:, 0], f[:, 1], 3)
    want = np.concatenate([np.flatnonzero(rank == k) for k in range(3)])
    assert np.array_equal(got, want)
    assert len(leading_fronts(f[:, 0], f[:, 1], 10_000)) == len(f)
