"""``toolkit``: the command-line entry point; ``toolkit export ...`` looks into serialized exports.

    toolkit export inspect BLOB [--json]       # every field, @main's signature, provenance
    toolkit export diff A B [--locations]      # field-by-field and signature-level comparison
    toolkit export mlir BLOB [--debug-info]    # the embedded module as text
    toolkit export convert BLOB -o OUT --calling-convention 9 | --stablehlo-target 1.8.0 | --static b=4 [--plain]
    toolkit export check-compat BLOB --consumer cc=9,stablehlo=1.8.0
    toolkit export run BLOB --arg x.npy --arg "[1, 2]" [--out DIR]

``BLOB`` is a file written by ``Exported.serialize()`` (toolkit or
``jax.export``); ``-`` or no ``BLOB`` reads standard input. Long flags take
one dash or two. Exit status: 0 on success (``diff``: the exports are
equivalent), 1 when ``diff`` finds differences or an input cannot be read or
is not a serialized export, 2 on bad command-line usage. See
``docs/tools.md``.

This module parses the command line and prints; what each command computes
is library code usable from Python: :mod:`toolkit.export.inspection`
(``inspect``), :mod:`toolkit.export.comparison` (``diff``),
:mod:`toolkit.export.convert` (``convert``), :mod:`toolkit.export.compat`
(``check-compat``) and :mod:`toolkit.export.runner` (``run``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any, TextIO, cast

import numpy as np

from toolkit.core import pytrees
from toolkit.export import compat
from toolkit.export import convert as conversions
from toolkit.export.comparison import compare_exports
from toolkit.export.exported import Exported
from toolkit.export.exporting import portable_artifact_target
from toolkit.export.inspection import (
    describe,
    deserialize_untrusted,
    dimension_variables,
    inspect_record,
    provenance_rows,
    result_paths,
    signature_lines,
)
from toolkit.export.runner import argument_names, check_arguments, declared_shape, run_exported
from toolkit.ir.context import make_context
from toolkit.ir.serialization import BYTECODE_MAGIC, detect_format, write_module
from toolkit.runtime import platforms as runtime_platforms
from toolkit.tools.argument_values import checked_array, load_argument_value
from toolkit.tools.diagnostics import parse_module
from toolkit.tools import lab_cli
from toolkit.tools.driver import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    InputError,
    ToolArgumentParser,
    ToolError,
    UsageError,
    input_name,
    module_text,
    parse_arguments,
    read_input,
    run_tool,
    write_output,
)

TOOL = "toolkit"


# What MLIR text starts with once blank lines and // comments are skipped: a module, a function, an
# attribute or type alias, a generic-form op, or a file-level directive.
_MLIR_TEXT_START = re.compile(r"\A\s*(?://[^\n]*\n\s*)*(?:module\b|func\.func\b|builtin\.module\b|[#!]\w|\"\w+\.\w+\"|"
                              r"\{-#|\w+\.\w+\s*[({])")


def mlir_kind(blob: bytes) -> str | None:
    """What MLIR ``blob`` is (``"MLIR text"``, ``"MLIR bytecode"``, ``"a StableHLO portable artifact"``), or
    None when it is not recognisably MLIR (an export, or anything else)."""
    kind = detect_format(blob)
    if kind == "vhlo":
        return "a StableHLO portable artifact"
    if kind == "bytecode":
        return "MLIR bytecode"
    if b"\0" in blob[:4096]:  # a flatbuffer starts with its root offset, with zero bytes; MLIR text has none
        return None
    try:
        text = blob[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "MLIR text" if _MLIR_TEXT_START.match(text) else None


def read_export(blob: bytes, path: str) -> Exported:
    """The ``Exported`` in ``blob`` (:func:`~toolkit.export.inspection.deserialize_untrusted`), or
    :class:`~toolkit.tools.driver.InputError` naming ``path``.

    A module (MLIR text, bytecode or a portable artifact) is not an export:
    the error says what it is and which tools read it (``toolkit-run``,
    ``toolkit-opt``), with runnable commands.
    """
    try:
        return deserialize_untrusted(blob)
    except ValueError as error:
        kind = mlir_kind(blob)
        if kind is not None:
            file = shlex.quote(path)
            raise InputError(
                f"{input_name(path)}: error: this is {kind}, not a serialized export (what Exported.serialize() "
                f"writes); `toolkit export` reads exports only. Run the module with `toolkit-run {file}`, "
                f"or run passes on it with `toolkit-opt {file} --pass-pipeline='builtin.module(...)'`") from None
        raise InputError(f"{input_name(path)}: error: {error}") from None


def _load(path: str) -> Exported:
    return read_export(read_input(path), path)


def cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    blob = read_input(args.blob)
    exp = read_export(blob, args.blob)
    if args.json:
        out.write(json.dumps(inspect_record(exp, blob), indent=2, default=str) + "\n")
        return EXIT_SUCCESS
    for name, text in describe(exp, blob):
        out.write(f"{name}: {text}\n")
    dim_vars = dimension_variables(exp)
    out.write("dimension variables:" + (" none\n" if not dim_vars else "\n"))
    for var in dim_vars:
        constraints = f"; constraints: {', '.join(var['constraints'])}" if var["constraints"] else ""
        out.write(f"  {var['name']}: from {var['from']}{constraints}\n")
    out.write("provenance:\n")
    for name, text in provenance_rows(exp, blob):
        out.write(f"{name}: {text}\n")
    out.write("main signature:\n")
    for line in signature_lines(exp):
        out.write(f"  {line}\n")
    return EXIT_SUCCESS


def cmd_mlir(args: argparse.Namespace, out: TextIO) -> int:
    exp = _load(args.blob)
    name = input_name(args.blob)
    if not exp.mlir_module_serialized.startswith(BYTECODE_MAGIC):
        raise InputError(f"{name}: error: mlir_module_serialized is not a StableHLO portable artifact "
                         "(it does not start with the MLIR bytecode magic)")
    module = parse_module(exp.mlir_module_serialized, f"{name} (mlir_module_serialized)", make_context())
    out.write(module_text(module, generic=args.print_generic, debug_info=args.debug_info).decode())
    out.write("\n")
    return EXIT_SUCCESS


def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    blob_a, blob_b = read_input(args.a), read_input(args.b)
    a, b = read_export(blob_a, args.a), read_export(blob_b, args.b)
    comparison = compare_exports(a, b, blob_a, blob_b, locations=args.locations)
    if args.json:
        out.write(json.dumps(comparison.as_dict(), indent=2, default=str) + "\n")
        return EXIT_FAILURE if comparison.differences else EXIT_SUCCESS
    out.write("fields:\n")
    for field in comparison.fields:
        va = "(absent)" if field.a is None else field.a
        vb = "(absent)" if field.b is None else field.b
        if field.same:
            out.write(f"  = {field.name.strip()}: {va}\n")
        else:
            out.write(f"  ! {field.name.strip()}:\n      A: {va}\n      B: {vb}\n")
    out.write("dimension variables:\n")
    if not comparison.dimension_variables_differ:
        out.write(f"  = {', '.join(d['name'] for d in comparison.dimension_variables_a) or 'none'}\n")
    else:
        out.write(f"  ! A: {json.dumps(comparison.dimension_variables_a)}\n"
                  f"    B: {json.dumps(comparison.dimension_variables_b)}\n")
    out.write("main signature:\n")
    if not comparison.signature_differs:
        out.write("  = identical\n")
    else:
        for line in comparison.signature_diff():
            out.write(f"  {line}\n")
    out.write("module text:" + (" (with locations)\n" if args.locations else "\n"))
    if not comparison.module_text_differs:
        out.write("  = identical (locations differ; --locations shows them)\n" if comparison.locations_differ
                  else "  = identical\n")
    else:
        diff = comparison.module_text_diff()
        shown = diff if args.full else diff[:40]
        for line in shown:
            out.write(f"  {line}\n")
        if len(shown) < len(diff):
            out.write(f"  ... {len(diff) - len(shown)} more lines (--full shows all)\n")
    out.write(f"{comparison.differences} difference(s)\n")
    return EXIT_FAILURE if comparison.differences else EXIT_SUCCESS


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    name = input_name(args.blob)
    exp = _load(args.blob)
    if args.calling_convention is None and args.stablehlo_target is None and args.static is None and not args.plain:
        raise UsageError("nothing to convert: give --calling-convention, --stablehlo-target, --static or --plain")
    if args.plain and args.calling_convention is not None:
        raise UsageError("--plain writes a module without a calling convention; drop --calling-convention")
    if args.emit != "export" and not args.plain:
        raise UsageError(f"--emit={args.emit} needs --plain (without it the output is a serialized export)")
    if args.stablehlo_target is not None:
        try:
            conversions.parse_version(args.stablehlo_target)
        except ValueError as error:
            raise UsageError(f"--stablehlo-target: {error}") from None
    if args.output == "-" and sys.stdout.isatty() and not (args.plain and args.emit == "text"):
        raise UsageError("the output is binary: give -o FILE")
    try:
        if args.plain:
            module = conversions.plain_module(exp, args.static, platform=args.platform)
            if args.emit == "text":
                data = write_module(module, "text", debug_info=args.debug_info) + b"\n"
            elif args.emit == "bytecode":
                data = write_module(module, "bytecode")
            else:  # a portable artifact: by default for the StableHLO version the input was written for
                target = args.stablehlo_target or conversions.artifact_version(exp.mlir_module_serialized) \
                    or portable_artifact_target()
                data = conversions.serialize_module(module, target)
        else:
            converted = cast(Exported, conversions.convert(  # not plain: an Exported
                exp, calling_convention=args.calling_convention, stablehlo_target=args.stablehlo_target,
                static_args=args.static, platform=args.platform))
            data = bytes(converted.serialize())
    except conversions.ConversionError as error:
        raise InputError(f"{name}: error: cannot convert: {error} [blocked by: {error.feature}]") from None
    except ValueError as error:  # a --static spec that does not fit, a violated shape constraint
        raise InputError(f"{name}: error: cannot convert: {error}") from None
    write_output(args.output, data)
    return EXIT_SUCCESS


def cmd_check_compat(args: argparse.Namespace, out: TextIO) -> int:
    try:
        consumer = compat.parse_consumer(args.consumer)
    except ValueError as error:
        raise UsageError(f"--consumer: {error}") from None
    exp = _load(args.blob)
    report = compat.check_compat(exp, consumer)
    command = conversion_command(report, args.blob) if report.convertible and not report.readable else None
    if args.json:
        record = report.as_dict()
        record["command"] = command
        out.write(json.dumps(record, indent=2) + "\n")
    else:
        for line in report.lines():
            if command is not None and line.startswith("convertible: yes"):
                line = f"convertible: yes ({command})"  # the library's line has placeholders for the files
            out.write(line + "\n")
    return EXIT_SUCCESS if report.readable else EXIT_FAILURE


def conversion_command(report: compat.CompatReport, blob: str) -> str:
    """The ``toolkit export convert`` command that makes ``blob`` readable by the report's consumer,
    runnable as printed: the real input file and an output file next to it (``model.bin`` ->
    ``model.converted.bin``; standard input: ``-`` and ``converted.bin``)."""
    flags = " ".join(f"--{key.replace('_', '-')} {shlex.quote(str(value))}"
                     for key, value in report.conversion.items())
    if blob == "-":
        output = "converted.bin"
    else:
        root, ext = os.path.splitext(blob)
        output = f"{root}.converted{ext or '.bin'}"
    return f"toolkit export convert {shlex.quote(blob)} {flags} -o {shlex.quote(output)}"


def check_platform_present(platform: str) -> str:
    """``platform`` made canonical (``gpu`` -> ``cuda``) when this process can run on it; otherwise
    :class:`~toolkit.tools.driver.UsageError` saying why not and naming the platforms present."""
    try:
        name = runtime_platforms.canonical(platform)
    except ValueError as error:
        raise UsageError(f"--platform {platform}: {error}") from None
    reason = runtime_platforms.missing_reason(name)
    try:
        present = runtime_platforms.platforms()
    except RuntimeError:  # TOOLKIT_PLATFORMS names a missing platform: list what is there
        present = [p for p in runtime_platforms.PRIORITIES if runtime_platforms.available(p)]
    if reason is None and name not in present:
        reason = f"{runtime_platforms.ENV} excludes it"
    if reason is not None:
        raise UsageError(f"--platform {platform}: the platform is not present ({reason}); platforms present: "
                         f"{', '.join(present)}")
    return name


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    if args.platform is not None:
        # Without this, the export's branch for the platform would be compiled and run on this process's CPU.
        args.platform = check_platform_present(args.platform)
    exp = _load(args.blob)
    outputs = run_export_arguments(exp, args.arg, input_name(args.blob), platform=args.platform)
    print_results(outputs, out, paths=result_paths(exp))
    if args.out_dir:
        save_results(outputs, args.out_dir)
    return EXIT_SUCCESS


def parse_export_arguments(exp: Exported, texts: Sequence[str]) -> list[np.ndarray]:
    """``--arg`` texts as arrays of the export's declared types (checked, never converted lossily)."""
    names = argument_names(exp)
    if len(texts) != len(exp.in_avals):
        raise UsageError(f"the export takes {len(exp.in_avals)} argument(s) ({', '.join(names)}), "
                         f"got {len(texts)} --arg")
    arrays = []
    for text, name, aval in zip(texts, names, exp.in_avals):
        try:
            value, literal = load_argument_value(text)
            arrays.append(checked_array(value, aval.dtype, declared_shape(aval), literal=literal))
        except ValueError as error:
            message = str(error)
            joiner = " " if message.startswith(("is ", "has ")) else ": "
            raise UsageError(f"--arg {text!r} for {name} ({aval.str_short()}){joiner}{message}") from None
    return arrays


