"""Derivatives of ``scatter_min``/``scatter_max`` (``x.at[i].min(v)``, ``x.at[i].max(v)``, ``lax.scatter_min/max``)
against JAX in the same run: ``grad`` and ``jvp`` eagerly and under ``jit``, ``vmap`` of the derivative, with ties
between the operand and the updates and among updates aimed at one position (JAX's rule shares the tangent equally
among the tied values), update windows, out-of-bounds indices under ``fill``/``drop`` and ``clip``, float64,
complex values, and ``ops.segment_max``/``segment_min`` (which scatter through these primitives)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
import toolkit.ops
from toolkit import lax as tlax

from _oracle import assert_same_typed

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TOOLKIT = types.SimpleNamespace(np=tnp, ad=toolkit, lax=tlax)
JAX = types.SimpleNamespace(np=jnp, ad=jax, lax=jax.lax)

# Position 0: two updates tie with each other and win over x; 1: an update ties with x; 2: one update wins;
# 3: two updates and x all tie; 4: an update loses; 5: no update.
X = np.array([4.0, 5.0, 3.0, 2.0, 1.0, 6.0], np.float32)
INDEX = np.array([0, 1, 2, 0, 3, 3, 4])
MIN_UPDATES = np.array([1.0, 5.0, 0.0, 1.0, 2.0, 2.0, 9.0], np.float32)
MAX_UPDATES = np.array([7.0, 5.0, 8.0, 7.0, 2.0, 2.0, -9.0], np.float32)
WEIGHTS = np.arange(1.0, 7.0, dtype=np.float32)
TX = np.array([0.5, -1.0, 2.0, 3.0, -0.25, 1.5], np.float32)
TV = np.array([1.0, 2.0, -3.0, 0.75, -2.0, 4.0, 5.0], np.float32)


def _compare(case, what):
    """``case(ns)`` with toolkit's and JAX's namespaces give the same pytree of arrays."""
    ours, theirs = case(TOOLKIT), case(JAX)
    ours_leaves, treedef = jax.tree_util.tree_flatten(ours)
    theirs_leaves, their_treedef = jax.tree_util.tree_flatten(theirs)
    assert treedef == their_treedef, (what, treedef, their_treedef)
    for i, (a, b) in enumerate(zip(ours_leaves, theirs_leaves)):
        assert_same_typed(a, b, rtol=0.0, what=f"{what} [{i}]")


def _at(ns, op, x, index, v, **kwargs):
    return getattr(ns.np.asarray(x).at[index], op)(v, **kwargs)


def _at_derivatives(ns, op, updates):
    """grad in (x, v), grad in x alone (updates constant), jvp in both, jvp in v alone, and a grad through
    neither (both tangents symbolic zeros)."""
    def loss(x, v):
        return (_at(ns, op, x, INDEX, v) * WEIGHTS).sum()
    return (ns.ad.grad(loss, argnums=(0, 1))(X, updates),
            ns.ad.grad(lambda x: (_at(ns, op, x, INDEX, updates) ** 2).sum())(X),
            ns.ad.jvp(lambda x, v: _at(ns, op, x, INDEX, v), (X, updates), (TX, TV)),
            ns.ad.jvp(lambda v: _at(ns, op, X, INDEX, v), (updates,), (TV,)),
            ns.ad.grad(lambda w: (_at(ns, op, X, INDEX, updates) * w).sum())(WEIGHTS))


@pytest.mark.parametrize("op, updates", [("min", MIN_UPDATES), ("max", MAX_UPDATES)])
def test_at_min_max_derivatives_with_ties_as_jax(op, updates):
    _compare(lambda ns: _at_derivatives(ns, op, updates), f"{op} eager")
    _compare(lambda ns: ns.ad.jit(lambda: _at_derivatives(ns, op, updates))(), f"{op} jit")


def test_the_tie_shares_of_the_tangent():
    # What JAX's rule gives, spelled out (the comparison above checks toolkit equals JAX, this checks the setup
    # exercises the ties): position 0 two tied updates get 1/2 each and x nothing; 1: x and its tied update
    # 1/2 each; 3: x and two updates 1/3 each.
    grad_x, grad_v = toolkit.grad(lambda x, v: (_at(TOOLKIT, "min", x, INDEX, v) * WEIGHTS).sum(),
                                  argnums=(0, 1))(X, MIN_UPDATES)
    np.testing.assert_allclose(np.asarray(grad_x), [0.0, 1.0, 0.0, 4 / 3, 5.0, 6.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad_v), [0.5, 1.0, 3.0, 0.5, 4 / 3, 4 / 3, 0.0], rtol=1e-6)


def _window_derivatives(ns, op, mode):
    """``lax.scatter_min/max`` of rows into a (4, 3) operand: duplicate rows, a tie, and an out-of-bounds row
    (dropped under ``fill``; clamped onto the last row under ``clip``, where JAX's rule gathers with fill)."""
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 0.0, 0.0], [7.0, 8.0, 9.0]], np.float32)
    rows = np.array([[1], [3], [1], [5]])
    updates = np.array([[4.0, 9.0, -1.0], [7.0, 0.0, 10.0], [3.0, 9.0, 6.0], [1.0, 1.0, 1.0]], np.float32)
    dnums = ns.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
    scatter = getattr(ns.lax, f"scatter_{op}")

    def f(x, v):
        return scatter(x, rows, v, dnums, mode=mode)
    tangents = (np.full(x.shape, 0.5, np.float32), np.arange(12.0, dtype=np.float32).reshape(4, 3))
    return (ns.ad.grad(lambda x, v: (f(x, v) * np.arange(12.0).reshape(4, 3)).sum(), argnums=(0, 1))(x, updates),
            ns.ad.jvp(f, (x, updates), tangents))


