"""``toolkit.scipy.linalg``'s special matrices against ``jax.scipy.linalg`` in the same run: values bit for bit,
shapes, dtypes and weak types (x64 off and on), batches, integer, complex, boolean and Python-scalar arguments,
infinities, under ``jit`` and eagerly, gradients, and JAX's errors and warnings.

Most cases run as one ``jit`` program per side (a dictionary of results): XLA compiles cost far more than the
arithmetic. The eager calls check toolkit's eager path against the same JAX results."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from _oracle import assert_same_typed, raises_like

import toolkit
import toolkit.numpy as tnp
from toolkit.scipy.linalg import special_matrices

jax = pytest.importorskip("jax")
jlinalg = pytest.importorskip("jax.scipy.linalg")
jnp = pytest.importorskip("jax.numpy")

NAMES = ["circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion", "hadamard", "hankel",
         "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "toeplitz"]
# toolkit's functions under jax.scipy.linalg's names, so one lambda runs against both.
tlinalg = types.SimpleNamespace(**{name: getattr(special_matrices, name) for name in NAMES})

RNG = np.random.default_rng(0)
F = np.float32
X = RNG.normal(size=4).astype(F)
Y = RNG.normal(size=3).astype(F)
BATCH = RNG.normal(size=(2, 4)).astype(F)
INTS = np.arange(1, 5, dtype=np.int32)
COMPLEX = (RNG.normal(size=3) + 1j * RNG.normal(size=3)).astype(np.complex64)
# An infinity spreads NaN along its convolution window in toeplitz/hankel (inf * 0 in the identity kernel).
SPECIAL = np.array([1.0, np.inf, 2.0, -0.0], F)
ARRAYS = (X, Y, BATCH, INTS, COMPLEX, SPECIAL)


def _vector_cases(L, vmap, x, y, batch, ints, cplx, special, scalar):
    """The constructors from vectors, on traced arguments (``scalar`` a weakly typed Python float); ``vmap`` is
    the library's own."""
    return {
        "vmap toeplitz": vmap(L.toeplitz)(batch, batch[:, :3]), "vmap hankel": vmap(L.hankel)(batch),
        "vmap leslie": vmap(L.leslie)(batch, batch[:, 1:]), "vmap fiedler_companion": vmap(L.fiedler_companion)(batch),
        "vmap convolution_matrix": vmap(lambda a: L.convolution_matrix(a, 3, "same"))(batch),
        "toeplitz": L.toeplitz(x), "toeplitz r": L.toeplitz(x, y), "toeplitz int": L.toeplitz(ints),
        "toeplitz complex": L.toeplitz(cplx), "toeplitz inf": L.toeplitz(special),
        "toeplitz batch": L.toeplitz(batch, y), "toeplitz batches": L.toeplitz(batch[:, None], batch),
        "toeplitz scalar": L.toeplitz(scalar), "toeplitz int float": L.toeplitz(ints, y),
        "toeplitz empty": L.toeplitz(x[:0], ints),
        "hankel": L.hankel(x), "hankel r": L.hankel(x, y), "hankel complex": L.hankel(cplx),
        "hankel inf": L.hankel(special), "hankel batch": L.hankel(batch, y), "hankel batch r": L.hankel(y, batch),
        "hankel int float": L.hankel(ints, y), "hankel empty": L.hankel(x[:0], ints),
        "circulant": L.circulant(x), "circulant batch": L.circulant(batch), "circulant scalar": L.circulant(scalar),
        "circulant int": L.circulant(ints), "circulant complex": L.circulant(cplx), "circulant empty": L.circulant(x[:0]),
        "leslie": L.leslie(x, y), "leslie int": L.leslie(ints, ints[:3]), "leslie int float": L.leslie(ints, y),
        "leslie batches": L.leslie(batch[:, None], batch[:, :3]), "leslie scalar s": L.leslie(x[:2], scalar),
        "companion": L.companion(x), "companion int": L.companion(ints), "companion complex": L.companion(cplx),
        "companion batch": L.companion(batch), "companion 2": L.companion(x[:2]),
        "companion zero lead": L.companion(x.at[0].set(0.0)),
        "fiedler": L.fiedler(x), "fiedler int": L.fiedler(ints), "fiedler complex": L.fiedler(cplx),
        "fiedler batch": L.fiedler(batch), "fiedler scalar": L.fiedler(scalar), "fiedler empty": L.fiedler(x[:0]),
        "fiedler_companion": L.fiedler_companion(y), "fiedler_companion 6": L.fiedler_companion(batch.reshape(-1)[:7]),
        "fiedler_companion int": L.fiedler_companion(ints), "fiedler_companion 1": L.fiedler_companion(x[:1]),
        "fiedler_companion 2": L.fiedler_companion(x[:2]), "fiedler_companion scalar": L.fiedler_companion(scalar),
        "fiedler_companion batch": L.fiedler_companion(batch), "fiedler_companion complex": L.fiedler_companion(cplx),
        "fiedler_companion batch 1": L.fiedler_companion(batch[:, :1]),
        "convolution_matrix": L.convolution_matrix(x, 3), "convolution_matrix same": L.convolution_matrix(x, 3, "same"),
        "convolution_matrix valid": L.convolution_matrix(x, 3, "valid"),
        "convolution_matrix valid wide": L.convolution_matrix(y, 6, "valid"),
        "convolution_matrix same wide": L.convolution_matrix(y, 6, mode="same"),
        "convolution_matrix int": L.convolution_matrix(ints, 2), "convolution_matrix complex": L.convolution_matrix(cplx, 2),
        "convolution_matrix batch": L.convolution_matrix(batch, 5, "same"),
    }


