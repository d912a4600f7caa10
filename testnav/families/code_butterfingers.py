"""ButterFingers (code docstrings): ReCode's nlaugmenter `butter_finger`, probability p per level.

For each character whose lowercase form is a key of the keyboard map (a–z and space), draw
`choice(range(100))`; if the draw is ≤ int(100·p), replace the character by a random entry
of its neighbour string, then restore the case. Because of `<=` the effective draw rate is
(int(100p)+1)/100 (p = .05 → .06), and since each neighbour string contains the key itself
(some with repeats) the visible change rate is lower still. ReCode hard-codes p = 0.05; the
TestNav levels are p ∈ {.05, .10, .15, .20, .25}. The problem's protected words (`protected`:
recode | ast, testnav/families/code_protected.py) are masked.
"""

from __future__ import annotations

from .code_base import CodeFamily

# ReCode / NL-Augmenter "querty" map: each key lists itself first, then what a slipping finger hits.
_KEYS = """q:qwasedzx w:wqesadrfcx e:ewrsfdqazxcvgt r:retdgfwsxcvgt t:tryfhgedcvbnju y:ytugjhrfvbnji
u:uyihkjtgbnmlo i:iuojlkyhnmlp o:oipklujm p:plo['ik a:aqszwxwdce s:swxadrfv d:decsfaqgbv f:fdgrvwsxyhn
g:gtbfhedcyjn h:hyngjfrvkim j:jhknugtblom k:kjlinyhn l:lokmpujn z:zaxsvde x:xzcsdbvfrewq c:cxvdfzswergb
v:vcfbgxdertyn b:bvnghcftyun n:nbmhjvgtuik m:mnkjloik"""
KEYBOARD = dict(entry.split(":", 1) for entry in _KEYS.split())
KEYBOARD[" "] = " "


class ButterFingers(CodeFamily):
    name = "butterfingers"
    param_format = "p {}"
    masked = True

    def __init__(self, params=(0.05, 0.10, 0.15, 0.20, 0.25), name: str | None = None, protected: str = "recode"):
        super().__init__(params, name, protected)

    def transform(self, doc, p, rng, context):
        threshold = int(float(p) * 100)
        out = []
        for ch in doc:
            low = ch.lower()
            new = low
            if low in KEYBOARD and rng.choice(range(0, 100)) <= threshold:
                new = rng.choice(KEYBOARD[low])
            out.append(new.upper() if low != ch else new)
        return "".join(out)
