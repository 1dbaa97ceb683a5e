"""Every keyword jax.numpy, jax.numpy.linalg, jax.random and jax's transformations (0.10.2) accept is accepted by
toolkit's function of the same name, with JAX's meaning: renamed parameters called by name, ``out=`` (None only),
the removed keywords (``reduce_axes``, ``concrete``) refused with JAX's errors, ``impl``/``impl_spec`` naming
threefry, ``vmap(sum_match=)`` and ``make_jaxpr(axis_env=)``; side by side with JAX in the same run. The
``out_sharding=`` keywords are checked on an 8-device mesh in tests/shard/test_numpy_out_sharding_as_jax.py."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
import toolkit.lax as tlax

jax = pytest.importorskip("jax")
jnp = jax.numpy

#: Keywords JAX has that toolkit leaves out on purpose: einsum's private, experimental ``_dot_general`` hook.
SKIPPED = {("jax.numpy", "einsum"): {"_dot_general"}}

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5


def _keyword_gaps() -> dict[tuple[str, str], set[str]]:
    P = inspect.Parameter
    keywords = (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD)
    gaps = {}
    for mod, tmod in ((jax.numpy, toolkit.numpy), (jax.numpy.linalg, toolkit.numpy.linalg),
                      (jax.random, toolkit.random), (jax, toolkit)):
        for name in dir(mod):
            f = getattr(mod, name)
            if name.startswith("_") or not callable(f) or isinstance(f, type) or not hasattr(tmod, name):
                continue
            try:
                theirs, ours = inspect.signature(f), inspect.signature(getattr(tmod, name))
            except (TypeError, ValueError):
                continue
            if any(p.kind == P.VAR_KEYWORD for p in ours.parameters.values()):
                continue
            missing = ({k for k, p in theirs.parameters.items() if p.kind in keywords}
                       - {k for k, p in ours.parameters.items() if p.kind in keywords}
                       - SKIPPED.get((mod.__name__, name), set()))
            if missing:
                gaps[(mod.__name__, name)] = missing
    return gaps


def test_every_jax_keyword_is_accepted():
    assert _keyword_gaps() == {}


def _same(ours, theirs, rtol=0.0):
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype), (ours.shape, ours.dtype, theirs.shape,
                                                                      theirs.dtype)
    weak = lambda v: bool(getattr(getattr(v, "aval", None), "weak_type", False))
    assert weak(ours) == weak(theirs)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol)


def _raises_same(ours, theirs):
    """``ours()`` raises JAX's exception type with JAX's message, word for word."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(want.type) as got:
        ours()
    assert str(got.value) == str(want.value)


# --- renamed parameters, called by name; out=None --------------------------------------------------------------

BY_NAME = [
    lambda m: m.round(a=X, decimals=2), lambda m: m.around(a=X, decimals=1, out=None),
    lambda m: m.round(X, 1, None), lambda m: m.around(a=np.int32(7)),
    lambda m: m.asarray(a=[1, 2]), lambda m: m.asarray(a=X, dtype=np.float16),
    lambda m: m.array(object=[1.0, 2.5]), lambda m: m.array(object=X, ndmin=3),
    lambda m: m.trace(X, out=None), lambda m: m.trace(X, 1, 0, 1, np.int32, None),
    lambda m: m.outer(X[0], X[1], out=None), lambda m: m.outer(X[0], X[1], None),
    lambda m: m.einsum("ij,kj->ik", X, X, out=None),
]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_renamed_and_out_none_keywords_as_jax(jit):
    run = (lambda lib, m: lib.jit(lambda: tuple(c(m) for c in BY_NAME))()) if jit else \
        (lambda lib, m: tuple(c(m) for c in BY_NAME))
    # Under jit XLA may fold round's division by 10**decimals differently in the two programs: the last bit.
    for ours, theirs in zip(run(toolkit, tnp), run(jax, jnp)):
        _same(ours, theirs, rtol=2e-7 if jit else 0.0)


def test_round_with_a_by_name_differentiates_as_jax():
    ours = toolkit.grad(lambda x: tnp.sum(tnp.round(a=x * 3.0) * x))(X)
    theirs = jax.grad(lambda x: jnp.sum(jnp.round(a=x * 3.0) * x))(X)
    _same(ours, theirs)


OUT_GIVEN = {
    "round": lambda m: m.round(X, out=np.empty_like(X)),
    "around": lambda m: m.around(X, 1, np.empty_like(X)),
    "round_int": lambda m: m.round(np.int32(3), out=np.empty(())),
    "trace": lambda m: m.trace(X, out=np.empty(())),
    "outer": lambda m: m.outer(X[0], X[1], out=np.empty((4, 4))),
    "einsum": lambda m: m.einsum("ij->", X, out=np.empty(())),
}


