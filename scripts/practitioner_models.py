"""Two models built the way a practitioner would bring them to `testnav.Tester`, offline, for the
stopping study (scripts/stopping_study.py). Neither is used to choose the certificate's rule.

* `digits`: a small CNN trained on scikit-learn's 8×8 digits, upsampled to 16×16 (another data
  set and size than mnist5k's LeNet-5 on 28×28 MNIST); 1,197 images train it, the other 600 are
  the test set; families Gaussian blur, brightness, contrast and JPEG at 5 levels (625
  configurations), SSIM.
* `glosses`: a two-layer transformer classifier with its own WordPiece tokenizer, trained from
  scratch on the WordNet glosses of ImageNet-1k's classes (timm ships them) to tell the glosses
  of animals (classes 0–397) from the rest; 700 glosses train it, 300 are the test set; families
  typo, contraction and punctuation at 9 levels (k = 0..8 edits per sentence, 729
  configurations), chrF.

Each trains once (seeded, one thread) and is kept under <cache>/practitioner/, so its ground
truth (keyed by the weights) is computed once too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

ANIMALS = 398  # ImageNet-1k's classes 0–397 are animals


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.head = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        return self.head(self.body(x))


def digits_data():
    """(train images, train labels, test images, test labels): 16×16 grayscale in [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    x = torch.nn.functional.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False).clamp(0, 1)
    y = torch.tensor(d.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    test, train = order[:600], order[600:]
    return x[train], y[train], x[test], y[test]


def train(model: nn.Module, batches, epochs: int, lr: float, seed: int = 0) -> nn.Module:
    """Adam on cross-entropy, seeded and on one thread (the same weights on every run)."""
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        model.train()
        for _ in range(epochs):
            for inputs, y in batches():
                opt.zero_grad()
                out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
                logits = out.logits if hasattr(out, "logits") else out
                nn.functional.cross_entropy(logits, y).backward()
                opt.step()
        model.eval()
    finally:
        torch.set_num_threads(threads)
    return model


def digits_tester(cache_dir):
    import testnav

    x, y, xt, yt = digits_data()
    path = Path(cache_dir) / "practitioner" / "digits_cnn.pt"
    model = DigitsCNN()
    if path.exists():
        model.load_state_dict(torch.load(path))
    else:
        torch.manual_seed(0)
        model = DigitsCNN()
        perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(1))

        def batches():
            for i in range(0, len(y), 64):
                yield x[perm[i : i + 64]], y[perm[i : i + 64]]

        train(model, batches, epochs=15, lr=3e-3)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), path)
    model.eval()
    return testnav.Tester(
        model,
        (xt, yt),
        families=["gaussian_blur", "brightness", "contrast", "jpeg"],
        levels=5,
        fidelity="ssim",
        name="digits16",
        cache_dir=cache_dir,
        device="cpu",
    )


def gloss_data():
    """(texts, labels) of ImageNet-1k's classes: the WordNet gloss, 1 for an animal."""
    import timm

    info = Path(timm.__file__).parent / "data" / "_info"
    synsets = (info / "imagenet_synsets.txt").read_text().split()
    gloss = dict(line.split("\t", 1) for line in (info / "imagenet_synset_to_definition.txt").read_text().splitlines())
    texts = [gloss[s].strip() for s in synsets]
    labels = [int(i < ANIMALS) for i in range(len(synsets))]
    return texts, labels


def wordpiece(corpus, vocab_size: int = 2000):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(list(corpus), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=64,
    )


def gloss_tester(cache_dir):
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        BertConfig,
        BertForSequenceClassification,
    )

    import testnav
    from testnav import families

    texts, labels = gloss_data()
    order = np.random.default_rng(0).permutation(len(texts))
    test, fit = order[:300], order[300:]
    path = Path(cache_dir) / "practitioner" / "gloss_bert"
    if (path / "config.json").exists():
        model = AutoModelForSequenceClassification.from_pretrained(path)
        tok = AutoTokenizer.from_pretrained(path)
    else:
        tok = wordpiece([texts[i] for i in fit])
        torch.manual_seed(0)
        config = BertConfig(
            vocab_size=tok.vocab_size,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=128,
            max_position_embeddings=64,
            num_labels=2,
        )
        model = BertForSequenceClassification(config)
        perm = np.random.default_rng(1).permutation(fit)

        def batches():
            for i in range(0, len(perm), 32):
                idx = perm[i : i + 32]
                enc = tok([texts[j] for j in idx], padding=True, truncation=True, return_tensors="pt")
                yield dict(enc), torch.tensor([labels[j] for j in idx])

        train(model, batches, epochs=12, lr=1e-3)
        path.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(path)
        tok.save_pretrained(path)
    model.eval()
    levels = list(range(1, 9))
    fams = [families.make(n, modality="text", params=levels) for n in ("typo", "contraction", "punctuation")]
    return testnav.Tester(
        model,
        ([texts[i] for i in test], [labels[i] for i in test]),
        tokenizer=tok,
        families=fams,
        levels=9,
        fidelity="chrf",
        name="glosses",
        cache_dir=cache_dir,
        device="cpu",
        max_length=64,
    )


TESTERS = {"digits": digits_tester, "glosses": gloss_tester}


if __name__ == "__main__":
    import sys
    import time

    cache = sys.argv[1] if len(sys.argv) > 1 else "results/cache"
    for name, make in TESTERS.items():
        t0 = time.perf_counter()
        t = make(cache)
        table = t.groundtruth()
        print(
            f"{name}: |Θ| = {len(table)}, clean ψ = {table.psi.iloc[0]:.3f}, {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
