"""toolkit.new_ref / toolkit.ref / toolkit.ds against JAX's mutable array references and dslice."""

import numpy as np
import pytest

import toolkit
import toolkit.lax as lax
import toolkit.numpy as tnp
from toolkit import ref as tref
from toolkit.refs import RefWriteError

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _both(fn_t, fn_j, *args):
    got = fn_t(toolkit, tnp, *args)
    want = fn_j(jax, jnp, *args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def _eager_updates(api, np_, x):
    r = api.new_ref(np_.asarray(x))
    r[1] = 10.0
    r[api.ds(2, 2)] = r[api.ds(2, 2)] * 2
    r[...] = r[...] + 1
    return r[...]


def test_eager_reads_and_writes_match_jax():
    _both(_eager_updates, _eager_updates, np.arange(6, dtype=np.float32))


def test_shape_dtype_and_repr():
    r = toolkit.new_ref(tnp.zeros((2, 3), tnp.int32))
    assert r.shape == (2, 3) and r.dtype == np.int32 and r.ndim == 2 and r.size == 6 and len(r) == 2
    assert r.aval == tref.AbstractRef(toolkit.ShapeDtypeStruct((2, 3), np.int32))
    assert isinstance(r, toolkit.Ref) and "Ref(" in repr(r)


def _in_jit(api, np_, x):
    @api.jit
    def f(x):
        r = api.new_ref(x)
        r[0] = r[0] + r[1]
        r[api.ds(1, 2)] = np_.zeros(2, np_.float32)
        return api.freeze(r)
    return f(np_.asarray(x))


def test_ref_made_inside_jit_matches_jax():
    _both(_in_jit, _in_jit, np.arange(5, dtype=np.float32))


def _passed_into_jit(api, np_, x):
    r = api.new_ref(np_.asarray(x))

    @api.jit
    def f(r, y):
        r[...] = r[...] * y
        return r[...].sum()

    s1 = f(r, 2.0)
    s2 = f(r, 3.0)
    return np_.concatenate([r[...], np_.stack([s1, s2])])


def test_ref_passed_into_jit_is_discharged_like_jax():
    _both(_passed_into_jit, _passed_into_jit, np.arange(4, dtype=np.float32))


def test_ref_api_functions_match_jax():
    def run(api, np_, x):
        r = api.ref.new_ref(np_.asarray(x))
        old = api.ref.swap(r, 0, 7.0)
        api.ref.addupdate(r, api.ds(1, 2), np_.ones(2, np_.float32))
        api.ref.set(r, 3, api.ref.get(r, 0) + old)
        return r[...]
    _both(run, run, np.arange(5, dtype=np.float32))


def test_empty_ref_and_free_and_freeze():
    r = toolkit.empty_ref(toolkit.ShapeDtypeStruct((3,), np.float32))
    assert r.shape == (3,) and r.dtype == np.float32
    r[...] = 1.0
    np.testing.assert_array_equal(np.asarray(toolkit.freeze(r)), np.ones(3, np.float32))
    with pytest.raises(RefWriteError, match="frozen"):
        r[...]
    q = toolkit.new_ref(tnp.ones(2))
    toolkit.free_ref(q)
    with pytest.raises(RefWriteError, match="freed"):
        q[0] = 1.0


def test_grad_through_refs_matches_jax():
    def loss(api, np_):
        def f(x):
            q = api.new_ref(x)
            q[0] = q[0] * 3
            return (q[...] ** 2).sum()
        return f
    x = np.arange(1, 4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(toolkit.grad(loss(toolkit, tnp))(tnp.asarray(x))),
                               np.asarray(jax.grad(loss(jax, jnp))(jnp.asarray(x))), rtol=1e-6)


def test_reads_of_outer_refs_in_loop_bodies():
    r = toolkit.new_ref(tnp.arange(5.0))
    got = lax.fori_loop(0, 3, lambda i, c: c + r[i], 0.0)
    rj = jax.new_ref(jnp.arange(5.0))
    want = jax.lax.fori_loop(0, 3, lambda i, c: c + rj[i], 0.0)
    assert float(got) == float(want)


@pytest.mark.parametrize("case", ["fori_loop", "cond", "while_loop", "closed_over_jit"])
def test_writes_to_outer_refs_in_bodies_are_refused(case):
    r = toolkit.new_ref(tnp.zeros(3))

    def write(*_):
        r[0] = 1.0
        return _[-1] if _ else 0.0

    named = {"fori_loop": "lax.fori_loop", "cond": "lax.cond", "while_loop": "lax.while_loop",
             "closed_over_jit": "jit"}[case]
    with pytest.raises(RefWriteError, match=f"written inside it \\(here: {named};"):
        if case == "fori_loop":
            lax.fori_loop(0, 2, lambda i, c: write(c), 0.0)
        elif case == "cond":
            lax.cond(True, lambda: write(), lambda: 0.0)
        elif case == "while_loop":
            lax.while_loop(lambda c: c < 1.0, lambda c: write(c) + 1.0, 0.0)
        else:
            toolkit.jit(lambda x: write(x))(1.0)
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros(3))  # untouched: no leaked tracer


