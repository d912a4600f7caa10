"""What a practitioner brings, built offline with random weights: a torchvision ResNet-18 state dict
for five classes with an image folder of mixed sizes and modes, and a tiny save_pretrained BERT
sentence classifier (three classes) with its own WordPiece vocabulary and a CSV of sentences."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import torch

SENTENCES = [
    ("the film was wonderful and the actors were great", 2),
    ("I did not like the ending at all", 0),
    ("it is an average movie, nothing special", 1),
    ("what a brilliant and moving story", 2),
    ("the plot is boring and too long", 0),
    ("some scenes are fine, others are not", 1),
    ("I can't recommend it, it's a waste of time", 0),
    ("we loved every minute of it", 2),
    ("the music is okay but the dialogue is weak", 1),
    ("they are not going to like this one", 0),
    ("a great cast and a clever script", 2),
    ("it was fine for a rainy afternoon", 1),
]


def image_folder(root: Path, classes: int = 5, per_class: int = 4, seed: int = 0) -> Path:
    """root/class<k>/<i>.png|jpg: random photos of sizes 40–89 px, one of them grayscale."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for c in range(classes):
        d = root / f"class{c}"
        d.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            h, w = rng.integers(40, 90, 2)
            im = Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8))
            if c == 0 and i == 0:
                im = im.convert("L")
            im.save(d / f"{i}.{'png' if i % 2 else 'jpg'}")
    return root


def resnet18_state_dict(path: Path, classes: int = 5, seed: int = 0) -> Path:
    import torchvision

    torch.manual_seed(seed)
    torch.save(torchvision.models.resnet18(num_classes=classes).state_dict(), path)
    return path


def image_scenario(root: Path) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    return {"photos": image_folder(root / "photos"), "model": resnet18_state_dict(root / "model.pt")}


def tiny_bert(out: Path, corpus, num_labels: int = 3, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BERT sequence classifier and a WordPiece tokenizer over the corpus's words."""
    import re

    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    words = sorted({w for text in corpus for w in re.findall(r"\w+|[^\w\s]", text.lower())})
    letters = sorted({ch for w in words for ch in w} | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + letters + [f"##{ch}" for ch in letters]
    (out / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n")
    tok = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=True)
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=num_labels,
    )
    torch.manual_seed(seed)
    for part in (
        BertForSequenceClassification(cfg),
        tok,
    ):  # weights and tokenizer side by side, as from_pretrained reads them
        part.save_pretrained(out)
    return out


def text_scenario(root: Path) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    data = root / "reviews.csv"
    with open(data, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows(SENTENCES)
    return {"data": data, "model": tiny_bert(root / "bert", [t for t, _ in SENTENCES])}
