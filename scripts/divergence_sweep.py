"""Where toolkit.numpy's elementwise and reduction functions still differ from jax.numpy's: a sweep.

Every unary function below on each of 13 inputs (arrays of bool, int8/32, uint8/32, float16/32 and complex64
holding zeros, extremes, infinities and NaNs; Python ints, floats and bools), every binary one on every pair,
in toolkit and in JAX in this process. It prints one line per difference: the function, the inputs, and what
differs (an error on one side only, the dtype, the weak type, the shape, the values beyond 2e-6 relative, or
the sign of a zero). The cases it found that are fixed are tests in ``tests/divergence/``; what it still
prints is listed in docs/differences-from-jax.md ("What is left").

    python scripts/divergence_sweep.py [x64] [--from NAME]   # ~8 minutes alone; needs jax (the interop extra)

``--from NAME`` starts at that function of the lists below (to resume a sweep that was stopped).
``gcd`` and ``lcm`` skip the arrays holding the most negative integer: JAX's Euclid loop never ends on them
(``abs`` of that integer is itself; toolkit's ends with numpy's answer, ``tests/numpy/test_numpy_ufuncs.py``);
``bincount`` skips int32's and uint32's largest values (8-16 GB arrays).

It holds ~5 GB of memory by its end (both libraries keep the thousands of programs it compiles): run one at
a time on a small machine.

A process that crashes here (XLA's compiler, given a program it cannot take) is a bug too: run it under
``python -X faulthandler`` to see the call.
"""

from __future__ import annotations

import itertools
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402

VALUES = {
    "f32": np.array([0.0, -0.0, 1.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-30, 7.0], np.float32),
    "f16": np.array([0.0, -0.0, 1.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-3, 7.0], np.float16),
    "i32": np.array([0, -1, 1, 5, -7, 2**31 - 1, -2**31, 3, 2, 7], np.int32),
    "i8": np.array([0, -1, 1, 5, -7, 127, -128, 3, 2, 7], np.int8),
    "u8": np.array([0, 1, 255, 5, 7, 128, 3, 2, 200, 9], np.uint8),
    "u32": np.array([0, 1, 2**32 - 1, 5, 7, 128, 3, 2, 200, 9], np.uint32),
    "b": np.array([True, False, True, False, True, True, False, False, True, False]),
    "c64": np.array([0, 1 + 1j, -1j, 2.5, np.inf, np.nan, -3 + 0j, 1e-30j, 7, 1j], np.complex64),
    "py_i": 3, "py_f": 2.5, "py_b": True, "py_0": 0, "py_neg": -2,
}
#: The second operand of a binary function: the arrays rolled, so that each value meets several others.
SECOND = {k: (np.roll(v, 3) if isinstance(v, np.ndarray) else v) for k, v in VALUES.items()}
PYTHON_SCALARS = ("py_i", "py_f", "py_b")
#: (function, input) pairs the sweep does not run: JAX's gcd loop never ends on the most negative integer (abs()
#: keeps it), and a bincount of int32's or uint32's largest value would allocate 8-16 GB on each side.
#: The operand a function needs sorted (numpy's and JAX's answers for unsorted ones are arbitrary and differ), and
#: whether NaNs leave it: digitize's bins ending in NaN are "decreasing" to JAX's test (bins[-1] >= bins[0]), and
#: then both search a reversed array that is not sorted.
SORTED_OPERAND = {"searchsorted": (0, False), "digitize": (1, True)}
SKIPPED = {(name, key) for name in ("gcd", "lcm") for key in ("i32", "i8")} | {("bincount", "i32"), ("bincount", "u32")}

UNARY = """abs absolute negative positive sign sqrt cbrt square exp exp2 expm1 log log2 log10 log1p sin cos tan
arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh floor ceil trunc rint round fix isnan isinf isfinite
signbit logical_not invert bitwise_not reciprocal deg2rad rad2deg degrees radians conj conjugate real imag angle
sinc i0 nan_to_num fabs spacing frexp modf isreal iscomplex isneginf isposinf bitwise_count cumsum cumprod sum prod
mean max min argmax argmin all any var std nansum nanmax nanmin nanmean count_nonzero ptp median sort argsort diff
ediff1d cumulative_sum nancumsum unwrap trapezoid cumulative_prod nanprod nanvar nanstd nanargmax nanargmin average
unique trim_zeros histogram histogram_bin_edges bincount sort_complex flatnonzero argwhere""".split()
BINARY = """add subtract multiply divide true_divide floor_divide remainder mod fmod divmod power float_power maximum
minimum fmax fmin arctan2 hypot copysign nextafter ldexp logaddexp logaddexp2 equal not_equal less less_equal
greater greater_equal logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift
bitwise_left_shift bitwise_right_shift gcd lcm heaviside isclose dot inner outer kron polyval vdot convolve
correlate append union1d intersect1d setdiff1d setxor1d isin digitize searchsorted allclose array_equal
array_equiv""".split()


