"""`levels=k` spans each family's whole severity table in `Tester` and the generic presets, and
`severities=[…]` picks by hand (issue 64); the paper benchmarks keep their first ℓ − 1 entries."""

from __future__ import annotations

import pytest
import torch

from testnav.errors import UserError
from testnav.families import make as family
from testnav.families.severities import spread


def test_spread_reaches_both_ends_of_the_table():
    assert spread(5, 6) == (1, 2, 3, 4, 5)
    assert spread(5, 4) == (1, 3, 5)
    assert spread(5, 3) == (1, 5)
    assert spread(5, 2) == (3,)
    assert spread(5, 5) == (1, 2, 4, 5)


def make_tester(**kw):
    import testnav

    def predict(batch):
        return torch.ones(len(batch), 3).numpy()

    x, y = torch.rand(6, 3, 32, 32), torch.arange(6) % 3
    return testnav.Tester(predict, (x, y), families=["gaussian_blur", "jpeg"], **kw)


def test_levels_in_the_tester_span_each_table_and_severities_pick_by_hand():
    blur, jpeg = (family(n, image_size=32) for n in ("gaussian_blur", "jpeg"))
    t = make_tester(levels=4)
    got = t.benchmark.families
    assert [f.params for f in got] == [[blur.params[i] for i in (0, 2, 4)], [jpeg.params[i] for i in (0, 2, 4)]]
    assert [f.severities for f in got] == [(1, 3, 5)] * 2 and got[0].table_size == 5
    assert t.lattice.levels == 4
    assert t.name("gaussian_blur=5") == f"gaussian_blur=5 (σ {blur.params[4]:g})"  # the table's harshest, severity 5
    t = make_tester(severities=[2, 4])
    assert t.lattice.levels == 3 and [f.params for f in t.benchmark.families][1] == [jpeg.params[1], jpeg.params[3]]
    t = make_tester(severities={"gaussian_blur": [5], "jpeg": [1]})
    assert [f.params for f in t.benchmark.families] == [[blur.params[4]], [jpeg.params[0]]]
    assert make_tester().lattice.levels == 3 and make_tester().benchmark.families[0].severities == (1, 5)


@pytest.mark.parametrize(
    "kw, expect",
    [
        ({"levels": 7}, "levels=7 is outside family gaussian_blur's table (valid: 2..6"),
        ({"levels": 1}, "levels=1: a whole number ≥ 2"),
        ({"severities": [0, 2]}, "severities=[0, 2]: gaussian_blur's table has entries 1..5"),
        ({"severities": [3, 1]}, "severities=[3, 1]: give them in increasing order"),
        ({"levels": 3, "severities": [1, 2, 3]}, "levels=3 with severities=[1, 2, 3]: 3 severities make levels=4"),
        ({"severities": {"jpeg": [1]}}, "one list per family (gaussian_blur, jpeg)"),
        ({"severities": "1,3"}, "severities='1,3': a list of table entries"),
    ],
)
def test_bad_levels_and_severities_are_one_line_naming_the_python_argument(kw, expect):
    with pytest.raises(UserError) as err:
        make_tester(**kw)
    assert expect in str(err.value) and "\n" not in str(err.value) and "benchmark." not in str(err.value)


def test_the_generic_presets_span_the_tables_and_mnist5k_keeps_its_own():
    from testnav.pipeline import compose_benchmark

    b = compose_benchmark(["benchmark=image_classification", "benchmark.model.num_classes=5", "benchmark.levels=4"])
    assert [f.severities for f in b.families] == [(1, 3, 5)] * 4
    assert b.families[3].params == [family("jpeg", image_size=224).params[i] for i in (0, 2, 4)]
    text = compose_benchmark(["benchmark=text_classification"])
    assert [f.params for f in text.families] == [[1, 5]] * 3
    paper = compose_benchmark([])  # mnist5k: MNIST-C's tables as they are, levels 1..5
    assert [getattr(f, "severities", None) for f in paper.families] == [None] * 4
    assert paper.families[0].params == family("brightness", table="mnist_c").params
    small = compose_benchmark(["benchmark.levels=3"])
    assert small.levels == 3 and small.families[1].params == family("zoom", table="mnist_c").params


def test_names_and_queries_read_severities_that_keep_their_meaning_when_levels_change():
    """levels=5 tests severities 1, 2, 4, 5 and levels=4 tests 1, 3, 5: a level index meant another
    severity in each (issue 75, item 1); a name, a configuration and a query now say the severity."""
    from testnav.core.naming import config_name
    from testnav.pipeline.tomography import query_of

    four, five = make_tester(levels=4), make_tester(levels=5)
    assert four.configuration("jpeg=5") == (0, 3) and five.configuration("jpeg=5") == (0, 4)  # θ: levels
    assert four.name((0, 3)) == five.name((0, 4)) == five.name("jpeg=5") == four.name({"jpeg": 5}) == "jpeg=5 (q 40)"

    def selected(t, expr):
        mask = query_of(t.benchmark, expr).mask(t.lattice.tuples)
        return {config_name(theta, t.benchmark.families) for theta in t.lattice.tuples[mask]}  # θ: levels

    expr = "jpeg >= 5 & gaussian_blur <= 1"
    assert selected(four, expr) == selected(five, expr) == {"jpeg=5 (q 40)", "gaussian_blur=1 (σ 0.4) · jpeg=5 (q 40)"}
    with pytest.raises(
        UserError,
        match=r"jpeg severity 2 \(q65\) was not tested in .jpeg = 2. \(tested: 1 \(q80\), 3 \(q58\), 5 \(q40\); 0 is",
    ):
        query_of(four.benchmark, "jpeg = 2")
    # a parameter names the same entry, as the reports print it (without spaces, or quoted as printed)
    by_parameter = "jpeg >= q40 & gaussian_blur <= 'σ 0.4'"
    assert selected(four, by_parameter) == selected(five, by_parameter) == selected(four, expr)
    assert selected(five, "jpeg < Q40") == selected(five, "jpeg < 5") != selected(five, "jpeg >= 5")
    with pytest.raises(UserError, match=r"^query error at 8: jpeg has no parameter 'q45' in .*\(tested: 1 \(q80\), "):
        query_of(four.benchmark, "jpeg >= q45")
    with pytest.raises(UserError, match=r"configuration: jpeg=3 \(tested severities: 1, 2, 4, 5; 0: the identity\)"):
        five.configuration("jpeg=3")
