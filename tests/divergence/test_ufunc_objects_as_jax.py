"""JAX's ``jnp.ufunc`` objects (toolkit/numpy/universal_functions.py): the fourteen ufuncs JAX exports and
``frompyfunc``, each method side by side with JAX 0.10.2 in the same run (values, dtypes, weak types), eagerly
and under jit, and their errors."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
          "logical_and", "logical_or", "logical_xor", "logaddexp", "logaddexp2"]
RNG = np.random.default_rng(0)
VALUES = {
    "int32": RNG.integers(-5, 9, (3, 4)).astype(np.int32),
    "uint8": RNG.integers(0, 200, (3, 4)).astype(np.uint8),
    "float32": RNG.normal(size=(3, 4)).astype(np.float32),
    "float16": RNG.normal(size=(3, 4)).astype(np.float16),
    "bool": RNG.integers(0, 2, (3, 4)).astype(bool),
    "complex64": (RNG.normal(size=(3, 4)) + 1j * RNG.integers(-1, 2, (3, 4))).astype(np.complex64),
}
MASK = (np.arange(12).reshape(3, 4) % 3) != 0


def _dtypes(name):
    if name.startswith("bitwise"):
        return ["int32", "uint8", "bool"]
    if name.startswith("logical"):
        return ["bool", "float32", "complex64"]
    if name.startswith("logaddexp"):
        return ["float32", "float16"]
    return ["int32", "float32", "bool"] if name != "subtract" else ["int32", "float32"]


def _same(ours, theirs):
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, ours.dtype, theirs.shape,
                                                                       theirs.dtype)
    assert bool(ours.aval.weak_type) == bool(theirs.aval.weak_type)
    tol = 1e-2 if ours.dtype == np.float16 else 1e-5
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=tol, atol=tol)


def _outcome(case, module):
    try:
        return case(module)
    except Exception as e:  # noqa: BLE001 - compared with JAX's
        return e


def _both(case, jit=False):
    ours = _outcome((lambda m: toolkit.jit(lambda: case(m))()) if jit else case, tnp)
    theirs = _outcome((lambda m: jax.jit(lambda: case(m))()) if jit else case, jnp)
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        return
    _same(ours, theirs)


def _methods(name, dtype):
    x = VALUES[dtype]
    identity = getattr(jnp, name).identity
    initial = None if identity is not None else x.flat[0]
    cases = {
        "call-scalar": lambda m: getattr(m, name)(m.asarray(x), 2 if dtype != "bool" else True),
        "reduce": lambda m: getattr(m, name).reduce(m.asarray(x)),
        "reduce-axis1-keepdims": lambda m: getattr(m, name).reduce(m.asarray(x), axis=1, keepdims=True),
        "reduce-all": lambda m: getattr(m, name).reduce(m.asarray(x), axis=None),
        "reduce-where": lambda m: getattr(m, name).reduce(m.asarray(x), axis=1, where=MASK, initial=initial),
        "reduce-empty": lambda m: getattr(m, name).reduce(m.asarray(x[:0])),
        "accumulate": lambda m: getattr(m, name).accumulate(m.asarray(x), axis=1),
        "at": lambda m: getattr(m, name).at(m.asarray(x[0]), np.array([0, 2, 0, 3]), x[1], inplace=False),
        "at-2d": lambda m: getattr(m, name).at(m.asarray(x), (np.array([1, 1]), np.array([0, 2])), x[2, 0],
                                               inplace=False),
        "reduceat": lambda m: getattr(m, name).reduceat(m.asarray(x), m.asarray([0, 2, 1]), axis=1),
        "outer": lambda m: getattr(m, name).outer(m.asarray(x[0]), m.asarray(x[:2, :3])),
    }
    return cases


CASES = [(name, dtype, method) for name in BINARY for dtype in _dtypes(name) for method in _methods(name, dtype)]


@pytest.mark.parametrize("name,dtype,method", CASES, ids=["-".join(c) for c in CASES])
def test_binary_ufunc_methods_as_jax(name, dtype, method):
    _both(_methods(name, dtype)[method])


@pytest.mark.parametrize("name", BINARY)
def test_binary_ufunc_methods_under_jit_as_jax(name):
    dtype = _dtypes(name)[0]
    for method in ("reduce-where", "accumulate", "at", "reduceat", "outer"):
        _both(_methods(name, dtype)[method], jit=True)


def test_negative_is_a_unary_ufunc():
    x = VALUES["int32"][0]
    for case in (lambda m: m.negative(m.asarray(x)),
                 lambda m: m.negative.at(m.asarray(x), np.array([0, 0, 2]), inplace=False),
                 lambda m: m.negative.reduce(m.asarray(x)), lambda m: m.negative.outer(x, x),
                 lambda m: m.negative.accumulate(m.asarray(x)), lambda m: m.negative.reduceat(x, m.asarray([0]))):
        _both(case)
    assert (tnp.negative.nin, tnp.negative.nout, tnp.negative.identity) == (1, 1, None)


def test_attributes_repr_and_identity_as_jax():
    for name in BINARY + ["negative"]:
        ours, theirs = getattr(tnp, name), getattr(jnp, name)
        assert isinstance(ours, tnp.ufunc)
        assert (ours.__name__, ours.nin, ours.nout, ours.nargs) == (theirs.__name__, theirs.nin, theirs.nout,
                                                                    theirs.nargs)
        assert ours.identity == theirs.identity or (np.isneginf(ours.identity) and np.isneginf(theirs.identity))
        assert repr(ours) == repr(theirs)
        assert ours.__doc__ == ours._func.__doc__


def test_frompyfunc_methods_as_jax():
    x = VALUES["int32"]

    def fn(m):
        return m.frompyfunc(lambda a, b: a * 2 + b, 2, 1, identity=0)

    for case in (lambda m: fn(m)(m.asarray(x), 1), lambda m: fn(m).reduce(m.asarray(x), axis=1),
                 lambda m: fn(m).accumulate(m.asarray(x)), lambda m: fn(m).outer(x[0], x[1]),
                 lambda m: fn(m).at(m.asarray(x[0]), np.array([1, 1]), 5, inplace=False),
                 lambda m: fn(m).reduceat(m.asarray(x[0]), m.asarray([0, 2]))):
        _both(case)
    # A Python scalar keeps its weak type through the loops: float16 stays float16.
    _both(lambda m: m.frompyfunc(lambda a, b: a + b, 2, 1).at(m.asarray(VALUES["float16"][0]),
                                                               np.array([0, 0]), 1.5, inplace=False))
    two = tnp.frompyfunc(lambda a: (a, -a), 1, 2)
    assert (two.nin, two.nout, two.identity) == (1, 2, None)


def test_a_ufunc_is_a_static_argument_of_jit():
    def apply(f, x):
        return f.reduce(x)
    x = np.arange(4.0, dtype=np.float32)
    jitted = toolkit.jit(apply, static_argnums=0)
    assert float(jitted(tnp.add, x)) == 6.0 and float(jitted(tnp.multiply, x)) == 0.0
    assert hash(tnp.add) == hash(tnp.add) and tnp.add == tnp.add and tnp.add != tnp.multiply
    same = tnp.ufunc(tnp.add._func, 2, 1, identity=0)
    assert same == tnp.add and hash(same) == hash(tnp.add)
    with pytest.raises(AttributeError):
        tnp.add.identity = 1


def test_slices_in_at_indices():
    # JAX documents slices here, but its jit refuses a slice argument (TypeError); toolkit takes them.
    x = np.arange(6, dtype=np.int32)
    np.testing.assert_array_equal(tnp.add.at(x, (slice(1, 3),), 10, inplace=False), [0, 11, 12, 3, 4, 5])
    np.testing.assert_array_equal(tnp.maximum.at(x, slice(None, None, 2), 3, inplace=False), [3, 1, 3, 3, 4, 5])
    with pytest.raises(TypeError):
        jnp.add.at(x, (slice(1, 3),), 10, inplace=False)


ERRORS = [
    (lambda m: m.add.at(m.arange(3), 0, 1), NotImplementedError, "inplace=False"),
    (lambda m: m.add(1, 2, where=True), NotImplementedError, "where argument of <jnp.ufunc 'add'>"),
    (lambda m: m.add(1, 2, out=m.zeros(())), NotImplementedError, "out argument of <jnp.ufunc 'add'>"),
    (lambda m: m.add.reduce(m.ones(3), out=0.0), NotImplementedError, "out argument of add.reduce()"),
    (lambda m: m.add.accumulate(m.ones(3), out=m.ones(3)), NotImplementedError, "add.accumulate()"),
    (lambda m: m.add.reduceat(m.ones(3), m.asarray([0]), out=m.ones(3)), NotImplementedError, "add.reduceat()"),
    (lambda m: m.maximum.reduce(m.ones(3), where=m.ones(3, bool)), ValueError,
     "reduction operation 'maximum' does not have an identity"),
    (lambda m: m.add.reduce(m.ones(3), where=m.ones(3)), ValueError, "where argument must have dtype=bool"),
    (lambda m: m.bitwise_and.reduce(m.ones(3)), ValueError, "integer argument required; got dtype=float32"),
    (lambda m: m.subtract.reduce(m.ones((0, 2))), ValueError, "zero-size array to reduction operation subtract"),
    (lambda m: m.maximum.reduce(m.ones((0, 2))), ValueError, "zero-size array to reduction operation max"),
    (lambda m: m.subtract.reduce(m.ones((2, 2)), axis=(0, 1)), NotImplementedError, "tuple of axes"),
    (lambda m: m.subtract.accumulate(m.ones((2, 2)), axis=None), ValueError, "does not allow multiple axes"),
    (lambda m: m.add.reduceat(m.ones(()), m.asarray([0])), ValueError, "a must have 1 or more dimension"),
    (lambda m: m.add.reduceat(m.ones(3), m.asarray([[0]])), ValueError, "indices must be one-dimensional"),
    (lambda m: m.add.reduceat(m.ones(3), [0, 1]), TypeError, "add.reduceat requires ndarray or scalar arguments"),
    (lambda m: m.add.reduce([1, 2]), TypeError, "add.reduce requires ndarray or scalar arguments"),
    (lambda m: m.add.outer([1], [2]), TypeError, "add.outer requires ndarray or scalar arguments"),
    (lambda m: m.add([1], 2), TypeError, "add requires ndarray or scalar arguments"),
    (lambda m: m.negative.reduce(m.ones(3)), ValueError, "reduce only supported for binary ufuncs"),
    (lambda m: m.frompyfunc(lambda a: (a, a), 1, 2).outer(1, 2), ValueError, "outer only supported for binary"),
    (lambda m: m.frompyfunc(lambda a, b: (a, b), 2, 2).reduce(m.ones(2)), ValueError,
     "reduce only supported for functions returning a single value"),
]


@pytest.mark.parametrize("case,error,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_as_jax(case, error, message):
    with pytest.raises(error, match=None) as ours:
        case(tnp)
    with pytest.raises(error) as theirs:
        case(jnp)
    assert message in str(ours.value) and message in str(theirs.value), (ours.value, theirs.value)
