"""Input-level signals on tiny hand-made activations, where each value can be computed by hand."""

import numpy as np
import pytest
import torch
from scipy.stats import gaussian_kde

from testnav import signals
from testnav.benchmarks.vision import Activations
from testnav.signals.deepgini import DeepGini
from testnav.signals.dsa import DSA
from testnav.signals.lsa import KDE


class FakeView(Activations):
    """Hand-made activations and probabilities; what the signals derive from them (features,
    predictions, neurons, per-class rows, per-set reductions) is the real views' code."""

    def __init__(self, layers, probabilities=None, labels=None, sets=1):
        self.layers = [torch.tensor(x, dtype=torch.float64) for x in layers]
        self.probabilities = None if probabilities is None else torch.tensor(probabilities, dtype=torch.float64)
        self.labels = None if labels is None else torch.tensor(labels)
        self.sets = sets


TRAIN = FakeView([[[0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]])  # one layer, neurons ranges [0,1], [0,2], [1,3]


def test_nac_scales_per_input_and_layer():
    v = FakeView([[[0.0, 1.0, 0.4], [0.2, 0.2, 0.2]], [[5.0, 0.0], [0.0, 0.0]]])
    # input 1 layer 1 scaled: 0, 1, .4 → neuron 2 covered; input 2 constant → none; layer 2: neuron 1
    assert signals.make("nac", threshold=0.5)(v) == pytest.approx(2 / 5)


def test_kmnc_counts_sections_hit_inside_training_range():
    m = signals.make("kmnc", k=4)
    m.prepare(TRAIN)
    v = FakeView([[[0.1, 1.9, 3.5], [0.2, 0.5, 2.0], [0.9, 1.0, 0.0]]])
    # neuron 1: sections 0, 0, 3 → 2; neuron 2: 3, 1, 2 → 3; neuron 3: 3.5 and 0.0 outside, 2.0 → section 2 → 1
    assert m(v) == pytest.approx((2 + 3 + 1) / 12)


def test_snac_counts_neurons_above_training_max():
    m = signals.make("snac")
    m.prepare(TRAIN)
    assert m(FakeView([[[1.5, 1.0, 3.0], [0.0, 2.5, 0.0]]])) == pytest.approx(2 / 3)


def test_tknc_top_k_per_layer():
    v = FakeView([[[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 3.0, 2.0]]])
    assert signals.make("tknc", k=1)(v) == pytest.approx(2 / 4)
    assert signals.make("tknc", k=2)(v) == pytest.approx(4 / 4)


def test_deepgini():
    v = FakeView([[[0.0]]], probabilities=[[1.0, 0.0], [0.5, 0.5]])
    assert DeepGini()(v) == pytest.approx((0.0 + 0.5) / 2)


def test_dsa_by_hand():
    train = FakeView([[[0.0, 0.0], [4.0, 0.0]]], labels=[0, 1])
    m = DSA()
    m.prepare(train)
    v = FakeView([[[1.0, 0.0]]], probabilities=[[0.9, 0.1]])  # predicted 0: nearest class-0 at 1, that to class 1: 4
    assert m(v) == pytest.approx(1 / 4)


def test_dsa_class_by_class_equals_the_masked_full_distance_matrix():
    """The nearest training input of the predicted class, found class by class, is the one the
    full (N, n_train) distance matrix with the other classes masked out gives (Kim et al.'s formula)."""
    g = torch.Generator().manual_seed(0)
    train_a, train_y = torch.randn(300, 6, generator=g, dtype=torch.float64), torch.randint(0, 5, (300,), generator=g)
    test_a, probs = (
        torch.randn(120, 6, generator=g, dtype=torch.float64),
        torch.rand(120, 6, generator=g, dtype=torch.float64),
    )
    m = DSA()
    m.prepare(FakeView([train_a.tolist()], labels=train_y.tolist()))
    view = FakeView([test_a.tolist()], probabilities=probs.tolist())  # class 5 has no training input: DSA = inf
    pred = view.predictions
    d = torch.cdist(test_a, train_a)
    dist_a, nearest = d.masked_fill(train_y[None, :] != pred[:, None], float("inf")).min(dim=1)
    full = (
        torch.cdist(train_a, train_a).masked_fill(train_y[None, :] == train_y[:, None], float("inf")).min(dim=1).values
    )
    expected = dist_a / full[nearest]
    assert (pred == 5).any() and m(view) == float("inf") == float(expected.mean())
    keep = pred != 5
    view = FakeView([test_a[keep].tolist()], probabilities=probs[keep].tolist())
    assert m(view) == pytest.approx(float(expected[keep].mean()), rel=1e-12)


def test_kde_matches_scipy_and_lsa_uses_predicted_class():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 4, generator=g, dtype=torch.float64)
    q = torch.randn(10, 4, generator=g, dtype=torch.float64)
    assert np.allclose(KDE(x).logpdf(q).numpy(), gaussian_kde(x.numpy().T).logpdf(q.numpy().T))
    labels = [0] * 100 + [1] * 100
    m = signals.make("lsa")
    m.prepare(FakeView([x.numpy()], labels=labels))
    v = FakeView([q.numpy()], probabilities=[[1.0, 0.0]] * 10)
    expect = -gaussian_kde(x[:100].numpy().T).logpdf(q.numpy().T).mean()
    assert m(v) == pytest.approx(expect)


