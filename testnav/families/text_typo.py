"""Typos (QQP): TextAttack's WordSwapQWERTY(random_one=True), k words per sentence.

For every unmodified word longer than one character, one position is drawn uniformly
(`randrange(0, len)`, first and last characters allowed); if that character is a letter it
is replaced by one of its QWERTY neighbours (uppercase letters get uppercase neighbours),
otherwise the word gives no candidate this step. One candidate is then chosen among the
words, as TextAttack's Augmenter does. As in TextAttack's `CharSwapAugmenter`, stopwords are not
edited (`stopwords: true`, the default; testnav/families/text_stopwords.py); `stopwords: false`
drops that constraint.
"""

from __future__ import annotations

from .text_base import WordEditFamily

# TextAttack 0.3.11's adjacency table (neighbours only: a key never maps to itself).
_ROWS = """q:was w:qeasd e:wsdfr r:edfgt t:rfghy y:tghju u:yhjki i:ujklo o:iklp p:ol
a:qwszx s:qweadzx d:werfcxs f:ertgvcd g:rtyhbvd h:tyugjbn j:yuikmnh k:uiolmj l:iopk
z:asx x:sdzc c:xdfv v:cfgb b:vghn n:bhjm m:njk"""
ADJACENT = {k: list(v) for k, v in (entry.split(":") for entry in _ROWS.split())}


def neighbours(ch: str) -> list[str]:
    keys = ADJACENT.get(ch.lower(), [])
    return [k.upper() for k in keys] if ch.isupper() else keys


class Typo(WordEditFamily):
    name = "typo"
    param_format = "{} typos"
    uses_stopwords = True

    def __init__(self, params=(1, 2, 3, 4, 5), name: str | None = None, stopwords: bool = True):
        super().__init__(params, name, stopwords)

    def candidates(self, words, rng):
        for i in self.modifiable(words):
            w = words.words[i]
            if len(w) <= 1:
                continue
            pos = rng.randrange(0, len(w))
            keys = neighbours(w[pos])
            if keys:
                yield self.swap(words, i, w[:pos] + rng.choice(keys) + w[pos + 1 :])
