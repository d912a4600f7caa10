"""The papers' numbers that TestNav's claims are checked against, and which of the paper's columns a
benchmark–fidelity is compared with."""

from __future__ import annotations

BASE = ["nsga2", "greedy", "ga", "random"]  # Table 2's rows, in the paper's order
SIGNALS = ["nac", "snac", "kmnc", "tknc", "deepgini", "lsa", "dsa"]

# TestNav Table 2 (AUC-Recall@P*, mean over 10 seeds): (benchmark, fidelity) -> method -> AUC
TABLE2 = {
    ("tiny_imagenet", "ssim"): dict(nsga2=0.704, greedy=0.557, ga=0.540, random=0.510),
    ("tiny_imagenet", "kid"): dict(nsga2=0.686, greedy=0.464, ga=0.552, random=0.503),
    ("qqp", "chrf"): dict(nsga2=0.646, greedy=0.638, ga=0.693, random=0.526),
    ("qqp", "bertf1"): dict(nsga2=0.651, greedy=0.782, ga=0.707, random=0.514),
    ("humaneval", "chrf"): dict(nsga2=0.729, greedy=0.742, ga=0.753, random=0.502),
    ("humaneval", "bertf1"): dict(nsga2=0.730, greedy=0.783, ga=0.767, random=0.522),
    ("mbpp", "chrf"): dict(nsga2=0.697, greedy=0.681, ga=0.640, random=0.514),
    ("mbpp", "bertf1"): dict(nsga2=0.690, greedy=0.751, ga=0.631, random=0.490),
}
PAPER_GRID = (1, 5, 110)  # §3.3: η_c, η_m, μ


def paper_column(benchmark: str, fidelity: str):
    """The paper's Table 2 column a benchmark–fidelity is compared with: its own, else the one of the
    same metric (SSIM/KID: Tiny-ImageNet; chrF/BERT-F1: QQP, the paper's language benchmark)."""
    if (benchmark, fidelity) in TABLE2:
        return benchmark, fidelity
    if fidelity in ("ssim", "kid"):
        return "tiny_imagenet", fidelity
    if fidelity in ("chrf", "bertf1"):
        return "qqp", fidelity
    return None
