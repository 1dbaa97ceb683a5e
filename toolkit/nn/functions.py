"""Activation functions, softmax family, ``logsumexp``, ``one_hot`` and ``standardize``."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import toolkit.numpy as tnp
from toolkit import lax
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.core import dtypes
from toolkit.core.config import flag_value
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy._core import canonical_axes, canonical_axis, check_arraylike, promote_inexact

__all__ = ["relu", "relu6", "gelu", "silu", "swish", "sigmoid", "log_sigmoid", "softplus", "soft_sign", "elu",
           "celu", "selu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_swish", "glu", "softmax",
           "log_softmax", "logsumexp", "one_hot", "standardize"]


# The activations follow JAX 0.10.2's definitions (jax/_src/nn/functions.py) operation for operation, so that their
# dtypes and weak types come from the same promotions as JAX's: elu of an int32 array is a weakly typed float32
# (``where(x > 0, 0.0, x)``), sigmoid of integers is lax.logistic's TypeError, relu6 of integers is float32.


def _inexact(x: Any) -> Any:
    """``x`` as an array of a floating dtype, as JAX's ``promote_args_inexact`` (integers and bools become the
    default float, float64 under x64; a Python scalar stays weakly typed)."""
    [x] = promote_inexact(x)
    return x


def _arraylike(name: str, x: Any) -> Any:
    """``x`` as an array, as JAX's ``ensure_arraylike``: a list or tuple is its ``TypeError``."""
    check_arraylike(name, x)
    return tnp.asarray(x)


@custom_jvp
def relu(x: Any) -> Any:
    """``max(x, 0)``, with JAX's derivative: 0 at ``x == 0`` (a ``custom_jvp``, as ``jax.nn.relu``).

    Example::

        relu(np.array([-1.0, 2.0]))  # [0., 2.]
    """
    return tnp.maximum(x, 0)


# JAX defines relu's JVP so that grad(relu)(0.) == 0 (maximum's tie rule would give 0.5).
relu.defjvps(lambda g, ans, x: lax.select(tnp.asarray(x) > 0, g, tnp.zeros_like(g)))


@custom_jvp
def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6.0)`` (a float for integer ``x``, as JAX's), with JAX's derivative: 0 at 0 and at 6.

    Example::

        relu6(np.array([-1.0, 3.0, 9.0]))  # [0., 3., 6.]
    """
    return tnp.minimum(tnp.maximum(x, 0), 6.0)


# JAX's custom JVP: the gradient is 0 at both kinks (minimum's and maximum's tie rules would give 0.5).
relu6.defjvps(lambda g, ans, x: lax.select((tnp.asarray(x) > 0) & (tnp.asarray(x) < 6), g, tnp.zeros_like(g)))


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))`` (``lax.logistic``: floating or complex ``x``, as JAX's).

    Example::

        sigmoid(0.0)  # 0.5
    """
    return lax.logistic(x)


@compiled_whole()
def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large ``|x|``.

    Example::

        log_sigmoid(np.array([0.0]))  # [-0.6931]
    """
    return -softplus(-_arraylike("log_sigmoid", x))


@compiled_whole()
def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)``.

    Example::

        softplus(0.0)  # 0.6931
    """
    return tnp.logaddexp(x, 0)


@compiled_whole()
def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)``.

    Example::

        soft_sign(np.array([1.0]))  # [0.5]
    """
    x = _arraylike("soft_sign", x)
    return x / (tnp.abs(x) + 1)


@compiled_whole()
def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (a.k.a. swish).

    Example::

        silu(np.array([1.0]))  # [0.7311]
    """
    x = _arraylike("silu", x)
    return x * sigmoid(x)


swish = silu


