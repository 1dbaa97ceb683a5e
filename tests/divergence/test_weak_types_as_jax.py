"""What scripts/divergence_sweep.py found past ``gcd`` (where it used to hang on JAX's gcd loop): weak types and
Python-int conversions of the binary functions that build their own constants or promote in two steps, each
against JAX in this process."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

BOOLS = np.array([True, False, True, False, True])
INTS = np.array([0, -1, 1, 5, -7], np.int32)
UINTS = np.array([0, 1, 2**32 - 1, 5, 7], np.uint32)
UINT8S = np.array([0, 1, 255, 5, 254], np.uint8)
FLOATS = np.array([0.0, -0.0, 1.5, np.inf, np.nan], np.float32)
PAIRS = [(BOOLS, 3), (3, BOOLS), (3, 4), (0, -2), (INTS, 2.5), (2.5, INTS), (UINTS, -2), (-2, UINTS), (UINT8S, -2),
         (FLOATS, 0.5), (True, 3), (2.5, 2.5)]


def _same(ours, theirs):
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    assert bool(ours.weak_type) == bool(theirs.aval.weak_type), (ours.weak_type, theirs.aval.weak_type)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("name", ["gcd", "lcm", "heaviside", "isclose", "polyval", "intersect1d", "setxor1d",
                                  "setdiff1d", "union1d"])
@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: "-".join(type(v).__name__ if not isinstance(v, np.ndarray)
                                                                 else str(v.dtype) for v in pair))
def test_binary_function_weak_type_and_values_as_jax(name, pair):
    """JAX's rules: lax._const is weak only for a weak scalar (gcd of a bool array and 3 is strong, heaviside of
    0.5 and an array weak); isclose is a strong bool and converts uint32 with -2 to uint32 first; polyval's
    accumulator is strong; the set functions keep their promoted input's weak type and wrap -2 into uint8."""
    try:
        theirs = getattr(jnp, name)(*pair)
    except Exception as error:  # noqa: BLE001 - JAX's error is the expectation
        with pytest.raises(type(error) if isinstance(error, (TypeError, ValueError, IndexError)) else Exception):
            getattr(tnp, name)(*pair)
        return
    _same(getattr(tnp, name)(*pair), theirs)
