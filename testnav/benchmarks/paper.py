"""The clean ψ(D) each paper reports for its benchmarks (Table 1 of TestNav and of TestifAI): what
`stage=check` compares a set-up with, and what TestifAI's Fig. 6 measures its drop against."""

PAPER_PSI = {
    "tiny_imagenet": (0.867, "TestNav Table 1: CaiT-S36 accuracy"),
    "qqp": (0.912, "TestNav and TestifAI Table 1: RoBERTa accuracy"),
    "humaneval": (0.232, "TestNav Table 1: CodeGen-2B-mono RP5@1"),
    "mbpp": (0.319, "TestNav Table 1: CodeGen-2B-mono RP5@1"),
    "mnist": (0.984, "TestifAI Table 1: LeNet-5 accuracy"),
    "cifar10": (0.947, "TestifAI Table 1: WRN-28-10 accuracy"),
    "roboflow": (0.822, 'TestifAI Table 1: YOLOv11 "Acc."'),
    "gtsrb": (0.976, "TestifAI Table 1: CNN-SE accuracy"),
}
