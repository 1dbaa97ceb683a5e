"""``sqrtm``, ``funm``, ``expm_frechet`` (toolkit/scipy/linalg/matrix_functions.py) and ``rsf2csf``,
``solve_sylvester`` (toolkit/scipy/linalg/schur_forms.py) against ``jax.scipy.linalg`` in the same run: values,
dtypes and weak types under ``jit`` (one program per side for all cases) and eagerly, float64 under x64, batches
(broadcast batch dimensions, and ``vmap`` of the unbatched ``sqrtm``), gradients where JAX defines them
(and JAX's refusal where it does not: everything through ``schur``), and JAX's errors."""

from __future__ import annotations

import types

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.scipy.linalg import matrix_functions, schur_forms

from _oracle import assert_same_typed

jax = pytest.importorskip("jax")
jnp = jax.numpy
jsl = jax.scipy.linalg

# toolkit's functions under jax.scipy.linalg's names, so one lambda runs against both: L.np is the numpy of the side.
TSL = types.SimpleNamespace(sqrtm=matrix_functions.sqrtm, funm=matrix_functions.funm,
                            expm_frechet=matrix_functions.expm_frechet, rsf2csf=schur_forms.rsf2csf,
                            solve_sylvester=schur_forms.solve_sylvester, schur=toolkit.scipy.linalg.schur, np=tnp)
JSL = types.SimpleNamespace(sqrtm=jsl.sqrtm, funm=jsl.funm, expm_frechet=jsl.expm_frechet, rsf2csf=jsl.rsf2csf,
                            solve_sylvester=jsl.solve_sylvester, schur=jsl.schur, np=jnp)

RNG = np.random.default_rng(7)
F = np.float32
A = RNG.normal(size=(4, 4)).astype(F)  # eigenvalues: a complex pair and two real ones
E = RNG.normal(size=(4, 4)).astype(F)
B = RNG.normal(size=(3, 3)).astype(F)
C = RNG.normal(size=(4, 3)).astype(F)
CA = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex64)
CC = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex64)
SPD = (A @ A.T + np.eye(4)).astype(F)
INT = np.array([[4, 1, 0], [0, 9, 2], [1, 0, 16]], np.int32)
# A real Schur form with two 2x2 blocks, and its Schur vectors (from numpy: the same inputs on both sides).
T_REAL = np.array([[1.0, 2.0, 0.5, 1.0], [-3.0, 1.0, 0.3, 0.2], [0.0, 0.0, -2.0, 4.0], [0.0, 0.0, -1.0, -2.0]], F)
Z_REAL = np.linalg.qr(RNG.normal(size=(4, 4)))[0].astype(F)
T_ONE_BLOCK = np.triu(T_REAL)
T_ONE_BLOCK[3, 2] = -1.0  # only the lower 2x2 block left

CASES = [
    # Each case costs ~0.2-0.6 s of XLA compilation per side: one case per path, batches and dtypes combined.
    # (sqrtm of A and SPD: in the vmap test.)
    ("sqrtm-int", lambda L: L.sqrtm(INT)), ("sqrtm-complex", lambda L: L.sqrtm(CA)),
    ("sqrtm-1x1", lambda L: L.sqrtm(np.array([[-4.0]], F))),
    ("funm-exp-disp", lambda L: L.funm(A, L.np.exp, disp=False)),
    ("funm-complex", lambda L: L.funm(CA, lambda x: x * x + 1)),
    ("funm-list-repeated-eigenvalue", lambda L: L.funm([[2.0, 1.0], [0.0, 2.0]], L.np.log, disp=False)),
    # Two batch members with two and one 2x2 blocks, one complex Z for both (promoted together).
    ("rsf2csf-broadcast", lambda L: L.rsf2csf(np.stack([T_REAL, T_ONE_BLOCK]), Z_REAL.astype(np.complex64))),
    ("rsf2csf-int-1x1", lambda L: L.rsf2csf(np.array([[3]], np.int32), np.array([[1]], np.int32))),
    ("expm_frechet-only", lambda L: L.expm_frechet(A * 3, E, compute_expm=False, method="SPS")),
    ("expm_frechet-batch-complex", lambda L: L.expm_frechet(np.stack([CA, 0.1 * CC]), np.stack([CC, CA]))),
    ("sylvester-broadcast", lambda L: L.solve_sylvester(np.stack([A, A.T]), B, C)),
    ("sylvester-eigen-broadcast", lambda L: L.solve_sylvester(A, np.stack([B, 2 * B]), C, method="eigen")),
    ("sylvester-complex", lambda L: L.solve_sylvester(CA, B, CC)),  # (integers: in the x64 test)
    # Eigenvalue sums of 0.01: NaNs with tol=0.1 (the default 1e-8 would solve it).
    ("sylvester-tol", lambda L: L.solve_sylvester(np.eye(2, dtype=F), -0.99 * np.eye(2, dtype=F),
                                                  np.eye(2, dtype=F), tol=0.1)),
]
TOLERANCE = {"expm_frechet": 2e-5, "sylvester": 1e-5}


