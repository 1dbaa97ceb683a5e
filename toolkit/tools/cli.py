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
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import io
import json
import re
import sys
from typing import Any, Sequence, TextIO

from toolkit.tools.common import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    InputError,
    ToolArgumentParser,
    ToolError,
    UsageError,
    checked_array,
    input_name,
    load_argument_value,
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
    from toolkit.export.schema import exported_generated

    root = exported_generated.Exported.GetRootAs(bytearray(blob), 0)
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
    from toolkit.core import pytrees

    if prefix == "in":
        from toolkit.stages import _leaf_paths as argument_paths  # ``args[0]``, ``name['k']``
        return argument_paths(tree)
    dummy = pytrees.tree_unflatten(tree, list(range(tree.num_leaves)))
    return [prefix + pytrees.keystr(path) for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]


def describe(exp: Any, blob: bytes | None = None) -> list[tuple[str, str]]:
    """``(field, text)`` rows describing every field of ``exp`` (and of its blob, when given)."""
    from toolkit.export import calling_convention as export_calling_convention

    rows: list[tuple[str, str]] = [("fun_name", exp.fun_name)]
    if blob is not None:
        stored, layout = stored_serialization_version(blob)
        rows.append(("serialization_version", f"{stored} (stored); layout: {layout}"))
    rows.append(("calling_convention_version",
                 f"{exp.calling_convention_version}: {export_calling_convention.CONVENTION_DESCRIPTIONS.get(exp.calling_convention_version, '?')}"))
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


def dimension_variables(exp: Any) -> list[dict[str, Any]]:
    """Each dimension variable of ``exp``'s input shapes: where it first occurs and its scope's constraints."""
    from toolkit.core import shape_poly
    from toolkit.export import calling_convention as export_calling_convention

    names = export_calling_convention.all_dim_vars(exp.in_avals)
    paths = _leaf_paths(exp.in_tree, "in")
    first: dict[str, str] = {}
    constraints: list[str] = []
    for path, aval in zip(paths, exp.in_avals):
        for axis, d in enumerate(aval.shape):
            if shape_poly.is_symbolic_dim(d):
                for v in sorted(d.get_vars()):
                    first.setdefault(v, f"{path}.shape[{axis}] = {d}")
                scope = getattr(d, "scope", None)
                for c in getattr(scope, "constraints", ()):
                    if c not in constraints:
                        constraints.append(c)
    if names and not constraints:  # deserialized: the scope's constraints live in the module's shape assertions
        constraints = _asserted_constraints(exp)
    return [{"name": n, "from": first.get(n, "?"),
             "constraints": [c for c in constraints if re.search(rf"\b{re.escape(n)}\b", c)]} for n in names]


def _asserted_constraints(exp: Any) -> list[str]:
    """The constraints the module checks (``Constraint 'b >= n' is not satisfied`` / ``Expected value >= 1``)."""
    from jaxlib.mlir import ir

    from toolkit.export.convert import read_module

    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "stablehlo.custom_call" and "error_message" in op.attributes and \
                ir.StringAttr(op.attributes["call_target_name"]).value == "shape_assertion":
            message = ir.StringAttr(op.attributes["error_message"]).value
            user = re.search(r"Constraint '([^']+)' is not satisfied", message)
            positive = re.search(r"Expected value >= 1 for dimension variable '(\w+)'", message)
            text = user.group(1) if user else (f"{positive.group(1)} >= 1" if positive else None)
            if text and text not in found:
                found.append(text)
        return ir.WalkResult.ADVANCE

    try:
        read_module(exp).operation.walk(visit)
    except ValueError:
        return []
    return found


