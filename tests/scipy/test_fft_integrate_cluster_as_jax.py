"""``toolkit.scipy.fft`` (dct, dctn, idct, idctn), ``toolkit.scipy.integrate`` (trapezoid) and
``toolkit.scipy.cluster.vq`` (vq) against ``jax.scipy`` in the same run: values (bit for bit: the operations are
JAX's, in its order), shapes, dtypes and weak types, eagerly, under ``jit``, with x64, gradients and ``vmap``, and
JAX's errors (class and message).

Cheap by construction: one small input array per module, reused by every case.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from _oracle import assert_same_typed

import toolkit
import toolkit.numpy as tnp
from toolkit.scipy import cluster as tcluster
from toolkit.scipy import fft as tfft
from toolkit.scipy import integrate as tintegrate

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jfft = pytest.importorskip("jax.scipy.fft")
jintegrate = pytest.importorskip("jax.scipy.integrate")
jvq = pytest.importorskip("jax.scipy.cluster.vq")

f32 = np.float32
RNG = np.random.default_rng(0)
#: Odd and even lengths on every axis (the interleave's halves differ for odd ones).
X = RNG.standard_normal((4, 5, 6)).astype(f32)
#: A weakly typed float32 vector on both sides.
WEAK = (tnp.broadcast_to(1.5, (5,)), jnp.broadcast_to(1.5, (5,)))
ONE_AXIS = ["dct", "idct"]
MANY_AXES = ["dctn", "idctn"]


_same = assert_same_typed  # exact unless a tolerance is given


def _same_error(ours, theirs, what=""):
    """Both calls raise the same exception class with the same message."""
    with pytest.raises(Exception) as theirs_info:
        theirs()
    with pytest.raises(theirs_info.type) as ours_info:
        ours()
    assert str(ours_info.value) == str(theirs_info.value), what


def test_signatures_and_exports_are_jaxs():
    for ours, theirs in [(tfft, jfft), (tintegrate, jintegrate), (tcluster.vq, jvq)]:
        public = sorted(n for n in dir(theirs) if not n.startswith("_") and callable(getattr(theirs, n)))
        assert sorted(ours.__all__) == public
        for name in public:
            ours_parameters = inspect.signature(getattr(ours, name)).parameters
            theirs_parameters = inspect.signature(getattr(theirs, name)).parameters
            assert [(p.name, p.default) for p in ours_parameters.values()] == \
                [(p.name, p.default) for p in theirs_parameters.values()], name
    assert tcluster.__all__ == ["vq"]


#: (function, norm, n, axis): every norm, ``n`` absent, truncating or padding, each axis.
ONE_AXIS_CASES = [(name, norm, n, axis) for name in ONE_AXIS
                  for norm, n, axis in [(None, None, -1), ("backward", 3, 0), ("ortho", 8, 1), ("ortho", None, -2)]]
#: (function, norm, s, axes): all axes, the last ``len(s)``, given axes (negative, unordered), three axes (a 2-D
#: block and a 1-D one), an integer ``s``, and no axes at all (the input unchanged).
MANY_AXES_CASES = [(name, norm, s, axes) for name in MANY_AXES
                   for norm, s, axes in [(None, None, None), ("ortho", None, None), (None, [3, 7], None),
                                         ("ortho", [2, 8], [2, 0]), ("backward", 4, [1]),
                                         ("ortho", [3, 4, 7], [-1, 0, 1]), (None, None, ())]]


def _dct_cases(module, x):
    """Every case's result; one jitted program per side (XLA's compilations are this file's cost)."""
    return ([getattr(module, name)(x, n=n, axis=axis, norm=norm) for name, norm, n, axis in ONE_AXIS_CASES]
            + [getattr(module, name)(x, s=s, axes=axes, norm=norm) for name, norm, s, axes in MANY_AXES_CASES])


def test_dct_family_values():
    """Bit for bit under jit for every case; eagerly (each operation compiled on its own) for one per function."""
    ours = toolkit.jit(lambda v: _dct_cases(tfft, v))(X)
    theirs = jax.jit(lambda v: _dct_cases(jfft, v))(X)
    for case, a, b in zip(ONE_AXIS_CASES + MANY_AXES_CASES, ours, theirs, strict=True):
        _same(a, b, what=case)
    x = X[0]
    _same(tfft.dct(x, n=7, axis=0), jfft.dct(x, n=7, axis=0), what="eager dct")
    _same(tfft.idctn(x, 2, [3, 7], None, "ortho"), jfft.idctn(x, 2, [3, 7], None, "ortho"), what="eager idctn")


