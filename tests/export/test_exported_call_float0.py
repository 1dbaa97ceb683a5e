"""float0 in exports: VJPs of functions with integer values, read, written and called as JAX does.

JAX gives integer and boolean values ``float0`` cotangents. In an export the
avals say ``float0``; in the module such a value is a ``tensor<...xi1>`` of
zeros (usually dropped from ``@main`` as unused). A float0 argument takes
float0 (or boolean) zeros; a float0 result is a numpy float0 array of zeros.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export as jexport  # noqa: E402

import toolkit  # noqa: E402
from toolkit import export  # noqa: E402
from toolkit.core import dtypes  # noqa: E402

F32, I32 = np.float32, np.int32
X = np.linspace(0.5, 2, 3, dtype=F32)
N = np.arange(3, dtype=I32)
CT = np.linspace(-1, 1, 3, dtype=F32)


def _jax_f(x, n):
    return x * n.astype(jnp.float32), n * 2


def _toolkit_f(x, n):
    return x * n.astype(F32), n * 2


def _jax_vjp_blob() -> bytes:
    return bytes(jexport.export(jax.jit(_jax_f))(X, N).serialize(vjp_order=1))


def _shorts(avals):
    return [a.str_short() for a in avals]


def test_jax_vjp_with_float0_deserializes_and_round_trips():
    blob = _jax_vjp_blob()
    vjp = export.deserialize(blob).vjp()
    assert _shorts(vjp.in_avals) == ["f32[3]", "i32[3]", "f32[3]", "float0[3]"]
    assert _shorts(vjp.out_avals) == ["f32[3]", "float0[3]"]
    assert vjp.in_avals[3].dtype == jax.dtypes.float0  # the same numpy dtype as JAX's
    # toolkit writes the same bytes JAX wrote.
    jax_vjp_blob = bytes(jexport.deserialize(blob).vjp().serialize())
    assert bytes(export.deserialize(jax_vjp_blob).serialize()) == jax_vjp_blob
    assert bytes(export.deserialize(blob).serialize(vjp_order=1)) == blob


@pytest.mark.parametrize("zeros", ["float0", "bool"])
def test_call_jax_vjp_with_float0_cotangents(zeros):
    blob = _jax_vjp_blob()
    ct_n = np.zeros(3, jax.dtypes.float0) if zeros == "float0" else np.zeros(3, bool)
    dx, dn = export.deserialize(blob).vjp().call(X, N, CT, ct_n)
    want_dx, want_dn = jexport.deserialize(blob).vjp().call(X, N, CT, np.zeros(3, jax.dtypes.float0))
    np.testing.assert_allclose(np.asarray(dx), np.asarray(want_dx))
    assert dn.dtype == want_dn.dtype == dtypes.float0 and dn.shape == want_dn.shape == (3,)


def test_call_jax_vjp_inside_jit():
    vjp = export.deserialize(_jax_vjp_blob()).vjp()
    got = toolkit.jit(lambda x, n, ct: vjp.call(x, n, ct, np.zeros(3, dtypes.float0))[0] * 2)(X, N, CT)
    np.testing.assert_allclose(np.asarray(got), 2 * CT * N)


def test_toolkit_vjp_with_float0_runs_in_jax():
    exp = export.export(toolkit.jit(_toolkit_f))(X, N)
    vjp = exp.vjp()
    assert _shorts(vjp.in_avals) == ["f32[3]", "i32[3]", "f32[3]", "float0[3]"]
    assert _shorts(vjp.out_avals) == ["f32[3]", "float0[3]"]
    jax_view = jexport.deserialize(bytes(exp.serialize(vjp_order=1)))
    theirs = jexport.export(jax.jit(_jax_f))(X, N).vjp()
    assert jax_view.vjp().in_avals == theirs.in_avals and jax_view.vjp().out_avals == theirs.out_avals
    got = jax_view.vjp().call(X, N, CT, np.zeros(3, jax.dtypes.float0))
    want = theirs.call(X, N, CT, np.zeros(3, jax.dtypes.float0))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]))
    assert got[1].dtype == jax.dtypes.float0
    # And JAX differentiates through toolkit's export, using the float0 cotangent for the integer output.
    g = jax.grad(lambda x: jax_view.call(x, N)[0].sum())(X)
    np.testing.assert_allclose(np.asarray(g), N.astype(F32))


def test_second_order_vjp_keeps_float0():
    back = export.deserialize(export.export(toolkit.jit(_toolkit_f))(X, N).serialize(vjp_order=2))
    second = back.vjp().vjp()
    assert _shorts(second.in_avals)[-2:] == ["f32[3]", "float0[3]"]
    assert _shorts(second.out_avals) == ["f32[3]", "float0[3]", "f32[3]", "float0[3]"]


def test_float0_parameter_refuses_other_dtypes():
    vjp = export.deserialize(_jax_vjp_blob()).vjp()
    with pytest.raises(TypeError, match=r"Argument args\[3\] .* has type i32\[3\], but the function was exported "
                                        r"for float0\[3\]"):
        vjp.call(X, N, CT, np.zeros(3, I32))


def test_inspect_prints_float0(tmp_path):
    path = tmp_path / "vjp.bin"
    path.write_bytes(bytes(jexport.deserialize(_jax_vjp_blob()).vjp().serialize()))
    result = subprocess.run([sys.executable, "-m", "toolkit.tools.export_cli", "export", "inspect", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "args[3]: float0[3]" in result.stdout and "result[1]: float0[3]" in result.stdout
