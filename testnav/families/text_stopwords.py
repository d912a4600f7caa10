"""TextAttack's stopwords: what `StopwordModification()` refuses to edit by default.

TextAttack's augmentation recipes for word swaps (`WordNetAugmenter`, `CharSwapAugmenter`, …)
constrain with `DEFAULT_CONSTRAINTS = [RepeatModification(), StopwordModification()]`, and
`StopwordModification()` without arguments takes `nltk.corpus.stopwords.words("english")`.
This is that list, as data: the 179 words of the `english` file in NLTK's `stopwords` corpus
(nltk_data `packages/corpora/stopwords.zip`, 2022 edition; sha256 of the file
019f104ba2ed07436d05f9cdd3383034ad66014edc27fc651f837e1a038b6451), so the harness needs neither
textattack nor the NLTK data download. TextAttack compares each word of the text with the list
as it is written, case-sensitively, so "what" is a stopword and a sentence-initial "What" or the
pronoun "I" is not; we do the same.
"""

from __future__ import annotations

_WORDS = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
he him his himself she she's her hers herself it it's its itself they them their theirs themselves
what which who whom this that that'll these those am is are was were be been being have has had
having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more most other
some such no nor not only own same so than too very s t can will just don don't should should've now
d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't
haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't
wasn wasn't weren weren't won won't wouldn wouldn't
"""
STOPWORDS = frozenset(_WORDS.split())
