import numpy as np
import pytest

from testnav.core.recall import auc_recall, budget_to_full_recall, first_sightings, recall_curve, unique_to_full_recall


def test_hand_computed_trace():
    # |Θ| = 6, P* = {2, 4}; proposals (with repeats): 0 2 0 3 4 ...
    proposals = np.array([0, 2, 0, 3, 4, 4, 1])
    new = first_sightings(proposals)
    assert new.tolist() == [True, True, False, True, True, False, True]
    curve = recall_curve(proposals[new], [2, 4], 6)
    assert curve.tolist() == [0, 0.5, 0.5, 1, 1, 1]
    # AUC = (1/6) Σ_{i=1}^{5} (r_i + r_{i+1})/2 = (0.25 + 0.5 + 0.75 + 1 + 1)/6
    assert auc_recall(curve) == pytest.approx(3.5 / 6)
    assert unique_to_full_recall(curve) == 4
    assert budget_to_full_recall(proposals, [2, 4]) == 5


def test_short_run_is_padded_with_last_recall_and_never_full():
    curve = recall_curve([1, 3], [3, 4], 5)
    assert curve.tolist() == [0, 0.5, 0.5, 0.5, 0.5]
    assert auc_recall(curve) == pytest.approx((0.25 + 0.5 + 0.5 + 0.5) / 5)
    assert unique_to_full_recall(curve) is None
    assert budget_to_full_recall([1, 3, 1], [3, 4]) is None


def test_perfect_order_maximises_auc():
    pstar = [0, 1, 2]
    best = auc_recall(recall_curve([0, 1, 2, 3, 4, 5, 6, 7], pstar, 8))
    worst = auc_recall(recall_curve([7, 6, 5, 4, 3, 2, 1, 0], pstar, 8))
    assert best > worst
    # r = 1/3, 2/3, 1, 1, 1, 1, 1, 1
    assert best == pytest.approx(((1 / 3 + 2 / 3) / 2 + (2 / 3 + 1) / 2 + 5) / 8)
