"""What a sweep of grad, jvp and vmap over every shared jax.numpy, jax.lax, jax.scipy.special and jax.nn function
(special points, ties, both argument positions; 2026-11-30) found different from JAX, each checked against JAX."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
import toolkit.scipy.special as tss

jax = pytest.importorskip("jax")
jnp = jax.numpy
jss = jax.scipy.special

SPECIAL = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], np.float32)


def _same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name,argnum", [("entr", 0), ("logit", 0), ("spence", 0), ("poch", 0), ("poch", 1),
                                         ("expn", 0), ("expn", 1)])
def test_special_function_derivatives_as_jax(name, argnum):
    # entr and logit: JAX's custom JVPs (inf at 0 and 1, where toolkit had 0 and NaN); spence: its constant pieces
    # have a zero derivative, not NaN from the other pieces; poch: JAX's custom JVP in m, also where m == 0; expn:
    # n is a non-differentiable argument of JAX's custom_jvp, so its derivative is zero.
    args = (SPECIAL,) if name in ("entr", "logit", "spence") else (
        (np.abs(SPECIAL) + 1.0, np.abs(SPECIAL[::-1]) / 2) if name == "expn" else (SPECIAL, SPECIAL[::-1].copy()))
    ours = toolkit.grad(lambda *a: tnp.sum(getattr(tss, name)(*a)), argnum)(*args)
    theirs = jax.grad(lambda *a: jnp.sum(getattr(jss, name)(*a)), argnum)(*args)
    _same(ours, theirs)


def test_acosh_derivative_is_jax_0_10s():
    x = np.array([-1.0, 1.0, 1.5, 3.0, 0.5], np.float32)
    _same(toolkit.vmap(toolkit.grad(toolkit.lax.acosh))(x), jax.vmap(jax.grad(jax.lax.acosh))(x))
    _same(toolkit.vmap(toolkit.grad(tnp.arccosh))(x), jax.vmap(jax.grad(jnp.arccosh))(x))


def test_piecewise_functions_see_untaken_elements_through_stop_gradient():
    x = np.array([-1.0, 2.0, 0.0, 3.0], np.float32)

    def f(np_):
        return lambda v: np_.sum(np_.piecewise(v, [v < 0, v == 0], [lambda t: 0.0 * t, 5.0, lambda t: np_.log(t) ** 2]))
    _same(toolkit.grad(f(tnp))(x), jax.grad(f(jnp))(x))
    _same(toolkit.jvp(f(tnp), (x,), (np.ones_like(x),))[1], jax.jvp(f(jnp), (x,), (np.ones_like(x),))[1])
    _same(f(tnp)(x), f(jnp)(x))


def test_vmapped_switch_with_a_batched_index_guards_untaken_branches():
    x = np.array([-1.0, 2.0, 4.0], np.float32)
    index = np.array([0, 1, 1], np.int32)

    def f(lib, np_):
        def one(i, v):
            return lib.lax.switch(i, [lambda t: 2.0 * t, lambda t: np_.log(t) ** 2], v)
        return lambda v: np_.sum(lib.vmap(one)(index, v))
    _same(toolkit.grad(f(toolkit, tnp))(x), jax.grad(f(jax, jnp))(x))
    _same(f(toolkit, tnp)(x), f(jax, jnp)(x))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_custom_jvp_nondiff_arguments_pass_through_stop_gradient(argnums):
    # JAX stop_gradients a traced non-differentiable argument: the rule alone defines the derivative.
    def make(lib, np_):
        @partial(lib.custom_jvp, nondiff_argnums=(0,))
        def f(n, x):
            return n * np_.sin(x)

        @f.defjvp
        def f_jvp(n, primals, tangents):
            (x,), (t,) = primals, tangents
            return f(n, x), 100.0 * t * n
        return f
    ours = toolkit.grad(make(toolkit, tnp), argnums)(2.0, 1.0)
    theirs = jax.grad(make(jax, jnp), argnums)(2.0, 1.0)
    for o, t in zip(*(([a] if not isinstance(a, tuple) else a) for a in (ours, theirs))):
        _same(o, t)
    # (JAX's jvp hands back the rule's Python float as it is; toolkit's an array: the values are compared.)
    assert float(toolkit.jvp(make(toolkit, tnp), (2.0, 1.0), (1.0, 1.0))[1]) == \
        float(jax.jvp(make(jax, jnp), (2.0, 1.0), (1.0, 1.0))[1]) == 200.0


def test_zero_tangent_operations_take_their_inputs_out_of_reverse_mode():
    # floor and stop_gradient of a differentiated input: nothing flows back through them.
    x = np.array([1.5, 0.5], np.float32)

    def f(lib, np_):
        return lambda a: np_.sum(np_.floor(a) * a + lib.lax.stop_gradient(a) ** 2)
    _same(toolkit.grad(f(toolkit, tnp))(x), jax.grad(f(jax, jnp))(x))


def test_reverse_mode_leaves_out_loops_whose_carries_only_count():
    # JAX's JVP of a while loop finds the tangents of carries made by comparisons, floor and constants zero, so
    # reverse mode needs no transpose of the loop (its binomial sampler; a loop counting up to x).
    def count(lib):
        return lambda x: x * lib.lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] + 2), (0.0, 0))[0]
    _same(toolkit.grad(count(toolkit))(2.5), jax.grad(count(jax))(2.5))

    def binomial(lib, np_):
        return lambda p: np_.sum(lib.random.binomial(lib.random.key(0), 10.0, p / 5, (4,)))
    _same(toolkit.grad(binomial(toolkit, tnp))(np.float32(2.5)), jax.grad(binomial(jax, jnp))(np.float32(2.5)))
    # A carry that does depend on x still cannot be reversed, in either library.
    from toolkit.ad.jvp import DifferentiationError
    with pytest.raises(DifferentiationError):
        toolkit.grad(lambda x: toolkit.lax.while_loop(lambda c: c < 10, lambda c: c * x, 1.0))(2.0)
    with pytest.raises(ValueError):
        jax.grad(lambda x: jax.lax.while_loop(lambda c: c < 10, lambda c: c * x, 1.0))(2.0)
