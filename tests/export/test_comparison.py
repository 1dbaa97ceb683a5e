"""Comparing two exports from Python (toolkit/export/comparison.py); ``toolkit export diff`` is in tests/tools."""

from __future__ import annotations

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit.export import export
from toolkit.export.comparison import compare_exports

F32 = np.float32
X = np.ones(4, F32)


def _f(x, y):
    return {"s": tnp.sin(x) * 2 + y}


def _cos1(x):
    return tnp.cos(x) + 1


def _cos2(x):  # as long a name as _cos1: the locations name the function, and keep one size

    return tnp.cos(x) + 1  # the same program, traced from other lines


_cos2.__name__ = "_cos1"  # the module's name too: only locations differ


def test_identical_exports_have_no_differences() -> None:
    exp = export(toolkit.jit(_f))(X, X)
    comparison = compare_exports(exp, exp)
    assert comparison.differences == 0 and all(f.same for f in comparison.fields)
    assert comparison.signature_diff() == [] and comparison.module_text_diff() == []
    assert comparison.as_dict()["fields"] == {}


def test_calling_conventions_differ_in_one_field() -> None:
    a = export(toolkit.jit(_f), calling_convention_version=9)(X, X)
    b = export(toolkit.jit(_f))(X, X)
    comparison = compare_exports(a, b)
    assert [f.name for f in comparison.fields if not f.same] == ["calling_convention_version"]
    assert comparison.differences == 1
    assert list(comparison.as_dict()["fields"]) == ["calling_convention_version"]


def test_signature_changes() -> None:
    a = export(toolkit.jit(_f))(X, X)
    b = export(toolkit.jit(_f), platforms=("cpu", "cuda"))(X, X)
    comparison = compare_exports(a, b)
    assert comparison.signature_differs
    assert "+    %arg0: tensor<i32> (platform_index, '_platform_index')" in comparison.signature_diff()
    assert comparison.as_dict()["differences"] == comparison.differences > 1


def test_location_only_changes_count_only_with_locations() -> None:
    a, b = export(toolkit.jit(_cos1))(X), export(toolkit.jit(_cos2))(X)
    without = compare_exports(a, b)
    module_field = next(f for f in without.fields if f.name == "mlir_module_serialized")
    assert module_field.same and without.locations_differ
    assert without.differences == 0 and not without.module_text_differs
    with_locations = compare_exports(a, b, locations=True)
    assert with_locations.locations_compared and not with_locations.locations_differ
    assert with_locations.module_text_differs
    assert any("loc(" in line for line in with_locations.module_text_diff())


def test_blobs_add_the_stored_serialization_version() -> None:
    exp = export(toolkit.jit(_f))(X, X)
    blob = bytes(exp.serialize())
    names = [f.name for f in compare_exports(exp, exp, blob, blob).fields]
    assert "serialization_version" in names
    assert "serialization_version" not in [f.name for f in compare_exports(exp, exp).fields]
