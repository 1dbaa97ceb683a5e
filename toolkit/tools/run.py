"""``toolkit-run``: compile a module's ``@main`` with XLA CPU, run it, check it.

    toolkit-run program.mlir                      # @inputs() fed as runtime parameters
    toolkit-run f.mlir -arg x.npy -arg "[1, 2, 3]"
    toolkit-run f.mlir -pass-pipeline='builtin.module(toolkit-simplify)'

The input may also be a serialized export (``Exported.serialize()``, toolkit's
or ``jax.export``'s): it runs as ``toolkit export run`` does, one ``-arg``
per flat input, checked against the declared types.

``check.expect_eq`` / ``check.expect_close`` / ``check.expect_almost_eq`` custom
calls become extra results (``toolkit-checks-to-results``) and are judged
after the run (see ``toolkit.tools.checks``). Long flags take one dash or
two; the input is standard input when it is ``-`` or missing. Exit status:
0 when the program ran and every check passed, 1 on a missed check or when
reading, parsing, a pass, compiling or running fails, 2 on bad command-line
usage (unknown flag or pass, ``--arg`` values that do not fit ``@main``).
See ``docs/tools.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import struct
import sys
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from toolkit.core import pytrees
from toolkit.ir.context import make_context
from toolkit.ir.serialization import BYTECODE_MAGIC, read_module, write_module
from toolkit.ir.symbols import lookup_function, lookup_symbol
from toolkit.passes import PassOptionError, PipelineError, load_pass_plugin, parse_pipeline, run_pipeline
from toolkit.runtime import standalone
from toolkit.tools.argument_values import checked_array, load_argument_value
from toolkit.tools.checks import Verdict, compare
from toolkit.tools.diagnostics import parse_module
from toolkit.tools.driver import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    InputError,
    ToolArgumentParser,
    UsageError,
    input_name,
    parse_arguments,
    print_stacktraces_on_diagnostic,
    read_input,
    run_tool,
)

TOOL = "toolkit-run"


@dataclasses.dataclass
class RunOutcome:
    """Results and check verdicts of one program run."""

    results: list[np.ndarray]
    checks: list[tuple[str, Verdict]]

    @property
    def ok(self) -> bool:
        return all(v.ok for _, v in self.checks)


def _numpy_dtype(element_type: object) -> np.dtype:
    text = str(element_type)
    named = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16,
             "i1": np.bool_, "complex<f32>": np.complex64, "complex<f64>": np.complex128,
             "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
    if text in named:
        return np.dtype(named[text])
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        return np.dtype(f"{'u' if element_type.is_unsigned else 'i'}{width // 8}")
    raise ValueError(f"no numpy dtype for MLIR element type {text}")


def parse_argument(text: str, tensor_type: object) -> np.ndarray:
    """``--arg`` value for a parameter of ``tensor_type``: a ``.npy`` path or a JSON literal.

    Literals are converted to the parameter's element type only when no value
    changes (``1.5`` or ``4000000000`` for an ``i32`` parameter is an error,
    see :func:`~toolkit.tools.argument_values.checked_array`); scalars broadcast.
    Raises :class:`~toolkit.tools.driver.UsageError` (a ``ValueError``) for a
    value that does not fit the parameter.
    """
    try:
        dtype = _numpy_dtype(tensor_type.element_type)  # type: ignore[attr-defined]
    except ValueError as error:
        raise UsageError(f"--arg {text!r}: {error}") from None
    shape = tuple(None if d < 0 else d for d in tensor_type.shape)  # type: ignore[attr-defined]
    try:
        value, literal = load_argument_value(text)
        return checked_array(value, dtype, shape, literal=literal)
    except ValueError as error:
        raise UsageError(f"--arg {text!r} {error}" if str(error).startswith(("is ", "has "))
                         else f"--arg {text!r}: {error}") from None


def _evaluate_inputs(source: bytes | str) -> list[np.ndarray]:
    """Values that ``@inputs()`` returns, computed by XLA from a copy of the module."""
    context = make_context()
    module = read_module(source, context)  # run_program read (and probed) it already
    with context:
        main = lookup_function(module, "main").operation
        inputs = lookup_function(module, "inputs").operation
        main.erase()
        inputs.attributes["sym_name"] = ir.StringAttr.get("main")
        inputs.attributes["sym_visibility"] = ir.StringAttr.get("public")
    run_pipeline(module, "symbol-dce")
    return standalone.execute(standalone.compile_module(write_module(module, "bytecode")), [])


def run_program(source: bytes | str, *, pipeline: str = "", arguments: Sequence[str] = (),
                inputs_as_arguments: bool = True, name: str = "<input>",
                allow_unregistered_dialect: bool = False) -> RunOutcome:
    """Compile and run ``@main`` of ``source`` (text/bytecode/VHLO) on XLA CPU.

    ``arguments`` are ``--arg`` strings. With no arguments and an ``@inputs``
    function, its values become runtime parameters of ``@main``. ``name``
    names the source in parse errors (:class:`~toolkit.tools.driver.InputError`,
    ``name:line:col: error: ...``); arguments that do not fit ``@main`` raise
    :class:`~toolkit.tools.driver.UsageError`. Both are ``ValueError`` s.
    """
    context = make_context()
    context.allow_unregistered_dialects = allow_unregistered_dialect
    module = parse_module(source, name, context)
    main = lookup_function(module, "main").operation
    main_inputs = list(ir.TypeAttr(main.attributes["function_type"]).value.inputs)
    values: list[np.ndarray]
    if arguments:
        if len(arguments) != len(main_inputs):
            raise UsageError(f"@main takes {len(main_inputs)} arguments, got {len(arguments)} --arg")
        values = [parse_argument(text, t) for text, t in zip(arguments, main_inputs)]
    elif not main_inputs and inputs_as_arguments and lookup_symbol(module, "inputs") is not None:
        values = _evaluate_inputs(source)
        run_pipeline(module, "toolkit-inputs-to-arguments")
    elif main_inputs:
        raise UsageError(f"@main takes {len(main_inputs)} arguments; pass them with --arg")
    else:
        values = []
    if pipeline.strip():
        run_pipeline(module, pipeline)
    run_pipeline(module, "toolkit-checks-to-results")
    main = lookup_function(module, "main").operation
    kinds: list[str] = []
    if "toolkit.checks" in main.attributes:
        kinds = [ir.StringAttr(k).value for k in ir.ArrayAttr(main.attributes["toolkit.checks"])]
        del main.attributes["toolkit.checks"]
    outputs = _compile_and_run(module, values, name)
    first_check = len(outputs) - 2 * len(kinds)
    checks = [(kind, compare(kind, outputs[first_check + 2 * i], outputs[first_check + 2 * i + 1]))
              for i, kind in enumerate(kinds)]
    return RunOutcome(outputs[:first_check], checks)


def _compile_and_run(module: ir.Module, values: Sequence[np.ndarray], name: str) -> list[np.ndarray]:
    """``@main`` of ``module`` compiled and run as every program is: ``toolkit.load_module(...).compile()``.

    So shardings in ``@main`` and ``mhlo.num_partitions`` are honoured and
    ``?`` dimensions are refined for the arguments given.
    """
    # The loader stands on the whole stack (stages, export): loaded when a program runs, not for --help or usage
    # errors (toolkit-run's start-up time).
    from toolkit.lab.loading import load_module  # lazy: start-up time (see above)

    lowered = load_module(module, name=name)
    results = lowered.compile()(*values)
    return [np.asarray(r) for r in pytrees.tree_leaves(results)]


def _parser() -> ToolArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                epilog="Long flags take one dash or two.")
    parser.add_argument("input", nargs="?", default="-",
                        help="module file (text, bytecode or VHLO); - or none: stdin")
    parser.add_argument("--arg", action="append", default=[],
                        help=".npy file or JSON literal for the next @main argument")
    parser.add_argument("--pass-pipeline", default="", help="pipeline to run before compiling")
    parser.add_argument("--constant-inputs", action="store_true",
                        help="keep @inputs() as constants instead of runtime parameters")
    parser.add_argument("--no-print-results", dest="print_results", action="store_false",
                        help="print only the check verdicts")
    parser.add_argument("--load-pass-plugin", action="append", default=[], metavar="PLUGIN",
                        help="a .py file or module registering passes")
    parser.add_argument("--allow-unregistered-dialect", action="store_true",
                        help="parse operations of dialects that are not registered")
    parser.add_argument("--mlir-print-stacktrace-on-diagnostic", action="store_true",
                        help="print the Python traceback of an exception raised in a pass")
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args, _ = parse_arguments(_parser(), argv)
    if args.mlir_print_stacktrace_on_diagnostic:
        print_stacktraces_on_diagnostic()
    for plugin in args.load_pass_plugin:
        try:
            load_pass_plugin(plugin)
        except Exception as error:  # whatever the plugin's own code raises
            raise UsageError(f"cannot load pass plugin: {error}") from None
    if args.pass_pipeline.strip():
        try:
            parse_pipeline(args.pass_pipeline)
        except (PipelineError, PassOptionError, ValueError) as error:
            raise UsageError(str(error)) from None
    name = input_name(args.input)
    source = read_input(args.input)
    exported = serialized_export(source, name)
    if exported is not None:  # a blob written by Exported.serialize() (toolkit or jax.export)
        return _run_export(exported, args, name)
    try:
        outcome = run_program(source, pipeline=args.pass_pipeline, arguments=args.arg,
                              inputs_as_arguments=not args.constant_inputs, name=name,
                              allow_unregistered_dialect=args.allow_unregistered_dialect)
    except (UsageError, InputError):
        raise
    except KeyError as error:  # no @main, ...: KeyError's str() would add quotes
        raise InputError(f"{name}: error: {error.args[0] if error.args else error}") from None
    except (ValueError, RuntimeError, ir.MLIRError) as error:  # passes, XLA compilation and execution
        raise InputError(f"{name}: error: {error}") from None
    if args.print_results:
        for index, result in enumerate(outcome.results):
            print(f"result[{index}]: {result.dtype}{list(result.shape)} = "
                  f"{np.array2string(result, threshold=64, separator=', ')}")
    for index, (kind, verdict) in enumerate(outcome.checks):
        status = "PASS" if verdict.ok else "FAIL"
        print(f"check[{index}] {status}: {verdict.message}")
    if outcome.checks:
        passed = sum(v.ok for _, v in outcome.checks)
        print(f"{passed}/{len(outcome.checks)} checks passed")
    return EXIT_SUCCESS if outcome.ok else EXIT_FAILURE


def serialized_export(source: bytes, name: str) -> Any | None:
    """The ``Exported`` in ``source`` when it is a serialized export (not MLIR), else None.

    A flatbuffer starts with a small root offset; MLIR text and bytecode never
    do, so only plausible blobs are read (and their embedded module probed out
    of process, as ``toolkit export`` does).
    """
    if len(source) < 12 or len(source) % 4 or source.startswith(BYTECODE_MAGIC):
        return None
    root = struct.unpack_from("<I", source, 0)[0]
    if not 4 <= root < len(source) or root % 4:
        return None
    # The export stack (reader, converter, runner: a tenth of the start-up) loads only for an input that looks
    # like a serialized export, not on every toolkit-run of an MLIR file.
    from toolkit.export import deserialize  # lazy: toolkit-run's start-up time (see above)
    from toolkit.tools.export_cli import read_export  # lazy: toolkit-run's start-up time (see above)

    try:
        deserialize(source)
    except ValueError:
        return None
    return read_export(source, name if name != "<stdin>" else "-")


def _run_export(exported: Any, args: argparse.Namespace, name: str) -> int:
    from toolkit.export.inspection import result_paths  # lazy: as in serialized_export, for start-up time
    from toolkit.tools.export_cli import print_results, run_export_arguments  # lazy: as in serialized_export

    if args.pass_pipeline.strip() or args.constant_inputs:
        raise UsageError("--pass-pipeline and --constant-inputs do not apply to a serialized export "
                         "(convert it with `toolkit export convert --plain` first)")
    outputs = run_export_arguments(exported, args.arg, name)
    if args.print_results:
        print_results(outputs, sys.stdout, paths=result_paths(exported))
    return EXIT_SUCCESS


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (see the module docstring); returns the exit status."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
