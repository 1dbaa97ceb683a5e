"""``toolkit.export.is_symbolic_dim`` against ``jax.export.is_symbolic_dim``."""

import numpy as np
import pytest

from toolkit import export as texport

jax = pytest.importorskip("jax")


def _cases(export_module):
    a, b = export_module.symbolic_shape("a, b")
    return [a, b, a + 1, 2 * b, a * b, 3, np.int32(3), 0, None, "a", 2.0]


def test_is_symbolic_dim_answers_as_jax():
    ours = [texport.is_symbolic_dim(d) for d in _cases(texport)]
    theirs = [jax.export.is_symbolic_dim(d) for d in _cases(jax.export)]
    assert ours == theirs == [True] * 5 + [False] * 6


def test_a_constant_folded_dimension_is_not_symbolic():
    (a,) = texport.symbolic_shape("a")
    assert not texport.is_symbolic_dim(a - a)  # folds to the int 0, as in JAX
    (ja,) = jax.export.symbolic_shape("a")
    assert not jax.export.is_symbolic_dim(ja - ja)
