"""What the code families share: ReCode's docstring split and identifier protection.

A code prompt travels through the walker already split (`split_prompt`) into
(head, doc, cases), and only `doc` is ever edited, so the signature, imports and `>>>`
examples are untouched by construction (ReCode `nlaugmenter/process_docstring.py: sep_doc`):

* head: everything up to the opening triple quote after the entry point, plus the one
  character after it (ReCode skips it unconditionally), plus following spaces/newlines/tabs;
* doc: up to the first `>>>` after the entry point, trailing whitespace excluded;
* cases: the `>>>` examples and everything after.

Where ReCode differs, and what we do (docs/text.md):
* without `>>>` (88 HumanEval prompts) ReCode's `find` returns −1 and its doc runs to the
  end of the prompt minus the final newline, *closing quotes included*, so the whitespace
  perturbation can put a space between them and break the prompt's syntax. We end the doc
  before the closing delimiter instead;
* ReCode searches for `\"\"\"` and for `'''` only if there is none; we take whichever opens first
  after the entry point (no released prompt differs).

Word protection (ReCode `preprocess_docstring`/`postprocess_docstring`): for char-level
transforms (butterfingers, char case), doc words (split on " ") whose cleaned form is a
protected word of the problem (testnav/families/code_protected.py: ReCode's tree-sitter
identifiers + TYPE_VARS by default) are replaced by `<|||>` before the perturbation and
restored after. ReCode's `clean_word` keeps the first run of alphanumerics, which cuts
`string_xor` to `string` and so leaves snake-case identifiers unprotected; ours also keeps `_`,
so they are protected whole (a counted deviation, docs/readings.md). The whitespace
perturbation is not masked in ReCode (it sets no `perturb_level`) and is not masked here either.
"""

from __future__ import annotations

from .code_protected import check_reading, protected_words
from .text_base import TextFamily

MASK = "<|||>"


def split_prompt(prompt: str, entry_point: str) -> tuple[str, str, str]:
    at = max(prompt.find(entry_point), 0)
    opens = [i for i in (prompt.find('"""', at), prompt.find("'''", at)) if i >= 0]
    if not opens:  # no docstring: nothing to perturb
        return prompt, "", ""
    q = min(opens)
    delim = prompt[q : q + 3]
    start = q + 3 + 1  # ReCode: the character after the quotes always belongs to the head
    while start < len(prompt) and prompt[start] in " \n\t":
        start += 1
    end = prompt.find(">>>", at)
    if end < 0 or end < start:
        close = prompt.find(delim, start)
        end = close if close >= 0 else len(prompt)
    while end > start and prompt[end - 1] in " \n\t":
        end -= 1
    if start > end:  # an empty docstring
        return prompt[:end], "", prompt[end:]
    return prompt[:start], prompt[start:end], prompt[end:]


def clean_word(word: str) -> str:
    """The first run of word characters (alphanumerics and `_`) of a docstring word."""
    out = []
    for ch in word:
        if ch.isalnum() or ch == "_":
            out.append(ch)
        elif out:
            break
    return "".join(out)


def mask(doc: str, protected) -> tuple[str, list[str]]:
    words, kept = doc.split(" "), []
    for i, w in enumerate(words):
        if clean_word(w) in protected:
            kept.append(w)
            words[i] = MASK
    return " ".join(words), kept


def unmask(doc: str, kept: list[str]) -> str:
    doc = doc.replace("< ||| >", MASK)
    for w in kept:
        doc = doc.replace(MASK, w, 1)
    return doc


class CodeFamily(TextFamily):
    """Perturbs the docstring segment with `transform(doc, param, rng, context)`; char-level
    families (`masked = True`) first mask the problem's protected words (`protected`: `recode`,
    ReCode's tree-sitter reading, or `ast`), as ReCode does. The problem's code (prompt +
    canonical solution) travels in the context as `code`; an explicit `identifiers` set there wins."""

    masked = False

    def __init__(self, params, name: str | None = None, protected: str = "recode"):
        super().__init__(params, name)
        self.protected = check_reading(str(protected))

    def protected_set(self, context) -> frozenset:
        if "identifiers" in context:
            return frozenset(context["identifiers"])
        return protected_words(context.get("code", ""), self.protected)

    def perturb(self, text, param, rng, context):
        if not text:
            return text
        if self.masked:
            masked, kept = mask(text, self.protected_set(context))
            return unmask(self.transform(masked, param, rng, context), kept)
        return self.transform(text, param, rng, context)

    def transform(self, doc: str, param, rng, context) -> str:
        raise NotImplementedError

    def describe(self) -> dict:
        out = super().describe()
        if self.masked:
            out["protected"] = self.protected
        return out