def _tolerance(name):
    return next((t for prefix, t in TOLERANCE.items() if name.startswith(prefix)), 1e-5)


def _compare(name, ours, theirs, rtol):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs), name
    for o, t in zip(ours, theirs):
        scale = float(np.abs(np.asarray(t)).max(initial=0.0)) if np.isfinite(np.asarray(t)).all() else 1.0
        assert_same_typed(o, t, rtol=rtol, atol=rtol * max(scale, 1.0), what=name)


def test_values_match_jax_under_jit():
    # One compiled program per side: XLA's per-module cost dominates these small programs.
    ours = toolkit.jit(lambda: [fn(TSL) for _, fn in CASES])()
    theirs = jax.jit(lambda: [fn(JSL) for _, fn in CASES])()
    for (name, _), o, t in zip(CASES, ours, theirs):
        _compare(name, o, t, _tolerance(name))


def test_eager_calls_match_jax():
    # toolkit's eager calls, each one compiled program as JAX jits them (funm: func runs eagerly between two, as in
    # JAX), against JAX's values in one jit (JAX's eager funm alone compiles a dozen programs). Small inputs: the
    # eager path is what is checked here, the values above.
    cases = [("sqrtm", lambda L: L.sqrtm(INT[:2, :2])),
             ("funm", lambda L: L.funm(T_REAL[:2, :2], L.np.exp, disp=False)),
             ("rsf2csf", lambda L: L.rsf2csf(T_REAL[:2, :2], Z_REAL[:2, :2])),
             ("expm_frechet", lambda L: L.expm_frechet(A[:2, :2], E[:2, :2])),
             ("solve_sylvester", lambda L: L.solve_sylvester(A[:2, :2], B[:1, :1], C[:2, :1], tol=0.5))]
    theirs = jax.jit(lambda: [fn(JSL) for _, fn in cases])()
    for (name, fn), t in zip(cases, theirs):
        _compare(name, fn(TSL), t, 1e-5)


def test_vmap_of_unbatched_sqrtm_matches_jax():
    # sqrtm takes no batch dimensions: vmap batches its schur and its loops (funm's are the same kinds).
    stack = np.stack([SPD, A])
    _compare("vmap", toolkit.jit(toolkit.vmap(TSL.sqrtm))(stack), jax.jit(jax.vmap(JSL.sqrtm))(stack), 1e-5)


@pytest.mark.x64
def test_float64_under_x64():
    # float64's own paths: expm's Pade orders up to 13, funm's error tolerance, integers promoted to complex128.
    a, e, c = (x.astype(np.float64) for x in (A, E, C))
    cases = lambda L: (L.sqrtm(INT), L.funm(a[:3, :3], L.np.sin, disp=False),  # noqa: E731
                       L.expm_frechet(2 * a, e), L.solve_sylvester(a[:3, :3], INT.T, c[:3]))
    ours, theirs = toolkit.jit(lambda: cases(TSL))(), jax.jit(lambda: cases(JSL))()
    for i, (o, t) in enumerate(zip(ours, theirs)):
        _compare(f"x64 case {i}", o, t, 1e-10)