def test_dct_family_dtypes():
    """Integers and booleans to float32, float16 computed in float32 (JAX's FFT), complex as its real and
    imaginary parts, a weakly typed input to a strong result; with x64, float64 and int64 to float64."""
    inputs = [np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[True, False, True]]),
              X[0, :2, :3].astype(np.float16), (X[0, :2, :3] + 1j * X[1, :2, :3]).astype(np.complex64)]

    def cases(module, ints, bools, halves, complexes, weak):
        every = ONE_AXIS + MANY_AXES
        out = [getattr(module, name)(x, norm="ortho") for x, names in [(ints, every), (halves, ONE_AXIS), (complexes, every)]
               for name in names]
        return out + [module.idct(bools), module.dctn(bools), module.dct(weak), module.idctn(weak)]

    ours = toolkit.jit(lambda *a: cases(tfft, *a))(*inputs, WEAK[0])
    theirs = jax.jit(lambda *a: cases(jfft, *a))(*inputs, WEAK[1])
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _same(a, b, what=i)
    with toolkit.enable_x64(True), jax.enable_x64(True):
        x64, ints = X[0].astype(np.float64), np.arange(5)

        def wide(module, x, i):
            return [getattr(module, name)(x) for name in ONE_AXIS + MANY_AXES] + [module.dct(i), module.idctn(i)]

        ours = toolkit.jit(lambda *a: wide(tfft, *a))(x64, ints)
        theirs = jax.jit(lambda *a: wide(jfft, *a))(x64, ints)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _same(a, b, what=("x64", i))


def test_dct_family_gradients_and_vmap():
    x = X[0]
    weights = X[1]

    def cases(module, numpy, grad, vmap, v):
        grads = [grad(lambda u, name=name: numpy.sum(getattr(module, name)(u, norm="ortho") * weights))(v)
                 for name in ONE_AXIS + MANY_AXES]
        return grads + [vmap(lambda u, name=name: getattr(module, name)(u, n=7))(v) for name in ONE_AXIS]

    ours = toolkit.jit(lambda v: cases(tfft, tnp, toolkit.grad, toolkit.vmap, v))(x)
    theirs = jax.jit(lambda v: cases(jfft, jnp, jax.grad, jax.vmap, v))(x)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        # The FFT's transpose may sum in another order than JAX's: a few ulps.
        _same(a, b, rtol=2e-6, atol=1e-6, what=i)


def test_dct_family_errors():
    """Types other than 2 (checked first), norms other than backward/ortho, lists, axes out of bounds or
    repeated, too long an ``s``, a 0-d input."""
    x = X[0]
    cases = [
        ("dct", ([1.0, 2.0],), {}), ("idct", ([1.0, 2.0],), {}), ("dctn", ([[1.0]],), {}),
        ("dct", (x,), {"type": 1}), ("idct", (x,), {"type": 3, "norm": "forward"}), ("dctn", (x,), {"type": 4}),
        ("idctn", (x,), {"type": 1}),
        ("dct", (x,), {"norm": "forward"}), ("idct", (x,), {"norm": "bogus"}), ("dctn", (x,), {"norm": "forward"}),
        ("idctn", (x,), {"norm": "forward"}),
        ("dct", (x,), {"axis": 2}), ("idct", (x,), {"axis": -3}), ("dct", (np.float32(1.0),), {}),
        ("dctn", (x,), {"s": [1, 2, 3]}), ("idctn", (x,), {"s": [1, 2, 3]}), ("dctn", (x,), {"axes": [0, -2]}),
        ("idctn", (x,), {"axes": [1, 1]}), ("dctn", (x,), {"axes": [5]}),
    ]
    for name, args, kwargs in cases:
        _same_error(lambda name=name, args=args, kwargs=kwargs: getattr(tfft, name)(*args, **kwargs),
                    lambda name=name, args=args, kwargs=kwargs: getattr(jfft, name)(*args, **kwargs),
                    what=(name, kwargs))


