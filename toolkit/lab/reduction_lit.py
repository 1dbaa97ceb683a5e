"""A ready lit test from a reduction: RUN line, the reduced module, CHECK lines (``toolkit-reduce --emit-lit``).

The test is a *regression* test: it fails while the bug is there and passes
once the pass is fixed.

* ``crash``, ``error``: ``toolkit-opt %s --pass-pipeline='...' | filecheck %s``
  with a ``CHECK-LABEL`` per function (the pipeline must now succeed); after
  the fix, ``toolkit-update-checks`` fills in the pass's real output.
* ``error`` with ``style="diagnostics"``: ``-verify-diagnostics`` and an
  ``// expected-error @+1 {{...}}`` above each op the error names — a test
  that pins the diagnostic (passes while the error is there).
* ``filecheck:FILE``: the CHECK lines of ``FILE`` that the failure needs
  (the others are dropped one by one while the same CHECK line still fails).
* ``numerics``: ``toolkit-run %s --arg ...`` with ``check.expect_almost_eq``
  (``expect_eq`` for integers) of each result against what the module
  computes without the pipeline, on the inputs that showed the divergence.
* ``cmd`` and predicates: the pipeline's output as CHECK lines
  (:func:`toolkit.lab.check_lines.generate_checks` when it exists).

Example::

    text = lit_test(result, plugins=["my_plugin.py"])
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Sequence

import numpy as np
from jaxlib.mlir import ir

from toolkit.ir import diagnostics as ir_diagnostics
from toolkit.ir.context import make_context
from toolkit.ir.symbols import functions, symbol_name
from toolkit.lab.interestingness import filecheck_failure, pipeline_output
from toolkit.lab.reduction import ReductionResult
from toolkit.passes import parse_pipeline
from toolkit.passes.numerics import random_inputs, run_main

from toolkit.lab.check_lines import GENERATED_BEGIN, GENERATED_END, generate_checks


#: The ``style`` values :func:`lit_test` accepts.
STYLES = ("regression", "diagnostics")

#: A FileCheck directive of ``prefix`` (``str.format`` it).
_DIRECTIVE = r"\b{prefix}(?:-NEXT|-SAME|-NOT|-LABEL|-DAG|-EMPTY|-COUNT-\d+)?:"


def _quote(text: str) -> str:
    return shlex.quote(text)


def _tool_flags(plugins: Sequence[str], pipeline: str) -> str:
    flags = [f"--load-pass-plugin={_quote(os.path.abspath(p) if p.endswith('.py') else p)}" for p in plugins]
    flags.append(f"--pass-pipeline={_quote(pipeline)}")
    return " ".join(flags)


def _module_body(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _labels(text: str) -> list[str]:
    context = make_context()
    module = ir.Module.parse(text, context)
    return [f"// CHECK-LABEL: func.func {'private ' if _private(f) else ''}@{symbol_name(f)}"
            for f in functions(module)]


def _private(function: ir.Operation) -> bool:
    attributes = function.attributes
    return "sym_visibility" in attributes and ir.StringAttr(attributes["sym_visibility"]).value == "private"


def _header(result: ReductionResult, source: str | None) -> str:
    origin = f" from {os.path.basename(source)}" if source else ""
    return (f"// Reduced by toolkit-reduce{origin} (--test={result.test}): "
            f"{result.ops_before} ops -> {result.ops_after} ops.\n")


def _error_diagnostics(text: str, pipeline: str) -> list[tuple[int, str]]:
    """(line in ``text``, message) of every error diagnostic the pipeline emits on ``text``."""
    context = make_context()
    module = ir.Module.parse(text, context)
    found: list[tuple[int, str]] = []

    def collect(diagnostic: object) -> bool:
        if getattr(diagnostic, "severity", None) == ir.DiagnosticSeverity.ERROR:
            where = ir_diagnostics.format_location(diagnostic.location)  # type: ignore[attr-defined]
            parts = where.rsplit(":", 2)
            message = str(diagnostic.message).split("\n")[0]  # type: ignore[attr-defined]
            if len(parts) == 3 and parts[1].isdigit() and (int(parts[1]), message) not in found:
                found.append((int(parts[1]), message))
        return True

    handler = ir_diagnostics.attach_diagnostic_handler(context, collect)
    try:
        parse_pipeline(pipeline).run(module, capture_diagnostics=False)
    except Exception:  # noqa: BLE001 - the failure is what the test pins; its diagnostics were collected
        pass
    finally:
        handler.detach()
    return found


def _annotation_message(message: str) -> str:
    # The annotation matches a substring: the text before anything that names a file of the pass's code.
    message = re.split(r" \(at [^)]*\)|\s+at \S+\.py:\d+", message)[0].strip()
    return message.replace("}}", "} }")


def _diagnostics_test(result: ReductionResult, plugins: Sequence[str], source: str | None) -> str | None:
    assert result.pipeline is not None
    diagnostics = _error_diagnostics(result.text, result.pipeline)
    if not diagnostics:
        return None
    lines = [_header(result, source).rstrip("\n"),
             f"// RUN: toolkit-opt %s {_tool_flags(plugins, result.pipeline)} -verify-diagnostics", ""]
    by_line: dict[int, list[str]] = {}
    for line, message in diagnostics:
        by_line.setdefault(line, []).append(message)
    body = result.text.rstrip("\n").split("\n")
    out = list(lines)
    for number, source_line in enumerate(body, start=1):
        indent = source_line[:len(source_line) - len(source_line.lstrip())]
        for message in by_line.get(number, []):
            out.append(f"{indent}// expected-error @+1 {{{{{_annotation_message(message)}}}}}")
        out.append(source_line)
    return "\n".join(out) + "\n"


def prune_check_lines(output: str, check_text: str, *, prefix: str = "CHECK") -> list[str]:
    """The directive lines of ``check_text`` that make ``output`` fail FileCheck the same way.

    Drops one directive at a time (last first) while FileCheck still fails
    at the same directive; returns the directives left, in order.
    """
    directive = re.compile(_DIRECTIVE.format(prefix=re.escape(prefix)))
    lines = [line.strip() for line in check_text.splitlines() if directive.search(line)]
    with tempfile.TemporaryDirectory(prefix="toolkit-reduce-") as folder:
        path = os.path.join(folder, "checks.txt")

        def failing(subset: list[str]) -> str | None:
            with open(path, "w") as stream:
                stream.write("\n".join(subset) + "\n")
            failure = filecheck_failure(output, path, prefix=prefix)
            if failure is None or not 1 <= failure[0] <= len(subset):
                return None
            return subset[failure[0] - 1]

        target = failing(lines)
        if target is None:
            return lines
        index = len(lines) - 1
        while index >= 0:
            if lines[index] != target:
                candidate = lines[:index] + lines[index + 1:]
                if failing(candidate) == target:
                    lines = candidate
            index -= 1
    return lines


def _filecheck_test(result: ReductionResult, plugins: Sequence[str], source: str | None) -> str:
    assert result.pipeline is not None
    check_file = result.test.partition(":")[2]
    with open(check_file) as stream:
        check_text = stream.read()
    output = pipeline_output(ir.Module.parse(result.text, make_context()), parse_pipeline(result.pipeline))
    directive = re.compile(_DIRECTIVE.format(prefix="CHECK"))
    checks = prune_check_lines(output, check_text) if output is not None else \
        [line.strip() for line in check_text.splitlines() if directive.search(line)]
    return (_header(result, source)
            + f"// RUN: toolkit-opt %s {_tool_flags(plugins, result.pipeline)} | filecheck %s\n\n"
            + "\n".join(checks) + "\n\n" + _module_body(result.text))


def _literal(array: np.ndarray) -> str:
    """``array`` as a ``toolkit-run --arg`` JSON literal (nested lists; floats exact as doubles)."""
    if array.dtype.kind in "biu":
        return json.dumps(array.tolist())
    return json.dumps(array.astype(np.float64).tolist())


def _numerics_test(result: ReductionResult, plugins: Sequence[str], source: str | None) -> str:
    assert result.pipeline is not None
    context = make_context()
    module = ir.Module.parse(result.text, context)
    inputs = [np.asarray(x) for x in random_inputs(module, seed=0)]
    expected = [np.asarray(x) for x in run_main(ir.Module.parse(result.text, context), inputs)]
    main = next(f for f in functions(module) if symbol_name(f) == "main")
    block = main.regions[0].blocks[0]
    terminator = list(block.operations)[-1]
    with context, terminator.location, ir.InsertionPoint(terminator):
        for value, want in zip(list(terminator.operands), expected):
            attr = ir.DenseElementsAttr.get(np.ascontiguousarray(want).reshape(want.shape), type=value.type)
            constant = ir.Operation.create("stablehlo.constant", results=[value.type],
                                           attributes={"value": attr}).result
            check = "check.expect_eq" if want.dtype.kind in "iub" else "check.expect_almost_eq"
            ir.Operation.create("stablehlo.custom_call", results=[], operands=[value, constant],
                                attributes={"call_target_name": ir.StringAttr.get(check),
                                            "has_side_effect": ir.BoolAttr.get(True)})
    arguments = " ".join(f"--arg {_quote(_literal(x))}" for x in inputs)
    flags = _tool_flags(plugins, result.pipeline)
    return (_header(result, source)
            + "// The module's @main checks its results against what it computes without the pipeline.\n"
            + f"// RUN: toolkit-run %s {flags} {arguments} | filecheck %s\n\n"
            + f"// CHECK: {len(expected)}/{len(expected)} checks passed\n\n"
            + _module_body(module.operation.get_asm()))


def lit_test(result: ReductionResult, *, plugins: Sequence[str] = (), style: str = "regression",
             source: str | None = None) -> str:
    """The text of a lit test for ``result`` (see the module docstring for what each kind gets).

    ``plugins``: pass plugins the RUN line loads (``--load-pass-plugin``,
    made absolute); ``style``: ``"regression"`` (default) or
    ``"diagnostics"`` (``error`` kinds only: pin the diagnostic with
    ``expected-error``); ``source``: the input's file name, for the header.
    Raises ValueError for an unknown style or a result without a pipeline.
    """
    if style not in STYLES:
        raise ValueError(f"unknown lit style {style!r} (expected one of: {', '.join(STYLES)})")
    kind = result.test.partition(":")[0]
    if style == "diagnostics" and kind != "error":
        raise ValueError(f"the diagnostics lit style needs --test=error, not --test={result.test}")
    if result.pipeline is None:
        raise ValueError("a lit test needs the pipeline the reduction ran (--pass-pipeline)")
    if style == "diagnostics":
        text = _diagnostics_test(result, plugins, source)
        if text is not None:
            return text
    if kind == "filecheck":
        return _filecheck_test(result, plugins, source)
    if kind == "numerics":
        return _numerics_test(result, plugins, source)
    run = f"// RUN: toolkit-opt %s {_tool_flags(plugins, result.pipeline)} | filecheck %s\n"
    if kind in ("crash", "error"):
        checks = _labels(result.text)
        note = ("// The pipeline must succeed. After the fix, `toolkit-update-checks` on this file replaces the\n"
                "// generated block with the CHECK lines of the pass's output.\n")
    else:
        output = pipeline_output(ir.Module.parse(result.text, make_context()), parse_pipeline(result.pipeline))
        if output is None:
            checks = _labels(result.text)
        else:
            checks = list(generate_checks(output))
        note = ""
    # In toolkit-update-checks' generated block, so that tool rewrites these lines instead of adding others.
    block = [f"// {GENERATED_BEGIN}", *checks, f"// {GENERATED_END}"]
    return _header(result, source) + note + run + "\n" + "\n".join(block) + "\n" + _module_body(result.text)
