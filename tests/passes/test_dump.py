"""TOOLKIT_DUMP_IR_TO: numbered files per stage."""

from __future__ import annotations

import os

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes import dump


def test_maybe_dump_is_off_without_the_variable(monkeypatch) -> None:
    monkeypatch.delenv(dump.DUMP_ENV, raising=False)
    assert dump.maybe_dump("stage", "module {}") is None


def test_maybe_dump_writes_numbered_files(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(dump.DUMP_ENV, str(tmp_path / "dumps"))
    with make_context():
        module = ir.Module.parse("func.func @f() { return }")
    first = dump.maybe_dump("jit f/after lowering", module)
    second = dump.maybe_dump("jit_f.bytecode", b"ML\xefR")
    third = dump.maybe_dump("jit_f.text", "module {}")
    names = sorted(os.listdir(tmp_path / "dumps"))
    assert [os.path.basename(p) for p in (first, second, third)] == names
    assert names[0].endswith("_jit_f_after_lowering.mlir") and names[1].endswith(".mlirbc")
    numbers = [int(n.split("_")[0]) for n in names]
    assert numbers == sorted(numbers) and len(set(numbers)) == 3
    assert "func.func @f" in open(first).read()
