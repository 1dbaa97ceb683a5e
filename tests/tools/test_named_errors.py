"""Errors that name what is wrong (issue 10, item 5): mixed symbolic scopes, violated
constraints of toolkit-made exports, portable artifacts newer than this jaxlib."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import toolkit
from toolkit import export
from toolkit.tools import export_cli, opt


def _add(x, y):
    return x + y["w"]


def test_mixing_scopes_when_exporting_names_both_scopes() -> None:
    # Before: "shapes ((b, 3), (b, 3)) cannot be broadcast together: sizes b and b differ".
    x = toolkit.ShapeDtypeStruct(export.symbolic_shape("b, 3"), np.float32)
    y = toolkit.ShapeDtypeStruct(export.symbolic_shape("b, 3", constraints=["b >= 2"]), np.float32)
    with pytest.raises(ValueError) as info:
        export.export(toolkit.jit(_add))(x, {"w": y})
    message = str(info.value)
    assert re.match(r"Invalid mixing of symbolic scopes when exporting _add\.\n"
                    r"Expected current \(from args\[0\]\) scope \d+ created at .*test_named_errors\.py:\d+ "
                    r"\(test_mixing_scopes_when_exporting_names_both_scopes\)\n"
                    r"and found for 'b' \(args\[1\]\['w'\]\) scope \d+ created at .*test_named_errors\.py:\d+ "
                    r"\(test_mixing_scopes_when_exporting_names_both_scopes\) with constraints:\n  b >= 2\n", message)
    assert "scope=" in message  # and says how to share one


def test_one_scope_exports() -> None:
    b, = export.symbolic_shape("b")
    spec = toolkit.ShapeDtypeStruct((b, 3), np.float32)
    assert str(export.export(toolkit.jit(_add))(spec, {"w": spec}).in_avals[0].shape) == "(b, 3)"


def test_mixing_scopes_in_arithmetic_names_both_scopes() -> None:
    a, = export.symbolic_shape("b")
    b, = export.symbolic_shape("b")
    with pytest.raises(ValueError, match=r"(?s)Invalid mixing of symbolic scopes in addition\.\n"
                                         r"Expected scope \d+ created at .*\nand found for 'b' \(unknown\) scope \d+"):
        a + b


# --- a violated constraint of a toolkit-made export ---------------------------------------------


@pytest.mark.parametrize("round_trip", [False, True], ids=["fresh", "deserialized"])
def test_violated_constraint_names_argument_variable_and_value_first(round_trip) -> None:
    b, = export.symbolic_shape("b", constraints=["b >= 4"])
    exp = export.export(toolkit.jit(lambda x: x * 2))(toolkit.ShapeDtypeStruct((b, 3), np.float32))
    if round_trip:  # constraints are not serialized: the module's shape assertion finds the violation
        exp = export.deserialize(exp.serialize())
    with pytest.raises(ValueError) as info:
        exp.call(np.ones((2, 3), np.float32))
    message = str(info.value)
    named = [message.index(text) for text in (
        "Constraint 'b >= 4' is not satisfied", "but found -2", "'b' = 2", "dimension args[0].shape[0] (= 2)")]
    if "toolkit-refine-shapes" in message:
        assert max(named) < message.index("toolkit-refine-shapes"), message


# --- portable artifacts newer than this jaxlib -----------------------------------------------


def _future_artifact(artifact: bytes, *, op: bool = True) -> bytes:
    """``artifact`` as a future StableHLO 1.99.0 would write it: its producer, and an op version unknown today."""
    from toolkit.ir.serialization import portable_artifact_version

    current = f"StableHLO_v{portable_artifact_version(artifact)}".encode()
    future = b"StableHLO_v1.99.0"
    assert len(current) == len(future)  # the producer string is patched in place
    patched = artifact.replace(current, future, 1)
    return patched.replace(b"negate_v1", b"negate_v9") if op else patched


@pytest.fixture(scope="module")
def exported() -> export.Exported:
    return export.export(toolkit.jit(lambda x: -x))(np.ones(2, np.float32))


NEWER = (r"cannot read the StableHLO portable artifact: it was written by StableHLO 1\.99\.0, newer than "
         r"\d+\.\d+\.\d+, the newest version this jaxlib \([0-9.]+\) reads; first unreadable part: "
         r"unregistered operation 'vhlo\.negate_v9'")


def test_newer_artifact_names_both_versions(exported) -> None:
    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import read_module

    future = _future_artifact(exported.mlir_module_serialized)
    with pytest.raises(ValueError, match=NEWER):
        read_module(future, make_context())
    with pytest.raises(ValueError, match=NEWER):
        dataclasses.replace(exported, mlir_module_serialized=future).mlir_module()


def test_newer_artifact_through_the_tools(exported, tmp_path, capsys) -> None:
    path = tmp_path / "future.vhlo"
    path.write_bytes(_future_artifact(exported.mlir_module_serialized))
    assert opt.main([str(path)]) == 1
    assert re.fullmatch(rf"{re.escape(str(path))}: error: {NEWER}.*\n", capsys.readouterr().err)
    blob = tmp_path / "future.export"
    blob.write_bytes(bytes(dataclasses.replace(
        exported, mlir_module_serialized=_future_artifact(exported.mlir_module_serialized)).serialize()))
    assert export_cli.main(["export", "mlir", str(blob)]) == 1
    assert re.search(NEWER, capsys.readouterr().err)


def test_newer_producer_with_known_ops_still_reads(exported) -> None:
    # VHLO op versions keep their meaning: only what cannot be read is refused.
    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import portable_artifact_version, read_module

    future = _future_artifact(exported.mlir_module_serialized, op=False)
    assert portable_artifact_version(future) == "1.99.0"
    assert "stablehlo.negate" in str(read_module(future, make_context()))


def test_damaged_artifact_says_what_broke(exported) -> None:
    from toolkit.ir.context import make_context
    from toolkit.ir.serialization import read_module

    with pytest.raises(ValueError, match=r"cannot read the StableHLO portable artifact \(written by StableHLO "
                                         r"\d+\.\d+\.\d+\): (?!failed to deserialize module)"):
        read_module(exported.mlir_module_serialized[:100], make_context())