def _wrapped_signature(exp: Any) -> list[str]:
    """``@_wrapped_jax_export_main``'s arguments, classified (dimension variables, tokens, platform index)."""
    from jaxlib.mlir import ir

    from toolkit.export import calling_convention as export_calling_convention
    from toolkit.export.convert import read_module

    module = read_module(exp)
    try:
        wrapped = export_calling_convention.find_main(module, export_calling_convention.WRAPPED_MAIN_NAME)
    except ValueError:
        return []
    ftype = ir.FunctionType(ir.TypeAttr(wrapped.attributes["function_type"]).value)
    attrs = export_calling_convention._dict_attrs(wrapped.attributes["arg_attrs"] if "arg_attrs" in wrapped.attributes else None,
                           len(ftype.inputs))
    lines = [f"@{export_calling_convention.WRAPPED_MAIN_NAME}("]
    for i, (t, a) in enumerate(zip(ftype.inputs, attrs)):
        constant = a.get("jax.global_constant")
        if "stablehlo.token" in str(t):
            kind = "token"
        elif constant is not None:
            name = export_calling_convention._attr_text(constant)
            kind = f"platform_index {name!r}" if name == export_calling_convention.PLATFORM_INDEX_NAME else f"dim_var {name!r}"
        else:
            kind = "array"
        lines.append(f"    %arg{i}: {t} ({kind})")
    lines.append(")")
    return lines


def _signature_lines(exp: Any) -> list[str]:
    from toolkit.export import calling_convention as export_calling_convention

    sig = export_calling_convention.main_signature_of_exported(exp)
    lines = sig.describe().splitlines()
    lines += _wrapped_signature(exp)
    lines += [f"module attribute {name} = {value}" for name, value in sig.module_attributes]
    return lines


def _provenance_rows(exp: Any, blob: bytes | None) -> list[tuple[str, str]]:
    from toolkit.export import provenance

    facts = provenance.infer(exp, blob)
    rows = []
    for key, value in facts.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        rows.append((f"  {key}", str(value)))
    return rows


def _module_text(exp: Any, *, locations: bool) -> str:
    from toolkit.export.convert import read_module

    module = read_module(exp)
    return module.operation.get_asm(enable_debug_info=locations)


def inspect_record(exp: Any, blob: bytes | None) -> dict[str, Any]:
    """Everything ``inspect --json`` prints, as plain data."""
    from toolkit.export import calling_convention as export_calling_convention
    from toolkit.export import provenance

    sig = export_calling_convention.main_signature_of_exported(exp)
    record: dict[str, Any] = {name.strip(): text for name, text in describe(exp, blob)
                              if not name.startswith("  ")}
    record["inputs"] = [{"path": p, "aval": a.str_short()} for p, a in zip(_leaf_paths(exp.in_tree, "in"),
                                                                          exp.in_avals)]
    record["outputs"] = [{"path": p, "aval": a.str_short()} for p, a in zip(_leaf_paths(exp.out_tree, "result"),
                                                                           exp.out_avals)]
    record["calling_convention_version"] = exp.calling_convention_version
    record["platforms"] = list(exp.platforms)
    record["nr_devices"] = exp.nr_devices
    record["dimension_variables"] = dimension_variables(exp)
    record["provenance"] = provenance.get(exp)
    record["provenance_inferred"] = provenance.infer(exp, blob)
    record["main_signature"] = {
        "arguments": [dataclasses.asdict(a) for a in sig.arguments],
        "results": [dataclasses.asdict(r) for r in sig.results],
        "wrapped": sig.wrapped,
        "has_platform_index": sig.has_platform_index,
        "nr_token_arguments": sig.nr_token_arguments,
        "module_attributes": dict(sig.module_attributes),
    }
    record["wrapped_signature"] = _wrapped_signature(exp)
    return record


def cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    blob = _read_blob(args.blob)
    exp = _deserialize(blob, args.blob)
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
    for name, text in _provenance_rows(exp, blob):
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
    if args.json:
        return _diff_json(a, b, blob_a, blob_b, args, out)
    rows_a, rows_b = dict(describe(a, blob_a)), dict(describe(b, blob_b))
    differences = 0
    out.write("fields:\n")
    for name in dict.fromkeys(list(rows_a) + list(rows_b)):
        va, vb = rows_a.get(name, "(absent)"), rows_b.get(name, "(absent)")
        if name == "mlir_module_serialized":  # location-only changes count only with --locations
            same = a.mlir_module_serialized == b.mlir_module_serialized or (
                not args.locations and va == vb and _module_text(a, locations=False) == _module_text(b, locations=False))
        else:
            same = va == vb
        if same:
            out.write(f"  = {name.strip()}: {va}\n")
        else:
            differences += 1
            out.write(f"  ! {name.strip()}:\n      A: {va}\n      B: {vb}\n")
    dims_a, dims_b = dimension_variables(a), dimension_variables(b)
    out.write("dimension variables:\n")
    if dims_a == dims_b:
        out.write(f"  = {', '.join(d['name'] for d in dims_a) or 'none'}\n")
    else:
        differences += 1
        out.write(f"  ! A: {json.dumps(dims_a)}\n    B: {json.dumps(dims_b)}\n")
    sig_a, sig_b = _signature_lines(a), _signature_lines(b)
    out.write("main signature:\n")
    if sig_a == sig_b:
        out.write("  = identical\n")
    else:
        differences += 1
        for line in difflib.unified_diff(sig_a, sig_b, "A", "B", lineterm="", n=1):
            out.write(f"  {line}\n")
    text_a = _module_text(a, locations=args.locations).splitlines()
    text_b = _module_text(b, locations=args.locations).splitlines()
    out.write("module text:" + (" (with locations)\n" if args.locations else "\n"))
    if text_a == text_b:
        same_with_locations = args.locations or (
            _module_text(a, locations=True) == _module_text(b, locations=True))
        out.write("  = identical\n" if same_with_locations
                  else "  = identical (locations differ; --locations shows them)\n")
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


def _diff_json(a: Any, b: Any, blob_a: bytes, blob_b: bytes, args: argparse.Namespace, out: TextIO) -> int:
    rows_a, rows_b = dict(describe(a, blob_a)), dict(describe(b, blob_b))
    fields = {}
    for name in dict.fromkeys(list(rows_a) + list(rows_b)):
        va, vb = rows_a.get(name), rows_b.get(name)
        same = (a.mlir_module_serialized == b.mlir_module_serialized or (
            not args.locations and va == vb and _module_text(a, locations=False) == _module_text(b, locations=False))
        ) if name == "mlir_module_serialized" else va == vb
        if not same:
            fields[name.strip()] = {"a": va, "b": vb}
    sig_a, sig_b = _signature_lines(a), _signature_lines(b)
    text_a = _module_text(a, locations=args.locations).splitlines()
    text_b = _module_text(b, locations=args.locations).splitlines()
    module_diff = list(difflib.unified_diff(text_a, text_b, "A", "B", lineterm="", n=1))
    dims_a, dims_b = dimension_variables(a), dimension_variables(b)
    record = {
        "fields": fields,
        "dimension_variables": None if dims_a == dims_b else {"a": dims_a, "b": dims_b},
        "main_signature": list(difflib.unified_diff(sig_a, sig_b, "A", "B", lineterm="", n=1)),
        "module_text": module_diff,
        "locations_compared": bool(args.locations),
    }
    differences = len(fields) + (record["dimension_variables"] is not None) + bool(record["main_signature"]) \
        + bool(module_diff)
    record["differences"] = differences
    out.write(json.dumps(record, indent=2, default=str) + "\n")
    return EXIT_FAILURE if differences else EXIT_SUCCESS


def _write_bytes(path: str, data: bytes) -> None:
    write_output(path, data)


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    from toolkit.export import convert as conversions

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
                data = module.operation.get_asm(enable_debug_info=args.debug_info).encode() + b"\n"
            elif args.emit == "bytecode":
                from toolkit.ir.serialization import write_module
                data = write_module(module, "bytecode")
            else:
                target = args.stablehlo_target or conversions.artifact_version(exp.mlir_module_serialized) \
                    or conversions._default_target()
                data = conversions.serialize_module(module, target)
        else:
            converted = conversions.convert(exp, calling_convention=args.calling_convention,
                                            stablehlo_target=args.stablehlo_target, static_args=args.static,
                                            platform=args.platform)
            data = bytes(converted.serialize())
    except conversions.ConversionError as error:
        raise InputError(f"{name}: error: cannot convert: {error} [blocked by: {error.feature}]") from None
    except ValueError as error:  # a --static spec that does not fit, a violated shape constraint
        raise InputError(f"{name}: error: cannot convert: {error}") from None
    _write_bytes(args.output, data)
    return EXIT_SUCCESS


