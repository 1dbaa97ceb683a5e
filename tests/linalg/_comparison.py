"""Comparing toolkit's linear-algebra results with JAX's: dtype, shape and values to a tolerance scaled by size."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pytest

jax = pytest.importorskip("jax")


def leaves(x: Any) -> list[Any]:
    """The arrays of a result (a named tuple of toolkit's or JAX's, a tuple, or one array)."""
    return jax.tree.leaves(tuple(x) if isinstance(x, tuple) else x)


def close(ours: Any, theirs: Any, tol: float = 2e-4) -> None:
    """Same number of arrays, same dtypes and shapes, values within ``tol`` (absolute: scaled by JAX's largest)."""
    ours, theirs = leaves(ours), leaves(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        assert o.dtype == t.dtype and o.shape == t.shape, (o.dtype, t.dtype, o.shape, t.shape)
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol * max(1.0, float(np.abs(t).max(initial=0))))


def all_close(names: Sequence[str], ours: Sequence[Any], theirs: Sequence[Any], tol: float = 2e-4) -> None:
    """Every case compared, failures named (the cases run as one compiled program per side: XLA's per-module
    cost dominates small linear-algebra programs)."""
    failures = []
    for name, o, t in zip(names, ours, theirs):
        try:
            close(o, t, tol)
        except AssertionError as err:
            failures.append(f"{name}: {err}")
    assert not failures, "\n".join(failures)