def test_gradients_match_jax():
    # Where JAX differentiates: expm_frechet in A and E (second derivatives of expm), solve_sylvester in C (the
    # Schur forms of A and B are off its path), rsf2csf in T (the eigenvalues of its 2x2 blocks).
    def grads(grad, L):
        def frechet(a, e):
            expm_a, frechet_ae = L.expm_frechet(a, e)
            return expm_a[0].sum() + frechet_ae[0, 1]

        def sylvester(c):
            return (L.solve_sylvester(A, B, c) ** 2).sum()

        def to_complex(t):
            t_complex, z_complex = L.rsf2csf(t, Z_REAL[:2, :2])
            return (t_complex * L.np.array([[1.0, 2.0], [3.0, 4.0]])).real.sum() + z_complex.imag.sum()
        return grad(frechet, (0, 1))(0.5 * A, E), grad(sylvester)(C), grad(to_complex)(T_REAL[:2, :2])

    ours = toolkit.jit(lambda: grads(toolkit.grad, TSL))()
    theirs = jax.jit(lambda: grads(jax.grad, JSL))()
    for name, o, t in zip(("expm_frechet A", "expm_frechet E", "solve_sylvester", "rsf2csf"), jax.tree.leaves(ours),
                          jax.tree.leaves(theirs)):
        _compare(f"grad {name}", o, t, 2e-4)


@pytest.mark.parametrize("name, loss", [
    ("sqrtm", lambda L: lambda a: L.sqrtm(a).real.sum()),
    ("funm", lambda L: lambda a: L.funm(a, L.np.sin).real.sum()),
    ("solve_sylvester", lambda L: lambda a: L.solve_sylvester(a, B, C).sum()),
])
def test_no_gradient_through_schur_as_jax(name, loss):
    # Under jit: the refusal comes while tracing, before anything is compiled.
    with pytest.raises(NotImplementedError):
        jax.jit(jax.grad(loss(JSL)))(A)
    with pytest.raises(NotImplementedError):  # toolkit's reverse mode may meet a while_loop first
        toolkit.jit(toolkit.grad(loss(TSL)))(A)


ERRORS = [
    # (name, call, whether toolkit's message is JAX's word for word)
    ("sqrtm-blocksize", lambda L: L.sqrtm(A, blocksize=2), True),
    ("sqrtm-not-square", lambda L: L.sqrtm(C), False),
    ("sqrtm-vector", lambda L: L.sqrtm(np.ones(3, F)), True),
    ("sqrtm-batch", lambda L: L.sqrtm(np.stack([A, A])), False),
    ("funm-batch", lambda L: L.funm(np.stack([A, A]), L.np.sin), True),
    ("funm-not-square", lambda L: L.funm(C, L.np.sin), True),
    ("funm-int", lambda L: L.funm(INT, L.np.sqrt), False),
    ("rsf2csf-T", lambda L: L.rsf2csf(C, A), True),
    ("rsf2csf-Z", lambda L: L.rsf2csf(A, np.ones((2,), F)), True),
    ("rsf2csf-sizes", lambda L: L.rsf2csf(A, B), True),
    ("expm_frechet-A", lambda L: L.expm_frechet(C, C), True),
    ("expm_frechet-vector", lambda L: L.expm_frechet(np.ones(3, F), np.ones(3, F)), True),
    ("expm_frechet-E", lambda L: L.expm_frechet(A, np.ones((4, 3), F)), True),
    ("expm_frechet-shapes", lambda L: L.expm_frechet(A, B), True),
    ("expm_frechet-int", lambda L: L.expm_frechet(INT, INT), False),
    ("expm_frechet-dtypes", lambda L: L.expm_frechet(A, A.astype(np.float16)), False),
    ("sylvester-shapes", lambda L: L.solve_sylvester(A, B, C.T), True),
    ("sylvester-method", lambda L: L.solve_sylvester(A, B, C, method="lu"), True),
]


@pytest.mark.parametrize("name, call, same_message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_jax(name, call, same_message):
    with pytest.raises(Exception) as want:
        call(JSL)
    with pytest.raises(want.type) as got:
        call(TSL)
    if same_message:
        assert str(got.value) == str(want.value)
    else:  # toolkit's own words, naming what was wrong
        assert any(word in str(got.value) for word in ("square", "rank", "int32", "dtype", "1-D or 2-D")), got.value
