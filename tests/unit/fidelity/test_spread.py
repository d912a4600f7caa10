"""Each fidelity metric says how ρ's own sampling error on D is read (`Metric.spread`), and gives it:
per-input values whose mean is the metric, or (KID) a bootstrap half-width. certificate.epsilon=auto
reads it; a metric that declares none is refused in one line."""

import numpy as np
import pytest
import torch

from testnav.benchmarks.text import TextView
from testnav.benchmarks.vision import View
from testnav.fidelity.base import Metric
from testnav.fidelity.kid import KID
from testnav.fidelity.ssim import SSIM
from testnav.stopping.epsilon import mean_half_widths


def images(seed: int, n: int = 48) -> torch.Tensor:
    return torch.rand(n, 1, 12, 12, generator=torch.Generator().manual_seed(seed))


def test_ssim_is_the_mean_of_its_per_input_values_and_its_half_width_theirs():
    clean = images(0)
    noisy = (clean + 0.2 * images(1)).clamp(0, 1)
    m = SSIM(data_range=1.0, sigma=1.5, batch_size=16, name="ssim")
    m.prepare(View(clean, None, 16))
    values = m.per_input(View(noisy, None, 16))
    assert values.shape == (48,) and values.std() > 0
    assert m(View(noisy, None, 16)) == pytest.approx(values.mean(), abs=1e-6)
    assert m.half_width(View(noisy, None, 16), 0.95) == pytest.approx(1.96 * values.std(ddof=1) / np.sqrt(48), rel=1e-3)
    assert m.half_width(View(clean, None, 16), 0.95) == pytest.approx(0.0, abs=1e-6)  # every image its own


def test_kid_bootstraps_its_half_width_which_shrinks_with_more_inputs():
    def half(n: int) -> float:
        m = KID(subset_size=1000, subsets=1, degree=3, coef=1.0, seed=0, feature="pixels", fallback=None, name="kid")
        clean = images(0, n)
        m.prepare(View(clean, None, 64))
        return m.half_width(View((clean + 0.3 * images(1, n)).clamp(0, 1), None, 64), 0.95)

    small, large = half(40), half(160)
    assert KID.spread == "bootstrap" and 0 < large < small


def test_chrf_per_sentence_values_and_their_half_width():
    pytest.importorskip("sacrebleu")
    from testnav.fidelity.chrf import ChrF

    class Texts:
        def __init__(self, texts):
            self.items = texts

        def texts(self):
            return self.items

    refs = ["the cat sat on the mat", "a quick brown fox", "hello world again", "testing is fun"]
    m = ChrF(char_order=6, word_order=0, beta=2, whitespace=False, name="chrf")
    m.prepare(TextView(Texts(refs)))
    hyps = ["the cat sat on a mat", "a quick brown fax", "hello world", "testing is fun"]
    values = m.per_input(TextView(Texts(hyps)))
    assert len(values) == 4 and values[3] == pytest.approx(100.0) and min(values) < 100
    assert m.half_width(TextView(Texts(hyps)), 0.95) == pytest.approx(mean_half_widths(np.array(values))[0])


def test_a_metric_declares_a_known_spread_or_none():
    with pytest.raises(TypeError, match="spread='sometimes'"):

        class Bad(Metric):  # noqa: F841
            higher_is_better = True
            spread = "sometimes"

    class Plain(Metric):
        higher_is_better = True
        column = "plain"

        def prepare(self, clean):
            pass

        def __call__(self, view):
            return 0.0

        def describe(self):
            return {}

    assert Plain("plain").spread is None
    with pytest.raises(NotImplementedError, match="plain: spread=None gives no per-input values"):
        Plain("plain").per_input(None)


def test_a_search_at_epsilon_auto_on_a_metric_with_no_spread_is_refused_in_one_line(tmp_path, monkeypatch):
    """The certificate's one line, before any configuration is measured."""
    import testnav
    from testnav.errors import UserError

    monkeypatch.setattr(SSIM, "spread", None)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 4)).eval()
    x, y = torch.rand(16, 3, 8, 8, generator=torch.Generator().manual_seed(0)), torch.arange(16) % 4
    t = testnav.Tester(model, (x, y), families=["brightness"], levels=3, cache_dir=tmp_path, progress=False)
    with pytest.raises(UserError, match=r"^certificate.epsilon=auto: ρ's sampling error is not known here .*spread"):
        t.search("random", budget=3, seed=0)