def cmd_check_compat(args: argparse.Namespace, out: TextIO) -> int:
    from toolkit.export import compat

    try:
        consumer = compat.parse_consumer(args.consumer)
    except ValueError as error:
        raise UsageError(f"--consumer: {error}") from None
    exp = _load(args.blob)
    report = compat.check_compat(exp, consumer)
    if args.json:
        out.write(json.dumps(report.as_dict(), indent=2) + "\n")
    else:
        for line in report.lines():
            out.write(line + "\n")
    return EXIT_SUCCESS if report.readable else EXIT_FAILURE


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    exp = _load(args.blob)
    outputs = run_export_arguments(exp, args.arg, input_name(args.blob), platform=args.platform)
    print_results(outputs, out, paths=_leaf_paths(exp.out_tree, "result"))
    if args.out_dir:
        save_results(outputs, args.out_dir)
    return EXIT_SUCCESS


def parse_export_arguments(exp: Any, texts: Sequence[str]) -> list[Any]:
    """``--arg`` texts as arrays of the export's declared types (checked, never converted lossily)."""
    from toolkit.export.runner import argument_names, declared_shape

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


def run_export_arguments(exp: Any, texts: Sequence[str], name: str, *, platform: str | None = None) -> list[Any]:
    """Run ``exp`` on ``--arg`` texts; usage errors for arguments, input errors for the artifact."""
    from toolkit.export.convert import ConversionError
    from toolkit.export.runner import check_arguments, run_exported

    arrays = parse_export_arguments(exp, texts)
    try:
        check_arguments(exp, arrays)
    except ValueError as error:  # symbolic sizes that do not fit the dimension variables / constraints
        raise UsageError(str(error)) from None
    try:
        return run_exported(exp, arrays, platform=platform)
    except ConversionError as error:
        raise InputError(f"{name}: error: cannot run: {error} [blocked by: {error.feature}]") from None
    except (ValueError, RuntimeError, TypeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{name}: error: {message}") from None


def print_results(outputs: Sequence[Any], out: TextIO, *, paths: Sequence[str] | None = None) -> None:
    """``result[i]: dtype[shape] = values`` lines, as ``toolkit-run`` prints them (with the output path)."""
    import numpy as np

    for index, result in enumerate(outputs):
        result = np.asarray(result)
        path = f" ({paths[index]})" if paths is not None and index < len(paths) else ""
        out.write(f"result[{index}]{path}: {result.dtype}{list(result.shape)} = "
                  f"{np.array2string(result, threshold=64, separator=', ')}\n")


def save_results(outputs: Sequence[Any], directory: str) -> None:
    """Write ``result_<i>.npy`` files into ``directory`` (created when missing)."""
    import os

    import numpy as np

    try:
        os.makedirs(directory, exist_ok=True)
        for index, result in enumerate(outputs):
            np.save(os.path.join(directory, f"result_{index}.npy"), np.asarray(result), allow_pickle=False)
    except OSError as error:
        raise ToolError(f"cannot write results to '{directory}': {error.strerror or error}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(prog=TOOL, description="toolkit command-line tools.",
                                epilog="Long flags take one dash or two.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{export}")
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
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args, extra = parse_arguments(build_parser(), argv, allow_extra=True)
    if extra:  # argparse would blame the top-level `toolkit`; name the sub-command used
        raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see {TOOL} {args.command} {args.action} --help)",
                         tool=f"{TOOL} {args.command} {args.action}")
    try:
        if getattr(args, "emit", "x") is None:
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
        error.tool = error.tool or f"{TOOL} {args.command} {args.action}"
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 failure or differences, 2 usage)."""
    return run_tool(TOOL, lambda: _run(argv))


if __name__ == "__main__":
    sys.exit(main())
