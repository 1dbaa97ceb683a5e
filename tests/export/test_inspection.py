"""Looking into an Exported from Python (toolkit/export/inspection.py); the CLI's output is in tests/tools/test_export_cli.py."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.export import export, inspection, symbolic_shape

F32 = np.float32


def _f(x, y):
    return {"s": tnp.sin(x) * 2 + y}


@pytest.fixture(scope="module")
def blob() -> bytes:
    x = np.ones(4, F32)
    return bytes(export(toolkit.jit(_f), platforms=("cpu", "cuda"))(x, x).serialize())


def test_deserialize_untrusted_reads_a_blob(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    assert exp.fun_name == "_f" and exp.platforms == ("cpu", "cuda")


@pytest.mark.parametrize("data", [b"not an export at all", b"\x00" * 16])
def test_deserialize_untrusted_raises_value_error(data) -> None:
    with pytest.raises(ValueError):
        inspection.deserialize_untrusted(data)


def test_describe_rows(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    rows = dict(inspection.describe(exp, blob))
    assert rows["fun_name"] == "_f"
    assert rows["serialization_version"].startswith("3 (stored); layout: ")
    assert rows["calling_convention_version"].startswith("10: ")
    assert rows["platforms"] == "cpu, cuda"
    assert rows["  args[0]"] == "f32[4]  sharding: unspecified"
    assert rows["  result['s']"] == "f32[4]  sharding: unspecified"
    assert "serialization_version" not in dict(inspection.describe(exp))  # no blob, no stored version


def test_paths(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    assert inspection.input_paths(exp) == ["args[0]", "args[1]"]
    assert inspection.result_paths(exp) == ["result['s']"]


def test_signatures(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    lines = inspection.signature_lines(exp)
    assert lines[0] == "@main(" and "    %arg0: tensor<i32> (platform_index, '_platform_index')" in lines
    assert "module attribute jax.uses_shape_polymorphism = true" in lines
    assert inspection.wrapped_signature(exp) == []  # static shapes, no effects: no wrapper


def test_wrapped_signature_classifies_arguments() -> None:
    b, = symbolic_shape("b")
    exp = export(toolkit.jit(lambda x: x * 2), platforms=("cpu", "cuda"))(toolkit.ShapeDtypeStruct((b, 3), F32))
    wrapped = inspection.wrapped_signature(exp)
    assert wrapped == ["@_wrapped_jax_export_main(", "    %arg0: tensor<i32> (platform_index '_platform_index')",
                       "    %arg1: tensor<i32> (dim_var 'b')", "    %arg2: tensor<?x3xf32> (array)", ")"]
    lines = inspection.signature_lines(exp)
    assert "  (calls the private @_wrapped_jax_export_main)" in lines
    assert lines[lines.index("@_wrapped_jax_export_main("):][:len(wrapped)] == wrapped


@pytest.mark.parametrize("round_trip", [False, True], ids=["fresh", "deserialized"])
def test_dimension_variables_and_their_constraints(round_trip) -> None:
    b, n = symbolic_shape("b, n", constraints=("b >= n",))
    exp = export(toolkit.jit(lambda x, y: (x.sum(), y.sum())))(
        toolkit.ShapeDtypeStruct((b, 2), F32), toolkit.ShapeDtypeStruct((n,), F32))
    if round_trip:  # the constraints come back from the module's shape assertions
        exp = inspection.deserialize_untrusted(bytes(exp.serialize()))
    dims = inspection.dimension_variables(exp)
    assert [d["name"] for d in dims] == ["b", "n"]
    assert dims[0]["from"] == "args[0].shape[0] = b" and dims[1]["from"] == "args[1].shape[0] = n"
    assert "b >= n" in dims[0]["constraints"] and "b >= n" in dims[1]["constraints"]


def test_inspect_record(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    record = inspection.inspect_record(exp, blob)
    assert record["inputs"] == [{"path": "args[0]", "aval": "f32[4]"}, {"path": "args[1]", "aval": "f32[4]"}]
    assert record["outputs"] == [{"path": "result['s']", "aval": "f32[4]"}]
    assert record["platforms"] == ["cpu", "cuda"] and record["calling_convention_version"] == 10
    assert record["main_signature"]["has_platform_index"] is True
    assert record["provenance"]["producer"] == "toolkit"
    assert record["wrapped_signature"] == inspection.wrapped_signature(exp)


def test_module_text(blob) -> None:
    exp = inspection.deserialize_untrusted(blob)
    assert inspection.module_text(exp).startswith("module @jit__f")
    assert "loc(" not in inspection.module_text(exp) and "loc(" in inspection.module_text(exp, locations=True)
