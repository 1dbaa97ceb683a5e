"""Operand checks of ``toolkit.lax`` functions against ``jax.lax`` 0.10.2, found by a sweep of lax's functions over
every dtype and host scalars: JAX's exception types and messages, and host operands made arrays of the canonical
dtype even where the operation has nothing to do."""

import numpy as np
import pytest

import toolkit

from _oracle import raises_like

jax = pytest.importorskip("jax")


@pytest.mark.parametrize("call", [
    lambda lax: lax.abs(np.array([1, 200], np.uint8)),  # (toolkit's failed in StableHLO's verifier)
    lambda lax: lax.bitcast_convert_type(np.ones((1, 3), np.uint8), np.int32),
    lambda lax: lax.bitcast_convert_type(np.ones((1, 3), np.bool_), np.int32),
    lambda lax: lax.bitcast_convert_type(np.ones((1, 4), np.bool_), np.int32),
    lambda lax: lax.bitcast_convert_type(np.ones(2, np.complex64), np.float32),
    lambda lax: lax.rev(np.float32(2.5), (0,)),
    lambda lax: lax.rev(np.ones(3, np.float32), (0, 0)),
    lambda lax: lax.rev(np.ones(3, np.float32), (-1,)),
    lambda lax: lax.top_k(np.ones(3, np.complex64), 1),
    lambda lax: lax.top_k(np.float32(1.0), 1),
    lambda lax: lax.top_k(np.ones(3, np.float32), -1),
])
def test_errors_are_jaxs(call):
    raises_like(lambda: call(toolkit.lax), lambda: call(jax.lax))


@pytest.mark.parametrize("value", [np.arange(3.0), 2.5, 2, np.float64(1.5)])
def test_squeezing_nothing_makes_a_canonical_array(value):
    ours, theirs = toolkit.lax.squeeze(value, ()), jax.lax.squeeze(value, ())
    assert isinstance(ours, toolkit.Array)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape  # float64 host values are float32 (x64 off)
    array = toolkit.numpy.asarray(np.ones(2, np.float32))
    assert toolkit.lax.squeeze(array, ()) is array