def _size_cases(L):
    """The constructors from a size (JAX jits each with the size static)."""
    return {
        "hilbert": L.hilbert(5), "hilbert 0": L.hilbert(0), "hilbert 1": L.hilbert(1),
        "invhilbert": L.invhilbert(6), "invhilbert 0": L.invhilbert(0), "invhilbert 15": L.invhilbert(15),
        "pascal": L.pascal(6), "pascal lower": L.pascal(6, "lower"), "pascal upper": L.pascal(6, kind="upper"),
        "pascal 0": L.pascal(0), "pascal 20": L.pascal(20),
        "invpascal": L.invpascal(6), "invpascal lower": L.invpascal(6, "lower"), "invpascal upper": L.invpascal(6, "upper"),
        "invpascal 12": L.invpascal(12),
        "helmert": L.helmert(5), "helmert full": L.helmert(5, full=True), "helmert 1": L.helmert(1),
        "helmert 1 full": L.helmert(1, True), "helmert 7 full": L.helmert(7, True),
        "hadamard": L.hadamard(8), "hadamard 1": L.hadamard(1), "hadamard float": L.hadamard(4, float),
        "hadamard uint8": L.hadamard(2, np.uint8), "hadamard None": L.hadamard(2, None),
        "hadamard complex": L.hadamard(2, "complex64"),
        "dft": L.dft(5), "dft sqrtn": L.dft(5, "sqrtn"), "dft n": L.dft(6, scale="n"),
        "dft complex64": L.dft(7, dtype=np.complex64), "dft complex": L.dft(3, dtype=complex), "dft 0": L.dft(0),
        "dft 1": L.dft(1),
    }


def _compare(ours: dict, theirs: dict, rtol: dict | None = None) -> None:
    assert ours.keys() == theirs.keys()
    for name in theirs:
        assert_same_typed(ours[name], theirs[name], rtol=(rtol or {}).get(name, 0.0), what=name)
        signs = np.signbit(np.real(np.asarray(ours[name]))), np.signbit(np.real(np.asarray(theirs[name])))
        np.testing.assert_array_equal(*signs, err_msg=f"{name}: signs of zeros")