@pytest.mark.parametrize("name", sorted(OUT_GIVEN))
def test_out_other_than_none_raises_as_jax(name):
    case = OUT_GIVEN[name]
    _raises_same(lambda: case(tnp), lambda: case(jnp))
    _raises_same(lambda: toolkit.jit(lambda: case(tnp))(), lambda: jax.jit(lambda: case(jnp))())


# --- removed keywords ---------------------------------------------------------------------------------------


def _sin(x):
    return x * 2.0


REMOVED = {
    "grad": lambda t: t.grad(_sin, reduce_axes=("i",)),
    "value_and_grad": lambda t: t.value_and_grad(_sin, reduce_axes=("i",)),
    "vjp": lambda t: t.vjp(_sin, 1.0, reduce_axes=("i",)),
    "checkpoint_false": lambda t: t.checkpoint(_sin, concrete=False),
    "checkpoint_true": lambda t: t.checkpoint(_sin, prevent_cse=False, concrete=True),
    "remat": lambda t: t.remat(_sin, concrete=False),
}


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_removed_keywords_raise_as_jax(name):
    _raises_same(lambda: REMOVED[name](toolkit), lambda: REMOVED[name](jax))


def test_removed_keywords_at_their_defaults_change_nothing():
    for lib in (toolkit, jax):
        assert float(lib.grad(_sin, reduce_axes=())(1.0)) == 2.0
        assert float(lib.value_and_grad(_sin, reduce_axes=[])(1.0)[1]) == 2.0
        assert float(lib.vjp(_sin, 1.0, reduce_axes=())[1](1.0)[0]) == 2.0


# --- impl / impl_spec: threefry2x32 only ---------------------------------------------------------------------

def test_prng_impl_keywords_name_threefry_as_jax():
    for impl in (None, "threefry2x32"):
        np.testing.assert_array_equal(np.asarray(toolkit.random.PRNGKey(7, impl=impl)),
                                      np.asarray(jax.random.PRNGKey(7, impl=impl)))
    np.testing.assert_array_equal(np.asarray(toolkit.random.PRNGKey(7, impl=toolkit.random.key_dtype())),
                                  np.asarray(jax.random.PRNGKey(7, impl=jax.random.key_dtype())))
    ours = toolkit.jit(lambda s: toolkit.random.PRNGKey(s, impl="threefry2x32"))(np.int32(5))
    theirs = jax.jit(lambda s: jax.random.PRNGKey(s, impl="threefry2x32"))(np.int32(5))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert str(toolkit.random.key_dtype(impl_spec="threefry2x32")) == str(jax.random.key_dtype(impl_spec="threefry2x32"))
    assert toolkit.random.key_dtype(impl_spec=None) == toolkit.random.key_dtype()


def test_prng_impl_keywords_as_jax():
    for fn in ("PRNGKey", "key_dtype"):
        call = (lambda r, impl: r.PRNGKey(0, impl=impl)) if fn == "PRNGKey" else \
            (lambda r, impl: r.key_dtype(impl_spec=impl))
        _raises_same(lambda: call(toolkit.random, 3), lambda: call(jax.random, 3))
        # An unknown name: JAX's ValueError, listing JAX's six implementations in its order.
        with pytest.raises(ValueError) as theirs:
            call(jax.random, "nope")
        with pytest.raises(ValueError) as ours:
            call(toolkit.random, "nope")
        assert str(ours.value) == str(theirs.value)
        # Every implementation JAX has is taken (tests/random/test_prng_impls_as_jax.py compares their bits).
        for name in ("rbg", "unsafe_rbg", "philox2x32", "philox4x32", "threefry4x32"):
            assert str(call(toolkit.random, name)) == str(call(jax.random, name))


# --- vmap(sum_match=) ----------------------------------------------------------------------------------------

def _summed_outputs(m):
    return lambda a, b: (a * 2.0, m.sum(a) > 2.0, b, a.astype(np.int8))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_vmap_sum_match_sums_mapped_outputs_as_jax(jit):
    def run(lib, m):
        f = lib.vmap(_summed_outputs(m), in_axes=(0, None), out_axes=(None, None, None, 0), sum_match=True)
        return (lib.jit(f) if jit else f)(X, np.int8(3))
    for ours, theirs in zip(run(toolkit, tnp), run(jax, jnp)):
        _same(ours, theirs)


def test_vmap_sum_match_gradient_and_default_as_jax():
    def loss(lib):
        return lambda a: lib.vmap(lambda u: u * u, in_axes=1, out_axes=None, sum_match=True)(a).sum()
    _same(toolkit.grad(loss(toolkit))(X), jax.grad(loss(jax))(X))
    # sum_match=False (the default): a mapped output at out_axes=None stays an error, as in JAX.
    with pytest.raises(ValueError, match="out_axes"):
        toolkit.vmap(lambda u: u, out_axes=None, sum_match=False)(X)
    with pytest.raises(ValueError):
        jax.vmap(lambda u: u, out_axes=None, sum_match=False)(X)