@pytest.mark.parametrize("op", ["min", "max"])
def test_lax_scatter_windows_and_modes_as_jax(op):
    for mode in ("fill", "clip"):
        _compare(lambda ns: _window_derivatives(ns, op, mode), f"{op} {mode} eager")
        _compare(lambda ns: ns.ad.jit(lambda: _window_derivatives(ns, op, mode))(), f"{op} {mode} jit")


def test_unique_and_sorted_indices_pass_through_as_jax():
    index = np.array([0, 2, 5])
    v = np.array([3.0, 3.0, 7.0], np.float32)

    def case(ns):
        def loss(x, v):
            return (_at(ns, "max", x, index, v, indices_are_sorted=True, unique_indices=True) * WEIGHTS).sum()
        return ns.ad.jit(ns.ad.grad(loss, argnums=(0, 1)))(X, v)
    _compare(case, "unique sorted")


def test_vmap_of_the_derivative_as_jax():
    # Batched operand and updates (indices shared), and batched indices too; vmap of grad and of jvp.
    xs = np.stack([X, X[::-1], X + 1.0])
    vs = np.stack([MIN_UPDATES, MAX_UPDATES, MIN_UPDATES + 1.0])
    indices = np.stack([INDEX, INDEX[::-1], (INDEX + 2) % 6])

    def case(ns):
        def loss(x, v, i):
            return (_at(ns, "min", x, i, v) * WEIGHTS).sum()
        grads = ns.ad.vmap(ns.ad.grad(loss, argnums=(0, 1)), in_axes=(0, 0, None))(xs, vs, INDEX)
        batched_indices = ns.ad.vmap(ns.ad.grad(loss, argnums=(0, 1)))(xs, vs, indices)
        jvps = ns.ad.vmap(lambda x, v, tx: ns.ad.jvp(lambda x, v: _at(ns, "max", x, INDEX, v), (x, v),
                                                     (tx, TV)))(xs, vs, xs * 0.5)
        return grads, batched_indices, jvps
    _compare(case, "vmap eager")
    _compare(lambda ns: ns.ad.jit(lambda: case(ns))(), "vmap jit")


@pytest.mark.x64
def test_float64_as_jax():
    x, v = X.astype(np.float64), MAX_UPDATES.astype(np.float64)

    def case(ns):
        return ns.ad.jit(ns.ad.grad(lambda x, v: (_at(ns, "max", x, INDEX, v) * WEIGHTS).sum(), argnums=(0, 1)))(x, v)
    _compare(case, "float64")


def test_integer_arguments_are_not_differentiable_as_jax():
    # grad of an integer operand is JAX's TypeError, not a missing rule.
    x = X.astype(np.int32)
    for ns in (TOOLKIT, JAX):
        with pytest.raises(TypeError, match="int32"):
            ns.ad.grad(lambda x: _at(ns, "min", x, INDEX, 1).sum().astype(np.float32))(x)


def test_complex_jvp_and_segment_reductions_as_jax():
    # Complex values (ordered by real part, then imaginary, as JAX's lax.max), a tie included; and ops.segment_max/
    # segment_min, which scatter through these primitives and were not differentiable before.
    x = np.array([1 + 1j, 2, 3j], np.complex64)
    v = np.array([1 + 2j, 1 + 1j, 5], np.complex64)
    data = np.array([1.0, 3.0, 3.0, 2.0, 5.0], np.float32)
    segments = np.array([0, 0, 0, 1, 2])

    def case(ns):
        ops = toolkit.ops if ns is TOOLKIT else jax.ops
        return (ns.ad.jvp(lambda x, v: _at(ns, "max", x, np.array([0, 0, 2]), v), (x, v),
                          (np.full(3, 1 + 1j, np.complex64), np.arange(3).astype(np.complex64))),
                [ns.ad.grad(lambda d: (reduce(d, segments, num_segments=4) * np.arange(1.0, 5.0)).sum())(data)
                 for reduce in (ops.segment_max, ops.segment_min)])
    _compare(case, "complex, segments")
