"""Data and checks of the toolkit.numpy tests compared with ``jax.numpy`` 0.10.2 (the ``jnp`` fixture of
``conftest.py``; those tests are skipped without jax): values, dtypes and weak types."""

import ml_dtypes
import numpy as np
import pytest

import toolkit.numpy as tnp

RNG = np.random.default_rng(0)
F = (RNG.standard_normal((4, 5)) * 3).astype(np.float32)
F[0, 1] = 0.0
F[1, 2] = -0.0
XI = RNG.integers(-6, 7, (4, 5)).astype(np.int32)
U = RNG.integers(0, 9, (4, 5)).astype(np.uint8)
H = F.astype(np.float16)
BF = F.astype(ml_dtypes.bfloat16)
NANS = F.copy()
NANS[0, :] = np.nan
NANS[2, 3] = np.nan
NANS[3, 0] = np.inf
BOOL = F > 0

# the order statistics' operands
S = RNG.standard_normal((5, 6, 3)).astype(np.float32)
S_NAN = S.copy()
S_NAN[0, 0, :] = np.nan
S_NAN[1, 2, 1] = np.nan

# out-of-bounds and duplicate indices (indexing, .at, take)
OOB_X = np.arange(20, dtype=np.float32).reshape(5, 4)
OOB_IDX = np.array([0, 7, -1, -9, 2, 2], np.int32)


def assert_like_jax(ours, theirs, tol=None, weak=True):
    """``ours`` has the shape, dtype, weak type (unless not ``weak``) and values (within ``tol``) of
    ``theirs``, the ``jax.numpy`` result; tuples and lists element by element."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_like_jax(o, t, tol, weak)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
    if weak:
        assert bool(getattr(ours, "weak_type", False)) == bool(getattr(theirs, "weak_type", False))
    if o.dtype == ml_dtypes.bfloat16:
        o, t = o.astype(np.float32), t.astype(np.float32)
    if tol is None:
        np.testing.assert_array_equal(o, t)
    else:
        cast = np.complex128 if np.iscomplexobj(o) else np.float64
        np.testing.assert_allclose(o.astype(cast), t.astype(cast), rtol=tol, atol=tol)


def jax_tol(*xs):
    """The tolerance of results computed from ``xs``: looser for 16-bit floats."""
    dts = [np.asarray(x).dtype for x in xs if hasattr(x, "dtype")]
    return 2e-2 if any(d in (np.float16, ml_dtypes.bfloat16) for d in dts) else 2e-6


def compare_with_jax(name, *args, tol=None, **kw):
    """``tnp.<name>(*args, **kw)`` against ``jnp.<name>(*args, **kw)`` (skipped without jax)."""
    jnp = pytest.importorskip("jax.numpy")
    assert_like_jax(getattr(tnp, name)(*args, **kw), getattr(jnp, name)(*args, **kw), tol)


def same_values(ours, theirs):
    """The values (and shape) of ``ours`` are those of ``theirs``."""
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
