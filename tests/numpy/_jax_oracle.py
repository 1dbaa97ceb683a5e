"""One call, two libraries: ``check(fn, *args)`` runs ``fn(toolkit.numpy, *args)`` and ``fn(jax.numpy, *args)``
and requires the same result (values, shape, dtype, weak type; tuples element by element) or, when JAX raises,
an error of the same built-in class from toolkit. ``jit=True`` also runs toolkit's side under ``toolkit.jit``."""

import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._vs_jax import assert_like_jax


def builtin_class(error: BaseException) -> type:
    """The first built-in exception class of ``error``'s type (JAX's and toolkit's own error classes differ,
    their built-in bases are the contract: ``ConcretizationTypeError`` is a ``TypeError`` in both)."""
    for cls in type(error).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def _plain(x):
    # named tuples (unique_all) compare as tuples; lists of arrays as lists
    return tuple(x) if isinstance(x, tuple) else x


def check(fn, *args, tol=None, weak=True, jit=False, only_jit=False):
    """``fn(tnp, *args)`` is like ``fn(jnp, *args)`` (or raises the same built-in error class); ``only_jit``
    compares ``toolkit.jit`` with ``jax.jit`` of them alone (faster for functions of many operations)."""
    jnp = pytest.importorskip("jax.numpy")
    if only_jit:
        import jax
        theirs = jax.jit(lambda *a: fn(jnp, *a))(*args)
        ours = toolkit.jit(lambda *a: fn(tnp, *a))(*args)
        assert_like_jax(_plain(ours), _plain(theirs), tol, weak)
        return ours
    try:
        theirs = fn(jnp, *args)
    except Exception as e:  # noqa: BLE001 - the oracle's error class is the expectation
        with pytest.raises(builtin_class(e)):
            fn(tnp, *args)
        return None
    ours = fn(tnp, *args)
    assert_like_jax(_plain(ours), _plain(theirs), tol, weak)
    if jit:
        jitted = toolkit.jit(lambda *a: fn(tnp, *a))(*args)
        assert_like_jax(_plain(jitted), _plain(theirs), tol, weak)
    return ours
