"""Helpers for tests that use JAX as the oracle (importable from every test folder: tests/ is on sys.path)."""

import numpy as np
import pytest


def raises_like(ours, theirs):
    """``ours()`` raises what ``theirs()`` (the JAX call) raises: the same exception type and message, where
    toolkit's names its own functions (``toolkit.numpy.hypot`` for JAX's ``jnp.hypot``)."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(want.type) as got:
        ours()
    assert str(got.value) == str(want.value).replace("jnp.", "toolkit.numpy.").replace("jax.numpy.", "toolkit.numpy.")


def assert_same(ours, theirs, rtol=0.0, atol=0.0):
    """``ours`` has the shape, dtype and values of ``theirs`` (the JAX result): exact, or within ``rtol``/``atol``."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, ours.dtype, theirs.shape,
                                                                         theirs.dtype)
    if rtol or atol:
        cast = np.complex128 if np.iscomplexobj(ours) else np.float64
        np.testing.assert_allclose(ours.astype(cast), theirs.astype(cast), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(ours, theirs)


def is_weak(x):
    """Whether ``x`` (a toolkit or JAX array, or a Python scalar) is weakly typed."""
    return bool(getattr(x, "weak_type", False))


def assert_same_typed(ours, theirs, rtol=0.0, atol=0.0, what=""):
    """``ours`` (a toolkit array) has the shape, dtype, weak type and values of ``theirs`` (JAX's): exact, or within
    ``rtol``/``atol``; NaN where JAX's is NaN, infinities of its sign. ``what`` names the case in failures."""
    assert type(ours).__module__.startswith("toolkit"), (what, type(ours))
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype), (what, ours.shape, ours.dtype, theirs.shape,
                                                                      theirs.dtype)
    assert ours.aval.weak_type == theirs.aval.weak_type, (what, ours.aval.weak_type)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=str(what))


def run_both(libraries, program):
    """``program(L)`` for each namespace ``L`` of ``libraries`` (toolkit's names, then JAX's): the results, in order.

    Tests written once against a namespace (``L.jit``, ``L.s.PartitionSpec``...) compare the two this way."""
    return tuple(program(lib) for lib in libraries)


def raised(call):
    """``(exception type name, message)`` of what ``call()`` raises, or ``("no error", "")``: what a comparison of
    two libraries' errors compares."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - what is raised is the thing compared
        return type(error).__name__, str(error)
    return "no error", ""
