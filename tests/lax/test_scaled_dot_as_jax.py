"""lax.scaled_dot (toolkit/lax/scaled_dot.py) against jax.lax.scaled_dot 0.10.2 in the same run: the composite and
its decomposition, values eagerly, under jit and vmap, the dummy scales, and JAX's errors."""

import re

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same_typed, raises_like

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
LHS = RNG.normal(size=(4, 8)).astype(np.float32)
RHS = RNG.normal(size=(8, 3)).astype(np.float32)
LHS_SCALE = RNG.uniform(0.5, 2, size=(4, 2)).astype(np.float32)
RHS_SCALE = RNG.uniform(0.5, 2, size=(2, 3)).astype(np.float32)
BATCHED = (RNG.normal(size=(2, 4, 6)).astype(np.float32), RNG.normal(size=(2, 6, 5)).astype(np.float32),
           RNG.uniform(0.5, 2, size=(2, 4, 3)).astype(np.float32), RNG.uniform(0.5, 2, size=(2, 3, 5)).astype(np.float32))


def _cases(L):
    def f(lhs, rhs, lhs_scale, rhs_scale, blhs, brhs, blhs_scale, brhs_scale):
        return (L.scaled_dot(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale),
                L.scaled_dot(lhs, rhs, preferred_element_type=np.float32),
                L.scaled_dot(lhs, rhs, rhs_scale=rhs_scale, preferred_element_type=np.float32),
                L.scaled_dot(blhs, brhs, lhs_scale=blhs_scale, rhs_scale=brhs_scale),
                # contracting lhs dim 0 with rhs dim 1, explicitly
                L.scaled_dot(lhs.T, rhs.T, lhs_scale=lhs_scale.T, rhs_scale=rhs_scale.T,
                             dimension_numbers=(((0,), (1,)), ((), ())), preferred_element_type=np.float32))
    return f


ARGS = (LHS, RHS, LHS_SCALE, RHS_SCALE, *BATCHED)


def _composite_lines(text):
    # Two of toolkit's general lowering choices (the same meaning): precision = [DEFAULT, DEFAULT] only when asked
    # (JAX writes it on every dot_general), and one constant per value (JAX writes %cst_0, %cst_1, ... again).
    lines = [line.strip().replace(", precision = [DEFAULT, DEFAULT]", "") for line in text.splitlines()
             if ("stablehlo." in line or "func.func private" in line) and "stablehlo.constant" not in line]
    return [re.sub(r"%cst_\d+", "%cst", line) for line in lines]


def test_the_composite_and_its_decomposition_are_jaxs():
    ours = toolkit.jit(_cases(lax)).lower(*ARGS).as_text()
    theirs = jax.jit(_cases(jax.lax)).lower(*ARGS).as_text()
    assert "stablehlo.composite \"xla.scaled_dot\"" in ours
    assert _composite_lines(ours) == _composite_lines(theirs)


def test_values_under_jit_eagerly_and_vmapped():
    theirs = jax.jit(_cases(jax.lax))(*ARGS)
    for ours in (toolkit.jit(_cases(lax))(*ARGS), _cases(lax)(*ARGS)):
        for a, b in zip(ours, theirs):
            assert_same_typed(a, b)
    ours = toolkit.vmap(lambda a, b: lax.scaled_dot(a, b, preferred_element_type=np.float32))(*BATCHED[:2])
    theirs = jax.vmap(lambda a, b: jax.lax.scaled_dot(a, b, preferred_element_type=np.float32))(*BATCHED[:2])
    assert_same_typed(ours, theirs)


def test_not_differentiable_like_jax():
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        toolkit.grad(lambda x: lax.scaled_dot(x, RHS, preferred_element_type=np.float32).sum())(LHS)
    with pytest.raises(Exception):  # JAX: scaled_dot_p has no JVP rule
        jax.grad(lambda x: jax.lax.scaled_dot(x, RHS, preferred_element_type=np.float32).sum())(LHS)


ERRORS = {
    "rank 1": lambda L: L.scaled_dot(np.ones(4, np.float32), np.ones(4, np.float32)),
    "ranks differ": lambda L: L.scaled_dot(LHS, RHS, lhs_scale=np.ones((4, 2, 1), np.float32)),
    "batch counts": lambda L: L.scaled_dot(LHS, RHS, dimension_numbers=(((1,), (0,)), ((0,), ()))),
    "contracting counts": lambda L: L.scaled_dot(LHS, RHS, dimension_numbers=(((1,), ()), ((), ()))),
    "batch sizes": lambda L: L.scaled_dot(BATCHED[0], BATCHED[1][:1]),
    "contracting sizes": lambda L: L.scaled_dot(LHS, RHS[:4]),
    "not divisible": lambda L: L.scaled_dot(LHS, RHS, lhs_scale=np.ones((4, 3), np.float32)),
    "ratio below 2": lambda L: L.scaled_dot(LHS, RHS, rhs_scale=np.ones((8, 3), np.float32)),
    "scale size": lambda L: L.scaled_dot(LHS, RHS, lhs_scale=np.ones((2, 2), np.float32)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_jaxs(case):
    raises_like(lambda: ERRORS[case](lax), lambda: ERRORS[case](jax.lax))
