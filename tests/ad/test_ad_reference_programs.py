"""Gradients of the reference programs (MLP, transformer block, convnet, scan RNN) match jax.grad to ~1e-5
relative in float32, eagerly and under toolkit.jit; the Newton while_loop matches in forward mode."""

import numpy as np
import pytest

import toolkit
from toolkit.ad import grad, jvp
from toolkit.examples.reference_programs import PROGRAMS

jax = pytest.importorskip("jax")


def _loss(lib, program):
    f = program.build(lib)
    return lambda *args: lib.numpy.sum(f(*args) ** 2)


def _max_relative_error(got, want):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    return max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
               / float(np.max(np.abs(np.asarray(b, np.float64)))) for a, b in zip(got_leaves, want_leaves))


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", ["mlp", "transformer", "convnet", "rnn"])
def test_gradients_match_jax(name, mode):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(0))
    argnums = tuple(range(len(args)))
    df = grad(_loss(toolkit, program), argnums)
    if mode == "jit":
        df = toolkit.jit(df)
    want = jax.grad(_loss(jax, program), argnums)(*args)
    assert _max_relative_error(df(*args), want) < 1e-5


def test_newton_forward_mode_matches_jax():
    program = PROGRAMS["newton"]
    (a,) = program.make_inputs(np.random.default_rng(0))
    t = np.ones_like(a)
    _, got = toolkit.jit(lambda a, t: jvp(program.build(toolkit), (a,), (t,)))(a, t)
    _, want = jax.jvp(program.build(jax), (a,), (t,))
    assert _max_relative_error(got, want) < 1e-5
