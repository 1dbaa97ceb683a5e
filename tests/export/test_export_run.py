"""``toolkit export run`` and ``toolkit-run BLOB``: exports by toolkit and by JAX, static and polymorphic."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import toolkit
from toolkit import export
from toolkit.core.shape_poly import symbolic_shape
from toolkit.tools import export_cli as cli, run as run_tool

F32 = np.float32
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "jax_poly_harness"


def _f(x, n):
    return {"y": toolkit.numpy.sin(x) * n, "s": toolkit.numpy.sum(x)}


def _jf(x, n):
    import jax.numpy as jnp
    return {"y": jnp.sin(x) * n, "s": jnp.sum(x)}


def _blobs(tmp_path):
    b, = symbolic_shape("b")
    blobs = {
        "toolkit_static": export.export(toolkit.jit(_f))(toolkit.ShapeDtypeStruct((2, 3), F32),
                                                        toolkit.ShapeDtypeStruct((), np.int32)),
        "toolkit_poly": export.export(toolkit.jit(_f), platforms=("cpu", "cuda"))(
            toolkit.ShapeDtypeStruct((b, 3), F32), toolkit.ShapeDtypeStruct((), np.int32)),
    }
    paths = {}
    for name, exp in blobs.items():
        paths[name] = tmp_path / f"{name}.bin"
        paths[name].write_bytes(bytes(exp.serialize()))
    try:
        import jax
        from jax import export as jexport
    except ImportError:
        return paths
    jb, = jexport.symbolic_shape("b")
    jaxes = {
        "jax_static": jexport.export(jax.jit(_jf))(jax.ShapeDtypeStruct((2, 3), F32), jax.ShapeDtypeStruct((), np.int32)),
        "jax_poly": jexport.export(jax.jit(_jf))(jax.ShapeDtypeStruct((jb, 3), F32),
                                                 jax.ShapeDtypeStruct((), np.int32)),
    }
    for name, exp in jaxes.items():
        paths[name] = tmp_path / f"{name}.bin"
        paths[name].write_bytes(bytes(exp.serialize()))
    return paths


def _parse(out: str) -> list[np.ndarray]:
    return [line for line in out.splitlines() if line.startswith("result[")]


def test_export_run_matches_exported_call(tmp_path, capsys):
    x = np.arange(6, dtype=F32).reshape(2, 3) / 5
    np.save(tmp_path / "x.npy", x)
    for name, path in _blobs(tmp_path).items():
        out_dir = tmp_path / f"out_{name}"
        assert cli.main(["export", "run", str(path), "--arg", str(tmp_path / "x.npy"), "--arg", "3",
                         "--out", str(out_dir)]) == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
        exp = export.deserialize(path.read_bytes())
        want = exp.call(x, np.int32(3))
        leaves = toolkit.tree_util.tree_leaves(want)
        for i, w in enumerate(leaves):
            np.testing.assert_allclose(np.load(out_dir / f"result_{i}.npy"), np.asarray(w), rtol=1e-6)
        assert len(_parse(printed)) == len(leaves)
        if name.startswith("jax"):
            from jax import export as jexport
            theirs = jexport.deserialize(path.read_bytes()).call(x, np.int32(3))
            for i, w in enumerate(toolkit.tree_util.tree_leaves(dict(theirs))):
                np.testing.assert_allclose(np.load(out_dir / f"result_{i}.npy"), np.asarray(w), rtol=1e-6)
        # toolkit-run accepts the same blob
        assert run_tool.main([str(path), "-arg", str(tmp_path / "x.npy"), "-arg", "3"]) == 0
        assert _parse(capsys.readouterr().out) == _parse(printed)


def test_polymorphic_at_another_size(tmp_path, capsys):
    paths = _blobs(tmp_path)
    x = np.ones((5, 3), F32)
    assert cli.main(["export", "run", str(paths["toolkit_poly"]), "--arg", json.dumps(x.tolist()),
                     "--arg", "2"]) == 0
    assert "float32[5, 3]" in capsys.readouterr().out


@pytest.mark.parametrize("value, message", [
    ("1.5", "1.5 is not an integer"),
    ("4000000000", "4000000000 is out of the range of int32"),
    ('"x"', "neither a .npy file nor a JSON"),
    ("[1, 2]", "has shape (2,)"),
])
def test_arguments_are_checked_never_converted(tmp_path, capsys, value, message):
    path = _blobs(tmp_path)["toolkit_static"]
    assert cli.main(["export", "run", str(path), "--arg", "[[1,2,3],[4,5,6]]", "--arg", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolkit export run: error: --arg") and message in err
    assert run_tool.main([str(path), "-arg", "[[1,2,3],[4,5,6]]", "-arg", value]) == 2
    assert message in capsys.readouterr().err


def test_npy_dtype_must_fit(tmp_path, capsys):
    path = _blobs(tmp_path)["toolkit_static"]
    np.save(tmp_path / "x64.npy", np.ones((2, 3), np.float64))
    np.save(tmp_path / "n8.npy", np.int8(3))
    assert cli.main(["export", "run", str(path), "--arg", str(tmp_path / "x64.npy"), "--arg", "1"]) == 2
    assert "has dtype float64, the parameter is float32" in capsys.readouterr().err
    np.save(tmp_path / "x32.npy", np.ones((2, 3), F32))
    assert cli.main(["export", "run", str(path), "--arg", str(tmp_path / "x32.npy"),
                     "--arg", str(tmp_path / "n8.npy")]) == 0  # int8 -> int32 is safe


def test_poly_size_mismatch_and_count(tmp_path, capsys):
    path = _blobs(tmp_path)["toolkit_poly"]
    assert cli.main(["export", "run", str(path), "--arg", "[[1,2,3]]"]) == 2
    assert "takes 2 argument(s)" in capsys.readouterr().err
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 16)
    assert cli.main(["export", "run", str(bad)]) == 1


@pytest.mark.skipif(not (CORPUS / "manifest.json").exists(), reason="needs ../shared/corpora/jax_poly_harness")
def test_jax_poly_harness_sample(tmp_path):
    """Every 50th case of the JAX-written corpus through run_exported (the plain route), against JAX's outputs."""
    import sys

    from toolkit.export.runner import run_exported

    sys.path.insert(0, str(CORPUS))
    try:
        import corpus_common
    finally:
        sys.path.remove(str(CORPUS))
    cases = json.loads((CORPUS / "manifest.json").read_text())["cases"][::50]
    cases = [e for e in cases if (CORPUS / e["files"]["bin"]).exists()]
    assert cases
    for entry in cases:
        exp = export.deserialize((CORPUS / entry["files"]["bin"]).read_bytes())
        arrays = corpus_common.load_case_arrays(str(CORPUS), entry)
        ins = [arrays[f"r0_in_{i}"] for i in range(sum(k.startswith("r0_in_") for k in arrays))]
        outs = [arrays[f"r0_out_{i}"] for i in range(sum(k.startswith("r0_out_") for k in arrays))]
        got = run_exported(exp, ins)
        assert len(got) == len(outs), entry["name"]
        for g, w in zip(got, outs):
            assert corpus_common.compare_arrays(g, w, scale=entry.get("tol_scale", 1.0)) is None, entry["name"]