def _jit_vector_cases(lib, jit, vmap):
    return jit(lambda *a: _vector_cases(lib, vmap, *a))(*ARRAYS, 3.0)


@pytest.fixture(scope="module")
def jax_vector_results():
    return _jit_vector_cases(jlinalg, jax.jit, jax.vmap)


@pytest.fixture(scope="module")
def jax_size_results():
    return jax.jit(lambda: _size_cases(jlinalg))()


def test_vector_constructors_under_jit(jax_vector_results):
    _compare(_jit_vector_cases(tlinalg, toolkit.jit, toolkit.vmap), jax_vector_results)


def test_size_constructors_under_jit(jax_size_results):
    _compare(toolkit.jit(lambda: _size_cases(tlinalg))(), jax_size_results)


def test_eager_calls_give_jits_results(jax_vector_results, jax_size_results):
    x = tnp.asarray(X)
    eager = {"toeplitz r": tlinalg.toeplitz(X, Y), "hankel batch": tlinalg.hankel(BATCH, Y),
             "circulant scalar": tlinalg.circulant(3.0), "leslie": tlinalg.leslie(x, Y),
             "companion batch": tlinalg.companion(BATCH), "fiedler scalar": tlinalg.fiedler(3.0),
             "fiedler_companion batch": tlinalg.fiedler_companion(BATCH),
             "convolution_matrix same": tlinalg.convolution_matrix(X, 3, "same")}
    _compare(eager, {name: jax_vector_results[name] for name in eager})
    eager = {"hilbert": tlinalg.hilbert(5), "invhilbert": tlinalg.invhilbert(6), "pascal lower": tlinalg.pascal(6, "lower"),
             "invpascal": tlinalg.invpascal(6), "helmert full": tlinalg.helmert(5, full=True),
             "hadamard": tlinalg.hadamard(8), "dft sqrtn": tlinalg.dft(5, "sqrtn")}
    _compare(eager, {name: jax_size_results[name] for name in eager})


@pytest.mark.x64
def test_dtypes_with_x64():
    def cases(L, x, ints, cplx, scalar):
        return {"toeplitz": L.toeplitz(x), "toeplitz scalar": L.toeplitz(scalar), "hankel int": L.hankel(ints),
                "circulant scalar": L.circulant(scalar), "leslie": L.leslie(ints, x[:3]), "companion int": L.companion(ints),
                "fiedler complex": L.fiedler(cplx), "fiedler_companion": L.fiedler_companion(x),
                "convolution_matrix": L.convolution_matrix(x, 3, "valid"),
                "hilbert": L.hilbert(4), "invhilbert": L.invhilbert(5), "pascal (float32 always)": L.pascal(4),
                "invpascal": L.invpascal(4), "helmert": L.helmert(4, True), "hadamard": L.hadamard(4),
                "hadamard float32": L.hadamard(4, np.float32), "dft": L.dft(4, "n"),
                "dft complex64 (numpy's complex128 scalar promotes it)": L.dft(4, dtype=np.complex64)}

    args = (X.astype(np.float64), INTS.astype(np.int64), COMPLEX.astype(np.complex128), 3.0)
    theirs = jax.jit(lambda *a: cases(jlinalg, *a))(*args)
    assert theirs["toeplitz"].dtype == np.float64 and theirs["pascal (float32 always)"].dtype == np.float32
    _compare(toolkit.jit(lambda *a: cases(tlinalg, *a))(*args), theirs)