def awkward_layers(dtype, rows=60):
    """Post-ReLU-like activations with what real ones hold: rows of zeros, ties at the k-th value,
    values at the training range's ends, a NaN, ±inf."""
    g = torch.Generator().manual_seed(3)
    layers = []
    for n in (7, 3):
        a = torch.relu(torch.randn(rows, n, generator=g)).to(dtype)
        a[::5] = 0.0  # no active neuron: every neuron ties at 0
        a[1::7, :2] = a[1::7, 2:3]  # ties among the largest values
        a[2::9] = torch.tensor([0.0, 1.0] * n)[:n].to(dtype)  # a training range's ends
        a[3, 1] = float("nan")
        a[4, 0], a[5, -1] = float("inf"), float("-inf")
        layers.append(a)
    return layers


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_cpu_kernels_equal_the_torch_code_to_the_bit(dtype, monkeypatch):
    """NAC, KMNC and TKNC score CPU views with compiled kernels; on awkward activations, three
    sets stacked, they give what the torch code (CUDA's path) gives, to the bit."""
    import testnav.signals.kmnc as kmnc_mod
    import testnav.signals.nac as nac_mod
    import testnav.signals.tknc as tknc_mod

    class View(Activations):
        def __init__(self, layers, sets):
            self.layers, self.sets = layers, sets

    train = View(
        [torch.relu(torch.randn(50, n, generator=torch.Generator().manual_seed(n))).to(dtype) for n in (7, 3)], 1
    )
    view = View(awkward_layers(dtype), 3)
    cases = [
        (nac_mod, signals.make("nac", threshold=0.5)),
        (nac_mod, signals.make("nac", threshold=0.0)),
        (kmnc_mod, signals.make("kmnc", k=10)),
        (kmnc_mod, signals.make("kmnc", k=1)),
    ]
    cases += [(tknc_mod, signals.make("tknc", k=k)) for k in (1, 2, 3, 5)]
    for module, signal in cases:
        signal.prepare(train)
        fast = signal.per_set(view)
        with monkeypatch.context() as m:
            m.setattr(module, "cpu_layers", lambda v: None)
            reference = signal.per_set(view)
        assert fast.dtype == reference.dtype == torch.float64 and fast.shape == (3,)
        assert torch.equal(fast, reference), (signal, fast, reference)
    # both of TKNC's branches ran: rows with one top-2 set, and rows left to topk
    a = view.layers[0].numpy()
    hit, tied = np.zeros((3, a.shape[1]), dtype=bool), np.zeros(len(a), dtype=bool)
    tknc_mod._top_k(a, len(a) // 3, 2, hit, tied)
    assert 0 < tied.sum() < len(a) and tied[3] and tied[0]


def test_signal_k_must_be_a_whole_number_from_one():
    from testnav.errors import UserError

    for bad in (0, -1, 1.5):
        with pytest.raises(UserError, match="k="):
            signals.make("tknc", k=bad)
        with pytest.raises(UserError, match="k="):
            signals.make("kmnc", k=bad)


def test_coverage_signals_bin_a_float64_pass_of_the_model_by_default():
    """NAC, SNAC, KMNC and TKNC read the monitored layers recomputed in float64 from the images
    (one pass per view, shared), so a CPU's float32 kernels cannot move a value across an edge;
    precision=model reads the model's own (float32) pass."""
    from testnav.benchmarks.vision import View
    from testnav.errors import UserError
    from testnav.models.lenet import LeNet5
    from testnav.models.monitor import float64_twin

    torch.manual_seed(0)
    model = LeNet5().eval()
    images = torch.rand(40, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    view = View([images[:20], images[20:]], model, batch_size=16)
    exact, own = signals.make("kmnc", k=50), signals.make("kmnc", k=50, precision="model")
    for s in (exact, own):
        s.prepare(View(images, model, batch_size=64))
    layers = exact.layers(view)
    assert [a.dtype for a in layers] == [torch.float64] * 2 and exact.layers(view) is layers  # computed once
    with torch.inference_mode():
        assert torch.equal(layers[1], float64_twin(model).hidden(images.double())[1])
    assert own.layers(view)[0].dtype == torch.float32
    assert float64_twin(model) is float64_twin(model)
    assert exact.describe()["precision"] == "float64" and exact.per_set(view).shape == (2,)
    with pytest.raises(UserError, match="precision=float16"):
        signals.make("nac", precision="float16")


def test_float64_twin_runs_a_first_conv_relu_pool_as_one_loop_within_rounding_of_torch():
    """The twin's Conv2d → ReLU → MaxPool2d(2) runs with few taps per output are `ConvReluPool`
    (LeNet-5's first; its second, 150 taps, keeps torch's convolution, then a `ReluPool`); its
    float64 values are torch's within float64 rounding, on LeNet-5 as on an RGB convolution with
    padding and odd sizes, and `ReluPool`'s are torch's to the bit, NaN included."""
    import copy

    from testnav.models import float64 as f64
    from testnav.models.lenet import LeNet5
    from testnav.models.monitor import float64_twin

    torch.manual_seed(0)
    model = LeNet5().eval()
    twin, plain = float64_twin(model), copy.deepcopy(model).double().eval()
    assert [type(m).__name__ for m in twin.conv] == ["ConvReluPool", "Conv2d", "ReluPool", "Flatten"]
    x = torch.rand(50, 1, 28, 28, generator=torch.Generator().manual_seed(2)).double()
    with torch.inference_mode():
        for got, want in zip(twin.hidden(x), plain.hidden(x)):
            assert got.dtype == torch.float64 and (got - want).abs().max() < 1e-13
        conv, relu, pool = torch.nn.Conv2d(3, 12, 3, padding=1).double(), torch.nn.ReLU(), torch.nn.MaxPool2d(2)
        xi = torch.randn(7, 3, 11, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
        fused = f64.ConvReluPool(conv, relu, pool)
        assert fused(xi).shape == (7, 12, 5, 4) and (fused(xi) - pool(relu(conv(xi)))).abs().max() < 1e-13
        strided = xi.transpose(2, 3).contiguous().transpose(2, 3)  # the loop reads a contiguous copy
        assert torch.equal(fused(strided), fused(xi))
        odd = torch.randn(5, 4, 9, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
        odd[0, 0, 2, 3] = float("nan")
        for v in (odd, odd[1]):  # batched and one image; the odd last row and column are dropped
            got, want = f64.ReluPool()(v), pool(relu(v))
            assert got.shape == want.shape and torch.equal(got.nan_to_num(-1.0), want.nan_to_num(-1.0))
        assert f64.ReluPool()(odd)[0, 0, 1, 1].isnan()
    # only plain convolutions with few taps, followed by ReLU and a 2 × 2 pool, are fused
    seq = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, stride=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 4, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2, ceil_mode=True),
        torch.nn.Conv2d(8, 4, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 4, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    )  # fmt: skip
    fused_seq = [type(m).__name__ for m in f64.fuse(seq.double())]
    assert fused_seq == ["Conv2d", "ReluPool", "Conv2d", "ReLU", "MaxPool2d", "Conv2d", "ReluPool", "ConvReluPool"]
