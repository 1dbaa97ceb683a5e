"""Delta debugging of a module a pipeline fails on: the engine of ``toolkit-reduce``.

:func:`reduce_module` shrinks a module while an interestingness test (see
:mod:`toolkit.lab.interestingness`: ``crash``, ``error[:REGEX]``,
``numerics``, ``filecheck:FILE``, ``cmd:COMMAND``, or a Python predicate)
keeps holding. Every candidate must verify; one that does not is rejected
without running the test. Coarse edits come first, fine ones last, and the
whole sequence repeats until nothing changes:

1. drop whole functions (and the calls to them);
2. ddmin over chunks of ops (each op's results replaced by an operand, a
   function argument or a zero constant of the same type);
3. replace a ``stablehlo.case`` by one branch, a ``stablehlo.while`` by one
   run of its body;
4. for each op left: replace it by an operand, an argument or a zero;
5. make dense constants splat zeros; drop discardable attributes;
6. halve (or set to 1) every tensor dimension of one size, textually;
7. drop unused arguments of functions nothing calls.

A candidate is kept only when it is smaller — fewer ops, else fewer tensor
elements, else shorter text — so the search ends. It is deterministic: the
same input, test and pipeline give the same output. Candidate texts already
judged are cached.

Example::

    result = reduce_module(text, "error:unsupported", pipeline="builtin.module(my-pass)")
    print(result.summary())          # 1003 ops -> 3 ops in 21 steps (57 tests), 1.9 s
    open("small.mlir", "w").write(result.text)
"""

from __future__ import annotations

import dataclasses
import time
from functools import partial
from collections.abc import Callable, Sequence
from typing import TextIO

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.ir.errors import OpInUseError
from toolkit.ir.serialization import read_module
from toolkit.lab import reduction_steps as steps
from toolkit.lab.interestingness import (
    DEFAULT_TIMEOUT,
    InterestingnessTest,
    NotInterestingError,
    make_test,
    parse_test,
)
from toolkit.passes import Pipeline

__all__ = ["NotInterestingError", "ReductionProgress", "ReductionResult", "parse_test", "reduce_module"]


@dataclasses.dataclass(frozen=True)
class ReductionProgress:
    """Where a reduction is: op counts, accepted steps, tests run, seconds, the current phase."""

    ops: int
    ops_before: int
    steps: int
    tests: int
    seconds: float
    phase: str

    def line(self) -> str:
        """``toolkit-reduce: 12 ops (from 1003), step 9, 31 tests, 1.2 s [ddmin]``."""
        return (f"toolkit-reduce: {self.ops} ops (from {self.ops_before}), step {self.steps}, "
                f"{self.tests} tests, {self.seconds:.1f} s [{self.phase}]")


@dataclasses.dataclass(frozen=True)
class ReductionResult:
    """What :func:`reduce_module` found.

    ``text`` is the reduced module; ``steps`` the edits kept; ``tests`` the
    interestingness tests run (``cache_hits`` more were answered from the
    cache); ``stopped`` says why it ended early (``"time limit"``) or is None.
    """

    text: str
    ops_before: int
    ops_after: int
    steps: int
    tests: int
    cache_hits: int
    seconds: float
    test: str
    pipeline: str | None
    stopped: str | None = None

    def summary(self) -> str:
        """One line: ``1003 ops -> 3 ops in 21 steps (57 tests, 4 cached), 1.9 s``."""
        tail = f"; stopped: {self.stopped}" if self.stopped else ""
        return (f"{self.ops_before} ops -> {self.ops_after} ops in {self.steps} steps "
                f"({self.tests} tests, {self.cache_hits} cached), {self.seconds:.1f} s{tail}")


class _TimeUp(Exception):
    pass


Edit = Callable[[ir.Module], bool]