def test_trapezoid():
    """Unit, scalar and array spacings, sample points (1-d, and along the axis with ``y``'s shape), integers,
    float16, a weak input, under jit (one program per side) and eagerly, with x64, its gradients, and its errors."""
    y = X[0]
    points = np.cumsum(RNG.random(6)).astype(f32)
    grid = np.cumsum(RNG.random((5, 6)), axis=1).astype(f32)
    ints = np.arange(5)

    def cases(integrate, numpy, grad, y, points, grid, weak):
        return [integrate.trapezoid(y), integrate.trapezoid(y, points), integrate.trapezoid(y, dx=0.5),
                integrate.trapezoid(y, dx=2, axis=0), integrate.trapezoid(y, None, f32(0.25)),
                integrate.trapezoid(y, grid), integrate.trapezoid(y, points[:5, None], axis=0),
                integrate.trapezoid(ints, ints), integrate.trapezoid(y.astype(np.float16)),
                integrate.trapezoid(weak),
                grad(lambda v: numpy.sum(integrate.trapezoid(v, points)))(y),
                grad(lambda p: numpy.sum(integrate.trapezoid(y, p)))(points)]

    ours = toolkit.jit(lambda *a: cases(tintegrate, tnp, toolkit.grad, *a))(y, points, grid, WEAK[0])
    theirs = jax.jit(lambda *a: cases(jintegrate, jnp, jax.grad, *a))(y, points, grid, WEAK[1])
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _same(a, b, rtol=2e-6 if i >= 10 else 0.0, atol=1e-6 if i >= 10 else 0.0, what=i)
    _same(tintegrate.trapezoid(y, points), jintegrate.trapezoid(y, points), what="eager")
    _same(tintegrate.trapezoid(ints, dx=2), jintegrate.trapezoid(ints, dx=2), what="eager ints")
    with toolkit.enable_x64(True), jax.enable_x64(True):
        _same(tintegrate.trapezoid(y.astype(np.float64), points), jintegrate.trapezoid(y.astype(np.float64), points),
              what="x64")
    for args in [([1.0, 2.0],), (y, [1.0, 2.0])]:
        _same_error(lambda args=args: tintegrate.trapezoid(*args), lambda args=args: jintegrate.trapezoid(*args))
    # toolkit.numpy.trapezoid's own wording differs from jnp's here: the class and the gist are JAX's.
    for args, kwargs, fragment in [((y,), {"axis": 3}, "out of bounds"), ((y, points[:3]), {}, "broadcast")]:
        with pytest.raises(ValueError, match=fragment):
            jintegrate.trapezoid(*args, **kwargs)
        with pytest.raises(ValueError, match=fragment):
            tintegrate.trapezoid(*args, **kwargs)


def test_vq():
    """Nearest codes and distances (a NaN observation: code 0 and a NaN distance, as JAX's argmin), 1-d
    observations, integers, a one-code book, under jit (one program per side) and eagerly, with x64, the
    distances' gradient, and the errors."""
    obs = X[0, :, :3].copy()
    obs[2, 1] = np.nan
    book = X[1, :4, :3]
    clean = X[2, :, :3]

    def cases(vq, numpy, grad, obs, book, clean):
        out = [vq.vq(*args) for args in [(obs, book), (np.arange(5), np.array([1, 3])), (obs[:, 0], book[:, 0]),
                                         (obs, book[:1])]]
        return out + [grad(lambda o: numpy.sum(vq.vq(o, book)[1]))(clean)]

    ours = toolkit.jit(lambda *a: cases(tcluster.vq, tnp, toolkit.grad, *a))(obs, book, clean)
    theirs = jax.jit(lambda *a: cases(jvq, jnp, jax.grad, *a))(obs, book, clean)
    for i, ((code, dist), (their_code, their_dist)) in enumerate(zip(ours[:-1], theirs[:-1], strict=True)):
        _same(code, their_code, what=("code", i))
        _same(dist, their_dist, what=("dist", i))
    _same(ours[-1], theirs[-1], rtol=2e-6, atol=1e-6, what="grad")
    for args in [(obs, book)]:
        (code, dist), (their_code, their_dist) = tcluster.vq.vq(*args), jvq.vq(*args)
        _same(code, their_code, what="eager code")
        _same(dist, their_dist, what="eager dist")
    with toolkit.enable_x64(True), jax.enable_x64(True):
        ours = toolkit.jit(tcluster.vq.vq)(obs.astype(np.float64), book)
        theirs = jax.jit(jvq.vq)(obs.astype(np.float64), book)
        _same(ours[0], theirs[0], what="x64 code")
        _same(ours[1], theirs[1], what="x64 dist")
    for args in [(obs, book[0]), (obs[None], book[None]), (f32(1.0), f32(2.0)), ([1.0, 2.0], book), (obs, [[1.0]])]:
        _same_error(lambda args=args: tcluster.vq.vq(*args), lambda args=args: jvq.vq(*args))
