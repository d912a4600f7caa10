import pytest
import torch
from torchmetrics.functional.image import structural_similarity_index_measure

from testnav import fidelity
from testnav.fidelity import kid
from testnav.fidelity.ssim import ssim_per_image


def test_matches_torchmetrics_gray_and_rgb(digits):
    noisy = (digits * 0.8 + 0.2 * torch.rand(digits.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)
    ref = structural_similarity_index_measure(noisy, digits, data_range=1.0, reduction="none")
    assert torch.allclose(ssim_per_image(noisy, digits), ref, atol=1e-5)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(8, 3, 32, 40, generator=g)
    y = (x + 0.1 * torch.randn(x.shape, generator=g)).clamp(0, 1)
    ref = structural_similarity_index_measure(y, x, data_range=1.0, reduction="none")
    assert torch.allclose(ssim_per_image(y, x), ref, atol=1e-5)
    assert torch.allclose(ssim_per_image(x, x), torch.ones(8), atol=1e-6)


def test_kid_feature_falls_back_by_name_when_inception_is_absent(monkeypatch):
    import pytest

    from testnav.errors import UserError

    monkeypatch.setattr(kid, "inception_available", lambda: False)
    assert fidelity.make("kid", feature="inception", fallback="model").feature == "model"
    assert (
        fidelity.make("kid", feature="inception", fallback="model").describe()["feature"] == "model"
    )  # part of the cache key
    with pytest.raises(UserError, match="KID with Inception features needs torch-fidelity"):
        fidelity.make("kid", feature="inception", fallback=None)
    with pytest.raises(UserError, match="valid: inception, model"):
        fidelity.make("kid", feature="clip")
    monkeypatch.setattr(kid, "inception_available", lambda: True)
    assert fidelity.make("kid", feature="inception").feature == "inception"


@pytest.mark.parametrize("subsets, subset_size", [(1, 1000), (1, 64), (3, 40)])
def test_kid_equals_torchmetrics(subsets, subset_size):
    """The whole-set case (clean-vs-clean kernel sum computed once) and torchmetrics' random
    subsets both give torchmetrics' KernelInceptionDistance on the same features."""
    from torchmetrics.image.kid import KernelInceptionDistance

    class Features:
        sets = 1

        def __init__(self, f):
            self.features = f

    g = torch.Generator().manual_seed(0)
    clean, perturbed = (
        torch.rand(64, 8, generator=g, dtype=torch.float64),
        torch.rand(64, 8, generator=g, dtype=torch.float64) * 1.3,
    )
    m = fidelity.make("kid", subset_size=subset_size, subsets=subsets, feature="model")
    m.prepare(Features(clean))
    ref = KernelInceptionDistance(feature=torch.nn.Identity(), subsets=subsets, subset_size=min(subset_size, 64))
    ref.update(clean, real=True)
    ref.update(perturbed, real=False)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        want = float(ref.compute()[0])
    assert m(Features(perturbed)) == pytest.approx(want, rel=1e-12)
    assert m(Features(perturbed)) == pytest.approx(want, rel=1e-12)  # the cached clean sum is reused unchanged


def test_cached_clean_statistics_give_the_same_ssim(digits):
    """The ground truth filters D's local mean and variance once (`SSIM.prepare`); the value per
    configuration is the one computed from scratch, to the bit, and still torchmetrics'."""
    from testnav.fidelity.ssim import clean_statistics

    class Images:
        sets = 1

        def __init__(self, x):
            self.images = x
            self.parts = [x]

    noisy = (digits * 0.7 + 0.3 * torch.rand(digits.shape, generator=torch.Generator().manual_seed(2))).clamp(0, 1)
    assert torch.equal(ssim_per_image(noisy, digits, clean=clean_statistics(digits)), ssim_per_image(noisy, digits))
    m = fidelity.make("ssim", batch_size=7)  # several batches, the last one short
    m.prepare(Images(digits))
    want = float(ssim_per_image(noisy, digits).double().sum()) / len(digits)
    assert m(Images(noisy)) == pytest.approx(want, rel=1e-12)
    ref = structural_similarity_index_measure(noisy, digits, data_range=1.0, reduction="none")
    assert m(Images(noisy)) == pytest.approx(float(ref.double().mean()), abs=1e-5)


def test_kid_on_float32_features_agrees_with_float64():
    """A float32 model's features keep their precision in the Gram products (float64 kernel and
    sums): KID agrees with torchmetrics on the same features in float64 to far below the spread
    of KID over a table (values here ~10², agreement ~1e-6 absolute)."""
    from torchmetrics.image.kid import KernelInceptionDistance

    class Features:
        sets = 1

        def __init__(self, f):
            self.features = f

    g = torch.Generator().manual_seed(3)
    clean = torch.relu(torch.randn(500, 84, generator=g)) * 3  # post-ReLU features, as LeNet's
    perturbed = torch.relu(torch.randn(500, 84, generator=g) + 0.3) * 3
    m = fidelity.make("kid", subset_size=1000, feature="model")
    m.prepare(Features(clean))
    ref = KernelInceptionDistance(feature=torch.nn.Identity(), subsets=1, subset_size=500)
    ref.update(clean.double(), real=True)
    ref.update(perturbed.double(), real=False)
    want = float(ref.compute()[0])
    got = m(Features(perturbed))
    assert abs(got - want) < 1e-6 * max(1.0, abs(want)) and abs(want) > 1.0


@pytest.mark.parametrize(
    "shape, batch_size, sigma",
    [((300, 1, 28, 28), 256, 1.5), ((40, 3, 32, 32), 16, 1.5), ((13, 1, 11, 40), 5, 1.5), ((30, 1, 28, 28), 16, 1.0)],
)
def test_compiled_kernel_gives_the_torch_codes_values_to_the_bit(shape, batch_size, sigma):
    """On the CPU, float32 blocks go through `_ssim_maps` (TAPS taps per output, summed in a
    register, split over threads image by image); every set's value is the torch code's, bit for bit, at one and
    two threads, and a block holding an infinite pixel is handed to the torch code."""
    from testnav.fidelity import ssim

    class Images:
        def __init__(self, parts):
            self.parts, self.sets, self.images = parts, len(parts), parts[0]

    g = torch.Generator().manual_seed(4)
    clean = torch.rand(shape, generator=g)
    clean[:, :, :3] = 0  # blank rows, as digits have
    sets = [(clean + s * torch.randn(shape, generator=g)).clamp(0, 1) for s in (0.05, 0.3)]
    sets[1][0, 0, 2, 2] = float("inf")  # one block of the second set goes to the torch code
    m = fidelity.make("ssim", batch_size=batch_size, sigma=sigma)
    m.prepare(Images([clean]))
    assert m._kernel is not None

    def torch_code(x):
        blocks = range(0, len(clean), batch_size)
        return sum(
            float(ssim_per_image(x[i : i + batch_size], clean[i : i + batch_size], sigma=sigma).double().sum())
            for i in blocks
        )

    want = torch.tensor([torch_code(x) / len(clean) for x in sets], dtype=torch.float64)
    threads = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            got = m.per_set(Images(sets))
            assert torch.equal(got[:1], want[:1]) and torch.isnan(got[1]) and torch.isnan(want[1])
            finite = sets[1].nan_to_num(posinf=1.0)
            assert torch.equal(
                m.per_set(Images([finite])), torch.tensor([torch_code(finite) / len(clean)], dtype=torch.float64)
            )
    finally:
        torch.set_num_threads(threads)
    # float64 images, and blocks the kernel refuses, take the torch code with the clean terms as prepared
    wide = sets[0].double()
    blocks = range(0, len(clean), batch_size)
    want64 = sum(
        float(ssim_per_image(wide[i : i + batch_size], clean[i : i + batch_size], sigma=sigma).double().sum())
        for i in blocks
    )
    assert m.per_set(Images([wide])).item() == pytest.approx(want64 / len(clean), rel=1e-12)
    kernel = ssim._ssim_maps
    try:
        ssim._ssim_maps = lambda *args: False
        assert torch.equal(m.per_set(Images(sets[:1])), want[:1])
    finally:
        ssim._ssim_maps = kernel
    large = fidelity.make("ssim")
    large.prepare(Images([torch.rand(2, 1, 8, ssim.KERNEL_MAX_SIDE + 1, generator=g)]))
    assert large._kernel is None  # beyond the sizes checked: the torch code
    wide_window = fidelity.make("ssim", sigma=2.0)  # 15 taps, more than the kernel's TAPS: the torch code
    wide_window.prepare(Images([clean]))
    assert wide_window._kernel is None
    # the kernel itself scored the finite blocks (True) and refused the infinite one (False)
    wh, h_start, ww, w_start, c1, c2 = m._kernel
    block = slice(0, batch_size)
    out = torch.empty_like(sets[0][block])
    args = [a.numpy() for a in (m._targets[0], *m._stats[0])]
    assert ssim._ssim_maps(sets[0][block].numpy(), *args, wh, h_start, ww, w_start, c1, c2, 2, out.numpy())
    assert not ssim._ssim_maps(sets[1][block].numpy(), *args, wh, h_start, ww, w_start, c1, c2, 2, out.numpy())


@pytest.mark.parametrize("degree, symmetric", [(3, False), (3, True), (2, True)])
def test_fused_kernel_sum_is_the_torch_terms_summed_in_float64(degree, symmetric):
    """On the CPU, float32 Gram blocks are summed by one compiled pass (`kid._poly_sum`): the same
    float32 terms as torch's mul_, add_ and pow_, their float64 sum within rounding of torch's,
    and the same value to the bit at one and two numba threads."""
    import numba

    g = torch.Generator().manual_seed(5)
    f1 = torch.relu(torch.randn(600, 84, generator=g)) * 3  # more rows than one block (BLOCK)
    f2 = f1 if symmetric else torch.relu(torch.randn(500, 84, generator=g) + 0.3) * 3
    terms = (f1 @ f2.T).mul_(1 / 84).add_(1.0).pow_(degree)
    if symmetric:
        terms.fill_diagonal_(0.0)
    want = float(terms.sum(dtype=torch.float64))
    threads = numba.get_num_threads()
    try:
        got = []
        for n in (1, 2):
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
            got.append(float(kid.kernel_sum(f1, f2, degree, 1 / 84, 1.0, symmetric)))
    finally:
        numba.set_num_threads(threads)
    assert got[0] == got[1]
    assert got[0] == pytest.approx(want, rel=1e-12) and want > 1e5