def _outputs(value):
    """(dtype name, weak type, shape, numpy values) per output."""
    return [(str(np.asarray(q).dtype), bool(getattr(q, "weak_type", False)), np.asarray(q).shape, np.asarray(q))
            for q in (value if isinstance(value, tuple) else (value,))]


def _difference(ours, theirs) -> str | None:
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs vs {len(theirs)}"
    for (d1, w1, s1, a1), (d2, w2, s2, a2) in zip(ours, theirs):
        if d1 != d2:
            return f"dtype {d1} vs {d2}"
        if w1 != w2:
            return f"weak type {w1} vs {w2}"
        if s1 != s2:
            return f"shape {s1} vs {s2}"
        if a1.dtype.kind in "fc":
            if not np.array_equal(a1, a2, equal_nan=True):
                if not np.allclose(a1, a2, rtol=2e-6, atol=0, equal_nan=True):
                    return f"values {a1.ravel()[:10]} vs {a2.ravel()[:10]}"
            elif a1.dtype.kind == "f" and (np.signbit(a1) != np.signbit(a2))[~np.isnan(a1)].any():
                return f"sign bits {a1} vs {a2}"  # (of zeros and infinities: a NaN's sign means nothing)
        elif not np.array_equal(a1, a2):
            return f"values {a1.ravel()[:10]} vs {a2.ravel()[:10]}"
    return None


def _compare(name: str, keys: tuple[str, ...], args: tuple) -> bool:
    """Print how ``name(*args)`` differs between the libraries; whether it does."""
    ours_fn, theirs_fn = getattr(tnp, name, None), getattr(jnp, name, None)
    if ours_fn is None or theirs_fn is None:
        return False
    results = []
    for fn in (ours_fn, theirs_fn):
        try:
            results.append(_outputs(fn(*args)))
        except Exception as error:  # noqa: BLE001 - any error is an outcome to compare
            results.append(error)
    ours, theirs = results
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        if isinstance(ours, Exception) == isinstance(theirs, Exception):
            return False

        def said(outcome):
            return (f"error {type(outcome).__name__}: {str(outcome)[:80]}" if isinstance(outcome, Exception)
                    else f"{outcome[0][0]}")
        print(f"{name}{keys}: toolkit {said(ours)} | jax {said(theirs)}", flush=True)
        return True
    difference = _difference(ours, theirs)
    if difference:
        print(f"{name}{keys}: {difference}", flush=True)
    return difference is not None


def main(argv: list[str]) -> int:
    if "x64" in argv:
        jax.config.update("jax_enable_x64", True)
        toolkit.config.update("jax_enable_x64", True)
    start = argv[argv.index("--from") + 1] if "--from" in argv[:-1] else (UNARY + BINARY)[0]
    if start not in UNARY + BINARY:
        print(f"--from {start}: not one of the swept functions", file=sys.stderr)
        return 2
    names = (UNARY + BINARY)[(UNARY + BINARY).index(start):]
    found = 0
    for name in (n for n in UNARY if n in names):
        for key, value in VALUES.items():
            if (name, key) not in SKIPPED:
                found += _compare(name, (key,), (value,))
    for name in (n for n in BINARY if n in names):
        for first, second in itertools.product(VALUES, VALUES):
            both_scalars = not isinstance(VALUES[first], np.ndarray) and not isinstance(VALUES[second], np.ndarray)
            if both_scalars and first not in PYTHON_SCALARS:
                continue
            if (name, first) in SKIPPED or (name, second) in SKIPPED:
                continue
            args = [VALUES[first], SECOND[second]]
            if name in SORTED_OPERAND and isinstance(args[SORTED_OPERAND[name][0]], np.ndarray):
                where, drop_nans = SORTED_OPERAND[name]
                operand = np.sort(args[where])
                args[where] = operand[~np.isnan(operand)] if drop_nans and operand.dtype.kind in "fc" else operand
            found += _compare(name, (first, second), tuple(args))
    print(f"{found} differences")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
