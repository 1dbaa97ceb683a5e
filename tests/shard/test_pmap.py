"""toolkit.pmap and toolkit.smap against jax.pmap / jax.smap on eight CPU devices (tests/shard/conftest.py)."""

import warnings

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.parallel_map import Infer


def _ids(sharding):
    return sorted(d.id for d in sharding.device_set)


def _both(jx, make):
    """Run ``make(lib, lax, np_module)`` with toolkit and with JAX; return both results."""
    return make(toolkit, toolkit.lax, tnp), make(jx, jx.lax, jx.numpy)


@pytest.mark.parametrize("n", [1, 4, 8])
def test_psum_normalise_matches_jax(jx, n):
    def make(lib, lax, xnp):
        return lib.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(xnp.arange(1.0, n + 1.0))

    t, j = _both(jx, make)
    np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-6)
    assert t.shape == j.shape and t.dtype == j.dtype
    assert _ids(t.sharding) == _ids(j.sharding) == list(range(n))
    assert t.sharding.spec == toolkit.P("i")


def test_collectives_and_pytrees_match_jax(jx):
    def make(lib, lax, xnp):
        def f(d, y):
            return {"a": d["a"] * y + lax.pmean(d["a"], "i"),
                    "g": lax.all_gather(d["b"], "i"),
                    "k": lax.axis_index("i")}
        args = ({"a": xnp.arange(16.0).reshape(8, 2), "b": xnp.arange(8.0)}, 3.0)
        return lib.pmap(f, "i", in_axes=({"a": 0, "b": 0}, None))(*args)

    t, j = _both(jx, make)
    assert sorted(t) == sorted(j)
    for k in j:
        np.testing.assert_allclose(np.asarray(t[k]), np.asarray(j[k]), rtol=1e-6)
        assert t[k].shape == j[k].shape and t[k].dtype == j[k].dtype
        assert _ids(t[k].sharding) == _ids(j[k].sharding)


def test_in_axes_out_axes_and_kwargs_match_jax(jx):
    def make(lib, lax, xnp):
        x = xnp.arange(12.0).reshape(3, 4)
        a = lib.pmap(lambda v: xnp.sum(v), in_axes=1)(x)
        b = lib.pmap(lambda v: v * 2, in_axes=1, out_axes=1)(x)
        c = lib.pmap(lambda v, w: v + w, in_axes=(0, None))(xnp.arange(4.0), 10.0)
        d = lib.pmap(lambda v, w: v * w)(xnp.arange(4.0), w=xnp.ones(4))
        e = lib.pmap(lambda v: lax.psum(v, "i"), "i", out_axes=None)(xnp.arange(4.0))
        return a, b, c, d, e

    for t, j in zip(*_both(jx, make)):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))
        assert t.shape == j.shape


def test_static_broadcasted_and_donate(jx):
    def make(lib, lax, xnp):
        f = lib.pmap(lambda x, k: x * k, static_broadcasted_argnums=1)
        return f(xnp.arange(4.0), 3), f(xnp.arange(4.0), 5)

    for t, j in zip(*_both(jx, make)):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))
    x = tnp.arange(4.0)
    y = toolkit.pmap(lambda v: v + 1, donate_argnums=0)(x)
    np.testing.assert_allclose(np.asarray(y), [1.0, 2.0, 3.0, 4.0])


def test_devices_argument_and_no_deprecation_warning(jx):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # JAX 0.10.2's pmap does not warn; neither does toolkit's
        t = toolkit.pmap(lambda x: toolkit.lax.psum(x ** 2, "i"), "i", devices=toolkit.devices()[-2:])(
            tnp.array([2.0, 3.0]))
        j = jx.pmap(lambda x: jx.lax.psum(x ** 2, "i"), "i", devices=jx.devices()[-2:])(jx.numpy.array([2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(t), np.asarray(j))
    assert _ids(t.sharding) == _ids(j.sharding) == [6, 7]


def test_grad_through_pmap_and_jit_of_pmap(jx):
    def make(lib, lax, xnp):
        f = lib.pmap(lambda x: lax.psum(x ** 2, "i"), "i")
        return lib.jit(f)(xnp.arange(4.0)), lib.grad(lambda x: f(x).sum())(xnp.arange(4.0))

    for t, j in zip(*_both(jx, make)):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))


def _raises_both(jx, exc, make):
    with pytest.raises(exc) as te:
        make(toolkit, tnp)
    with pytest.raises(exc):
        make(jx, jx.numpy)
    return str(te.value)


def test_wrong_axis_sizes_raise_like_jax(jx):
    # 9 > 8 devices: JAX's IndivisibleError is a ValueError, as is toolkit's message.
    msg = _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x: x)(xnp.arange(9)))
    assert "9" in msg and "8" in msg
    _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x, y: x + y)(xnp.arange(4), xnp.arange(3)))
    msg = _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x: x, axis_size=3)(xnp.arange(4)))
    assert "axis_size 3" in msg
    msg = _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x: x, in_axes=None)(xnp.arange(4)))
    assert "at least one argument with a mapped axis" in msg


