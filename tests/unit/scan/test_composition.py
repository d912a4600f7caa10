"""The order of composition, stated and tested (issue 75, item 2): a finding of several families is
measured in the other orders of its families and says whether it holds in every one."""

import numpy as np
import pytest
import torch

import testnav
from testnav.errors import UserError
from testnav.families import Family
from testnav.pipeline.composition import other_orders


class Squash(Family):
    """Contrast towards mid-grey: alone it moves no image across the model's threshold."""

    name = "squash"

    def apply(self, x, param, generator):
        return 0.5 + (x - 0.5) * param


class Shift(Family):
    name = "shift"

    def apply(self, x, param, generator):
        return x + param


def threshold_model(n=400, seed=0):
    """Images of one grey value v; the label and the model's answer are whether the mean exceeds 0.5.
    Squash (×0.1 about 0.5) then shift (+0.04) pulls every v > 0.1 above the threshold (about 35 points
    lost); shift then squash only those within 0.04 of it (about 4.5 points)."""
    v = torch.tensor(np.random.default_rng(seed).random(n), dtype=torch.float32)
    x = v[:, None, None, None].expand(-1, 3, 8, 8).contiguous()

    def predict(batch):
        p = (torch.as_tensor(batch).float().mean(dim=(1, 2, 3)) > 0.5).float()
        return torch.stack([1 - p, p], 1).numpy()

    return predict, (x, (v > 0.5).long())


def make_tester(tmp_path, families, order=None):
    predict, data = threshold_model()
    return testnav.Tester(predict, data, families=families, levels=2, order=order, cache_dir=tmp_path, progress=False)


def test_other_orders_all_up_to_three_families_and_a_sample_beyond():
    rng = np.random.default_rng(0)
    assert other_orders([2, 5], 5, rng) == [(5, 2)]
    three = other_orders([0, 1, 2], 5, rng)
    assert len(three) == 5 and (0, 1, 2) not in three and len(set(three)) == 5
    four = other_orders([0, 1, 2, 3], 4, np.random.default_rng(1))
    assert len(four) == 4 and len(set(four)) == 4 and (0, 1, 2, 3) not in four
    assert four == other_orders([0, 1, 2, 3], 4, np.random.default_rng(1))  # drawn from the seed


def test_a_finding_that_needs_its_order_names_it_with_both_accuracies(tmp_path):
    listed = make_tester(tmp_path, [Squash([0.1]), Shift([0.04])]).scan()
    assert "Families are applied in list order, squash → shift" in listed.text()
    mode = listed.failure_modes.iloc[0]
    assert mode["configuration"].startswith("squash=1") and "shift=1" in mode["configuration"]
    assert not mode["in_every_order"] and mode["other_order"] == "shift → squash"
    assert mode["accuracy"] < 0.7 < 0.9 < mode["other_order_accuracy"]
    assert f"it needs this order: shift → squash leaves {100 * mode['other_order_accuracy']:.1f} %" in listed.text()
    # the same configuration measured in the other order by a Tester of its own: the same accuracy
    reversed_ = make_tester(tmp_path, [Squash([0.1]), Shift([0.04])], order=["shift", "squash"]).scan()
    assert "list order, shift → squash" in reversed_.text()
    both = reversed_.configurations[reversed_.configurations["configuration"].str.count("=") == 2]
    assert both["accuracy"].iloc[0] == pytest.approx(mode["other_order_accuracy"])
    pairs = reversed_.failure_modes["configuration"].str.count("=") == 2
    assert not pairs.any()  # in that order the combination is no failure mode (shift alone may be)


def test_a_finding_of_families_that_commute_holds_in_every_order(tmp_path):
    found = make_tester(tmp_path, [Shift([0.3]), Shift([0.3], name="lift")]).scan()
    mode = found.failure_modes.iloc[0]
    assert mode["configuration"].count("=") == 2 and mode["in_every_order"] and mode["orders_measured"] == 1
    assert "the same in every order (1 other measured)" in found.text()
    assert np.isnan(
        make_tester(tmp_path, [Shift([0.3]), Shift([0.3], name="lift")])
        .scan(orders=0)
        .failure_modes["other_order_accuracy"]
        .astype(float)
    ).all()


@pytest.mark.parametrize("order", [["shift"], ["shift", "shift"], ["squash", "jpeg"], "squash,shift"])
def test_a_bad_order_is_one_line_naming_the_families(tmp_path, order):
    with pytest.raises(
        UserError, match=r"^order=.*each family once, in the order they are applied \(the families: squash, shift\)$"
    ):
        make_tester(tmp_path, [Squash([0.1]), Shift([0.04])], order=order)
