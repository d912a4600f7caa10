"""What text and code families share: the batch they carry, per-item randomness, word edits.

A text "image" is a `TextBatch`: one tuple of string segments per item plus a per-item
context that never changes along a prefix. QQP items are (question1, question2), both
editable; code items are (head, docstring, cases) of a ReCode-split prompt, only the
docstring editable, with the problem's protected identifiers in the context. Families return
a new batch and never mutate their input, so the prefix walker can keep every node.

Randomness: a family draws one 62-bit seed per item from the CPU `torch.Generator` the
walker hands in (seeded by the prefix), and runs its algorithm on a `random.Random` seeded
with it. The same prefix therefore gives the same text, whichever process reaches it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import torch

from . import Family

WORD = re.compile(r"\w[\w'\-*@]*")  # TextAttack's words_from_text: \w plus ' - * @ inside a word


@dataclass(frozen=True)
class TextBatch:
    items: tuple[tuple[str, ...], ...]
    editable: tuple[int, ...] = (0,)  # which segments of an item families may change
    context: tuple[dict, ...] = field(default=())  # per-item, constant along prefixes (e.g. protected identifiers)
    joined: bool = False  # fidelity sees "".join(item) (code prompts) instead of every segment (QQP questions)

    def __len__(self) -> int:
        return len(self.items)

    def to(self, device=None) -> TextBatch:  # the ground-truth pass moves inputs to the device; text stays put
        return self

    def replace(self, items) -> TextBatch:
        return TextBatch(tuple(items), self.editable, self.context, self.joined)

    def texts(self) -> list[str]:
        """What fidelity metrics compare, in a fixed order: one string per prompt, or every segment."""
        if self.joined:
            return ["".join(item) for item in self.items]
        return [s for item in self.items for s in item]

    def ctx(self, i: int) -> dict:
        return self.context[i] if self.context else {}


def item_rngs(generator: torch.Generator, n: int) -> list[random.Random]:
    seeds = torch.randint(0, 2**62, (n,), generator=generator, dtype=torch.int64).tolist()
    return [random.Random(s) for s in seeds]


class TextFamily(Family):
    """Applies `perturb(text, param, rng, context)` to every editable segment of every item."""

    random = True

    def apply(self, x: TextBatch, param, generator: torch.Generator) -> TextBatch:
        rngs = item_rngs(generator, len(x))
        out = []
        for i, (item, rng) in enumerate(zip(x.items, rngs)):
            ctx = x.ctx(i)
            out.append(tuple(self.perturb(s, param, rng, ctx) if j in x.editable else s for j, s in enumerate(item)))
        return x.replace(out)

    def perturb(self, text: str, param, rng: random.Random, context: dict) -> str:
        raise NotImplementedError


class Words:
    """A sentence as alternating separators and words, so edits keep spacing and punctuation:
    text == seps[0] + words[0] + seps[1] + … + words[-1] + seps[-1]. `modified[i]` marks
    words already edited (TextAttack's RepeatModification)."""

    def __init__(self, text: str):
        self.words, self.seps, last = [], [], 0
        for m in WORD.finditer(text):
            self.seps.append(text[last : m.start()])
            self.words.append(m.group())
            last = m.end()
        self.seps.append(text[last:])
        self.modified = [False] * len(self.words)

    def text(self) -> str:
        return "".join(s + w for s, w in zip(self.seps, self.words)) + self.seps[-1]

    def free(self) -> list[int]:
        return [i for i, m in enumerate(self.modified) if not m]


class WordEditFamily(TextFamily):
    """Level k = exactly k edits per sentence (fewer only if no candidate is left), no word
    edited twice. Each step lists every single-edit candidate on the unmodified words, drops
    duplicates and no-ops, sorts them by resulting text and picks one with `rng.choice`:
    TextAttack's `Augmenter` loop with `RepeatModification`, run until k words are swapped.

    Word-swap families (synonym, typo) also take TextAttack's `StopwordModification` when
    `stopwords` is true (their default, as in TextAttack's recipes): `modifiable()` leaves out
    the words of testnav/families/text_stopwords.py. `stopwords: false` is the reading without
    that constraint, under which about a third of the edits hit words such as "is" or "the"."""

    uses_stopwords = False  # does this family honour the `stopwords` setting

    def __init__(self, params, name: str | None = None, stopwords: bool = False):
        super().__init__(params, name)
        self.stopwords = bool(stopwords)

    def modifiable(self, words: Words) -> list[int]:
        free = words.free()
        if not self.stopwords:
            return free
        from .text_stopwords import STOPWORDS

        return [i for i in free if words.words[i] not in STOPWORDS]

    def describe(self) -> dict:
        out = super().describe()
        if self.uses_stopwords:
            out["stopwords"] = "textattack-nltk-english-179" if self.stopwords else False
        return out

    def perturb(self, text, k, rng, context):
        words = Words(text)
        for _ in range(int(k)):
            current = words.text()
            options = {}
            for edit in self.candidates(words, rng):
                result = edit(None)
                if result != current:
                    options.setdefault(result, edit)
            if not options:
                break
            choice = rng.choice(sorted(options))
            options[choice](words)  # apply for real: updates words and marks what it edited
        return words.text()

    def candidates(self, words: Words, rng: random.Random):
        """Yield callables: edit(None) returns the candidate text, edit(words) applies it in place."""
        raise NotImplementedError

    @staticmethod
    def swap(words: Words, i: int, new: str):
        def edit(target):
            if target is None:
                ws = words.words[:i] + [new] + words.words[i + 1 :]
                return "".join(s + w for s, w in zip(words.seps, ws)) + words.seps[-1]
            target.words[i] = new
            target.modified[i] = True

        return edit