# Not compiled whole: JAX 0.10 does not jit gelu (its jit is commented out, "found to change numerics"), so an
# eager gelu runs operation by operation there, and its values are those of the separate operations.
def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit; ``approximate=True`` uses the tanh form (JAX's default).

    Example::

        gelu(np.array([1.0]), approximate=False)  # [0.8413]
    """
    x = _inexact(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + tnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    # erfc(-x/√2)/2, not (1 + erf(x/√2))/2: for negative x the latter cancels (float16's gelu(-2.5) was 2% off).
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return tnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=x.dtype)


@compiled_whole()
def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Example::

        elu(np.array([-1.0, 1.0]))  # [-0.6321, 1.]
    """
    x = _arraylike("elu", x)
    return tnp.where(x > 0, x, alpha * tnp.expm1(tnp.where(x > 0, 0.0, x)))


@compiled_whole()
def celu(x: Any, alpha: float = 1.0) -> Any:
    """``max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)``.

    Example::

        celu(np.array([-1.0]))  # [-0.6321]
    """
    return tnp.maximum(x, 0.0) + alpha * tnp.expm1(tnp.minimum(x, 0.0) / alpha)


@compiled_whole()
def selu(x: Any) -> Any:
    """The scaled ELU with the self-normalizing constants.

    Example::

        selu(np.array([1.0]))  # [1.0507]
    """
    alpha = 1.6732632423543772
    scale = 1.0507009873554805
    return scale * elu(x, alpha)


@compiled_whole()
def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """``x`` if ``x >= 0`` else ``negative_slope * x``.

    Example::

        leaky_relu(np.array([-1.0]))  # [-0.01]
    """
    x = _arraylike("leaky_relu", x)
    return tnp.where(x >= 0, x, negative_slope * x)


@compiled_whole()
def hard_tanh(x: Any) -> Any:
    """``clip(x, -1, 1)``, as JAX's ``where(x > 1, 1, where(x < -1, -1, x))`` (complex ``x`` compares by real part).

    Example::

        hard_tanh(np.array([-3.0, 0.5]))  # [-1., 0.5]
    """
    x = _arraylike("hard_tanh", x)
    return tnp.where(x > 1, 1, tnp.where(x < -1, -1, x))


@compiled_whole()
def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6``.

    Example::

        hard_sigmoid(np.array([0.0]))  # [0.5]
    """
    return relu6(x + 3.0) / 6.0


@compiled_whole()
def hard_swish(x: Any) -> Any:
    """``x * hard_sigmoid(x)``.

    Example::

        hard_swish(np.array([1.0]))  # [0.6667]
    """
    x = _arraylike("hard_swish", x)
    return x * hard_sigmoid(x)


@compiled_whole(static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: split ``x`` in two halves along ``axis``, ``a * sigmoid(b)``.

    Example::

        glu(np.ones((2, 4)))  # shape (2, 2)
    """
    x = _arraylike("glu", x)
    axis = canonical_axis(axis, x.ndim)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of size {size} must have an even size")
    half = size // 2
    limits = list(x.shape)
    limits[axis] = half
    a = lax.slice(x, (0,) * x.ndim, tuple(limits))
    starts = [0] * x.ndim
    starts[axis] = half
    b = lax.slice(x, tuple(starts), tuple(x.shape))
    return a * sigmoid(b)


def _empty_reduction_initial(x: Any, axes: tuple) -> float | None:
    """JAX's maxima start at ``-inf``; toolkit gives the start only to a reduction over no elements (an empty
    array's softmax is empty, its logsumexp ``-inf``, as JAX's), so XLA's program for others is unchanged."""
    return -np.inf if any(x.shape[a] == 0 for a in axes) else None


def _max_stopped(x: Any, axes: tuple, where: Any = None) -> Any:
    # The shift only needs to be finite where some element is; an all--inf row keeps a zero shift.
    # Its gradient is zero in exact arithmetic (the shift cancels), so it is not differentiated (as JAX).
    m = tnp.max(x, axis=axes, keepdims=True, initial=_empty_reduction_initial(x, axes)) if where is None else \
        tnp.max(tnp.real(x), axis=axes, keepdims=True, where=where, initial=-np.inf)
    return lax.stop_gradient(tnp.where(tnp.isfinite(m), m, tnp.zeros_like(m)))


def _shift(x: Any, axes: tuple, where: Any) -> Any:
    # JAX's softmax/log_softmax shift by stop_gradient(max) with no finiteness check: a row holding +inf
    # or only -inf is NaN either way, and XLA gets no is_finite/select pair. With a mask, the checked
    # shift as before (what a fully masked row gives is unchanged by this).
    if where is None:
        return lax.stop_gradient(tnp.max(x, axis=axes, keepdims=True, initial=_empty_reduction_initial(x, axes)))
    return _max_stopped(x, axes)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)``, shifted by the maximum for stability.

    ``where`` (a boolean mask) excludes entries; they get probability 0.

    Example::

        softmax(np.array([1.0, 2.0, 3.0]))  # [0.0900, 0.2447, 0.6652]
    """
    x = _inexact(x)
    axes = canonical_axes(axis, x.ndim)
    if flag_value("jax_softmax_custom_jvp"):  # toolkit.softmax_custom_jvp(True): JAX's custom_jvp rule
        return _softmax_with_rule(x, axes, where)
    if where is not None:
        x = tnp.where(where, x, -np.inf)
    unnormalized = tnp.exp(x - _shift(x, axes, where))
    if where is not None:
        unnormalized = tnp.where(where, unnormalized, 0)
    return unnormalized / tnp.sum(unnormalized, axis=axes, keepdims=True)


def _softmax_formula(x: Any, axes: tuple, where: Any) -> Any:
    if where is not None:
        x = tnp.where(where, x, -np.inf)
    unnormalized = tnp.exp(x - _shift(x, axes, where))
    if where is not None:
        unnormalized = tnp.where(where, unnormalized, 0)
    return unnormalized / tnp.sum(unnormalized, axis=axes, keepdims=True)


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax_with_rule(x: Any, axes: tuple, where: Any) -> Any:
    return _softmax_formula(x, axes, where)


@_softmax_with_rule.defjvp
def _softmax_with_rule_jvp(axes: tuple, primals: tuple, tangents: tuple) -> tuple:
    # JAX's rule (jax.nn._softmax_jvp): y * (dx - sum(y * dx)), never the quotient rule's larger program.
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax_with_rule(x, axes, where)
    inner = y * x_dot if where is None else tnp.where(where, y * x_dot, 0)
    return y, y * (x_dot - tnp.sum(inner, axis=axes, keepdims=True))


@compiled_whole(static_argnames=("axis",))
def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``x - logsumexp(x, axis)``, computed stably.

    Example::

        log_softmax(np.array([1.0, 2.0, 3.0]))  # [-2.4076, -1.4076, -0.4076]
    """
    x = _inexact(x)
    axes = canonical_axes(axis, x.ndim)
    if where is not None:
        x = tnp.where(where, x, -np.inf)
    shifted = x - _shift(x, axes, where)
    exp_shifted = tnp.exp(shifted)
    if where is not None:
        exp_shifted = tnp.where(where, exp_shifted, 0)
    out = shifted - tnp.log(tnp.sum(exp_shifted, axis=axes, keepdims=True))
    return out if where is None else tnp.where(where, out, -np.inf)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow (``jax.nn.logsumexp`` semantics).

    With ``return_sign=True`` returns ``(log|sum|, sign(sum))``, allowing
    negative weights ``b``. ``where`` (a mask broadcast against ``a``): only its
    true elements are summed (JAX's; a row with none is ``-inf``).

    Example::

        logsumexp(np.array([1000.0, 1000.0]))  # 1000.6931
    """
    if where is not None:
        a = tnp.where(where, a, 0)
    if b is not None:
        a, b = promote_inexact(a, b)  # together, as JAX's promote_args_inexact
        a, b = tnp.broadcast_arrays(a, b)
    else:
        a = _inexact(a)
    axes = canonical_axes(axis, a.ndim)
    shift = _max_stopped(a, axes, where)
    exp_a = tnp.exp(a - shift.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    total = tnp.sum(exp_a, axis=axes, keepdims=True, where=where)
    sign = tnp.sign(total)
    if not return_sign:
        total = tnp.abs(total) if b is not None else total
        out = tnp.log(total) + shift
        if b is not None:
            out = tnp.where(sign < 0, np.nan, out)
    else:
        out = tnp.log(tnp.abs(total)) + shift
    if not keepdims:
        out = tnp.squeeze(out, axis=axes)
        sign = tnp.squeeze(sign, axis=axes)
    return (out, sign) if return_sign else out


@compiled_whole(static_argnames=("num_classes", "dtype", "axis"), lists_as_tuples=True)
def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """One-hot encode integer ``x`` into ``num_classes`` classes along a new ``axis`` (``dtype``: the default
    float, float64 under x64, as JAX's ``jnp.float_``).

    Out-of-range indices give an all-zero vector.

    Example::

        one_hot(np.array([0, 2]), 3)  # [[1, 0, 0], [0, 0, 1]]
    """
    if not getattr(num_classes, "_is_symbolic_dim", False):  # a symbolic size (x.shape[0]) is fine as it is
        try:
            num_classes = int(num_classes)
        except TypeError:
            raise TypeError("one_hot: num_classes must be a concrete integer (mark it static under jit)") from None
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be non-negative, got {num_classes}")
    x = tnp.asarray(x)
    out_ndim = x.ndim + 1
    axis = canonical_axis(axis, out_ndim)
    expanded = tnp.expand_dims(x, axis)
    shape = list(x.shape)
    shape.insert(axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype if dtypes.is_integer(x.dtype) else dtypes.int32, tuple(shape), axis)
    return tnp.equal(expanded, classes).astype(dtypes.default_float_dtype() if dtype is None else dtype)


@compiled_whole(static_argnames=("axis", "algorithm"))
def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None, epsilon: float = 1e-5,
                where: Any = None, *, algorithm: str = "fast") -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis`` (layer normalization without scale/offset), as
    ``jax.nn.standardize``.

    The variance is ``algorithm="fast"``'s (JAX's default: ``mean(x**2) - mean(x)**2``, clipped at 0; one pass)
    or ``"stable"``'s (``mean((x - mean)**2)``). ``where`` (a mask broadcast against ``x``) takes the mean and
    variance over its true elements only.

    Example::

        standardize(np.array([1.0, 2.0, 3.0]))  # [-1.2247, 0., 1.2247]
    """
    check_arraylike("standardize", x, *(v for v in (mean, variance, where) if v is not None))
    x = _inexact(x)
    axes = canonical_axes(axis, x.ndim)
    if mean is None:
        mean = tnp.mean(x, axis=axes, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = tnp.mean(tnp.square(tnp.subtract(x, mean)), axis=axes, keepdims=True, where=where)
        elif algorithm == "fast":
            # One pass, as JAX's default; it can go slightly negative, which rsqrt must not see.
            variance = tnp.mean(tnp.square(x), axis=axes, keepdims=True, where=where) - tnp.square(mean)
            variance = tnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return tnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)
