"""``toolkit``: the command-line entry point; ``toolkit export ...`` looks into serialized exports.

    toolkit export inspect BLOB          # every field, @main's signature, versions
    toolkit export diff A B              # field-by-field and signature-level comparison
    toolkit export mlir BLOB             # the embedded module as text

``BLOB`` is a file written by ``Exported.serialize()`` (toolkit or
``jax.export``); ``-`` or no ``BLOB`` reads standard input. Long flags take
one dash or two. Exit status: 0 on success (``diff``: the exports are
equivalent), 1 when ``diff`` finds differences or an input cannot be read or
is not a serialized export, 2 on bad command-line usage. See
``docs/tools.md``.
"""

from __future__ import annotations

import argparse
import difflib
import io
import sys
from typing import Any, Sequence, TextIO

from toolkit.tools.common import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    InputError,
    ToolArgumentParser,
    ToolError,
    UsageError,
    input_name,
    module_text,
    parse_arguments,
    parse_module,
    read_input,
    run_tool,
    write_output,
)

TOOL = "toolkit"


def _read_blob(path: str) -> bytes:
    return read_input(path)


def _deserialize(blob: bytes, path: str) -> Any:
    """The ``Exported`` in ``blob``, or :class:`InputError` naming ``path``."""
    from toolkit.export import deserialize

    from toolkit.ir.serialization import BYTECODE_MAGIC, probe_untrusted_binary

    try:
        exp = deserialize(blob)
    except (ValueError, TypeError, IndexError, KeyError) as error:  # what a damaged flatbuffer raises
        raise InputError(f"{input_name(path)}: error: {error}") from None
    module = exp.mlir_module_serialized
    if module.startswith(BYTECODE_MAGIC):
        # inspect, diff and mlir read the embedded module in-process: read it in a child first.
        try:
            probe_untrusted_binary(bytes(module))
        except ValueError as error:
            raise InputError(f"{input_name(path)}: error: mlir_module_serialized: {error}") from None
    return exp


def _load(path: str) -> Any:
    return _deserialize(_read_blob(path), path)


def stored_serialization_version(blob: bytes) -> tuple[int, str]:
    """The ``serialization_version`` field of a blob and the layout it has (from the tables present)."""
    from toolkit.export.schema import exported_generated as fb

    root = fb.Exported.GetRootAs(bytearray(blob), 0)
    stored = int(root.SerializationVersion())
    if root.UniqueAvalsLength() > 0 or root.UniqueNamedShardingsLength() > 0:
        layout = "de-duplicated avals/shardings (JAX serialization version >= 10)"
    elif root.NrDevices() > 0:
        layout = "inline avals/shardings (JAX serialization version 5..9)"
    else:
        layout = "inline avals, 16-bit nr_devices (JAX serialization version < 5)"
    return stored, layout


def _sharding_text(named: Any, hlo: Any) -> str:
    if named is None and hlo is None:
        return "unspecified"
    parts = []
    if named is not None:
        mesh = named.mesh
        axes = ", ".join(f"{n}={s}:{t}" for n, s, t in zip(mesh.axis_names, mesh.axis_sizes, mesh.axis_types))
        parts.append(f"mesh({axes}) spec={tuple(named.partitions)}")
    if hlo is not None:
        parts.append(f"hlo={hlo}")
    return " ".join(parts)