# --- make_jaxpr(axis_env=) -----------------------------------------------------------------------------------

def _collectives(lax):
    return lambda x: (lax.psum(x, "i"), lax.axis_index("i"), lax.axis_size("i") * x, lax.pmean(x, ("i", "j")))


def test_make_jaxpr_axis_env_binds_axis_names_as_jax():
    env = [("i", 4), ("j", 2)]
    ours, our_shapes = toolkit.make_jaxpr(_collectives(tlax), (), env, True)(1.0)
    theirs, their_shapes = jax.make_jaxpr(_collectives(jax.lax), axis_env=env, return_shape=True)(1.0)
    names = lambda program: [e.primitive.name for e in program.eqns if e.primitive.name in ("psum", "axis_index")]
    assert names(ours) == names(theirs) == ["psum", "axis_index", "psum"]
    # axis_size is the static size 4; pmean divides by 4 * 2.
    assert "4.0" in str(ours) and "8.0" in str(ours)
    assert [(s.shape, s.dtype) for s in our_shapes] == [(s.shape, s.dtype) for s in their_shapes]
    assert str(toolkit.make_jaxpr(lambda x: x * 2, axis_env=[])(1.0)).count("mul") == 1


def test_make_jaxpr_axis_env_name_shadowed_by_an_inner_vmap_as_jax():
    """A vmap inside binds an axis_env name again and its binding wins there (the batch's psum, index and size);
    outside it the axis_env's does. The programs run (nothing named is left in them) to JAX's values."""
    def shadowed(lib):
        def f(x):
            inner = lib.vmap(lambda y: lib.lax.psum(y, "i") + lib.lax.axis_index("i") + lib.lax.axis_size("i"),
                             axis_name="i")(x)
            return inner, lib.lax.axis_size("i") * x
        return f
    x = np.arange(3, dtype=np.float32)
    ours = toolkit.make_jaxpr(shadowed(toolkit), axis_env=[("i", 4)])(x)
    theirs = jax.make_jaxpr(shadowed(jax), axis_env=[("i", 4)])(x)
    from toolkit.ad.interpret import eval_program
    our_values = [np.asarray(v).tolist() for v in eval_program(ours.jaxpr, [x])]
    their_values = [np.asarray(v).tolist() for v in jax.core.eval_jaxpr(theirs.jaxpr, theirs.consts, x)]
    assert our_values == their_values == [[6.0, 7.0, 8.0], [0.0, 4.0, 8.0]]


def test_make_jaxpr_axis_env_errors_as_jax():
    for lib, lax in ((toolkit, tlax), (jax, jax.lax)):
        with pytest.raises(NameError, match="unbound axis name: j"):
            lib.make_jaxpr(_collectives(lax), axis_env=[("i", 4)])(1.0)
        with pytest.raises(NameError, match="unbound axis name: i"):
            lib.make_jaxpr(lambda x: lax.psum(x, "i"))(1.0)  # the names are bound for the trace only
    _raises_same(lambda: toolkit.make_jaxpr(lambda x: x, axis_env=[("i",)])(1.0),
                 lambda: jax.make_jaxpr(lambda x: x, axis_env=[("i",)])(1.0))


# --- the meanings of keywords the functions had already, fixed beside the new ones --------------------------

REPEATS = [([1, 2, 0], 5), ([1, 2, 3], 4), (2, 7), (2, 3), ([1, 2, 0], 0), ([3, 0, 1], 4), (2, None)]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_repeat_total_repeat_length_cuts_or_pads_as_jax(jit):
    def run(lib, m):
        cases = lambda: tuple(m.repeat(m.arange(3) * 1.5, np.array(r), total_repeat_length=t) for r, t in REPEATS) \
            + (m.repeat(m.asarray(X), np.array([2, 0, 1]), axis=0, total_repeat_length=5),
               m.repeat(m.zeros((0, 2)), 2, axis=0, total_repeat_length=3))
        return lib.jit(cases)() if jit else cases()
    for ours, theirs in zip(run(toolkit, tnp), run(jax, jnp)):
        _same(ours, theirs)


def test_broadcast_to_int_shape_and_bincount_weights_type_as_jax():
    _same(tnp.broadcast_to(1.5, 3), jnp.broadcast_to(1.5, 3))
    _same(toolkit.jit(lambda: tnp.broadcast_to(np.float32(2), 4))(), jax.jit(lambda: jnp.broadcast_to(np.float32(2), 4))())
    x = np.array([0, 1, 1, 3], np.int32)
    with pytest.raises(ValueError, match="type of weights must match type of x"):
        jnp.bincount(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"type of weights must match type of x. Got typeof\(x\)=int32\[4\]"):
        tnp.bincount(x, np.ones(3, np.float32))