def test_gradients():
    weights = {shape: np.cos(np.arange(np.prod(shape))).reshape(shape).astype(F) for shape in
               [(4, 4), (4, 3), (2, 4, 4), (3, 3), (6, 3)]}

    def loss(L, np_lib, x, y, batch):
        total = 0.0
        for matrix in [L.toeplitz(x), L.toeplitz(x, y), L.hankel(x, y), L.circulant(batch), L.leslie(x, y),
                       L.companion(x), L.fiedler(x), L.fiedler_companion(x), L.convolution_matrix(x, 3),
                       L.convolution_matrix(y, 3, "same")]:
            total = total + np_lib.sum(matrix * weights[tuple(matrix.shape)])
        return total

    ours = toolkit.jit(toolkit.grad(lambda *a: loss(tlinalg, tnp, *a), (0, 1, 2)))(X, Y, BATCH)
    theirs = jax.jit(jax.grad(lambda *a: loss(jlinalg, jnp, *a), (0, 1, 2)))(X, Y, BATCH)
    for o, t in zip(ours, theirs):
        assert_same_typed(o, t, rtol=1e-6, atol=1e-6)


# (case, whether toolkit's message is JAX's): the few that differ come from toolkit.numpy/lax, not these functions.
ERRORS = [
    (lambda L: L.toeplitz([1, 2]), True), (lambda L: L.toeplitz(X, [1, 2]), True),
    (lambda L: L.hankel(2.0), True), (lambda L: L.hankel(X, 2.0), True), (lambda L: L.hankel([1.0]), True),
    (lambda L: L.hankel(BATCH, np.ones((3, 4), F)), False),  # vectorize's broadcasting message
    (lambda L: L.circulant([1.0]), True),
    (lambda L: L.leslie(1.0, np.ones(0, F)), True), (lambda L: L.leslie(X, X), True),
    (lambda L: L.leslie(X, [1.0, 2.0, 3.0]), True),
    (lambda L: L.companion(X[:1]), True), (lambda L: L.companion(1.0), True), (lambda L: L.companion([1.0, 2.0]), True),
    (lambda L: L.fiedler([1.0]), True), (lambda L: L.fiedler(np.array([True, False])), False),  # lax.sub's message
    (lambda L: L.fiedler_companion(np.zeros(0, F)), True), (lambda L: L.fiedler_companion([1.0]), True),
    (lambda L: L.convolution_matrix(X, 0), True), (lambda L: L.convolution_matrix(X, 2.0), True),
    (lambda L: L.convolution_matrix(2.0, 2), True), (lambda L: L.convolution_matrix(np.zeros(0, F), 2), True),
    (lambda L: L.convolution_matrix(X, 2, "foo"), True), (lambda L: L.convolution_matrix([1.0, 2.0], 2), True),
    (lambda L: L.pascal(3, "foo"), True), (lambda L: L.invpascal(3, "x"), True),
    (lambda L: L.helmert(0), True), (lambda L: L.hadamard(3), True), (lambda L: L.hadamard(0), True),
    (lambda L: L.hadamard(-4), True), (lambda L: L.hadamard(2, bool), False),  # lax.neg's message
    (lambda L: L.dft(3, "x"), True), (lambda L: L.dft(3, dtype=np.float32), True), (lambda L: L.dft(3, dtype=int), True),
]


@pytest.mark.parametrize("case, same_message", ERRORS)
def test_errors(case, same_message):
    if same_message:
        raises_like(lambda: case(tlinalg), lambda: case(jlinalg))
        return
    with pytest.raises(Exception) as theirs:
        case(jlinalg)
    with pytest.raises(theirs.type) as ours:
        case(tlinalg)
    assert "bool" in str(ours.value) or "broadcast" in str(ours.value), ours.value


def test_a_64_bit_dtype_with_x64_off_warns_and_is_truncated():
    for L in (tlinalg, jlinalg):
        with pytest.warns(UserWarning, match="complex128 requested in dft is not available"):
            assert L.dft(2, dtype=np.complex128).dtype == np.complex64
        with pytest.warns(UserWarning, match="float64 requested in ones is not available"):
            assert L.hadamard(2, np.float64).dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tlinalg.dft(2, dtype=np.complex64)