def run_export_arguments(exp: Exported, texts: Sequence[str], name: str, *,
                         platform: str | None = None) -> list[np.ndarray]:
    """Run ``exp`` on ``--arg`` texts; usage errors for arguments, input errors for the artifact."""
    arrays = parse_export_arguments(exp, texts)
    try:
        check_arguments(exp, arrays)
    except ValueError as error:  # symbolic sizes that do not fit the dimension variables / constraints
        raise UsageError(str(error)) from None
    try:
        return _compile_and_run(exp, arrays, platform)
    except conversions.ConversionError as error:
        raise InputError(f"{name}: error: cannot run: {error} [blocked by: {error.feature}]") from None
    except (ValueError, RuntimeError, TypeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{name}: error: {message}") from None


def _compile_and_run(exp: Exported, arrays: Sequence[np.ndarray], platform: str | None) -> list[np.ndarray]:
    """The flat results of ``exp`` on ``arrays``, compiled as every program is (``toolkit.load_module``).

    The platform index folds for ``platform``, else CPU when the export has it,
    else its first platform (the branch runs on this process's devices).
    Exports with ordered effects take tokens, which a loaded module does not:
    they run through ``Exported.call`` (:func:`~toolkit.export.runner.run_exported`).
    """
    if exp.ordered_effects:
        return run_exported(exp, arrays, platform=platform)
    if platform is not None and platform not in exp.platforms:
        raise conversions.ConversionError(f"platform {platform!r} is not among the export's platforms "
                                          f"{exp.platforms}", f"platform {platform}")
    chosen = platform or ("cpu" if "cpu" in exp.platforms else exp.platforms[0])
    # The loader stands above export (toolkit.lab): loaded when an export runs, not for the other sub-commands.
    from toolkit.lab.loading import load_module  # lazy: start-up time of `toolkit export inspect/diff/...`

    args, kwargs = pytrees.tree_unflatten(exp.in_tree, list(arrays))
    results = load_module(exp, platform=chosen).compile()(*args, **kwargs)
    return [np.asarray(r) for r in pytrees.tree_leaves(results)]


def print_results(outputs: Sequence[Any], out: TextIO, *, paths: Sequence[str] | None = None) -> None:
    """``result[i]: dtype[shape] = values`` lines, as ``toolkit-run`` prints them (with the output path)."""
    for index, result in enumerate(outputs):
        result = np.asarray(result)
        path = f" ({paths[index]})" if paths is not None and index < len(paths) else ""
        out.write(f"result[{index}]{path}: {result.dtype}{list(result.shape)} = "
                  f"{np.array2string(result, threshold=64, separator=', ')}\n")


def save_results(outputs: Sequence[Any], directory: str) -> None:
    """Write ``result_<i>.npy`` files into ``directory`` (created when missing)."""
    try:
        os.makedirs(directory, exist_ok=True)
        for index, result in enumerate(outputs):
            np.save(os.path.join(directory, f"result_{index}.npy"), np.asarray(result), allow_pickle=False)
    except OSError as error:
        raise ToolError(f"cannot write results to '{directory}': {error.strerror or error}") from None


def build_parser() -> argparse.ArgumentParser:
    """The ``toolkit`` command line: ``export`` and its sub-commands, each with its ``cmd_*`` function as ``run``."""
    parser = ToolArgumentParser(prog=TOOL, description="toolkit command-line tools.",
                                epilog="Long flags take one dash or two.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{export,lab}")
    export = commands.add_parser("export", help="look into serialized exports (toolkit or jax.export blobs)")
    actions = export.add_subparsers(dest="action", required=True, metavar="{inspect,diff,mlir,convert,check-compat,run}")

    def with_output(action: argparse.ArgumentParser) -> argparse.ArgumentParser:
        action.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
        return action

    inspect_ = with_output(actions.add_parser("inspect", help="every field, @main's signature, platforms, versions"))
    inspect_.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    inspect_.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    inspect_.set_defaults(run=cmd_inspect)
    diff = with_output(actions.add_parser("diff", help="compare two exports field by field and by signature"))
    diff.add_argument("a", help="serialized Exported (file, or - for stdin)")
    diff.add_argument("b", help="serialized Exported (file)")
    diff.add_argument("--full", action="store_true", help="show the whole module-text diff")
    diff.add_argument("--locations", action="store_true",
                      help="compare locations too (default: location-only changes are not differences)")
    diff.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    diff.set_defaults(run=cmd_diff)
    mlir = with_output(actions.add_parser("mlir", help="print the embedded StableHLO module"))
    mlir.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    mlir.add_argument("--mlir-print-op-generic", dest="print_generic", action="store_true",
                      help="print operations in the generic form")
    mlir.add_argument("--mlir-print-debuginfo", "--debug-info", dest="debug_info", action="store_true",
                      help="print locations")
    mlir.set_defaults(run=cmd_mlir)
    convert = with_output(actions.add_parser(
        "convert", help="another calling convention, StableHLO target, static shapes or a plain module"))
    convert.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    convert.add_argument("--calling-convention", type=int, default=None, metavar="N",
                         help="calling-convention version to write (8, 9 or 10)")
    convert.add_argument("--stablehlo-target", default=None, metavar="X.Y.Z",
                         help="StableHLO version of the portable artifact")
    convert.add_argument("--static", default=None, metavar="ARGTYPES",
                         help="static shapes: f32[4,3],f32[4] | tensor<4x3xf32>,... | b=4,n=3")
    convert.add_argument("--plain", action="store_true",
                         help="write the plain static module (no JAX calling convention) instead of an export")
    convert.add_argument("--platform", default=None, help="platform to keep when folding the platform index")
    convert.add_argument("--emit", choices=("export", "vhlo", "text", "bytecode"), default=None,
                         help="with --plain: vhlo (default), text or bytecode")
    convert.add_argument("--mlir-print-debuginfo", "--debug-info", dest="debug_info", action="store_true",
                         help="with --plain --emit=text: print locations")
    convert.set_defaults(run=cmd_convert)
    check = with_output(actions.add_parser("check-compat", help="can a consumer of given versions read it?"))
    check.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    check.add_argument("--consumer", required=True, metavar="cc=N,stablehlo=X.Y.Z",
                       help="the consumer's calling convention (cc=9 or cc=9..10) and StableHLO version")
    check.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    check.set_defaults(run=cmd_check_compat)
    run = with_output(actions.add_parser("run", help="run the export on arguments and print the results"))
    run.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    run.add_argument("--arg", action="append", default=[], metavar="FILE.npy|VALUE",
                     help="the next flat argument: a .npy file or a JSON literal (checked against its type)")
    run.add_argument("--out", dest="out_dir", default=None, metavar="DIR", help="also save result_<i>.npy files")
    run.add_argument("--platform", default=None, help="platform to keep when folding the platform index")
    run.set_defaults(run=cmd_run)
    lab_cli.add_parser(commands)
    return parser


def _command(args: argparse.Namespace) -> str:
    """The sub-command used, as errors name it: ``toolkit export run``, ``toolkit lab``."""
    return " ".join(part for part in (TOOL, args.command, args.action) if part)


def _run(argv: Sequence[str] | None) -> int:
    args, extra = parse_arguments(build_parser(), argv, allow_extra=True)
    if extra:  # argparse would blame the top-level `toolkit`; name the sub-command used
        raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see {_command(args)} --help)",
                         tool=_command(args))
    try:
        if getattr(args, "emit", "x") is None:  # toolkit export convert's default
            args.emit = "vhlo" if args.plain else "export"
        if args.run is cmd_convert:  # binary output, written by the command itself
            return args.run(args, sys.stdout)
        if args.output == "-":
            return args.run(args, sys.stdout)
        out = io.StringIO()
        status = args.run(args, out)
        write_output(args.output, out.getvalue().encode())
        return status
    except (ToolError, UsageError) as error:  # name the sub-command, as argparse does in usage errors
        error.tool = error.tool or _command(args)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 failure or differences, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
