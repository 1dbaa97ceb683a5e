"""``toolkit.numpy.unique(..., axis=...)`` against ``jax.numpy.unique`` in the same run: the unique slices sorted
lexicographically, first indices, the inverse (1-D along the axis, JAX 0.10's shape), counts; ``equal_nan`` for
real and complex NaNs, ``-0.0`` and ``0.0`` as one value; ``size``/``fill_value`` (padding, truncation) eagerly
and under ``jit``; arrays with no slices or empty slices (JAX's one empty slice); float64 under x64; the gradient
of the values; and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")

ALL = dict(return_index=True, return_inverse=True, return_counts=True)

ROWS = np.array([[1, 2], [2, 3], [1, 2], [1, -1], [2, 3]], np.float32)
# NaN rows (one value with equal_nan, each its own without), -0.0 beside 0.0.
NAN_ROWS = np.array([[np.nan, 1], [0, 1], [np.nan, 1], [-0.0, 1], [1, np.nan]], np.float32)
# A NaN in either part of a complex value counts as one NaN (JAX's workaround before its sort).
COMPLEX_ROWS = np.array([[1 + 1j, np.nan], [1 + 1j, complex(0, np.nan)], [1 - 1j, 0], [1 + 1j, np.nan]],
                        np.complex64)
CUBE = np.random.default_rng(0).integers(0, 2, (3, 5, 4)).astype(np.int32)


def _same(ours, theirs, what):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs), what
    for o, t in zip(ours, theirs):
        assert type(o).__module__.startswith("toolkit"), (what, type(o))
        assert (o.shape, o.dtype, o.aval.weak_type) == (t.shape, t.dtype, t.aval.weak_type), (
            what, o.shape, o.dtype, t.shape, t.dtype)
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t), err_msg=str(what))


CASES = [
    (ROWS, dict(axis=0)),
    (ROWS, dict(axis=1)),
    (ROWS, dict(axis=-2, return_index=True)),
    (ROWS, dict(axis=0, return_inverse=True)),
    (ROWS, dict(axis=0, return_counts=True)),
    (NAN_ROWS, dict(axis=0)),
    (NAN_ROWS, dict(axis=0, equal_nan=False)),
    (COMPLEX_ROWS, dict(axis=0)),
    (COMPLEX_ROWS, dict(axis=0, equal_nan=False)),
    (CUBE, dict(axis=0)),
    (CUBE, dict(axis=1)),
    (CUBE, dict(axis=2, sorted=False)),  # sorted is unused, as in JAX
    (np.array([True, False, True]), dict(axis=0)),
    # No slices; empty slices (JAX keeps one empty slice, its index 0 and the count of all).
    (np.zeros((0, 3), np.float32), dict(axis=0)),
    (np.zeros((3, 0), np.float32), dict(axis=0)),
    (np.zeros((0, 0), np.float32), dict(axis=0)),
    (np.zeros((2, 3, 0), np.float32), dict(axis=1)),
]


@pytest.mark.parametrize("arr, kwargs", CASES, ids=lambda v: str(v) if isinstance(v, dict) else None)
def test_unique_along_axis_eagerly_as_jax(arr, kwargs):
    options = {**ALL, **kwargs} if set(kwargs) <= {"axis", "equal_nan", "sorted"} else kwargs
    _same(tnp.unique(arr, **options), jax.numpy.unique(arr, **options), (arr.shape, options))


# With size: truncated (2), exact, padded with the smallest slice (no fill_value) or with fill_value.
SIZED = [
    (ROWS, dict(axis=0, size=2)),
    (ROWS, dict(axis=0, size=5)),
    (ROWS, dict(axis=1, size=3, fill_value=9)),
    (NAN_ROWS, dict(axis=0, size=5, fill_value=-1.5)),
    (COMPLEX_ROWS, dict(axis=0, size=4, fill_value=2j)),
    (CUBE, dict(axis=1, size=4, fill_value=7.9)),  # fill_value converted as JAX's astype: 7
    (np.zeros((0, 3), np.float32), dict(axis=0, size=2, fill_value=7)),
    (np.zeros((3, 0), np.float32), dict(axis=0, size=2)),  # JAX: still one empty slice, not two
    (np.zeros((3, 0), np.float32), dict(axis=0, size=2, fill_value=7)),
    (np.zeros((0, 0), np.float32), dict(axis=0, size=2, fill_value=7)),
]


def test_unique_along_axis_with_size_under_jit_as_jax():
    # One jit per case (the arrays traced), compared with JAX's jit of the same call.
    for arr, kwargs in SIZED:
        options = {**ALL, **kwargs}
        ours = toolkit.jit(lambda a, o=options: tnp.unique(a, **o))(arr)
        theirs = jax.jit(lambda a, o=options: jax.numpy.unique(a, **o))(arr)
        _same(ours, theirs, (arr.shape, options))
    # Eagerly, the same at one size.
    _same(tnp.unique(ROWS, **ALL, axis=0, size=4, fill_value=0),
          jax.numpy.unique(ROWS, **ALL, axis=0, size=4, fill_value=0), "eager size=4")


@pytest.mark.x64
def test_unique_along_axis_float64_as_jax():
    arr = np.array([[0.5, 1e-300], [0.5, 0.0], [0.5, 1e-300], [-2.0, 3.0]], np.float64)
    _same(tnp.unique(arr, **ALL, axis=0), jax.numpy.unique(arr, **ALL, axis=0), "float64")
    _same(toolkit.jit(lambda a: tnp.unique(a, **ALL, axis=1, size=3, fill_value=-1))(arr),
          jax.jit(lambda a: jax.numpy.unique(a, **ALL, axis=1, size=3, fill_value=-1))(arr), "float64 jit")


def test_unique_flattened_complex_nan_as_jax():
    # Without axis too: a NaN in either part is nan+0j before the sort (JAX's workaround), eagerly and sized.
    values = np.array([1 + 1j, complex(0, np.nan), complex(np.nan, 0), 1 + 1j, complex(np.nan, np.nan)], np.complex64)
    for options in (dict(equal_nan=True), dict(equal_nan=False), dict(size=4, fill_value=0)):
        _same(tnp.unique(values, **ALL, **options), jax.numpy.unique(values, **ALL, **options), options)


def test_unique_along_axis_gradient_as_jax():
    # The values are a gather of the sorted slices and the padding a where: JAX differentiates them.
    weights = np.arange(12, dtype=np.float32).reshape(4, 3)

    def loss(m, x):
        return (m.unique(x, axis=0, size=4, fill_value=0.0) * weights).sum()

    x = ROWS[:, :1].repeat(3, axis=1) * np.float32(1.5)
    _same(toolkit.jit(toolkit.grad(lambda x: loss(tnp, x)))(x), jax.jit(jax.grad(lambda x: loss(jax.numpy, x)))(x),
          "grad")


def _raises_as_jax(ours, theirs, match):
    """``ours()`` raises JAX's exception type (by name: jax.errors' classes are toolkit's own) naming ``match``."""
    with pytest.raises(Exception, match=match) as want:
        theirs()
    with pytest.raises(Exception, match=match) as got:
        ours()
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    for builtin in (TypeError, ValueError):
        assert isinstance(got.value, builtin) == isinstance(want.value, builtin), (got.value, want.value)


