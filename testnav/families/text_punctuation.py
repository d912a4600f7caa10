"""Punctuation insertion (QQP): AEDA (Karimi et al., 2021) with exactly k marks.

TextAttack 0.3.11 has no punctuation-insertion swap; the standard recipe is AEDA, which puts
a mark from {. , ! ? ; :} before randomly chosen words, positions drawn without replacement,
the mark separated by a space ("How , do you …"). AEDA draws how many marks to insert; here
level k inserts exactly k, before k distinct words (a word takes at most one mark). Each
step picks uniformly among (word, mark) pairs, which is AEDA's uniform position and mark.
"""

from __future__ import annotations

from .text_base import WordEditFamily

MARKS = (".", ",", "!", "?", ";", ":")


class Punctuation(WordEditFamily):
    name = "punctuation"
    param_format = "{} marks"

    def __init__(self, params=(1, 2, 3, 4, 5), marks=MARKS, name: str | None = None):
        super().__init__(params, name)
        self.marks = tuple(marks)

    def candidates(self, words, rng):
        for i in words.free():
            for mark in self.marks:
                yield self.insert(words, i, mark)

    @staticmethod
    def insert(words, i, mark):
        def edit(target):
            if target is None:
                seps = list(words.seps)
                seps[i] = seps[i] + mark + " "
                return "".join(s + w for s, w in zip(seps, words.words)) + seps[-1]
            target.seps[i] = target.seps[i] + mark + " "
            target.modified[i] = True

        return edit

    def describe(self):
        return {**super().describe(), "marks": list(self.marks)}
