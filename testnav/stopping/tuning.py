"""The stopping certificate's tuned constants, in one frozen object (testnav/stopping/certificate.py).

Where each was chosen is stated beside it; the record of what was tried is in docs/tomonav.md and
docs/notes/2026-12-05-tomonav-history.md. A study that reads the certificate with other constants
passes `dataclasses.replace(TUNED, …)`; the run's settings (stop_at, stop_on, epsilon, every, share)
are CertificateConfig's, not these.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """The certificate's constants. p_complete's tolerance `share` and its add-one calibration were
    chosen on generated tables of every size of the scaling study (4⁴ to 6⁸) and on mnist5k_c6,
    seeds 7–9 only, and checked on the held-out seeds 100–104 (results/tables/scale.md)."""

    # the schedule: a checkpoint every 1/every_share of Θ new configurations (5 %), at most every_cap
    # apart (good_every_cap stopping on p_good: an ε-front settles well before 40,000 configurations)
    every_share: int = 20
    every_cap: int = 2_000
    good_every_cap: int = 500
    growth: float = 1.25  # checkpoints at least this factor apart (Certificate.after)
    # above reuse_above configurations (the lattices where TomoNav ranks a pool) checkpoints come
    # dense_growth apart (or `every`, if further), fresh is counted over a trailing window and the
    # surrogate is fitted once per quiet spell (certificate.py's docstring); chosen on TomoNav's runs
    # with seeds 7–9 (docs/tomonav.md)
    reuse_above: int = 2_000
    dense_growth: float = 1.10
    # the surrogate: a forest of `trees` (its fit is most of a checkpoint's cost); beyond sample_above
    # unmeasured θ, the sum is estimated from the front's neighbours and `sample` uniform draws, the
    # forest has at most `trees` trees (whatever Certificate's n_estimators) and each bootstraps at most
    # max_samples measured points
    # (a checkpoint costs the same on any Θ)
    trees: int = 30
    sample_above: int = 20_000
    sample: int = 5_000
    max_samples: int = 1_000
    # p_complete: once the run has measured `quiet` × as many configurations as when its front's newest
    # member was measured, the tolerance is quiet_relax × the usual one; chosen on TomoNav's runs with
    # seeds 7–9, read off their checkpoints (docs/tomonav.md, "A settled front")
    quiet: float = 1.7
    quiet_relax: float = 2.0
    # p_good once a window found no ε-improvement: exp(−missing_ε / (good_share · |front| · r)),
    # r = (u / u_ε)^good_relax_power once the run has measured good_quiet × as many configurations (u)
    # as when its newest ε-improvement was measured (u_ε), else 1; chosen on generated tables only by
    # scripts/stopping_study.py (results/tables/stopping_study.md)
    good_share: float = 0.25
    good_quiet: float = 1.7
    good_relax_power: float = 2.0


TUNED = Tuning()
