"""``toolkit.numpy.fft`` and ``lax.fft`` against JAX: values, dtypes, gradients, vmap and errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
REAL = RNG.normal(size=(3, 4, 6)).astype(np.float32)
COMPLEX = (RNG.normal(size=(3, 4, 6)) + 1j * RNG.normal(size=(3, 4, 6))).astype(np.complex64)


def _close(ours, theirs, tol=2e-5):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape,
                                                                       theirs.shape)
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * max(1.0, float(np.abs(theirs).max(initial=0))))


ONE_D = [("fft", COMPLEX), ("ifft", COMPLEX), ("rfft", REAL), ("irfft", COMPLEX), ("hfft", COMPLEX),
         ("ihfft", REAL)]


@pytest.mark.parametrize("name,x", ONE_D, ids=[n for n, _ in ONE_D])
@pytest.mark.parametrize("n", [None, 5])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_one_dimensional(name, x, n, axis, norm):
    _close(getattr(tnp.fft, name)(x, n=n, axis=axis, norm=norm), getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm))


N_D = [("fftn", COMPLEX), ("ifftn", COMPLEX), ("rfftn", REAL), ("irfftn", COMPLEX), ("fft2", COMPLEX),
       ("ifft2", COMPLEX), ("rfft2", REAL), ("irfft2", COMPLEX)]


@pytest.mark.parametrize("name,x", N_D, ids=[n for n, _ in N_D])
@pytest.mark.parametrize("s,axes", [(None, None), ((4, 8), (0, 2)), ((2, 3), None)])
def test_multi_dimensional(name, x, s, axes):
    if name.endswith("2") and axes is None:
        axes = (-2, -1)
    _close(getattr(tnp.fft, name)(x, s=s, axes=axes), getattr(jnp.fft, name)(x, s=s, axes=axes))


def test_four_and_five_dimensions_are_done_in_steps():
    x = RNG.normal(size=(2, 3, 2, 4, 2)).astype(np.float32)
    for name in ("fftn", "rfftn"):
        _close(getattr(tnp.fft, name)(x), getattr(jnp.fft, name)(x), tol=1e-4)
    spectrum = np.asarray(jnp.fft.rfftn(x))
    _close(tnp.fft.irfftn(spectrum, s=x.shape), jnp.fft.irfftn(spectrum, s=x.shape), tol=1e-4)


def test_frequencies_and_shifts():
    for n in (5, 8):
        _close(tnp.fft.fftfreq(n, 0.5), jnp.fft.fftfreq(n, 0.5))
        _close(tnp.fft.rfftfreq(n, 0.1), jnp.fft.rfftfreq(n, 0.1))
    _close(tnp.fft.fftshift(REAL), jnp.fft.fftshift(REAL))
    _close(tnp.fft.ifftshift(REAL, axes=1), jnp.fft.ifftshift(REAL, axes=1))
    _close(tnp.fft.fftshift(REAL, axes=(0, 2)), jnp.fft.fftshift(REAL, axes=(0, 2)))
    for scalar in (np.float32(2.5), 3):  # no axes to shift: the value back, as JAX's (was a ZeroDivisionError)
        _close(tnp.fft.fftshift(scalar), jnp.fft.fftshift(scalar))
        _close(tnp.fft.ifftshift(scalar), jnp.fft.ifftshift(scalar))


def test_names_cover_jax():
    assert sorted(tnp.fft.__all__) == sorted(n for n in dir(jnp.fft) if not n.startswith("_"))


def test_dtypes_follow_jax():
    for dtype in (np.int32, np.bool_, np.float16, jnp.bfloat16):
        x = np.ones(4, dtype)
        assert tnp.fft.fft(x).dtype == jnp.fft.fft(x).dtype
    assert tnp.fft.rfft(np.ones(4, np.int32)).dtype == jnp.fft.rfft(np.ones(4, np.int32)).dtype


@pytest.mark.parametrize("kind,x", [("fft", COMPLEX[0]), ("ifft", COMPLEX[0]), ("rfft", REAL[0]),
                                    ("irfft", COMPLEX[0])])
def test_gradients_match_jax(kind, x):
    lengths = (4, 10) if kind == "irfft" else (4, 6)
    weights = RNG.normal(size=(4, 6)).astype(np.float32)

    def loss(fft, np_):
        def f(v):
            y = fft(v, kind, lengths)
            y = y if np.dtype(y.dtype).kind == "c" else y.astype(np.complex64)
            return (np_.real(y[..., :6]) * weights[..., : y.shape[-1]]).sum() + (np_.imag(y) ** 2).sum()
        return f

    ours = toolkit.grad(loss(lax.fft, tnp))(x)
    theirs = jax.grad(loss(jax.lax.fft, jnp))(x)
    _close(ours, theirs, tol=1e-4)


def test_jit_and_vmap():
    ours = toolkit.jit(toolkit.vmap(lambda v: tnp.fft.rfft(v, n=8)))(REAL[:, 0])
    _close(ours, jax.vmap(lambda v: jnp.fft.rfft(v, n=8))(REAL[:, 0]))
    batched_last = toolkit.vmap(lambda v: lax.fft(v, "fft", (3,)), in_axes=1)(COMPLEX[:, :, 0])
    _close(batched_last, jax.vmap(lambda v: jax.lax.fft(v, "fft", (3,)), in_axes=1)(COMPLEX[:, :, 0]))


def test_errors_match_jax():
    cases = [
        (lambda m: m.fft.fft(COMPLEX, axis=(0, 1)), ValueError, "does not support multiple axes"),
        (lambda m: m.fft.fft2(COMPLEX, axes=(0,)), ValueError, "only supports 2 axes"),
        (lambda m: m.fft.fftn(COMPLEX, s=(2, 3), axes=(0,)), ValueError, "Shape and axes have different lengths"),
        (lambda m: m.fft.fftn(COMPLEX, s=(0, 3)), ValueError, "Shape should be positive"),
        (lambda m: m.fft.fftn(COMPLEX, axes=(1, 1)), ValueError, "repeated axes"),
        (lambda m: m.fft.fft(COMPLEX, norm="bad"), ValueError, "Invalid norm value bad"),
        (lambda m: m.fft.rfft(COMPLEX), ValueError, "only real valued inputs supported for rfft"),
        (lambda m: m.fft.fftfreq([4]), ValueError, "only takes an int"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call(jnp)
        with pytest.raises(error, match=message):
            call(tnp)
    # A real transform of an empty axis: JAX's fails StableHLO's verifier (a ValueError), toolkit's says so first.
    for call in (lambda m: m.fft.rfft(np.zeros(0, np.float32)), lambda m: m.fft.ihfft(np.zeros((2, 0), np.float32)),
                 lambda m: m.fft.rfft2(np.zeros((0, 0), np.float32))):
        with pytest.raises(ValueError):
            call(jnp)
        with pytest.raises(ValueError, match="RFFT of an empty axis"):
            call(tnp)
    for fft in (lax.fft, jax.lax.fft):
        with pytest.raises(ValueError, match="Unknown FFT type"):
            fft(COMPLEX, "dct", (6,))
        with pytest.raises(ValueError, match="minor dimensions must be equal to fft_lengths"):
            fft(COMPLEX, "fft", (5,))
        with pytest.raises(ValueError, match="at least as many input dimensions"):
            fft(COMPLEX[0, 0], "fft", (1, 1, 6))
        with pytest.raises(ValueError, match="RFFT input must be float32 or float64"):
            fft(np.ones(4, np.float16), "rfft", (4,))
