"""Synonym replacement (QQP): TextAttack's WordSwapWordNet, k words per sentence.

Candidates for a word are every lemma name of every WordNet synset of the word (any part of
speech, `wordnet.synsets` lowercases its input), except the word itself, names with "_" and
anything that is not one word. TextAttack returns them from a set, whose order depends on
the process's hash seed; we sort them, so a seed gives the same text in every process.

`lexicon: wordnet` reads WordNet with nltk's corpus reader from the data the user has
(NLTK_DATA); nothing is downloaded. `lexicon: path/to/synonyms.json` ({"word": ["syn", …]},
keys lowercase) replaces WordNet, for tests and for fixed vocabularies.

As in TextAttack's `WordNetAugmenter`, stopwords are not replaced (`stopwords: true`, the default;
testnav/families/text_stopwords.py); `stopwords: false` drops that constraint.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from ..errors import UserError
from .text_base import WORD, WordEditFamily

WORDNET_HELP = (
    "the NLTK WordNet corpus is not available: run `python -m nltk.downloader wordnet` on a machine "
    "with network, copy the nltk_data folder here and set NLTK_DATA to it (or set the synonym "
    "family's lexicon to a JSON file of synonyms)"
)


def one_word(s: str) -> bool:
    return len(WORD.findall(s)) == 1 and WORD.fullmatch(s) is not None


class WordNetLexicon:
    def __init__(self):
        try:
            from nltk.corpus import wordnet

            wordnet.ensure_loaded()
        except LookupError:
            raise UserError(WORDNET_HELP) from None
        except ImportError:
            raise UserError("the synonym family needs nltk (pip install nltk)") from None
        self.wordnet = wordnet
        self.synonyms = lru_cache(maxsize=None)(self._synonyms)  # per lexicon, freed with it

    def _synonyms(self, word: str) -> tuple[str, ...]:
        out = set()
        for syn in self.wordnet.synsets(word):
            for name in syn.lemma_names():
                if name != word and "_" not in name and one_word(name):
                    out.add(name)
        return tuple(sorted(out))

    def describe(self):
        from nltk.corpus import wordnet

        return {"lexicon": "wordnet", "version": wordnet.get_version()}


class JsonLexicon:
    def __init__(self, path: str):
        p = Path(path).expanduser()
        if not p.is_file():
            raise UserError(
                f"synonym lexicon {path} does not exist (use lexicon=wordnet or a JSON file "
                '{"word": ["synonym", ...]})'
            )
        raw = p.read_bytes()
        try:
            table = json.loads(raw)
            self.table = {str(k).lower(): [str(s) for s in v] for k, v in table.items()}
        except (ValueError, AttributeError, TypeError):
            raise UserError(
                f'synonym lexicon {path} is not a JSON object of lists ({{"word": ["synonym", ...]}})'
            ) from None
        self.sha = hashlib.sha256(raw).hexdigest()[:16]

    def synonyms(self, word: str) -> tuple[str, ...]:
        cands = self.table.get(word.lower(), [])
        return tuple(sorted({s for s in cands if s != word and "_" not in s and one_word(s)}))

    def describe(self):
        return {"lexicon": "json", "sha256": self.sha}


class Synonym(WordEditFamily):
    name = "synonym"
    param_format = "{} synonyms"
    uses_stopwords = True

    def __init__(
        self, params=(1, 2, 3, 4, 5), lexicon: str = "wordnet", name: str | None = None, stopwords: bool = True
    ):
        super().__init__(params, name, stopwords)
        self.lexicon_spec = str(lexicon)
        self._lexicon = None

    @property
    def lexicon(self):
        if self._lexicon is None:
            self._lexicon = WordNetLexicon() if self.lexicon_spec == "wordnet" else JsonLexicon(self.lexicon_spec)
        return self._lexicon

    def candidates(self, words, rng):
        for i in self.modifiable(words):
            for s in self.lexicon.synonyms(words.words[i]):
                yield self.swap(words, i, s)

    def describe(self):
        return {**super().describe(), **self.lexicon.describe()}
