"""Contractions (QQP): TextAttack's WordSwapContract, k contractions per sentence.

Two adjacent unmodified words that form a key of the reversed EXTENSION_MAP of
`textattack/shared/data.py` ("do not" → "don't", "I am" → "I'm"; 71 two-word entries,
case-sensitive as in TextAttack) become one word. We require the two words to be separated
by whitespace only, so "do, not" is left alone (TextAttack matches words across punctuation).
"""

from __future__ import annotations

from .text_base import WordEditFamily

# The reverse of TextAttack's EXTENSION_MAP, restricted to two-word expansions (71 of 77).
_PAIRS = """are not|aren't cannot have|can't've could have|could've could not|couldn't did not|didn't
does not|doesn't do not|don't had not|hadn't has not|hasn't have not|haven't he would|he'd he will|he'll
he is|he's how did|how'd how will|how'll how is|how's I would|I'd I will|I'll I am|I'm I have|I've
i would|i'd i will|i'll i am|i'm i have|i've is not|isn't it would|it'd it will|it'll it is|it's
might have|might've might not|mightn't must have|must've must not|mustn't need not|needn't
ought not|oughtn't shall not|shan't she would|she'd she will|she'll she is|she's should have|should've
should not|shouldn't that would|that'd that is|that's there would|there'd there is|there's
they would|they'd they will|they'll they are|they're they have|they've was not|wasn't we would|we'd
we will|we'll we are|we're we have|we've were not|weren't what are|what're what is|what's when is|when's
where did|where'd where is|where's where have|where've who will|who'll who is|who's who have|who've
why is|why's will not|won't would have|would've would not|wouldn't you would|you'd you will|you'll
you are|you're you have|you've"""
CONTRACT = {}
for _line in _PAIRS.splitlines():
    _tokens = _line.split()
    for _a, _b in zip(_tokens[0::2], _tokens[1::2]):
        first, second = _b.split("|")
        CONTRACT[f"{_a} {first}"] = second


class Contraction(WordEditFamily):
    name = "contraction"
    param_format = "{} contractions"

    def __init__(self, params=(1, 2, 3, 4, 5), name: str | None = None):
        super().__init__(params, name)

    def candidates(self, words, rng):
        free = set(words.free())
        for i in range(len(words.words) - 1):
            if i in free and i + 1 in free and words.seps[i + 1].isspace():
                key = f"{words.words[i]} {words.words[i + 1]}"
                if key in CONTRACT:
                    yield self.merge(words, i, CONTRACT[key])

    @staticmethod
    def merge(words, i, new):
        def edit(target):
            if target is None:
                seps = words.seps[: i + 1] + words.seps[i + 2 :]
                ws = words.words[:i] + [new] + words.words[i + 2 :]
                return "".join(s + w for s, w in zip(seps, ws)) + seps[-1]
            del target.seps[i + 1]
            target.words[i : i + 2] = [new]
            target.modified[i : i + 2] = [True]

        return edit
