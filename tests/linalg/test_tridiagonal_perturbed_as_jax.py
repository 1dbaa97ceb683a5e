"""``toolkit.lax.linalg.tridiagonal_solve(..., perturb_singular=True)`` against JAX 0.10.2 in the same run: values of
singular and near-singular systems (where the perturbed pivots matter), float32/complex64 (float64/complex128 under
x64), batches, eagerly and under ``jit``, ``vmap`` (JAX's batching rule, its custom call included), derivatives, the
lowered custom call, and JAX's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
from toolkit.lax import linalg as tl

jax = pytest.importorskip("jax")
jl = jax.lax.linalg

from tests._oracle import assert_same, assert_same_typed, raises_like  # noqa: E402  (after jax is known present)

RNG = np.random.default_rng(7)


def _systems(dtype):
    """(dl, d, du, b) of a few systems, all [5, 5] diagonals and [5, 5, 3] right-hand sides: the path graph's
    adjacency matrix tridiag(1, 0, 1) (exactly singular for odd sizes), tridiag(1, 2, 1) shifted by its eigenvalue
    2 - sqrt(3) rounded (near-singular), one with a zero leading pivot that partial pivoting must get round, the zero
    matrix and a well-conditioned random one. Complex: off-diagonals of unit modulus with dl[i + 1] * du[i] = 1,
    which keeps the determinants (and the singularity)."""
    n = 5
    ones = np.ones(n)
    shift = 2 - np.sqrt(3)
    random_d = 4 + RNG.normal(size=n)
    diagonals = [(ones, np.zeros(n), ones), (ones, (2 - shift) * ones, ones), (ones, np.array([0.0, 1, 1, 1, 1]), ones),
                 (np.zeros(n), np.zeros(n), np.zeros(n)), (RNG.normal(size=n), random_d, RNG.normal(size=n))]
    dl, d, du = (np.stack([t[i] for t in diagonals]) for i in range(3))
    b = RNG.normal(size=(len(diagonals), n, 3))
    if np.issubdtype(dtype, np.complexfloating):
        phase = np.exp(1j * np.arange(n))
        dl, du, b = dl * phase, du * np.roll(phase.conj(), -1), b + 1j * RNG.normal(size=b.shape)
    dl[:, 0] = 0  # the unused corners, as JAX's docstring asks
    du[:, -1] = 0
    return tuple(x.astype(dtype) for x in (dl, d, du, b))


def _solve(linalg, perturb=True):
    return lambda dl, d, du, b: linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb)


def _values(linalg, dl, d, du, b):
    """Batched, one system at a time, the gtsv path (NaNs where singular) and a vector right-hand side."""
    solve = _solve(linalg)
    return (solve(dl, d, du, b), [solve(dl[i], d[i], du[i], b[i]) for i in range(len(d))],
            _solve(linalg, False)(dl, d, du, b), solve(dl[1], d[1], du[1], b[1, :, :1]))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_singular_and_near_singular_values_match_jax(dtype):
    args = _systems(dtype)
    ours_jit = toolkit.jit(lambda *a: _values(tl, *a))(*args)
    theirs = jax.jit(lambda *a: _values(jl, *a))(*args)
    ours_eager = _values(tl, *args)
    for ours, mode in ((ours_jit, "jit"), (ours_eager, "eager")):
        for o, t, what in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), range(100)):
            assert_same_typed(o, t, what=f"{mode} {dtype.__name__} #{what}")  # the same kernel: bit for bit
    perturbed, plain = np.asarray(ours_jit[0]), np.asarray(ours_jit[2])
    # The perturbation is what makes the singular systems finite (gtsv: NaNs) and changes the near-singular one.
    assert np.isnan(plain[[0, 3]]).all() and np.isfinite(perturbed).all()
    assert not np.array_equal(perturbed[1], plain[1])


@pytest.mark.x64
def test_double_precision_under_x64():
    for dtype in (np.float64, np.complex128):
        args = _systems(dtype)
        ours, theirs = toolkit.jit(_solve(tl))(*args), jax.jit(_solve(jl))(*args)
        assert_same_typed(ours, theirs, what=dtype.__name__)
        assert ours.dtype == dtype


def test_vmap_matches_jax():
    dl, d, du, b = _systems(np.float32)

    def cases(api, linalg):
        solve = _solve(linalg)
        return (api.vmap(solve, (None, None, None, 0))(dl[4], d[4], du[4], b),  # one matrix: b's batch as columns
                api.vmap(solve, (None, None, None, 2))(dl[1], d[1], du[1], b[1:4].transpose(1, 2, 0)),
                api.vmap(solve, (0, 0, 0, None))(dl, d, du, b[2]),  # b broadcast to the batch
                api.vmap(solve, (None, 0, None, 0))(dl[0], d, du[0], b),
                api.vmap(api.vmap(solve, (None, None, None, 0)), (0, 0, 0, 0))(dl, d, du, b[:, None]))

    ours, theirs = toolkit.jit(lambda: cases(toolkit, tl))(), jax.jit(lambda: cases(jax, jl))()
    for o, t, what in zip(ours, theirs, range(100)):
        assert_same_typed(o, t, what=f"vmap #{what}")


def test_derivatives_match_jax():
    dl, d, du, b = (x[4] for x in _systems(np.float32))  # the well-conditioned system: derivatives are finite
    weights = RNG.normal(size=b.shape).astype(np.float32)

    def loss(linalg):
        return lambda dl, d, du, b: (_solve(linalg)(dl, d, du, b) * weights).sum()

    def derivatives(api, linalg):
        grads = api.grad(loss(linalg), argnums=(0, 1, 2, 3))(dl, d, du, b)
        _, tangent = api.jvp(_solve(linalg), (dl, d, du, b), (du, dl, d, weights))
        return grads, tangent

    ours, theirs = toolkit.jit(lambda: derivatives(toolkit, tl))(), jax.jit(lambda: derivatives(jax, jl))()
    for o, t in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert_same(o, t, rtol=1e-6, atol=1e-6)
    # Reverse mode of a near-singular system: the transposed solve is perturbed too (finite, as JAX's).
    near = tuple(x[1] for x in _systems(np.float32))
    assert_same(toolkit.grad(loss(tl), argnums=3)(*near), jax.grad(loss(jl), argnums=3)(*near), rtol=1e-5)


_CALL = re.compile(r"stablehlo\.custom_call @(\w+)\(([^)]*)\) \{(.*)\} : (.*)$")
_RULE = re.compile(r"sdy\.sharding_rule = (#sdy\.op_sharding_rule<.*?, custom>)")


def _custom_calls(text: str) -> list[tuple[str, str, str]]:
    """(target, attributes without Shardy's rule, types) of every custom call, in order."""
    return [(m.group(1), re.sub(", " + _RULE.pattern, "", m.group(3)), m.group(4))
            for m in map(_CALL.search, text.splitlines()) if m]


def _ops(text: str) -> list[str]:
    """Every op's text after its result name, without Shardy's rule (vmap's transposes and reshapes included)."""
    return [re.sub(", " + _RULE.pattern, "", ln.split("=", 1)[-1].strip()) for ln in text.splitlines()
            if "stablehlo." in ln]


def test_lowered_custom_call_matches_jax():
    dl, d, du, b = _systems(np.complex64)
    for ours_fn, theirs_fn, args in (
            (_solve(tl), _solve(jl), (dl, d, du, b)),
            (_solve(tl), _solve(jl), (dl[0], d[0], du[0], b[0])),
            (toolkit.vmap(_solve(tl), (None, None, None, 0)), jax.vmap(_solve(jl), (None, None, None, 0)),
             (dl[0], d[0], du[0], b))):
        ours = toolkit.jit(ours_fn).lower(*args).as_text()
        theirs = jax.jit(theirs_fn).lower(*args).as_text()
        calls = _custom_calls(ours)
        assert calls == _custom_calls(theirs) and [c[0] for c in calls] == ["tridiagonal_solve_perturbed_ffi"]
        assert _ops(ours) == _ops(theirs)


@pytest.mark.multidevice
def test_batch_sharded_call_has_jaxs_sharding_rule_under_shardy(mesh, monkeypatch):
    from toolkit.shard import NamedSharding, PartitionSpec as P

    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    args = tuple(x[:2] for x in _systems(np.float32))
    batch = NamedSharding(mesh, P("x"))
    ours = toolkit.jit(_solve(tl), in_shardings=batch).lower(*args).as_text()
    theirs = jax.jit(_solve(jl)).lower(*args).as_text()
    # One factor for the batch dimension, shared by the operands and the result (JAX's rule for its linalg calls).
    assert _RULE.findall(ours) == _RULE.findall(theirs) != []


def test_errors_match_jax():
    f = np.ones(4, np.float32)
    b = np.ones((4, 2), np.float32)
    for args in ((f[:3], f, f, b), (f, f, f, b[:3])):
        raises_like(lambda: tl.tridiagonal_solve(*args, perturb_singular=True),
                    lambda: jl.tridiagonal_solve(*args, perturb_singular=True))
    ints = (np.ones(4, np.int32),) * 3 + (np.ones((4, 2), np.int32),)
    mixed = (f, f, f, b.astype(np.complex64))
    for args in (ints, mixed):  # JAX's type, toolkit's wording
        with pytest.raises(TypeError, match="int32|equal dtypes"):
            tl.tridiagonal_solve(*args, perturb_singular=True)
        with pytest.raises(TypeError):
            jl.tridiagonal_solve(*args, perturb_singular=True)
