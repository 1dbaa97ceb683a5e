"""Values typed over a mesh with both Explicit and Auto axes, against JAX 0.10.2 in the same run: the type fixes
only the Explicit axes, XLA lays out the rest. Results (eager and jit) keep the layout XLA chose beside their type,
each typed op's constraint leaves every dimension open with the unused Explicit axes replicated, and the result of
``@main`` asks for no sharding."""

import re
import types

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
import toolkit.sharding as tsharding
from _oracle import run_both

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
W = np.ones((4, 3), np.float32)


@pytest.fixture(scope="module")
def both(jx):
    import jax.numpy as jnp
    import jax.sharding as jsharding
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    tk = types.SimpleNamespace(s=tsharding, jit=toolkit.jit, set_mesh=toolkit.set_mesh, make_mesh=toolkit.make_mesh,
                               np=tnp, lax=toolkit.lax, typeof=toolkit.typeof, device_put=toolkit.device_put,
                               Spec=toolkit.ShapeDtypeStruct, name="toolkit")
    jax = types.SimpleNamespace(s=jsharding, jit=jx.jit, set_mesh=jx.set_mesh, make_mesh=jx.make_mesh, np=jnp,
                                lax=jx.lax, typeof=jx.typeof, device_put=jx.device_put, Spec=jx.ShapeDtypeStruct,
                                name="jax")
    return tk, jax


def _mixed(L, names=("x", "y"), shape=(2, 4), types_=("Explicit", "Auto")):
    return L.make_mesh(shape, names, axis_types=tuple(getattr(L.s.AxisType, t) for t in types_))


def _placed(value, L):
    return str(L.typeof(value)), str(value.sharding.spec), np.asarray(value).tolist()


def test_results_keep_the_layout_xla_chose_beside_their_type(both):
    def program(L):
        P = L.s.PartitionSpec
        with L.set_mesh(_mixed(L)):
            x = L.device_put(X, P("x", "y"))
            step = L.jit(lambda v: (v * 2, v.sum(1), v @ W, L.lax.with_sharding_constraint(v, P(None, "y"))))
            return ([_placed(x * 2, L)] + [_placed(r, L) for r in step(x)]
                    + [_placed(L.jit(lambda v: v + 1, out_shardings=P("x", "y"))(x), L)])
    ours, theirs = run_both(both, program)
    assert ours == theirs
    assert ours[0][:2] == ("float32[8@x,4]", "P('x', 'y')")  # typed on x, laid out on x and y


def test_constraints_leave_the_auto_axes_open(both):
    """Shardy's form of the typed ops and of ``@main``'s result, as JAX writes them (an unused Explicit axis
    replicated)."""
    def program(L):
        mesh = _mixed(L, ("x", "z", "y"), (2, 2, 2), ("Explicit", "Explicit", "Auto"))
        spec = L.Spec((8, 4), np.float32, sharding=L.s.NamedSharding(mesh, L.s.PartitionSpec("x")))
        with L.set_mesh(mesh):
            text = L.jit(lambda v: v * 2).lower(spec).as_text()
        return (re.findall(r"sdy\.sharding_constraint %\w+ (<@mesh.*>) :", text),
                [line.split("->", 1)[1].strip() for line in text.splitlines() if "func.func public @main" in line])
    ours, theirs = run_both(both, program)
    assert set(ours[0]) == set(theirs[0]) == {'<@mesh, [{"x", ?}, {?}], replicated={"z"}>'}
    assert ours[1] == theirs[1] == ['(tensor<8x4xf32> {jax.result_info = "result"}) {']


def test_gspmd_marks_every_dimension_unspecified(both, monkeypatch):
    """The GSPMD form of the same constraint (JAX's ``unspecified_dims``), and the same layout after XLA."""
    tk, _ = both
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "gspmd")
    mesh = _mixed(tk)
    with tk.set_mesh(mesh):
        x = tk.device_put(X, tk.s.PartitionSpec("x", "y"))
        f = tk.jit(lambda v: v * 2)
        text = f.lower(x).as_text()
        out = f(x)
    assert 'backend_config = "unspecified_dims=[0,1]"' in text
    assert str(out.sharding.spec) == "P('x', 'y')" and np.asarray(out).tolist() == (X * 2).tolist()
