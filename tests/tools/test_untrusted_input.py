"""Untrusted binary input (MLIR bytecode, VHLO) is read in a forked child first.

jaxlib's readers segfault or hang on some corrupted files (reproducers in
tests/fuzz/known/); ``read_module(..., untrusted=True)`` and the command
lines turn those into one clean error instead.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import time

import numpy as np
import pytest

from toolkit.ir.context import make_context
from toolkit.ir.serialization import (
    UnreadableInputError,
    probe_untrusted_binary,
    read_module,
    untrusted_read_timeout,
    write_module,
)
from toolkit.tools import export_cli, opt

KNOWN = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "known"
TEXT = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the probe needs os.fork")


def _binaries() -> dict[str, bytes]:
    module = read_module(TEXT, make_context())
    return {"bytecode": write_module(module, "bytecode"), "vhlo": write_module(module, "vhlo")}


@pytest.mark.parametrize("kind", ["bytecode", "vhlo"])
def test_a_good_binary_reads_the_same(kind):
    data = _binaries()[kind]
    trusted = read_module(data, make_context())
    untrusted = read_module(data, make_context(), untrusted=True)
    assert str(trusted) == str(untrusted)


def test_a_clean_parse_error_is_the_in_process_error():
    data = _binaries()["bytecode"][:-7]
    with pytest.raises(ValueError) as in_process:
        read_module(data, make_context())
    with pytest.raises(ValueError) as probed:
        read_module(data, make_context(), untrusted=True)
    assert type(probed.value) is type(in_process.value) and str(probed.value) == str(in_process.value)


@pytest.mark.parametrize("name,what", [("bytecode-reader-segfault.mlirbc", "MLIR bytecode"),
                                       ("vhlo-reader-segfault.mlir.bc", "the StableHLO portable artifact")])
def test_a_crashing_file_is_an_error(name, what):
    with pytest.raises(UnreadableInputError, match=rf"cannot read {what}: the reader crashed \(SIGSEGV\)"):
        read_module((KNOWN / name).read_bytes(), make_context(), untrusted=True)


def test_a_hanging_file_is_an_error_after_the_time_limit(monkeypatch):
    monkeypatch.setenv("TOOLKIT_UNTRUSTED_READ_TIMEOUT", "0.5")
    start = time.monotonic()
    with pytest.raises(UnreadableInputError, match=r"did not finish within 0\.5 s"):
        read_module((KNOWN / "bytecode-reader-hang.mlirbc").read_bytes(), make_context(), untrusted=True)
    assert time.monotonic() - start < 5


def test_time_limit_default_and_size(monkeypatch):
    monkeypatch.delenv("TOOLKIT_UNTRUSTED_READ_TIMEOUT", raising=False)
    assert untrusted_read_timeout() == 10.0
    assert untrusted_read_timeout(3_000_000) == 13.0
    monkeypatch.setenv("TOOLKIT_UNTRUSTED_READ_TIMEOUT", "not a number")
    assert untrusted_read_timeout() == 10.0


def test_library_default_and_text_stay_in_process(monkeypatch):
    data = _binaries()["bytecode"]

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    read_module(data, make_context())  # trusted by default
    read_module(TEXT, make_context(), untrusted=True)  # text is never probed
    read_module(TEXT.encode(), make_context(), untrusted=True)


def test_without_fork_the_read_is_in_process(monkeypatch):
    monkeypatch.delattr(os, "fork")
    probe_untrusted_binary(b"ML\xefR anything")  # no child: nothing to check
    read_module(_binaries()["vhlo"], make_context(), untrusted=True)


@pytest.mark.parametrize("name", ["bytecode-reader-segfault.mlirbc", "vhlo-reader-segfault-2.mlirbc"])
def test_toolkit_opt_reports_one_line(name, capsys):
    assert opt.main([str(KNOWN / name)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: cannot read" in err and "crashed (SIGSEGV)" in err


@pytest.mark.parametrize("action", ["inspect", "mlir", "diff"])
def test_toolkit_export_with_a_crashing_embedded_module(tmp_path, capsys, action):
    import toolkit
    from toolkit.export import export

    exp = export(toolkit.jit(lambda x: x * 2))(np.ones(2, np.float32))
    broken = dataclasses.replace(exp, mlir_module_serialized=(KNOWN / "vhlo-reader-segfault.mlir.bc").read_bytes())
    path = tmp_path / "broken.export"
    path.write_bytes(bytes(broken.serialize()))
    argv = ["export", action, str(path)] + ([str(path)] if action == "diff" else [])
    assert export_cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "error: mlir_module_serialized: cannot read the StableHLO portable artifact: the reader crashed" in err
