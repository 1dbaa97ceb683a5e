"""toolkit-opt on mutated and truncated MLIR text and bytecode: output or one clean error, never a crash.

Each case runs ``toolkit.tools.opt.main(argv)`` in the shared worker process
(:mod:`fuzz_worker`), so a segfault or abort is seen as the worker dying and
a hang as no answer; a few cases run the installed ``toolkit-opt`` as a real
process. Accepted: exit status 0, or 1 with an ``error:`` message and no
traceback. Everything else fails with the input in the message.
"""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

import fuzz_corpus
import fuzz_mutate
import fuzz_worker
from fuzz_settings import fuzz_settings


def _fail(result: fuzz_worker.Result, data: bytes, argv: list[str], seed: str) -> str:
    shown = data[:3000].decode("utf-8", "replace") if not data.startswith(b"ML\xefR") else data[:400].hex()
    return (f"toolkit-opt {' '.join(argv)} on a mutation of {seed}: {result.summary()}\n"
            f"--- input ({len(data)} bytes) ---\n{shown}")


@fuzz_settings(50)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_text(worker, rng):
    texts = fuzz_corpus.text_inputs()
    seed, text = rng.choice(texts)
    data = fuzz_mutate.mutate_text(text, rng, fuzz_corpus.tokens(), tuple(t for _, t in texts)).encode(
        "utf-8", "surrogatepass")
    argv = rng.choice(fuzz_mutate.TEXT_ARGVS)
    result = worker.opt(data, argv)
    assert not result.bad, _fail(result, data, argv, seed)


@fuzz_settings(30)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_bytecode(worker, rng):
    seed, blob = rng.choice(fuzz_corpus.bytecode_inputs())
    data = fuzz_mutate.mutate_bytes(blob, rng)
    argv = rng.choice(fuzz_mutate.BINARY_ARGVS)
    result = worker.opt(data, argv, filename="input.mlirbc")
    assert not result.bad, _fail(result, data, argv, seed)


@fuzz_settings(20)
@given(rng=st.randoms(use_true_random=False))
def test_every_kind_of_truncation(worker, rng):
    """Cut a text or binary module anywhere, including mid-token and mid-varint."""
    if rng.random() < 0.5:
        seed, text = rng.choice(fuzz_corpus.text_inputs())
        data, name = text.encode()[:rng.randrange(len(text.encode()) + 1)], "input.mlir"
    else:
        seed, blob = rng.choice(fuzz_corpus.bytecode_inputs())
        data, name = blob[:rng.randrange(len(blob) + 1)], "input.mlirbc"
    result = worker.opt(data, ["{input}"], filename=name)
    assert not result.bad, _fail(result, data, ["{input}"], seed)


def test_real_toolkit_opt_processes():
    """The installed command, not just main(): three mutated inputs as real processes."""
    import random

    rng = random.Random(int(os.environ.get("TOOLKIT_FUZZ_SEED", "10")))
    texts = fuzz_corpus.text_inputs()
    cases = []
    for argv in (["{input}"], ["{input}", "--split-input-file", "--verify-diagnostics"]):
        seed, text = rng.choice(texts)
        cases.append((seed, fuzz_mutate.mutate_text(text, rng).encode("utf-8", "surrogatepass"), argv, "in.mlir"))
    seed, blob = rng.choice(fuzz_corpus.bytecode_inputs())
    cases.append((seed, blob[: len(blob) // 2], ["{input}"], "in.mlirbc"))
    for seed, data, argv, name in cases:
        result = fuzz_worker.run_real_opt(data, argv, filename=name)
        assert not result.bad, _fail(result, data, argv, seed)
