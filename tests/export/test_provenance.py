"""Provenance records in toolkit blobs: JAX still reads them; inspect shows them; diff ignores locations."""

from __future__ import annotations

import json

import numpy as np
import pytest

import toolkit
from toolkit import export
from toolkit.export import provenance
from toolkit.tools import export_cli as cli

F32 = np.float32


def _exp():
    return export.export(toolkit.jit(lambda x: toolkit.numpy.cos(x) + 1))(toolkit.ShapeDtypeStruct((3,), F32))


def test_record_round_trips_and_jax_ignores_it():
    exp = _exp()
    record = provenance.get(exp)
    assert record["producer"] == "toolkit" and record["jaxlib"] and record["stablehlo"] and record["created"]
    blob = bytes(exp.serialize())
    again = export.deserialize(blob)
    assert provenance.get(again) == record
    assert bytes(again.serialize()) == blob
    jexport = pytest.importorskip("jax.export")
    theirs = jexport.deserialize(blob)
    x = np.arange(3, dtype=F32)
    np.testing.assert_allclose(np.asarray(theirs.call(x)), np.asarray(exp.call(x)), rtol=1e-6)
    # what JAX re-serializes carries no record, and toolkit reads it as a JAX-made artifact
    rewritten = export.deserialize(bytes(theirs.serialize()))
    assert provenance.get(rewritten) is None
    assert "jax.export" in provenance.infer(rewritten)["producer"]


def test_source_date_epoch_makes_an_export_reproducible(monkeypatch):
    """The reproducible-builds convention: with SOURCE_DATE_EPOCH set the creation time is that moment, so two
    exports of one function (a second apart or in two processes) are the same bytes; a bad value is named."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    first, second = (bytes(_exp().serialize()) for _ in range(2))  # one call site: the same source locations
    assert provenance.get(export.deserialize(first))["created"] == "2026-01-01T00:00:00Z"
    assert second == first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH must be a whole number of seconds.*'yesterday'"):
        _exp()


def test_exported_without_record_keeps_jax_bytes():
    import dataclasses
    exp = dataclasses.replace(_exp())  # replace drops the record
    assert provenance.get(exp) is None
    blob = bytes(exp.serialize())
    assert provenance.get(export.deserialize(blob)) is None
    assert len(blob) < len(bytes(_exp().serialize()))


def test_inspect_json_and_text(tmp_path, capsys):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(_exp().serialize()))
    assert cli.main(["export", "inspect", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["provenance"]["producer"] == "toolkit"
    assert record["main_signature"]["arguments"][0]["kind"] == "array"
    assert record["dimension_variables"] == []
    assert cli.main(["export", "inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert "provenance:\n" in text and "  producer: toolkit" in text


def test_dimension_variables_with_constraints(tmp_path, capsys):
    from toolkit.core.shape_poly import symbolic_shape
    b, n = symbolic_shape("b, n", constraints=("b >= n",))
    exp = export.export(toolkit.jit(lambda x, y: (x.sum(), y.sum())))(
        toolkit.ShapeDtypeStruct((b, 2), F32), toolkit.ShapeDtypeStruct((n,), F32))
    path = tmp_path / "p.bin"
    path.write_bytes(bytes(exp.serialize()))
    assert cli.main(["export", "inspect", str(path), "--json"]) == 0
    dims = json.loads(capsys.readouterr().out)["dimension_variables"]
    assert [d["name"] for d in dims] == ["b", "n"]
    assert "b >= n" in dims[0]["constraints"] and "b >= 1" in dims[0]["constraints"]
    assert "b >= n" in dims[1]["constraints"]


def test_diff_ignores_location_only_changes(tmp_path, capsys):
    def f(x):
        return toolkit.numpy.cos(x) + 1

    def g(x):

        return toolkit.numpy.cos(x) + 1  # same ops, other source lines

    g.__name__ = "f"
    spec = toolkit.ShapeDtypeStruct((3,), F32)
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    ea = export.export(toolkit.jit(f))(spec)
    eb = export.export(toolkit.jit(g))(spec)
    a.write_bytes(bytes(ea.serialize()))
    b.write_bytes(bytes(eb.serialize()))
    status = cli.main(["export", "diff", str(a), str(b)])
    out = capsys.readouterr().out
    assert status == 0 and "module text:\n  = identical (locations differ" in out
    with_locations = cli.main(["export", "diff", str(a), str(b), "--locations"])
    out_loc = capsys.readouterr().out
    assert with_locations == 1 and "loc(" in out_loc
    assert cli.main(["export", "diff", str(a), str(b), "--json"]) == status
    assert json.loads(capsys.readouterr().out)["module_text"] == []


def test_mlir_debug_info_prints_locations(tmp_path, capsys):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(_exp().serialize()))
    assert cli.main(["export", "mlir", str(path), "--debug-info"]) == 0
    assert "loc(" in capsys.readouterr().out
