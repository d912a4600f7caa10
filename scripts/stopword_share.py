"""How many synonym and typo edits land on stopwords, with and without TextAttack's StopwordModification.

    python scripts/stopword_share.py [--questions FILE] [--lexicon wordnet|PATH.json] [--levels 1-5] [--seeds 10]

Questions: one per line from FILE (e.g. question1 of GLUE's QQP dev.tsv, cut to one column), or the
50 QQP-style questions below. Each family runs at every level and seed on every question; an edit
"lands on a stopword" when the word it changed is in testnav/families/text_stopwords.py (as
TextAttack compares: case-sensitively). The synonym family needs WordNet under NLTK_DATA (or a JSON
lexicon); without it only typo is measured, and the script says so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from testnav.errors import UserError  # noqa: E402
from testnav.families.text_base import WORD, TextBatch  # noqa: E402
from testnav.families.text_contraction import Contraction  # noqa: E402
from testnav.families.text_stopwords import STOPWORDS  # noqa: E402
from testnav.families.text_synonym import Synonym  # noqa: E402
from testnav.families.text_typo import Typo  # noqa: E402

QUESTIONS = """\
How do I learn Python quickly if I have no programming experience?
What is the best way to lose weight without going to the gym?
Why is the sky blue during the day and red at sunset?
How can I improve my English speaking skills at home?
What are the best books to read before you turn thirty?
Is it possible to become a software engineer without a degree?
How do I stop thinking about someone I love?
What is the difference between machine learning and deep learning?
Which is the best smartphone under 300 dollars right now?
How can I make money online as a student?
Why do people believe in conspiracy theories?
What should I do if my laptop does not turn on?
How long does it take to learn to play the guitar?
What are some good ways to deal with stress at work?
Is it safe to travel to Egypt this year?
How do I get a job at Google as a fresh graduate?
What is the meaning of life according to philosophers?
Why are cats so afraid of cucumbers?
How can I increase the battery life of my phone?
What are the health benefits of drinking green tea every day?
Should I buy a house now or wait for prices to fall?
How do I prepare for the GRE in two months?
What is the most beautiful place you have ever visited?
Why does my dog eat grass when he is sick?
How do I know if a girl likes me?
What are the main causes of the First World War?
Can you really learn a language in three months?
How does the stock market work for beginners?
What is the best programming language to learn first?
Why do we dream and what do dreams mean?
How can I sleep better at night without pills?
What are the best places to visit in India in winter?
Is Donald Trump going to win the next election?
How do I write a good cover letter for an internship?
What is it like to work at Amazon as an engineer?
Why is Java still so popular among big companies?
How can I stop procrastinating and start studying?
What are the signs that someone is lying to you?
How do airplanes stay in the air for so long?
Which are the best universities in the world for computer science?
What happens to our body when we stop eating sugar?
How do I become more confident when talking to strangers?
What is the best way to invest 10000 dollars?
Why do some people never get sick?
How can I find out who viewed my Instagram profile?
What are the pros and cons of living in New York?
How do you make a perfect cup of coffee at home?
Is it bad to drink coffee on an empty stomach?
What are the most common mistakes new managers make?
How do I recover a deleted WhatsApp message?
"""


def share(fam, questions, levels, seeds) -> tuple[int, int, int]:
    """(edits on a stopword, edits on a capitalised stopword such as "What" or "I", all edits)"""
    x = TextBatch(tuple((q,) for q in questions), editable=(0,))
    on_stop = on_cap = total = 0
    for level in levels:
        for seed in range(seeds):
            y = fam(x, level, torch.Generator().manual_seed(seed))
            for (a,), (b,) in zip(x.items, y.items):
                for u, v in zip(WORD.findall(a), WORD.findall(b)):
                    if u != v:
                        total += 1
                        on_stop += u in STOPWORDS
                        on_cap += u not in STOPWORDS and u.lower() in STOPWORDS
    return on_stop, on_cap, total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", help="a text file, one question per line (default: 50 QQP-style questions)")
    ap.add_argument("--lexicon", default="wordnet", help="wordnet (NLTK_DATA) or a JSON synonym file")
    ap.add_argument("--levels", default="1-5")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    text = Path(args.questions).read_text(encoding="utf-8") if args.questions else QUESTIONS
    questions = [q.strip() for q in text.splitlines() if q.strip()]
    a, b = args.levels.split("-") if "-" in args.levels else (args.levels, args.levels)
    levels = range(int(a), int(b) + 1)
    print(
        f"{len(questions)} questions, levels {a}-{b}, {args.seeds} seeds; "
        f"{sum(w in STOPWORDS for q in questions for w in WORD.findall(q))} of "
        f"{sum(len(WORD.findall(q)) for q in questions)} words are stopwords"
    )
    for name, make in (
        ("synonym", lambda stop: Synonym(lexicon=args.lexicon, stopwords=stop)),
        ("typo", lambda stop: Typo(stopwords=stop)),
    ):
        try:
            before, after = (share(make(stop), questions, levels, args.seeds) for stop in (False, True))
        except UserError as e:
            print(f"{name}: not measured ({e})")
            continue
        print(
            f"{name}: "
            + "; ".join(
                f"stopwords={flag} {s} of {t} edits on stopwords ({100 * s / max(t, 1):.1f}%), "
                f"{c} ({100 * c / max(t, 1):.1f}%) on capitalised ones"
                for flag, (s, c, t) in (("false", before), ("true", after))
            )
        )
    x = TextBatch(tuple((q,) for q in questions), editable=(0,))
    y = Contraction()(x, 5, torch.Generator().manual_seed(0))
    changed = sum(a != b for a, b in zip(x.items, y.items))
    print(f"contraction: {changed} of {len(questions)} questions change at level 5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
