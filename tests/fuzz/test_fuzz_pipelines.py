"""Random pass pipelines over the lit inputs: the IR verifies afterwards, or the failing pass is named.

Every registered pass (``toolkit.passes.list_passes()``, Python and C++) can
be drawn, in random order, with random valid options, sometimes nested in
``func.func(...)``; the pipeline runs in the worker process with
verification after each pass. Accepted: success and a module that verifies,
or a ``PipelineError`` naming a pass of the pipeline.

Passes with an open crash report are left out of this quick test (they are
in the standing run, and ``test_fuzz_known.py`` tracks each report).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import fuzz_corpus
import fuzz_pipelines
from fuzz_settings import fuzz_settings

# Passes the quick test must not draw while a crash of theirs is an open report
# (tests/fuzz/test_fuzz_known.py). Empty: sdy-propagation-pipeline's crashes are
# refused by toolkit/passes/preconditions.py.
KNOWN_CRASHING: set[str] = set()


@fuzz_settings(40)
@given(rng=st.randoms(use_true_random=False))
def test_random_pipelines(worker, rng):
    seed, text = rng.choice(fuzz_corpus.parsing_text_inputs())
    pipeline = fuzz_pipelines.random_pipeline(rng, exclude=KNOWN_CRASHING)
    answer = worker.pipeline(text, pipeline)
    problem = fuzz_pipelines.check_pipeline_answer(pipeline, answer)
    assert problem is None, f"{pipeline} on {seed}:\n{problem}\n--- input ---\n{text[:3000]}"


def test_every_pass_is_drawn():
    """The generator covers the registry (a pass added later is fuzzed without editing this file)."""
    import random

    rng = random.Random(0)
    drawn = set()
    for _ in range(3000):
        drawn.add(fuzz_pipelines.random_element(rng).split("{")[0])
    names = {info.name for info in fuzz_pipelines.passes()}
    assert names <= drawn, names - drawn
