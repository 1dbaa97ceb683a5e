"""toolkit.random against jax.random (the oracle): the same bits for the same keys.

Every comparison is bitwise (``_same``: dtype, shape and raw bytes), eagerly and
under ``toolkit.jit``/``toolkit.vmap``; gradients through samplers agree to float
rounding (the AD rules sum cotangents in another order than JAX's).
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import toolkit
from toolkit import random as tr

SEEDS = [0, 42, 2**31 + 5]
SEEDS2 = [0, 2**31 + 5]  # the slower tests
FLOATS = ["float32", "bfloat16", "float16"]


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    a1, b1 = np.atleast_1d(a), np.atleast_1d(b)
    assert (a1.view(np.uint8) == b1.view(np.uint8)).all(), (a, b)


def _keys(seed):
    return tr.PRNGKey(seed), jax.random.PRNGKey(seed)


# --- keys ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 42, -1, 2**31, 2**32 + 5, 2**40 + 7, -2**40, np.uint32(2**32 - 1),
                                  np.int64(-5), np.int8(-3), np.uint64(2**40 + 9)])
def test_prngkey_seeds(seed):
    _same(tr.PRNGKey(seed), jax.random.PRNGKey(seed))
    _same(tr.key_data(tr.key(seed)), jax.random.key_data(jax.random.key(seed)))


def test_seed_under_jit_and_vmap():
    s = np.int32(-3)
    _same(toolkit.jit(tr.PRNGKey)(s), jax.jit(jax.random.PRNGKey)(s))
    seeds = np.arange(-2, 3, dtype=np.int32)
    _same(toolkit.vmap(lambda x: tr.key_data(tr.key(x)))(seeds),
          jax.vmap(lambda x: jax.random.key_data(jax.random.key(x)))(seeds))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("num", [2, 5, (2, 3), (), (1, 0)])
def test_split(seed, num):
    tk, jk = _keys(seed)
    _same(tr.split(tk, num), jax.random.split(jk, num))
    _same(tr.key_data(tr.split(tr.key(seed), num)), jax.random.key_data(jax.random.split(jax.random.key(seed), num)))


@pytest.mark.parametrize("data", [0, 7, 2**32 - 1, np.int32(-1), np.uint32(123456789)])
def test_fold_in(data):
    tk, jk = _keys(42)
    _same(tr.fold_in(tk, data), jax.random.fold_in(jk, data))
    _same(tr.key_data(tr.fold_in(tr.key(42), data)), jax.random.key_data(jax.random.fold_in(jax.random.key(42), data)))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", None])
@pytest.mark.parametrize("shape", [(), (5,), (3, 7)])
def test_bits(dtype, shape):
    for seed in SEEDS:
        tk, jk = _keys(seed)
        _same(tr.bits(tk, shape, dtype), jax.random.bits(jk, shape, dtype))


@pytest.mark.x64  # 64-bit dtypes on both sides (tests/conftest.py)
def test_64_bit_dtypes_match_jax_x64():
    tk, jk = _keys(3)
    hi = np.int64(10**12)
    with jax.enable_x64(True):
        expected = [jax.random.bits(jk, (3, 5), "uint64"), jax.random.uniform(jk, (5,), "float64"),
                    jax.random.normal(jk, (5,), "float64"), jax.random.randint(jk, (5,), np.int64(0), hi, "int64")]
    got = [tr.bits(tk, (3, 5), "uint64"), tr.uniform(tk, (5,), "float64"), tr.normal(tk, (5,), "float64"),
           tr.randint(tk, (5,), np.int64(0), hi, "int64")]
    for a, b in zip(got, expected):
        _same(a, b)


def test_typed_keys():
    k, jk = tr.key(5), jax.random.key(5)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>" and tr.key_impl(k) == "threefry2x32"
    ks, jks = tr.split(k, (2, 3)), jax.random.split(jk, (2, 3))
    assert ks.shape == (2, 3) and len(ks) == 2
    _same(tr.key_data(ks[1, 2]), jax.random.key_data(jks[1, 2]))
    _same(tr.key_data(ks.reshape(6)[4]), jax.random.key_data(jks.reshape(6)[4]))
    a, b = tr.split(k)
    ja, jb = jax.random.split(jk)
    _same(tr.normal(b, (3,)), jax.random.normal(jb, (3,)))
    assert bool(tr.wrap_key_data(tr.key_data(k)) == k)
    assert bool(a != b)
    _same(tr.key_data(tr.wrap_key_data(np.array([1, 2], np.uint32))), np.array([1, 2], np.uint32))
    # raw keys in, raw keys out; typed in, typed out
    assert isinstance(tr.split(tr.PRNGKey(0)), toolkit.Array)
    assert isinstance(tr.fold_in(k, 1), tr.PRNGKeyArray)
    # typed keys are pytrees: through jit
    out = toolkit.jit(lambda key: tr.split(key)[1])(k)
    assert isinstance(out, tr.PRNGKeyArray)
    _same(tr.key_data(out), jax.random.key_data(jb))


# --- samplers, eager ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", SEEDS2)
def test_float_samplers(dtype, seed):
    tk, jk = _keys(seed)
    shape = (3, 5)
    _same(tr.uniform(tk, shape, dtype), jax.random.uniform(jk, shape, dtype))
    _same(tr.uniform(tk, shape, dtype, -2., 3.5), jax.random.uniform(jk, shape, dtype, -2., 3.5))
    lo = np.linspace(-1, 0, 5).astype(np.float32)
    _same(tr.uniform(tk, shape, dtype, lo, 2.), jax.random.uniform(jk, shape, dtype, lo, 2.))
    _same(tr.normal(tk, shape, dtype), jax.random.normal(jk, shape, dtype))
    _same(tr.truncated_normal(tk, -1., 2., shape, dtype), jax.random.truncated_normal(jk, -1., 2., shape, dtype))
    for name in ["exponential", "logistic", "laplace", "cauchy", "gumbel"]:
        _same(getattr(tr, name)(tk, (7,), dtype), getattr(jax.random, name)(jk, (7,), dtype))
    _same(tr.gumbel(tk, (7,), dtype, mode="high"), jax.random.gumbel(jk, (7,), dtype, mode="high"))


def test_default_dtypes_and_scalar_shapes():
    tk, jk = _keys(1)
    _same(tr.uniform(tk), jax.random.uniform(jk))
    _same(tr.normal(tk), jax.random.normal(jk))
    _same(tr.normal(tk, (4,), "complex64"), jax.random.normal(jk, (4,), "complex64"))
    _same(tr.truncated_normal(tk, np.float32([-1, 0, 1]), 2.), jax.random.truncated_normal(jk, np.float32([-1, 0, 1]), 2.))
    _same(tr.uniform(tk, (0, 3)), jax.random.uniform(jk, (0, 3)))


@pytest.mark.parametrize("seed", SEEDS2)
def test_bernoulli_rademacher(seed):
    tk, jk = _keys(seed)
    _same(tr.bernoulli(tk), jax.random.bernoulli(jk))
    _same(tr.bernoulli(tk, 0.3, (10,)), jax.random.bernoulli(jk, 0.3, (10,)))
    p = np.float32([0.1, 0.5, 0.9])
    _same(tr.bernoulli(tk, p), jax.random.bernoulli(jk, p))
    _same(tr.bernoulli(tk, p, (4, 3)), jax.random.bernoulli(jk, p, (4, 3)))
    _same(tr.bernoulli(tk, 0.3, (10,), mode="high"), jax.random.bernoulli(jk, 0.3, (10,), mode="high"))
    _same(tr.bernoulli(tk, np.array(0.3, ml_dtypes.bfloat16), (10,)),
          jax.random.bernoulli(jk, np.array(0.3, ml_dtypes.bfloat16), (10,)))
    _same(tr.rademacher(tk, (10,)), jax.random.rademacher(jk, (10,)))
    _same(tr.rademacher(tk, (10,), "float32"), jax.random.rademacher(jk, (10,), "float32"))


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "int16", "uint16", "uint32"])
def test_randint(dtype):
    for seed in SEEDS:
        tk, jk = _keys(seed)
        _same(tr.randint(tk, (20,), 0, 100, dtype), jax.random.randint(jk, (20,), 0, 100, dtype))
        _same(tr.randint(tk, (20,), 3, 3, dtype), jax.random.randint(jk, (20,), 3, 3, dtype))
    tk, jk = _keys(9)
    _same(tr.randint(tk, (20,), 0, 256, "uint8"), jax.random.randint(jk, (20,), 0, 256, "uint8"))
    _same(tr.randint(tk, (20,), -300, 300, "int8"), jax.random.randint(jk, (20,), -300, 300, "int8"))


def test_randint_wide_and_array_bounds():
    tk, jk = _keys(4)
    _same(tr.randint(tk, (20,), -2**31, 2**31 - 1), jax.random.randint(jk, (20,), -2**31, 2**31 - 1))
    lo, hi = np.int32([0, 10, -5]), np.int32([[5], [100]])
    _same(tr.randint(tk, (2, 3), lo, hi), jax.random.randint(jk, (2, 3), lo, hi))
    _same(tr.randint(tk, (3,), 0., 7.), jax.random.randint(jk, (3,), 0., 7.))


@pytest.mark.parametrize("seed", SEEDS2)
def test_permutation_shuffle_choice(seed):
    tk, jk = _keys(seed)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _same(tr.permutation(tk, 10), jax.random.permutation(jk, 10))
    _same(tr.permutation(tk, 1), jax.random.permutation(jk, 1))
    _same(tr.permutation(tk, x), jax.random.permutation(jk, x))
    _same(tr.permutation(tk, x, 1), jax.random.permutation(jk, x, 1))
    _same(tr.permutation(tk, x, -1, True), jax.random.permutation(jk, x, -1, True))
    _same(tr.permutation(tk, 3000), jax.random.permutation(jk, 3000))  # two sort rounds
    _same(tr.shuffle(tk, x, 1), jax.random.permutation(jk, x, 1, independent=True))
    _same(tr.choice(tk, 10, (5,)), jax.random.choice(jk, 10, (5,)))
    _same(tr.choice(tk, 10), jax.random.choice(jk, 10))
    _same(tr.choice(tk, 10, (2, 3), replace=False), jax.random.choice(jk, 10, (2, 3), replace=False))
    _same(tr.choice(tk, x, (2,), axis=1), jax.random.choice(jk, x, (2,), axis=1))
    _same(tr.choice(tk, x, (2,), replace=False), jax.random.choice(jk, x, (2,), replace=False))
    p = np.float32([0.1, 0.2, 0.3, 0.4])
    _same(tr.choice(tk, 4, (6,), p=p), jax.random.choice(jk, 4, (6,), p=p))
    _same(tr.choice(tk, x, (3,), p=p, axis=1, replace=False), jax.random.choice(jk, x, (3,), p=p, axis=1, replace=False))
    _same(tr.choice(tk, 4, (0,)), jax.random.choice(jk, 4, (0,)))


@pytest.mark.parametrize("seed", SEEDS2)
def test_categorical(seed):
    tk, jk = _keys(seed)
    lg = np.log(np.float32([[.1, .2, .7], [.5, .25, .25]]))
    _same(tr.categorical(tk, lg), jax.random.categorical(jk, lg))
    _same(tr.categorical(tk, lg, axis=0), jax.random.categorical(jk, lg, axis=0))
    _same(tr.categorical(tk, lg, axis=0, shape=(5, 3)), jax.random.categorical(jk, lg, axis=0, shape=(5, 3)))
    _same(tr.categorical(tk, lg, shape=(2, 2), replace=False), jax.random.categorical(jk, lg, shape=(2, 2), replace=False))
    _same(tr.categorical(tk, lg, mode="high"), jax.random.categorical(jk, lg, mode="high"))


# --- transformations --------------------------------------------------------------------

def test_under_jit():
    k, jk = tr.key(3), jax.random.key(3)

    def model(rand):
        def f(key):
            k1, k2, k3 = rand.split(key, 3)
            w = rand.normal(k1, (4, 3), "bfloat16")
            drop = rand.bernoulli(k2, 0.9, (4, 3))
            return w, drop, rand.randint(k3, (5,), 0, 9), rand.permutation(rand.fold_in(k3, 2), 6)
        return f

    for a, b in zip(toolkit.jit(model(tr))(k), jax.jit(model(jax.random))(jk)):
        _same(a, b)
    for a, b in zip(toolkit.jit(model(tr))(tr.PRNGKey(3)), jax.jit(model(jax.random))(jax.random.PRNGKey(3))):
        _same(a, b)


def test_under_vmap():
    k, jk = tr.key(11), jax.random.key(11)
    ks, jks = tr.split(k, 4), jax.random.split(jk, 4)
    _same(toolkit.vmap(lambda key: tr.uniform(key, (3,)))(ks), jax.vmap(lambda key: jax.random.uniform(key, (3,)))(jks))
    _same(toolkit.vmap(lambda key: tr.normal(key, (2, 2), "float16"))(tr.key_data(ks)),
          jax.vmap(lambda key: jax.random.normal(key, (2, 2), "float16"))(jax.random.key_data(jks)))
    _same(toolkit.vmap(lambda key: tr.randint(key, (5,), 0, 10))(ks),
          jax.vmap(lambda key: jax.random.randint(key, (5,), 0, 10))(jks))
    _same(toolkit.vmap(lambda key: tr.permutation(key, 6))(ks), jax.vmap(lambda key: jax.random.permutation(key, 6))(jks))
    _same(toolkit.vmap(lambda key: tr.key_data(tr.split(key, 3)))(ks),
          jax.vmap(lambda key: jax.random.key_data(jax.random.split(key, 3)))(jks))
    data = np.arange(4, dtype=np.int32)
    _same(toolkit.vmap(lambda d: tr.key_data(tr.fold_in(k, d)))(data),
          jax.vmap(lambda d: jax.random.key_data(jax.random.fold_in(jk, d)))(data))
    p = np.float32([0.1, 0.5, 0.9, 0.3])
    _same(toolkit.vmap(lambda key, q: tr.bernoulli(key, q, (3,)))(ks, p),
          jax.vmap(lambda key, q: jax.random.bernoulli(key, q, (3,)))(jks, p))
    lg = np.log(np.float32([[.1, .9], [.5, .5], [.7, .3], [.2, .8]]))
    _same(toolkit.vmap(lambda key, lgt: tr.categorical(key, lgt, shape=(3,)))(ks, lg),
          jax.vmap(lambda key, lgt: jax.random.categorical(key, lgt, shape=(3,)))(jks, lg))
    # a key array mapped along its second axis
    ks2, jks2 = tr.split(k, (2, 3)), jax.random.split(jk, (2, 3))
    _same(toolkit.vmap(lambda key: tr.normal(key[0], ()), in_axes=1)(ks2),
          jax.vmap(lambda key: jax.random.normal(key[0], ()), in_axes=1)(jks2))


def test_under_grad():
    k, jk = tr.key(3), jax.random.key(3)
    x = np.linspace(-1, 1, 4).astype(np.float32)
    _same(toolkit.grad(lambda x, key: (x * tr.normal(key, (4,))).sum())(x, k),
          jax.grad(lambda x, key: (x * jax.random.normal(key, (4,))).sum())(x, jk))

    def dropout(rand):
        def loss(w, key):
            mask = rand.bernoulli(key, 0.5, w.shape)
            return jnp.sum(jnp.where(mask, w, 0) ** 2) if rand is jax.random else \
                toolkit.numpy.sum(toolkit.numpy.where(mask, w, 0) ** 2)
        return loss
    _same(toolkit.grad(dropout(tr))(x, k), jax.grad(dropout(jax.random))(x, jk))
    # through the bounds: equal up to float rounding
    lo = np.float32(0.5)
    got = toolkit.grad(lambda lo, key: (tr.uniform(key, (4,), minval=lo, maxval=3.) ** 2).sum())(lo, k)
    want = jax.grad(lambda lo, key: (jax.random.uniform(key, (4,), minval=lo, maxval=3.) ** 2).sum())(lo, jk)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    got = toolkit.grad(lambda lo, key: tr.truncated_normal(key, lo, 2., (4,)).sum())(np.float32(-1.), k)
    want = jax.grad(lambda lo, key: jax.random.truncated_normal(key, lo, 2., (4,)).sum())(np.float32(-1.), jk)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


# --- errors -----------------------------------------------------------------------------

def _raises_like(fn_t, fn_j, exc):
    with pytest.raises(exc) as jerr:
        fn_j()
    with pytest.raises(exc) as terr:
        fn_t()
    return str(terr.value), str(jerr.value)


@pytest.mark.parametrize("name", ["uniform", "normal"])
def test_error_messages(name):
    t, j = _raises_like(lambda: getattr(tr, name)(tr.key(0), dtype="int32"),
                        lambda: getattr(jax.random, name)(jax.random.key(0), dtype="int32"), ValueError)
    assert t == j
    t, j = _raises_like(lambda: getattr(tr, name)(tr.split(tr.PRNGKey(0), 4)),
                        lambda: getattr(jax.random, name)(jax.random.split(jax.random.PRNGKey(0), 4)), ValueError)
    assert t == j
    t, j = _raises_like(lambda: getattr(tr, name)(tr.split(tr.key(0), 4)),
                        lambda: getattr(jax.random, name)(jax.random.split(jax.random.key(0), 4)), ValueError)
    assert t == j


def test_more_error_messages():
    cases = [
        (lambda m: m.bits(m.key(0), dtype="int32"), ValueError),
        (lambda m: m.PRNGKey(np.zeros(2, np.int32)), TypeError),
        (lambda m: m.fold_in(m.key(0), np.arange(2)), TypeError),
        (lambda m: m.split(m.split(m.key(0))), ValueError),
        (lambda m: m.randint(m.key(0), (2,), 0, 3, "float32"), TypeError),
        (lambda m: m.bernoulli(m.key(0), 1), TypeError),
        (lambda m: m.bernoulli(m.key(0), 0.5, mode="mid"), ValueError),
        (lambda m: m.normal(np.zeros(2, np.int32)), TypeError),
        (lambda m: m.normal(np.uint32(3)), TypeError),
        (lambda m: m.normal([0, 1]), TypeError),
        (lambda m: m.choice(m.key(0), 3, (5,), replace=False), ValueError),
        (lambda m: m.uniform(m.key(0), (2,), minval=np.zeros(3, np.float32)), (TypeError, ValueError)),
        (lambda m: m.categorical(m.key(0), np.zeros((2, 3), np.float32), shape=(4,)), ValueError),
    ]
    for fn, exc in cases:
        t, j = _raises_like(lambda: fn(tr), lambda: fn(jax.random), exc)
        if "impl=" not in j and "ncompatible" not in j:
            assert t == j
    t, j = _raises_like(lambda: tr.normal(np.zeros(3, np.uint32)), lambda: jax.random.normal(np.zeros(3, np.uint32)),
                        TypeError)
    assert t.split(" for impl=")[0] == j.split(" for impl=")[0]


def _key_data_equal(ours, theirs):
    assert ours.shape == theirs.shape and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(np.asarray(tr.key_data(ours)), np.asarray(jax.random.key_data(theirs)))


def test_key_array_structural_methods_as_jax():
    # jax key arrays have the shape methods of arrays, placement and an `at`; toolkit's had reshape and indexing.
    ours = tr.split(tr.key(0), 6).reshape(2, 3)
    theirs = jax.random.split(jax.random.key(0), 6).reshape(2, 3)
    cases = [lambda k: k.T, lambda k: k.transpose(), lambda k: k.transpose(1, 0), lambda k: k.transpose((1, 0)),
             lambda k: k.swapaxes(0, -1), lambda k: k.ravel(), lambda k: k.flatten(), lambda k: k[None].squeeze(),
             lambda k: k[:, :1].squeeze(1), lambda k: k.take(np.array([0, 2]), axis=1),
             lambda k: k.take(np.array([1, 4])), lambda k: k.copy(), lambda k: k.at[0].set(k[1]),
             lambda k: k.at[1, 2].get(), lambda k: k.block_until_ready()]
    for case in cases:
        _key_data_equal(case(ours), case(theirs))
    for name in ("committed", "itemsize", "nbytes", "is_fully_replicated", "is_fully_addressable"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.sharding == toolkit.sharding.SingleDeviceSharding(toolkit.devices()[0]) and ours.device == \
        toolkit.devices()[0] and ours.devices() == {toolkit.devices()[0]} and ours.block_until_ready() is ours
    _key_data_equal(toolkit.jit(lambda k: k.T.ravel()[::2])(ours), jax.jit(lambda k: k.T.ravel()[::2])(theirs))
    copy = ours.copy()
    copy.delete()
    assert copy.is_deleted() and not ours.is_deleted()
    with pytest.raises(TypeError, match=r"expected keys of dtype key<fry>"):
        ours.at[0].set(tr.key_data(ours)[1])
    with pytest.raises(ValueError, match="out of bounds"):
        ours.swapaxes(0, 2)
    with pytest.raises(ValueError, match="not a permutation"):
        ours.transpose(0, 0)


def test_key_array_sharding_leaves_out_the_key_data_axes():
    mesh = toolkit.sharding.Mesh(np.array(toolkit.devices()[:2]), ("x",))
    keys = toolkit.device_put(tr.split(tr.key(1), 4), toolkit.sharding.NamedSharding(mesh, toolkit.sharding.P("x")))
    assert keys.sharding.spec == toolkit.sharding.P("x") and keys.committed
    assert tr.key_data(keys).sharding.spec == toolkit.sharding.P("x")  # as JAX's key_data: no trailing None
    data = toolkit.device_put(tr.key_data(keys), toolkit.sharding.NamedSharding(mesh, toolkit.sharding.P("x", None)))
    assert tr.wrap_key_data(data).sharding.spec == toolkit.sharding.P("x")  # the key data's axis left out
    pinned = toolkit.device_put(tr.key_data(keys), toolkit.sharding.NamedSharding(
        mesh, toolkit.sharding.P("x", None), memory_kind="pinned_host"))
    assert tr.wrap_key_data(pinned).sharding.memory_kind == "pinned_host"  # kept with the spec shortened
