"""The code benchmarks (HumanEval, MBPP with CodeGen): the benchmark (`benchmark`), greedy
decoding (`decode`) and the sandbox that runs generated code (`sandbox`, `_sandbox_child`)."""
