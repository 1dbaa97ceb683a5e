"""Looking into an ``Exported``: its fields as text, its dimension variables, ``@main``'s signatures, provenance.

What ``toolkit export inspect`` prints, as data a Python caller can use:

* :func:`deserialize_untrusted` reads a blob nobody vouches for (the
  embedded module is probed in a forked child before anything parses it
  in-process);
* :func:`describe` gives one ``(field, text)`` row per field (and per input
  and output leaf, indented), :func:`stored_serialization_version` what the
  flatbuffer itself stores;
* :func:`dimension_variables` says where each dimension variable first
  occurs and which constraints mention it;
* :func:`signature_lines` is ``@main``'s signature (and the
  ``@_wrapped_jax_export_main`` wrapper's, :func:`wrapped_signature`);
* :func:`inspect_record` is all of it as plain data (``inspect --json``).

Example::

    exp = deserialize_untrusted(blob)
    for field, text in describe(exp, blob):
        print(f"{field}: {text}")
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from jaxlib.mlir import ir

from toolkit.core import pytrees, shape_poly
from toolkit.export import calling_convention, provenance
from toolkit.export.convert import read_module
from toolkit.export.exported import Exported
from toolkit.export.schema import exported_generated
from toolkit.export.serialization import deserialize
from toolkit.ir.serialization import BYTECODE_MAGIC, probe_untrusted_binary
from toolkit.call_trees import argument_paths as _argument_paths  # inputs named as jit's messages name them


def deserialize_untrusted(blob: bytes) -> Exported:
    """The ``Exported`` in ``blob``, its embedded module probed out of process; ``ValueError`` when unreadable.

    A damaged flatbuffer raises whatever its reader trips on (``TypeError``,
    ``IndexError``, ``KeyError``, ...): all become ``ValueError`` with the
    same message. The embedded MLIR bytecode is read once in a forked child
    (:func:`toolkit.ir.serialization.probe_untrusted_binary`), so a module
    that would crash or hang jaxlib's reader is a ``ValueError``
    (``mlir_module_serialized: ...``) instead of a crash of the caller.
    """
    try:
        exp = deserialize(blob)
    except ValueError:
        raise
    except (TypeError, IndexError, KeyError) as error:  # what a damaged flatbuffer raises
        raise ValueError(str(error)) from None
    module = exp.mlir_module_serialized
    if module.startswith(BYTECODE_MAGIC):
        try:
            probe_untrusted_binary(bytes(module))
        except ValueError as error:
            raise ValueError(f"mlir_module_serialized: {error}") from None
    return exp


def stored_serialization_version(blob: bytes) -> tuple[int, str]:
    """The ``serialization_version`` field of a blob and the layout it has (from the tables present)."""
    root = exported_generated.Exported.GetRootAs(bytearray(blob), 0)
    stored = int(root.SerializationVersion())
    if root.UniqueAvalsLength() > 0 or root.UniqueNamedShardingsLength() > 0:
        layout = "de-duplicated avals/shardings (JAX serialization version >= 10)"
    elif root.NrDevices() > 0:
        layout = "inline avals/shardings (JAX serialization version 5..9)"
    else:
        layout = "inline avals, 16-bit nr_devices (JAX serialization version < 5)"
    return stored, layout


def input_paths(exp: Exported) -> list[str]:
    """The flat inputs as users name them: ``args[0]``, ``args[1]['w']``, ``scale`` (a keyword argument)."""
    return _argument_paths(exp.in_tree)


def result_paths(exp: Exported) -> list[str]:
    """The flat outputs' key paths: ``result``, ``result[0]``, ``result['s']``."""
    dummy = pytrees.structure_of(exp.out_tree, list(range(exp.out_tree.num_leaves)))
    return ["result" + pytrees.keystr(path) for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]


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


