"""JAX's six PRNG implementations in toolkit.random, bit for bit with jax.random (the oracle) in the same run.

For each of threefry2x32, threefry4x32, rbg, unsafe_rbg, philox2x32 and philox4x32: seeds, ``split``,
``fold_in``, ``bits``, ``key_data``/``wrap_key_data``/``key_impl``/``key_dtype``/``PRNGKey``/``key``, a set of
samplers eagerly, under ``jit`` and under ``vmap`` over split keys (gamma too: JAX's batching of its per-element
map), the ``jax_default_prng_impl`` flag for raw keys, and JAX's errors (unknown names, key data of the wrong
shape, mixed implementations, ``poisson`` on other implementations).
"""

import contextlib

import jax
import numpy as np
import pytest
from _oracle import raised

import toolkit
from toolkit import random as tr
from toolkit.core import config as toolkit_config

jr = jax.random
IMPLS = ["threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"]
TAGS = {"threefry2x32": "fry", "threefry4x32": "fry4", "rbg": "rbg", "unsafe_rbg": "urbg", "philox2x32": "phx2",
        "philox4x32": "phx4"}
KEY_SHAPES = {"threefry2x32": (2,), "threefry4x32": (4,), "rbg": (4,), "unsafe_rbg": (4,), "philox2x32": (1,),
              "philox4x32": (2,)}


def _same(ours, theirs, what=""):
    """The same dtype, shape and bytes."""
    a, b = np.asarray(ours), np.asarray(theirs)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), (what, a.dtype, a.shape, b.dtype, b.shape)
    assert (np.atleast_1d(a).view(np.uint8) == np.atleast_1d(b).view(np.uint8)).all(), (what, a, b)


def _keys(impl, seed=7):
    return tr.key(seed, impl=impl), jr.key(seed, impl=impl)


@contextlib.contextmanager
def _default_impl(name):
    """``jax_default_prng_impl`` set on both sides (toolkit's context manager, JAX's too)."""
    with toolkit_config.default_prng_impl(name), jax.default_prng_impl(name):
        yield


def _message_before_impl(message):
    # JAX's key-data errors end with the implementation's repr, whose function addresses (and rbg's function
    # names) are its own: what precedes it must be equal.
    return message.split(" for impl=")[0]


# --- keys -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("impl", IMPLS)
def test_keys_as_jax(impl):
    for seed in (0, -1, 2**31 + 5):
        tk, jk = _keys(impl, seed)
        _same(tr.key_data(tk), jr.key_data(jk), (impl, seed))
        _same(tr.PRNGKey(seed, impl=impl), jr.PRNGKey(seed, impl=impl), (impl, seed, "PRNGKey"))
    tk, jk = _keys(impl)
    assert str(tk.dtype) == str(jk.dtype) == f"key<{TAGS[impl]}>"
    assert tk.dtype == tr.key_dtype(impl) == tr.key(0, dtype=tr.key_dtype(impl)).dtype
    assert tk.dtype.itemsize == jk.dtype.itemsize
    assert tr.key_impl(tk) == jr.key_impl(jk) == impl
    assert tr.key_data(tk).shape == KEY_SHAPES[impl] and tk.shape == ()
    for num in (2, (2, 3)):
        _same(tr.key_data(tr.split(tk, num)), jr.key_data(jr.split(jk, num)), (impl, "split", num))
    for data in (7, 2**32 - 1):
        _same(tr.key_data(tr.fold_in(tk, data)), jr.key_data(jr.fold_in(jk, data)), (impl, "fold_in", data))
    _same(tr.bits(tk, (3, 5), "uint8"), jr.bits(jk, (3, 5), "uint8"), (impl, "bits uint8"))
    _same(tr.bits(tk), jr.bits(jk), (impl, "bits ()"))
    # typed keys keep their implementation through indexing, reshape, iteration, wrap_key_data and ==
    ks, jks = tr.split(tk, (2, 3)), jr.split(jk, (2, 3))
    assert ks.shape == jks.shape == (2, 3) and ks[1].dtype == tk.dtype and ks.reshape(6).dtype == tk.dtype
    _same(tr.key_data(ks[1, 2]), jr.key_data(jks[1, 2]))
    _same(tr.key_data(ks.reshape(3, 2)[2]), jr.key_data(jks.reshape(3, 2)[2]))
    first, _ = tr.split(tk)
    assert first.dtype == tk.dtype
    wrapped = tr.wrap_key_data(tr.key_data(ks), impl=impl)
    assert wrapped.dtype == tk.dtype
    _same(wrapped == ks[:, ::-1], jr.wrap_key_data(jr.key_data(jks), impl=impl) == jks[:, ::-1])