def _leaf_paths(tree: Any, prefix: str) -> list[str]:
    from toolkit.core import tree_util

    if prefix == "in":
        from toolkit.stages import _leaf_paths as argument_paths  # ``args[0]``, ``name['k']``
        return argument_paths(tree)
    dummy = tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    return [prefix + tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def describe(exp: Any, blob: bytes | None = None) -> list[tuple[str, str]]:
    """``(field, text)`` rows describing every field of ``exp`` (and of its blob, when given)."""
    from toolkit.export import calling_convention as cc

    rows: list[tuple[str, str]] = [("fun_name", exp.fun_name)]
    if blob is not None:
        stored, layout = stored_serialization_version(blob)
        rows.append(("serialization_version", f"{stored} (stored); layout: {layout}"))
    rows.append(("calling_convention_version",
                 f"{exp.calling_convention_version}: {cc.CONVENTION_DESCRIPTIONS.get(exp.calling_convention_version, '?')}"))
    rows.append(("platforms", ", ".join(exp.platforms)))
    rows.append(("nr_devices", str(exp.nr_devices)))
    rows.append(("in_tree", str(exp.in_tree)))
    named_in = exp._in_named_shardings or (None,) * len(exp.in_avals)
    for path, aval, named, hlo in zip(_leaf_paths(exp.in_tree, "in"), exp.in_avals, named_in, exp.in_shardings_hlo):
        rows.append((f"  {path}", f"{aval.str_short()}  sharding: {_sharding_text(named, hlo)}"))
    rows.append(("out_tree", str(exp.out_tree)))
    named_out = exp._out_named_shardings or (None,) * len(exp.out_avals)
    for path, aval, named, hlo in zip(_leaf_paths(exp.out_tree, "result"), exp.out_avals, named_out,
                                      exp.out_shardings_hlo):
        rows.append((f"  {path}", f"{aval.str_short()}  sharding: {_sharding_text(named, hlo)}"))
    rows.append(("ordered_effects", ", ".join(str(e) for e in exp.ordered_effects) or "none"))
    rows.append(("unordered_effects", ", ".join(str(e) for e in exp.unordered_effects) or "none"))
    rows.append(("disabled_safety_checks", ", ".join(str(c) for c in exp.disabled_safety_checks) or "none"))
    rows.append(("module_kept_var_idx", str(list(exp.module_kept_var_idx))))
    rows.append(("uses_global_constants", str(exp.uses_global_constants).lower()))
    rows.append(("has_vjp", str(exp.has_vjp()).lower()))
    producer = exp.mlir_module_serialized[4:64].split(b"\x00")[0]
    producer_text = producer[producer.find(b"StableHLO"):].decode("ascii", "replace") if b"StableHLO" in producer \
        else "?"
    rows.append(("mlir_module_serialized", f"{len(exp.mlir_module_serialized)} bytes, producer {producer_text}"))
    return rows


def _signature_lines(exp: Any) -> list[str]:
    from toolkit.export import calling_convention as cc

    sig = cc.main_signature_of_exported(exp)
    lines = sig.describe().splitlines()
    lines += [f"module attribute {name} = {value}" for name, value in sig.module_attributes]
    return lines


def cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    blob = _read_blob(args.blob)
    exp = _deserialize(blob, args.blob)
    for name, text in describe(exp, blob):
        out.write(f"{name}: {text}\n")
    out.write("main signature:\n")
    for line in _signature_lines(exp):
        out.write(f"  {line}\n")
    return EXIT_SUCCESS


def cmd_mlir(args: argparse.Namespace, out: TextIO) -> int:
    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import BYTECODE_MAGIC

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
    blob_a, blob_b = _read_blob(args.a), _read_blob(args.b)
    a, b = _deserialize(blob_a, args.a), _deserialize(blob_b, args.b)
    rows_a, rows_b = dict(describe(a, blob_a)), dict(describe(b, blob_b))
    differences = 0
    out.write("fields:\n")
    for name in dict.fromkeys(list(rows_a) + list(rows_b)):
        va, vb = rows_a.get(name, "(absent)"), rows_b.get(name, "(absent)")
        if name == "mlir_module_serialized":
            same = a.mlir_module_serialized == b.mlir_module_serialized
        else:
            same = va == vb
        if same:
            out.write(f"  = {name.strip()}: {va}\n")
        else:
            differences += 1
            out.write(f"  ! {name.strip()}:\n      A: {va}\n      B: {vb}\n")
    sig_a, sig_b = _signature_lines(a), _signature_lines(b)
    out.write("main signature:\n")
    if sig_a == sig_b:
        out.write("  = identical\n")
    else:
        differences += 1
        for line in difflib.unified_diff(sig_a, sig_b, "A", "B", lineterm="", n=1):
            out.write(f"  {line}\n")
    text_a, text_b = a.mlir_module().splitlines(), b.mlir_module().splitlines()
    out.write("module text:\n")
    if text_a == text_b:
        out.write("  = identical\n")
    else:
        differences += 1
        diff = list(difflib.unified_diff(text_a, text_b, "A", "B", lineterm="", n=1))
        shown = diff if args.full else diff[:40]
        for line in shown:
            out.write(f"  {line}\n")
        if len(shown) < len(diff):
            out.write(f"  ... {len(diff) - len(shown)} more lines (--full shows all)\n")
    out.write(f"{differences} difference(s)\n")
    return EXIT_FAILURE if differences else EXIT_SUCCESS


def build_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description="toolkit command-line tools.",
                                epilog="Long flags take one dash or two.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{export}")
    export = commands.add_parser("export", help="look into serialized exports (toolkit or jax.export blobs)")
    actions = export.add_subparsers(dest="action", required=True, metavar="{inspect,diff,mlir}")

    def with_output(action: argparse.ArgumentParser) -> argparse.ArgumentParser:
        action.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
        return action

    inspect_ = with_output(actions.add_parser("inspect", help="every field, @main's signature, platforms, versions"))
    inspect_.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    inspect_.set_defaults(run=cmd_inspect)
    diff = with_output(actions.add_parser("diff", help="compare two exports field by field and by signature"))
    diff.add_argument("a", help="serialized Exported (file, or - for stdin)")
    diff.add_argument("b", help="serialized Exported (file)")
    diff.add_argument("--full", action="store_true", help="show the whole module-text diff")
    diff.set_defaults(run=cmd_diff)
    mlir = with_output(actions.add_parser("mlir", help="print the embedded StableHLO module"))
    mlir.add_argument("blob", nargs="?", default="-", help="serialized Exported (file; - or none: stdin)")
    mlir.add_argument("--mlir-print-op-generic", dest="print_generic", action="store_true",
                      help="print operations in the generic form")
    mlir.add_argument("--mlir-print-debuginfo", "--debug-info", dest="debug_info", action="store_true",
                      help="print locations")
    mlir.set_defaults(run=cmd_mlir)
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args, extra = parse_arguments(build_parser(), argv, allow_extra=True)
    if extra:  # argparse would blame the top-level `toolkit`; name the sub-command used
        raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see {TOOL} {args.command} {args.action} --help)",
                         tool=f"{TOOL} {args.command} {args.action}")
    try:
        if args.output == "-":
            return args.run(args, sys.stdout)
        out = io.StringIO()
        status = args.run(args, out)
        write_output(args.output, out.getvalue().encode())
        return status
    except ToolError as error:  # name the sub-command, as argparse does in usage errors
        error.tool = f"{TOOL} {args.command} {args.action}"
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 failure or differences, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