def describe(exp: Exported, blob: bytes | None = None) -> list[tuple[str, str]]:
    """``(field, text)`` rows describing every field of ``exp`` (and of its blob, when given).

    Input and output leaves follow ``in_tree`` and ``out_tree`` as rows whose
    name is their path indented by two spaces (``"  args[0]"``).
    """
    rows: list[tuple[str, str]] = [("fun_name", exp.fun_name)]
    if blob is not None:
        stored, layout = stored_serialization_version(blob)
        rows.append(("serialization_version", f"{stored} (stored); layout: {layout}"))
    convention = calling_convention.CONVENTION_DESCRIPTIONS.get(exp.calling_convention_version, "?")
    rows.append(("calling_convention_version", f"{exp.calling_convention_version}: {convention}"))
    rows.append(("platforms", ", ".join(exp.platforms)))
    rows.append(("nr_devices", str(exp.nr_devices)))
    rows.append(("in_tree", str(exp.in_tree)))
    named_in = exp._in_named_shardings or (None,) * len(exp.in_avals)
    for path, aval, named, hlo in zip(input_paths(exp), exp.in_avals, named_in, exp._hlo_shardings("in")):
        rows.append((f"  {path}", f"{aval.str_short()}  sharding: {_sharding_text(named, hlo)}"))
    rows.append(("out_tree", str(exp.out_tree)))
    named_out = exp._out_named_shardings or (None,) * len(exp.out_avals)
    for path, aval, named, hlo in zip(result_paths(exp), exp.out_avals, named_out, exp._hlo_shardings("out")):
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


def dimension_variables(exp: Exported) -> list[dict[str, Any]]:
    """Each dimension variable of ``exp``'s input shapes: where it first occurs and its scope's constraints.

    One ``{"name", "from", "constraints"}`` dictionary per variable, in
    ``all_dim_vars`` order. A deserialized export has no scope; its
    constraints are read back from the module's shape assertions.
    """
    names = calling_convention.all_dim_vars(exp.in_avals)
    first: dict[str, str] = {}
    constraints: list[str] = []
    for path, aval in zip(input_paths(exp), exp.in_avals):
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


def _asserted_constraints(exp: Exported) -> list[str]:
    """The constraints the module checks (``Constraint 'b >= n' is not satisfied`` / ``Expected value >= 1``)."""
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


def wrapped_signature(exp: Exported) -> list[str]:
    """``@_wrapped_jax_export_main``'s arguments, classified (dimension variables, tokens, platform index).

    Empty when the module has no wrapper.
    """
    module = read_module(exp)
    try:
        wrapped = calling_convention.find_main(module, calling_convention.WRAPPED_MAIN_NAME)
    except ValueError:
        return []
    ftype = ir.FunctionType(ir.TypeAttr(wrapped.attributes["function_type"]).value)
    attrs = calling_convention._dict_attrs(
        wrapped.attributes["arg_attrs"] if "arg_attrs" in wrapped.attributes else None, len(ftype.inputs))
    lines = [f"@{calling_convention.WRAPPED_MAIN_NAME}("]
    for i, (t, a) in enumerate(zip(ftype.inputs, attrs)):
        constant = a.get("jax.global_constant")
        if "stablehlo.token" in str(t):
            kind = "token"
        elif constant is not None:
            name = calling_convention._attr_text(constant)
            kind = f"platform_index {name!r}" if name == calling_convention.PLATFORM_INDEX_NAME \
                else f"dim_var {name!r}"
        else:
            kind = "array"
        lines.append(f"    %arg{i}: {t} ({kind})")
    lines.append(")")
    return lines


def signature_lines(exp: Exported) -> list[str]:
    """``@main``'s signature, the wrapper's (:func:`wrapped_signature`) and the module's attributes, as lines."""
    sig = calling_convention.main_signature_of_exported(exp)
    lines = sig.describe().splitlines()
    lines += wrapped_signature(exp)
    lines += [f"module attribute {name} = {value}" for name, value in sig.module_attributes]
    return lines


def provenance_rows(exp: Exported, blob: bytes | None = None) -> list[tuple[str, str]]:
    """``(fact, text)`` rows of what is known or inferred about who wrote ``exp`` (names indented by two spaces)."""
    rows = []
    for key, value in provenance.infer(exp, blob).items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        rows.append((f"  {key}", str(value)))
    return rows


def module_text(exp: Exported, *, locations: bool = False) -> str:
    """The embedded module as MLIR text (with its locations when ``locations``)."""
    return read_module(exp).operation.get_asm(enable_debug_info=locations)


def inspect_record(exp: Exported, blob: bytes | None = None) -> dict[str, Any]:
    """Everything ``toolkit export inspect --json`` prints, as plain data."""
    sig = calling_convention.main_signature_of_exported(exp)
    record: dict[str, Any] = {name.strip(): text for name, text in describe(exp, blob)
                              if not name.startswith("  ")}
    record["inputs"] = [{"path": p, "aval": a.str_short()} for p, a in zip(input_paths(exp), exp.in_avals)]
    record["outputs"] = [{"path": p, "aval": a.str_short()} for p, a in zip(result_paths(exp), exp.out_avals)]
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
    record["wrapped_signature"] = wrapped_signature(exp)
    return record