# threefry2x32's samplers are tests/random/test_random.py's (and the other files there).
@pytest.mark.parametrize("impl", IMPLS[1:])
def test_samplers_jit_and_vmap_as_jax(impl):
    tk, jk = _keys(impl)
    cases = [
        lambda r, k: r.uniform(k, (4,), "bfloat16", -2., 3.),
        lambda r, k: r.normal(k, (3, 5)),
        lambda r, k: r.randint(k, (6,), -3, 100, "int8"),
        lambda r, k: r.permutation(k, 10),
        lambda r, k: r.gumbel(k, (4,), mode="highest"),
    ]
    for i, case in enumerate(cases):
        _same(case(tr, tk), case(jr, jk), (impl, i))
    # typed keys through jit keep their implementation, as arguments and as results
    out = toolkit.jit(lambda k: tr.split(k, 3))(tk)
    assert out.dtype == tk.dtype
    _same(tr.key_data(out), jr.key_data(jax.jit(lambda k: jr.split(k, 3))(jk)), (impl, "jit split"))
    _same(toolkit.jit(lambda k: tr.normal(k, (4,)))(tk), jax.jit(lambda k: jr.normal(k, (4,)))(jk), (impl, "jit"))
    # vmap over split keys (rbg: XLA's bit generator takes the batch's first key, in JAX as here)
    tks, jks = tr.split(tk, 4), jr.split(jk, 4)
    _same(toolkit.vmap(lambda k: tr.uniform(k, (2,)))(tks), jax.vmap(lambda k: jr.uniform(k, (2,)))(jks),
          (impl, "vmap uniform"))
    _same(tr.key_data(toolkit.vmap(lambda k: tr.fold_in(k, 3))(tks)),
          jr.key_data(jax.vmap(lambda k: jr.fold_in(k, 3))(jks)), (impl, "vmap fold_in"))


def test_gamma_as_jax():
    # Other implementations than threefry2x32 run gamma's elements one by one (JAX's lax.map); under vmap JAX's
    # batching rule folds the batch into that map, each element still on its own key.
    alphas = np.array([0.5, 1.5, 3.0], np.float32)
    tk, jk = _keys("rbg", 3)
    _same(tr.gamma(tk, alphas), jr.gamma(jk, alphas), "eager")
    _same(toolkit.vmap(lambda k: tr.gamma(k, 1.5, (2,)))(tr.split(tk, 2)),
          jax.vmap(lambda k: jr.gamma(k, 1.5, (2,)))(jr.split(jk, 2)), "keys batched")
    ours = toolkit.vmap(toolkit.grad(lambda a: tr.gamma(tk, a, (2,)).sum()))(alphas)
    theirs = jax.vmap(jax.grad(lambda a: jr.gamma(jk, a, (2,)).sum()))(alphas)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6)
    # unsafe_rbg splits the broadcast key under vmap from its first copy, as JAX's batching does
    tk, jk = _keys("unsafe_rbg", 3)
    _same(toolkit.vmap(lambda a: tr.gamma(tk, a, (2,)))(alphas), jax.vmap(lambda a: jr.gamma(jk, a, (2,)))(alphas),
          "unsafe_rbg, a batched")
    # nested vmaps fold both batches in
    tk, jk = _keys("rbg", 1)
    _same(toolkit.vmap(toolkit.vmap(lambda k: tr.gamma(k, 2.0)))(tr.split(tk, (2, 2))),
          jax.vmap(jax.vmap(lambda k: jr.gamma(k, 2.0)))(jr.split(jk, (2, 2))), "nested")