class _Reducer:
    """The state of one reduction: the current text, the cache, counters."""

    def __init__(self, text: str, test: InterestingnessTest, context: ir.Context,
                 progress: Callable[[ReductionProgress], None] | None, time_limit: float | None):
        self.context = context
        self.test = test
        self.progress = progress
        self.start = time.perf_counter()
        self.deadline = None if time_limit is None else self.start + time_limit
        self.cache: dict[str, bool] = {}
        self.tests = 0
        self.cache_hits = 0
        self.steps = 0
        self.phase = "start"
        self.current = text
        self.ops_before = steps.count_ops(self.parse(text))
        self.ops = self.ops_before
        self.key = self._size(text, self.ops)

    def parse(self, text: str) -> ir.Module:
        return ir.Module.parse(text, self.context)

    @staticmethod
    def _size(text: str, ops: int) -> tuple[int, int, int]:
        return ops, steps.tensor_volume(text), len(text)

    def report(self) -> None:
        if self.progress is not None:
            self.progress(ReductionProgress(self.ops, self.ops_before, self.steps, self.tests,
                                            time.perf_counter() - self.start, self.phase))

    def _judge(self, text: str, module: ir.Module, ops: int) -> bool:
        """Test a verified candidate; keep it when smaller and interesting."""
        if text == self.current:
            return False
        key = self._size(text, ops)
        if key >= self.key:
            return False
        if text in self.cache:
            self.cache_hits += 1
            return False  # judged before and not kept: it was not interesting (kept ones become current)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _TimeUp()
        self.tests += 1
        interesting = self.test(text, module)
        self.cache[text] = interesting
        if interesting:
            self.current, self.ops, self.key = text, ops, key
            self.steps += 1
            self.report()
        return interesting

    def try_edit(self, edit: Edit) -> bool:
        """Apply ``edit`` to a fresh parse of the current text; keep the result if it verifies and is interesting."""
        module = self.parse(self.current)
        try:
            if not edit(module):
                return False
        except (ValueError, TypeError, IndexError, OpInUseError, ir.MLIRError):
            return False  # the edit does not apply here (a use left, an index out of range)
        try:
            if not module.operation.verify():
                return False
        except ir.MLIRError:
            return False
        text = module.operation.get_asm(assume_verified=True)
        return self._judge(text, self.parse(text), steps.count_ops(module))

    def try_text(self, text: str) -> bool:
        """Keep ``text`` (a textual edit of the current module) if it parses, verifies and is interesting."""
        try:
            module = self.parse(text)
            module.operation.verify()
        except ir.MLIRError:
            return False
        printed = module.operation.get_asm(assume_verified=True)
        return self._judge(printed, module, steps.count_ops(module))

    # --- the phases ------------------------------------------------------------------------

    def drop_functions(self) -> bool:
        self.phase = "functions"
        changed = False
        for name in steps.function_names(self.parse(self.current)):
            if name != "main":
                changed |= self.try_edit(partial(steps.drop_function, name=name))
        return changed

    def arguments(self) -> bool:
        self.phase = "arguments"
        changed = False
        for name in steps.function_names(self.parse(self.current)):
            changed |= self.try_edit(partial(steps.drop_unused_arguments, name=name))
        return changed

    def ddmin_ops(self) -> bool:
        """Remove chunks of ops, halving the chunk size down to single ops (latest chunks first)."""
        self.phase = "ops"
        changed = False
        count = len(steps.reducible_ops(self.parse(self.current)))
        chunk = max(1, count // 2)
        while count:
            end = count
            while end > 0:
                begin = max(0, end - chunk)
                indices = list(range(begin, end))
                if self.try_edit(partial(steps.remove_ops, indices=indices)):
                    changed = True
                    count = len(steps.reducible_ops(self.parse(self.current)))
                end = min(begin, count)
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
        return changed

    def regions(self) -> bool:
        self.phase = "regions"
        changed = False
        index = 0
        while True:
            sites = [s for s in steps.region_ops(self.parse(self.current)) if s[0] >= index]
            if not sites:
                return changed
            index, count = sites[0]
            module = self.parse(self.current)
            name = steps.reducible_ops(module)[index].name
            if name == "stablehlo.case":
                edits: list[Edit] = [partial(steps.inline_case_branch, index=index, branch=b) for b in range(count)]
            else:
                edits = [partial(steps.inline_while_body, index=index)]
            if any(self.try_edit(edit) for edit in edits):
                changed = True
            else:
                index += 1

    def replace_each(self) -> bool:
        self.phase = "replace"
        changed = False
        index = len(steps.reducible_ops(self.parse(self.current))) - 1
        while index >= 0:
            for how in steps.DEFAULT_REPLACEMENTS:
                if self.try_edit(partial(steps.replace_op_by, index=index, how=how)):
                    changed = True
                    break
            index = min(index - 1, len(steps.reducible_ops(self.parse(self.current))) - 1)
        return changed

    def constants(self) -> bool:
        self.phase = "constants"
        changed = False
        for index in reversed(steps.dense_constants(self.parse(self.current))):
            changed |= self.try_edit(partial(steps.splat_constant_value, index=index))
        return changed

    def attributes(self) -> bool:
        self.phase = "attributes"
        sites = steps.attribute_sites(self.parse(self.current))
        if not sites:
            return False
        if self.try_edit(partial(steps.drop_attributes, sites=sites)):
            return True
        changed = False
        for site in reversed(sites):
            changed |= self.try_edit(partial(steps.drop_attributes, sites=[site]))
        return changed

    def dimensions(self) -> bool:
        self.phase = "dimensions"
        changed = False
        for size in steps.dimension_sizes(self.current):
            for new_size in (1, size // 2):
                if new_size < size and self.try_text(steps.shrink_dimension(self.current, size, new_size)):
                    changed = True
                    break
        return changed

    def run(self) -> str | None:
        """Reduce to a fixpoint; the reason for stopping early, or None."""
        phases: Sequence[Callable[[], bool]] = (self.drop_functions, self.ddmin_ops, self.regions,
                                                self.replace_each, self.constants, self.attributes,
                                                self.dimensions, self.arguments)
        try:
            changed = True
            while changed:
                changed = False
                for phase in phases:
                    changed |= phase()
        except _TimeUp:
            return "time limit"
        return None


def _as_text(module: str | bytes | ir.Module, context: ir.Context) -> str:
    """``module`` printed without locations, parsed in ``context`` (which must verify)."""
    if isinstance(module, ir.Module):
        module = module.operation.get_asm()
    if not isinstance(module, (str, bytes)):
        raise TypeError(f"reduce_module takes MLIR text, bytecode or an ir.Module, not {type(module).__name__}")
    parsed = read_module(module, context)  # text, bytecode or VHLO; ir.MLIRError names the line
    parsed.operation.verify()
    return parsed.operation.get_asm(assume_verified=True)


def _stream_progress(stream: TextIO) -> Callable[[ReductionProgress], None]:
    def write(progress: ReductionProgress) -> None:
        stream.write(progress.line() + "\n")
        stream.flush()
    return write


def reduce_module(module: str | bytes | ir.Module,
                  test: str | InterestingnessTest | Callable[[str], bool], *,
                  pipeline: str | Pipeline | None = None,
                  progress: Callable[[ReductionProgress], None] | TextIO | None = None,
                  time_limit: float | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> ReductionResult:
    """Shrink ``module`` while ``test`` holds; see the module docstring for the edits.

    * ``module``: MLIR text, bytecode, a portable artifact or an ``ir.Module``
      (not changed); it must verify.
    * ``test``: a spec (``"crash"``, ``"error:REGEX"``, ``"numerics"``,
      ``"filecheck:FILE"``, ``"cmd:COMMAND"``), an
      :class:`~toolkit.lab.interestingness.InterestingnessTest`, or a
      predicate on the candidate's text (True = interesting).
    * ``pipeline``: the pass pipeline the test runs (every kind but ``cmd``
      and predicates needs one).
    * ``progress``: called with a :class:`ReductionProgress` after every kept
      edit, or a stream to write its line to.
    * ``time_limit``: seconds; the best module so far is returned when they
      are up (``result.stopped == "time limit"``).
    * ``timeout``: seconds one ``crash``/``cmd`` child may run (then it is
      killed and the candidate is not interesting).

    Raises ValueError for a bad test spec or pipeline, ``ir.MLIRError`` for
    a module that does not parse or verify, and
    :class:`~toolkit.lab.interestingness.NotInterestingError` when the input
    itself is not interesting (nothing to reduce).
    """
    if time_limit is not None and time_limit <= 0:
        raise ValueError(f"time_limit must be positive, got {time_limit}")
    checker = make_test(test, pipeline, timeout)
    context = make_context()
    context.attach_diagnostic_handler(lambda diagnostic: True)  # rejected candidates' verifier errors stay quiet
    text = _as_text(module, context)
    callback: Callable[[ReductionProgress], None] | None
    if progress is None or callable(progress):
        callback = progress
    else:
        callback = _stream_progress(progress)
    reducer = _Reducer(text, checker, context, callback, time_limit)
    checker.calibrate(text, ir.Module.parse(text, context))
    reducer.tests += 1
    stopped = reducer.run()
    reducer.phase = "done"
    return ReductionResult(text=reducer.current, ops_before=reducer.ops_before, ops_after=reducer.ops,
                           steps=reducer.steps, tests=reducer.tests, cache_hits=reducer.cache_hits,
                           seconds=time.perf_counter() - reducer.start, test=checker.spec,
                           pipeline=str(checker.pipeline) if checker.pipeline is not None else None,
                           stopped=stopped)
