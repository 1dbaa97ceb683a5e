"""``toolkit.scipy.signal`` against ``jax.scipy.signal`` in the same run: the convolutions and correlations (every
mode, either input the larger, integer and complex inputs, batch axes of ``fftconvolve``), ``detrend``, and the
spectral estimates ``stft``, ``istft``, ``csd`` and ``welch`` (windows, overlaps, boundaries, padding, detrending,
scalings, averages, axes), eagerly and under ``jit``, their gradients, warnings and JAX's errors.

Cheap by construction: a handful of small arrays reused everywhere, one ``jit`` per side for each group.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import toolkit
from toolkit import numpy as tnp
from toolkit.scipy import signal as tsignal

jax = pytest.importorskip("jax")
jsignal = pytest.importorskip("jax.scipy.signal")
jnp = jax.numpy

f32 = np.float32
RNG = np.random.default_rng(0)
A = RNG.standard_normal((6, 5)).astype(f32)
B = RNG.standard_normal((3, 2)).astype(f32)
C = RNG.standard_normal((2, 7)).astype(f32)  # neither smaller than A nor larger
X1 = RNG.standard_normal(40).astype(f32)
Y1 = RNG.standard_normal(33).astype(f32)
X2 = RNG.standard_normal((3, 24)).astype(f32)
ZC = (RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))).astype(np.complex64)

NAMES = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
         "welch"]


def _leaves(x):
    return x if isinstance(x, tuple) else (x,)


def _close(ours, theirs, rtol=2e-6, atol=2e-6, exact=False):
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape, (o.shape, t.shape)
        assert o.dtype == t.dtype, (o.dtype, t.dtype)
        assert o.aval.weak_type == t.aval.weak_type
        if exact:
            np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
        else:
            np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=rtol, atol=atol, equal_nan=True)


def _both(name, *args, **kwargs):
    """Eagerly: toolkit's and JAX's ``name`` on the same arguments (numpy arrays as each side's arrays)."""
    return (getattr(tsignal, name)(*(tnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args), **kwargs),
            getattr(jsignal, name)(*(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args), **kwargs))


def _jit_both(build, *arrays, grad=False):
    """``build(signal, numpy)``'s function of ``arrays`` under each side's ``jit`` (its gradient w.r.t. every
    array if ``grad``): one compilation per side for a whole group of cases."""
    ours, theirs = build(tsignal, tnp), build(jsignal, jnp)
    if grad:
        argnums = tuple(range(len(arrays)))
        ours, theirs = toolkit.grad(ours, argnums=argnums), jax.grad(theirs, argnums=argnums)
    return (toolkit.jit(ours)(*(tnp.asarray(a) for a in arrays)),
            jax.jit(theirs)(*(jnp.asarray(a) for a in arrays)))


def _close_all(ours, theirs, **kwargs):
    ours, theirs = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        _close(o, t, **kwargs)


def test_signatures_match_jax():
    assert sorted(tsignal.__all__) == sorted(n for n in dir(jsignal) if not n.startswith("_")) == NAMES
    for name in NAMES:
        ours = inspect.signature(getattr(tsignal, name)).parameters
        theirs = inspect.signature(getattr(jsignal, name)).parameters
        assert [(p.name, p.default, p.kind) for p in ours.values()] == \
            [(p.name, p.default, p.kind) for p in theirs.values()], name


PAIRS = [(A, B), (B, A), (A, A), (A[:4, :2], A), (ZC, B.astype(np.complex64)), (A.astype(np.int32), B)]


def test_convolutions():
    def build(sig, np_):
        def f(*arrays):
            out = []
            for p, q in zip(arrays[0:len(PAIRS) * 2:2], arrays[1:len(PAIRS) * 2:2]):
                for mode in ["full", "same", "valid"]:
                    out += [sig.convolve(p, q, mode), sig.correlate(p, q, mode), sig.convolve2d(p, q, mode),
                            sig.correlate2d(p, q, mode), sig.fftconvolve(p, q, mode),
                            sig.convolve(p, q, mode, method="fft"), sig.correlate(p, q, mode, method="fft")]
            x1, y1, x3, k3 = arrays[len(PAIRS) * 2:]
            out += [sig.convolve(x1, y1[:5], "same", precision="highest"), sig.correlate(x1[:7], y1, "valid"),
                    sig.convolve(x3, k3), sig.fftconvolve(x3, k3, "same"),
                    sig.fftconvolve(p, p, axes=[0]), sig.fftconvolve(x3, x3[:2, :, :3], "valid", axes=(0, -1))]
            return out
        return f
    arrays = [a for pair in PAIRS for a in pair] + [X1, Y1, X2.reshape(3, 4, 6), A[:2, :3, None]]
    _close_all(*_jit_both(build, *arrays), rtol=1e-5, atol=1e-5)
    # Eagerly: integer and float64 numpy inputs (promoted to float32), and the outer-product case.
    _close(*_both("convolve", A.astype(np.int32), B.astype(np.float64), "same"), exact=True)
    _close(*_both("fftconvolve", A[:1], A[:, :1]), exact=True)


def test_convolutions_grad():
    def build(sig, np_):
        return lambda x, y: (sig.convolve(x, y) ** 2).sum() + np_.sin(sig.correlate2d(x, y, "valid")).sum() + \
            (sig.fftconvolve(x, y, "same") ** 2).sum()
    _close_all(*_jit_both(build, A, B, grad=True), rtol=1e-4, atol=1e-4)


def test_convolution_errors():
    cases = [
        (("convolve", A, B, "bad"), ValueError, "mode must be one of"),
        (("convolve", A, X1), ValueError, "same number of dimensions"),
        (("convolve", A, np.zeros((0, 2), f32)), ValueError, "zero-size arrays not supported"),
        (("convolve", A, C), ValueError, "One input must be smaller"),
        (("convolve", A, B, "full", "bad"), ValueError, "expected 'auto', 'fft', or 'direct'"),
        (("convolve2d", X1, Y1), ValueError, "only supports 2-dimensional inputs"),
        (("correlate2d", X1, Y1), ValueError, "only supports 2-dimensional inputs"),
        (("fftconvolve", A, X1), ValueError, "same dimensionality"),
        (("fftconvolve", A, B, "bad"), ValueError, "mode must be one of"),
        (("fftconvolve", A, C, "valid"), ValueError, "One input must be at least as large"),
        (("fftconvolve", A, B, "full", [1]), ValueError, "mapped axes must have same shape"),
        (("fftconvolve", [1.0, 2.0], X1), TypeError, "requires ndarray or scalar arguments"),
    ]
    for (name, *args), cls, fragment in cases:
        for sig, np_ in ((tsignal, tnp), (jsignal, jnp)):
            arrays = [np_.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            with pytest.raises(cls, match=fragment):
                getattr(sig, name)(*arrays)
    for sig in (tsignal, jsignal):
        with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
            sig.convolve2d(A, B, boundary="wrap")
        with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
            sig.correlate2d(A, B, fillvalue=1)


def test_detrend():
    def build(sig, np_):
        return lambda a, x, i: [sig.detrend(a), sig.detrend(a, axis=0), sig.detrend(a, type="constant"),
                                sig.detrend(a, 0, "constant"), sig.detrend(x, bp=[10, 25]),
                                sig.detrend(i, bp=np.array([2]))]
    _close_all(*_jit_both(build, A, X1, np.arange(12).reshape(3, 4)), rtol=1e-5, atol=1e-5)
    _close(tsignal.detrend([1, 2, 4]), jsignal.detrend([1, 2, 4]), rtol=1e-5, atol=1e-5)
    _close_all(*_jit_both(lambda sig, np_: lambda x: (sig.detrend(x, bp=5) ** 3).sum(), X1[:12], grad=True),
               rtol=1e-4, atol=1e-4)
    for sig in (tsignal, jsignal):
        with pytest.raises(ValueError, match="Trend type must be"):
            sig.detrend(X1, type="quadratic")
        with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
            sig.detrend(X1, bp=[50])
        with pytest.raises(NotImplementedError, match="overwrite_data"):
            sig.detrend(X1, overwrite_data=True)


STFT_CASES = [
    {"nperseg": 8},
    {"nperseg": 7, "noverlap": 3, "nfft": 10},
    {"nperseg": 8, "boundary": "odd", "fs": 4.0},
    {"nperseg": 8, "boundary": "even", "padded": False, "detrend": "linear"},
    {"nperseg": 8, "boundary": "constant", "return_onesided": False, "detrend": "constant"},
    {"nperseg": 6, "boundary": None, "window": np.hanning(6).astype(f32)},
    {"nperseg": 8, "window": ("tukey", 0.25)},
    {"nperseg": 1, "noverlap": 0},
]
PSD_CASES = [
    {"nperseg": 8},
    {"nperseg": 9, "average": "median"},
    {"nperseg": 8, "scaling": "spectrum", "fs": 3.0, "detrend": "linear"},
    {"nperseg": 8, "return_onesided": False, "detrend": False},
    {"nperseg": 8, "window": "hamming", "noverlap": 2, "nfft": 11},
    {"nperseg": 40},
]


def test_stft_and_istft():
    def build(sig, np_):
        def f(x1, x2, xi, xc):
            return ([sig.stft(x1, **kwargs) for kwargs in STFT_CASES]
                    + [sig.stft(x2, nperseg=8), sig.stft(x2.T, nperseg=8, axis=0),
                       sig.stft(xi, nperseg=4), sig.stft(xc, nperseg=2, return_onesided=False),
                       sig.stft(x2.T, nperseg=8, axis=0, detrend=lambda d: d - d.mean())])
        return f
    _close_all(*_jit_both(build, X1, X2, np.arange(20), ZC[:, 0]), rtol=1e-5, atol=1e-5)
    _close(*_both("stft", X1, nperseg=8), rtol=1e-5, atol=1e-5)
    with pytest.warns(UserWarning, match="using nperseg=0"):
        _close(*_both("stft", np.zeros((0,), f32)), exact=True)

    z = np.asarray(jsignal.stft(X1, nperseg=8)[2])
    z2 = np.stack([z, 2 * z])
    z_two = np.fft.fft(X1[:32].reshape(4, 8), axis=1).T.astype(np.complex64)

    def build_inverse(sig, np_):
        def f(z, z2, z_two, z_real):
            return [sig.istft(z), sig.istft(z, noverlap=2, nperseg=8), sig.istft(z, boundary=False),
                    sig.istft(z, window=("tukey", 0.5), fs=2.0), sig.istft(z2),
                    sig.istft(z2.transpose(2, 0, 1), time_axis=0, freq_axis=-1),
                    sig.istft(z, window=np.hanning(8).astype(f32)),
                    sig.istft(z_two, input_onesided=False, boundary=False, noverlap=0), sig.istft(z_real),
                    sig.istft(sig.stft(x, nperseg=8)[2], nperseg=8)]
        return f
    x = X1
    ours, theirs = _jit_both(build_inverse, z, z2, z_two, np.abs(z).astype(f32))
    _close_all(ours, theirs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ours[0][1]), X1, rtol=1e-5, atol=1e-5)

    def loss(sig, np_):
        return lambda x: (np_.abs(sig.stft(x, nperseg=8, boundary="odd")[2]) ** 2).sum()
    _close_all(*_jit_both(loss, X1, grad=True), rtol=1e-4, atol=1e-5)


def test_welch_and_csd():
    def build(sig, np_):
        def f(x1, y1, x2, xi, zc):
            return ([sig.welch(x1, **kwargs) for kwargs in PSD_CASES]
                    + [sig.csd(x1, y1, **kwargs) for kwargs in PSD_CASES]
                    + [sig.csd(x1, None, nperseg=8), sig.welch(x2.T, nperseg=8, axis=0, average="median"),
                       sig.csd(x2, x1[None, :20], nperseg=8), sig.welch(xi, nperseg=8),
                       sig.csd(zc[:, 0], zc[:, 1], nperseg=2)])
        return f
    with pytest.warns(UserWarning, match="Input data is complex"):
        _close_all(*_jit_both(build, X1, Y1, X2, np.arange(30), ZC), rtol=1e-5, atol=1e-6)
    _close(*_both("welch", X1, nperseg=8), rtol=1e-5, atol=1e-6)
    _close(*_both("welch", np.zeros((2, 0), f32)), exact=True)
    # JAX's empty cross spectrum has a shape of its own, (1, 2) here: kept.
    _close(*_both("csd", np.zeros((2, 0), f32), X2[:1]), exact=True)

    def loss(sig, np_):
        return lambda x, y: sig.welch(x, nperseg=8)[1].sum() + np_.abs(sig.csd(x, y, nperseg=8)[1]).sum()
    _close_all(*_jit_both(loss, X1, Y1, grad=True), rtol=1e-4, atol=1e-5)


def test_spectral_warnings_and_errors():
    for sig, eval_shape in ((tsignal, toolkit.eval_shape), (jsignal, jax.eval_shape)):
        # The warnings come at trace time: abstract evaluation is enough (and cheap).
        with pytest.warns(UserWarning, match="nperseg=64 is greater than input_length=40"):
            eval_shape(lambda x: sig.welch(x, nperseg=64), X1)
        with pytest.warns(UserWarning, match="Input data is complex, switching to return_onesided=False"):
            eval_shape(lambda x: sig.stft(x, nperseg=2), ZC[:, 0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for kwargs, fragment in [({"nperseg": 0}, "nperseg must be a positive integer"),
                                     ({"nperseg": 8, "noverlap": 8}, "noverlap must be less than nperseg"),
                                     ({"nperseg": 8, "nfft": 4}, "nfft must be greater than or equal to nperseg"),
                                     ({"nperseg": 8, "scaling": "bad"}, "Unknown scaling: bad"),
                                     ({"nperseg": 8, "average": "bad"}, 'average must be "median" or "mean"'),
                                     ({"nperseg": 8, "detrend": 3}, "Unsupported detrend type"),
                                     ({"window": np.ones((2, 2), f32)}, "window must be 1-D"),
                                     ({"window": np.ones(50, f32)}, "window is longer than input signal"),
                                     ({"window": np.ones(8, f32), "nperseg": 6}, "different from length of window")]:
                with pytest.raises(ValueError, match=fragment):
                    sig.welch(X1, **kwargs)
            with pytest.raises(ValueError, match="Unknown boundary option 'bad'"):
                sig.stft(X1, nperseg=8, boundary="bad")
            with pytest.raises(ValueError, match="same rank"):
                sig.csd(X1, X2, nperseg=8)
            with pytest.raises(ValueError, match="cannot be broadcast together"):
                sig.csd(X2, np.ones((2, 24), f32), nperseg=8)
            z = np.asarray(jsignal.stft(X1, nperseg=8)[2])
            for args, kwargs, fragment in [((z[0],), {}, "at least 2d"),
                                           ((z,), {"time_axis": 0, "freq_axis": 0}, "differing time and frequency"),
                                           ((z,), {"nfft": 4}, r"FFT length \(4\) must be longer than nperseg \(8\)"),
                                           ((z,), {"noverlap": 8}, "noverlap must be less than nperseg"),
                                           ((z,), {"window": np.ones((8, 1), f32)}, "window must be 1-D"),
                                           ((z,), {"window": np.ones(6, f32)}, "window must have length of 8")]:
                with pytest.raises(ValueError, match=fragment):
                    sig.istft(*args, **kwargs)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        tsignal.welch([1.0, 2.0])
    with pytest.raises(TypeError):
        toolkit.jit(lambda x, n: tsignal.welch(x, nperseg=n))(tnp.asarray(X1), 8)