def test_bad_arguments_raise_like_jax(jx):
    _raises_both(jx, TypeError, lambda lib, xnp: lib.pmap(3))
    _raises_both(jx, TypeError, lambda lib, xnp: lib.pmap(lambda x: x, in_axes=1.5))
    _raises_both(jx, TypeError, lambda lib, xnp: lib.pmap(lambda x: x, out_axes="a"))
    _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x: x, devices=[]))
    _raises_both(jx, ValueError,
                 lambda lib, xnp: lib.pmap(lambda x, k: x, static_broadcasted_argnums=1)(xnp.arange(2)))
    _raises_both(jx, ValueError, lambda lib, xnp: lib.pmap(lambda x, y: x, in_axes=(0, 0, 0))(xnp.arange(2),
                                                                                            xnp.arange(2)))
    with pytest.raises(ValueError, match="rank"):
        toolkit.pmap(lambda x: x, in_axes=2)(tnp.ones((2, 2)))


def _auto_meshes(jx, shape, names):
    return (toolkit.make_mesh(shape, names, axis_types=(toolkit.AxisType.Auto,) * len(shape)),
            jx.make_mesh(shape, names, axis_types=(jx.sharding.AxisType.Auto,) * len(shape)))


@pytest.mark.parametrize("shape,names", [((8,), ("x",)), ((4, 2), ("x", "y"))])
def test_smap_matches_jax(jx, shape, names):
    tm, jm = _auto_meshes(jx, shape, names)
    results = []
    for lib, mesh, xnp in ((toolkit, tm, tnp), (jx, jm, jx.numpy)):
        with lib.set_mesh(mesh):
            f = lib.smap(lambda x, w: x * lib.lax.axis_index("x") + w, in_axes=(0, None), out_axes=0,
                         axis_name="x")
            g = lib.smap(in_axes=1, out_axes=1, axis_name="x")(lambda x: x + lib.lax.psum(x, "x"))
            results.append((f(xnp.arange(16.0), 1.0), g(xnp.arange(32.0).reshape(2, 16))))
    for t, j in zip(*results):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))
        assert t.shape == j.shape
        assert t.sharding.spec == toolkit.P(*j.sharding.spec)


def test_smap_infer_reads_auto_shardings_as_replicated(jx):
    tm, _ = _auto_meshes(jx, (8,), ("x",))
    with toolkit.set_mesh(tm):
        out = toolkit.smap(lambda x: x + 1, out_axes=None, axis_name="x")(tnp.arange(4.0))
    np.testing.assert_allclose(np.asarray(out), [1.0, 2.0, 3.0, 4.0])
    assert repr(Infer) == "Infer"


def test_smap_bad_arguments_raise_like_jax(jx):
    for lib in (toolkit, jx):
        with pytest.raises(TypeError):
            lib.smap(lambda x: x, in_axes=0, out_axes=0, axis_name=("x", "y"))
        with pytest.raises(TypeError):
            lib.smap(lambda x: x, in_axes=[0], out_axes=0, axis_name="x")
        with pytest.raises(TypeError):
            lib.smap(lambda x: x, in_axes=0, out_axes="0", axis_name="x")
    with pytest.raises(ValueError, match="mesh"):
        toolkit.smap(lambda x: x, in_axes=0, out_axes=0, axis_name="x")(tnp.arange(8.0))
    tm, _ = _auto_meshes(jx, (8,), ("x",))
    with toolkit.set_mesh(tm), pytest.raises(ValueError, match="not axes of the mesh"):
        toolkit.smap(lambda x: x, in_axes=0, out_axes=0, axis_name="z")(tnp.arange(8.0))


def test_lower_gives_the_shard_map_program():
    f = toolkit.pmap(lambda x: toolkit.lax.psum(x, "i"), "i")
    text = f.lower(tnp.arange(4.0)).as_text()
    assert "sdy.manual_computation" in text or "SPMDFullToShardShape" in text
    assert "all_reduce" in text


def test_vmap_composes_and_nested_pmap_is_refused(jx):
    def make(lib, lax, xnp):
        return (lib.pmap(lib.vmap(lambda x: x * 2))(xnp.arange(6.0).reshape(2, 3)),
                lib.vmap(lib.pmap(lambda x: x * 2))(xnp.arange(6.0).reshape(3, 2)))

    for t, j in zip(*_both(jx, make)):
        np.testing.assert_allclose(np.asarray(t), np.asarray(j))
        assert t.shape == j.shape
    # JAX 0.10.2 refuses nested pmap too (a ValueError about the context mesh).
    with pytest.raises(NotImplementedError, match="nested shard_map"):
        toolkit.pmap(toolkit.pmap(lambda x: x, "j"), "i")(tnp.ones((2, 4)))