def test_bad_inputs():
    with pytest.raises(NotImplementedError, match="memory_space"):
        toolkit.new_ref(tnp.ones(2), memory_space="vmem")
    with pytest.raises(ValueError, match="kind"):
        toolkit.new_ref(tnp.ones(2), kind="bogus")
    with pytest.raises(TypeError, match="expected a Ref"):
        toolkit.freeze(tnp.ones(2))
    with pytest.raises(TypeError, match="shape"):
        toolkit.empty_ref(3)
    r = toolkit.new_ref(tnp.ones(2))
    with pytest.raises(RefWriteError, match="twice"):
        toolkit.jit(lambda a, b: a[...] + b[...])(r, r)


# -- ds ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(2, 3), (2, 3, 2), (8, 4), (4,), (0, 0)])
def test_ds_reads_match_jax(args):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x)[toolkit.ds(*args)]),
                                  np.asarray(jnp.asarray(x)[jax.ds(*args)]))
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x)[:, None, ..., toolkit.ds(*args[:1], 1) if args[0] < 2
                                                          else 0]),
                                  np.asarray(jnp.asarray(x)[:, None, ..., jax.ds(*args[:1], 1) if args[0] < 2
                                                            else 0]))


def test_ds_with_traced_start_in_jit_matches_jax():
    def f(api):
        return api.jit(lambda x, i: (x[api.ds(i, 3)], x.at[api.ds(i, 2), 1].add(100.0)))
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    for i in (0, 4, 9):
        for got, want in zip(f(toolkit)(tnp.asarray(x), i), f(jax)(jnp.asarray(x), i)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert "dynamic_slice" in f(toolkit).lower(tnp.asarray(x), 1).as_text()


def test_ds_none_and_errors():
    assert toolkit.ds(None) == slice(None)
    assert toolkit.ds(3) == toolkit.ds(0, 3)
    with pytest.raises(ValueError, match="Non-static stride"):
        toolkit.ds(0, 2, 1.5)
    with pytest.raises(TypeError, match="size"):
        toolkit.ds(0, 2.0)
    with pytest.raises(IndexError, match="spans 5 elements"):
        tnp.arange(3)[toolkit.ds(0, 5)]


def test_ref_static_out_of_bounds_ds_is_refused_like_jax():
    r, rj = toolkit.new_ref(tnp.arange(10)), jax.new_ref(jnp.arange(10))
    with pytest.raises(ValueError, match="Out of bound slice"):
        rj[jax.ds(8, 4)] = jnp.zeros(4, jnp.int32)
    with pytest.raises(ValueError, match="Out of bound slice"):
        r[toolkit.ds(8, 4)] = tnp.zeros(4, tnp.int32)
    with pytest.raises(ValueError, match="Out of bound slice"):
        r[toolkit.ds(8, 4)]


def test_ds_update_out_of_bounds_dropped_like_jax():
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x).at[toolkit.ds(8, 4)].set(0.0)),
                                  np.asarray(jnp.asarray(x).at[jax.ds(8, 4)].set(0.0)))
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x).at[toolkit.ds(8, 2)].set(0.0, mode="clip")),
                                  np.asarray(jnp.asarray(x).at[jax.ds(8, 2)].set(0.0, mode="clip")))


def test_lower_with_a_ref_argument_is_the_discharged_function():
    r = toolkit.new_ref(tnp.ones(3))

    def f(r):
        r[0] = 5.0
        return r[...].sum()
    text = toolkit.jit(f).lower(r).as_text()
    assert text.count("tensor<3xf32>") >= 2 and "-> (tensor<f32>" in text  # the final value is a result too
    np.testing.assert_array_equal(np.asarray(r), np.ones(3))  # lowering does not write the Ref
    assert [float(v) for v in r] == [1.0, 1.0, 1.0]


def test_numpy_copy_of_a_ref_is_writable_and_its_own():
    r = toolkit.new_ref(tnp.ones(3))
    copy = np.array(r)
    copy[0] = 5.0  # np.array(r) was the value's read-only host view
    np.testing.assert_array_equal(np.asarray(r), np.ones(3))
    assert not np.asarray(r).flags.writeable and np.asarray(r, dtype=np.int32).dtype == np.int32
