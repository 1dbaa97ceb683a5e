"""``toolkit export inspect|diff|mlir`` (toolkit/tools/export_cli.py)."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.export import export
from toolkit.tools import export_cli

F32 = np.float32


def _write(tmp_path, name, exp):
    path = tmp_path / name
    path.write_bytes(bytes(exp.serialize()))
    return str(path)


def _f(x, y):
    return {"s": tnp.sin(x) * 2 + y}


def _run(argv):
    out = io.StringIO()
    args = export_cli.build_parser().parse_args(argv)
    return args.run(args, out), out.getvalue()


@pytest.fixture
def blobs(tmp_path):
    x = np.ones(4, F32)
    return {
        9: _write(tmp_path, "v9.bin", export(toolkit.jit(_f), calling_convention_version=9)(x, x)),
        10: _write(tmp_path, "v10.bin", export(toolkit.jit(_f))(x, x)),
        "mp": _write(tmp_path, "mp.bin", export(toolkit.jit(_f), platforms=("cpu", "cuda"))(x, x)),
    }


def test_inspect_shows_every_field_and_the_signature(blobs):
    status, text = _run(["export", "inspect", blobs["mp"]])
    assert status == 0
    for field in ("fun_name: _f", "serialization_version: 3 (stored)", "calling_convention_version: 10",
                  "platforms: cpu, cuda", "nr_devices: 1", "in_tree:", "out_tree:", "ordered_effects: none",
                  "unordered_effects: none", "disabled_safety_checks: none", "module_kept_var_idx: [0, 1]",
                  "uses_global_constants: true", "has_vjp: false", "producer StableHLO_v1.15.0",
                  "args[0]: f32[4]  sharding: unspecified", "result['s']: f32[4]"):
        assert field in text, field
    assert "tensor<i32> (platform_index, '_platform_index')" in text
    assert "module attribute jax.uses_shape_polymorphism = true" in text


def test_diff_of_the_two_conventions(blobs):
    status, text = _run(["export", "diff", blobs[9], blobs[10]])
    assert status == 1
    assert "! calling_convention_version:" in text
    assert "main signature:\n  = identical" in text and "module text:\n  = identical" in text
    assert "1 difference(s)" in text


def test_diff_of_identical_exports_is_clean(blobs):
    status, text = _run(["export", "diff", blobs[10], blobs[10]])
    assert status == 0 and "0 difference(s)" in text


def test_diff_shows_signature_changes(blobs):
    status, text = _run(["export", "diff", blobs[10], blobs["mp"]])
    assert status == 1
    assert "+    %arg0: tensor<i32> (platform_index, '_platform_index')" in text


def test_mlir_prints_the_module(blobs):
    status, text = _run(["export", "mlir", blobs[10]])
    assert status == 0 and text.startswith("module @jit__f") and "stablehlo.sine" in text


def test_bad_input_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not an export at all")
    assert export_cli.main(["export", "inspect", str(bad)]) == 1
    assert "Not a serialized Exported" in capsys.readouterr().err
    assert export_cli.main(["export", "mlir", str(tmp_path / "missing.bin")]) == 1


def test_console_script_module_runs(blobs):
    result = subprocess.run([sys.executable, "-m", "toolkit.tools.export_cli", "export", "inspect", blobs[10]],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "calling_convention_version: 10" in result.stdout


def test_jax_blob_inspects(tmp_path):
    jax = pytest.importorskip("jax")
    from jax import export as jexport

    jexp = jexport.export(jax.jit(lambda x: x * 2), platforms=("cpu", "tpu"))(np.ones(3, F32))
    path = tmp_path / "jax.bin"
    path.write_bytes(bytes(jexp.serialize()))
    status, text = _run(["export", "inspect", str(path)])
    assert status == 0 and "platforms: cpu, tpu" in text and "platform_index" in text