@pytest.mark.parametrize("kwargs, match", [
    (dict(axis=2), "axis 2 is out of bounds for array of dimension 2"),
    (dict(axis=-3), "axis -3 is out of bounds for array of dimension 2"),
    (dict(axis=1.0), "cannot be interpreted as an integer"),
    (dict(axis=(0, 1)), "cannot be interpreted as an integer"),
    (dict(axis=0, size=2.0), "cannot be interpreted as an integer"),
])
def test_unique_along_axis_errors_as_jax(kwargs, match):
    _raises_as_jax(lambda: tnp.unique(ROWS, **kwargs), lambda: jax.numpy.unique(ROWS, **kwargs), match)


def test_unique_along_axis_data_dependent_errors_as_jax():
    empty = np.zeros((0, 3), np.float32)
    _raises_as_jax(lambda: tnp.unique(empty, axis=0, size=2), lambda: jax.numpy.unique(empty, axis=0, size=2),
                   "for zero-sized input with nonzero size argument, fill_value must be specified")
    _raises_as_jax(lambda: tnp.unique(np.float32(1), axis=0), lambda: jax.numpy.unique(np.float32(1), axis=0),
                   "axis 0 is out of bounds for array of dimension 0")
    _raises_as_jax(lambda: tnp.unique([[1, 2]], axis=0), lambda: jax.numpy.unique([[1, 2]], axis=0), "unique")
    # Without size the count depends on the data: refused under jit, naming the size argument.
    _raises_as_jax(lambda: toolkit.jit(lambda a: tnp.unique(a, axis=0))(ROWS),
                   lambda: jax.jit(lambda a: jax.numpy.unique(a, axis=0))(ROWS),
                   "first argument of jnp.unique\\(\\). To make jnp.unique\\(\\) compatible with JIT")
    _raises_as_jax(lambda: toolkit.jit(lambda a, n: tnp.unique(a, axis=0, size=n))(ROWS, 2),
                   lambda: jax.jit(lambda a, n: jax.numpy.unique(a, axis=0, size=n))(ROWS, 2),
                   "size argument of jnp.unique")