# --- the default implementation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("impl", ["rbg", "philox2x32", "threefry4x32"])
def test_default_prng_impl_reads_raw_keys(impl):
    with _default_impl(impl):
        tk, jk = tr.PRNGKey(5), jr.PRNGKey(5)
        _same(tk, jk, impl)
        assert tr.key_impl(tk) == jr.key_impl(jk) == impl
        assert str(tr.key(0).dtype) == str(jr.key(0).dtype) == str(tr.key_dtype()) == f"key<{TAGS[impl]}>"
        _same(tr.split(tk), jr.split(jk), (impl, "split"))
        _same(tr.uniform(tk, (3,)), jr.uniform(jk, (3,)), (impl, "uniform"))
        # a raw key traced under jit is read with the default of its trace (the flag is in jit's cache key)
        jitted = toolkit.jit(lambda k: tr.normal(k, (3,)))
        _same(jitted(tk), jax.jit(lambda k: jr.normal(k, (3,)))(jk), (impl, "jit"))
        # a raw threefry2x32 key does not fit an implementation with another key shape
        if KEY_SHAPES[impl] != (2,):
            bad = np.zeros(2, np.uint32)
            ours, theirs = raised(lambda: tr.normal(bad)), raised(lambda: jr.normal(bad))
            assert ours[0] == theirs[0] == "TypeError"
            assert _message_before_impl(ours[1]) == _message_before_impl(theirs[1])
            assert f"name='{impl}', tag='{TAGS[impl]}'" in ours[1]
    assert str(tr.key(0).dtype) == "key<fry>" and tr.PRNGKey(0).shape == (2,)


def test_config_update_and_its_errors():
    toolkit.config.update("jax_default_prng_impl", "unsafe_rbg")
    try:
        assert toolkit.config.jax_default_prng_impl == "unsafe_rbg"
        assert str(tr.key(0).dtype) == "key<urbg>" and tr.PRNGKey(0).shape == (4,)
    finally:
        toolkit.config.update("jax_default_prng_impl", "threefry2x32")
    with pytest.raises(ValueError, match="jax_default_prng_impl takes one of 'threefry2x32', .*got 'fry'"):
        toolkit.config.update("jax_default_prng_impl", "fry")
    assert toolkit.config.jax_default_prng_impl == "threefry2x32"


# --- errors ---------------------------------------------------------------------------------------------------------

def test_errors_as_jax():
    for call in (
        lambda r: r.key(0, impl="nope"),  # JAX's message lists the six names, in its order
        lambda r: r.PRNGKey(0, impl="Rbg"),
        lambda r: r.key_dtype(3),
        lambda r: r.key(0, impl="rbg", dtype="rbg"),
        lambda r: r.key(0, impl="rbg") == r.key(0),  # mixing implementations
        lambda r: r.key(0, impl="philox2x32") != r.key(0, impl="philox4x32"),
        lambda r: r.split(r.split(r.key(0, impl="rbg"))),
        lambda r: r.bits(r.key(0, impl="philox4x32"), dtype="int32"),
        lambda r: r.key(np.zeros(2, np.int32), impl="threefry4x32"),
    ):
        assert raised(lambda: call(tr)) == raised(lambda: call(jr))
    # key data of another implementation's shape
    for data, impl in ((np.zeros(2, np.uint32), "rbg"), (np.zeros((3, 4), np.uint32), "philox2x32"),
                       (np.zeros(4, np.int32), "rbg")):
        ours, theirs = raised(lambda: tr.wrap_key_data(data, impl=impl)), raised(lambda: jr.wrap_key_data(data,
                                                                                                         impl=impl))
        assert ours[0] == theirs[0] == "TypeError" and _message_before_impl(ours[1]) == _message_before_impl(theirs[1])
    # poisson exists for threefry2x32 keys only, as in JAX
    for impl in IMPLS[1:]:
        tk, jk = _keys(impl)
        assert raised(lambda: tr.poisson(tk, 2.0)) == raised(lambda: jr.poisson(jk, 2.0))
        assert raised(lambda: tr.poisson(tk, 2.0))[0] == "NotImplementedError"


@pytest.mark.x64  # 64-bit on both sides (tests/conftest.py)
def test_x64_seeds_and_bits_as_jax():
    for impl in IMPLS:
        tk, jk = _keys(impl, 2**40 + 7)
        _same(tr.key_data(tk), jr.key_data(jk), impl)
        _same(tr.bits(tk, (4,), "uint64"), jr.bits(jk, (4,), "uint64"), impl)
    tk, jk = _keys("philox4x32", -5)
    _same(tr.uniform(tk, (3,), "float64"), jr.uniform(jk, (3,), "float64"))
