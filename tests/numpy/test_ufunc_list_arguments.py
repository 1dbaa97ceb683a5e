"""toolkit.numpy's elementwise functions refuse lists and tuples as JAX's do (``check_arraylike``).

JAX 0.10.2: ``jnp.sin([1.0])`` is ``TypeError: sin requires ndarray or scalar arguments, got <class 'list'> at
position 0.``. Every name below is compared with JAX in the same run: the exception class and the message
(which names JAX's function for the check, e.g. ``round`` for ``around``), and the value for arrays.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit.numpy as tnp  # noqa: E402

#: One-operand functions JAX refuses a list for.
UNARY = ["abs", "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "around", "bitwise_not",
         "cbrt", "ceil", "clip", "conj", "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1",
         "fabs", "floor", "imag", "invert", "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2",
         "logical_not", "modf", "nan_to_num", "negative", "positive", "rad2deg", "radians", "real", "reciprocal",
         "rint", "round", "sign", "signbit", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc"]
#: Two-operand functions JAX refuses a list for, in either position.
BINARY = ["add", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "divide", "divmod", "equal",
          "float_power", "floor_divide", "fmax", "fmin", "fmod", "gcd", "greater", "greater_equal", "heaviside",
          "hypot", "isclose", "lcm", "left_shift", "less", "less_equal", "logaddexp", "logaddexp2", "logical_and",
          "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply", "nextafter", "not_equal", "pow",
          "power", "remainder", "right_shift", "subtract", "true_divide"]
_INTEGER_ONLY = {"bitwise_not", "invert", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "left_shift",
                 "right_shift"}


def _refusal(fun, *args):
    with pytest.raises(Exception) as info:
        fun(*args)
    return type(info.value), str(info.value)


def _operand(name):
    return np.array([1, 2, 3], np.int32) if name in _INTEGER_ONLY else np.array([0.25, 0.5, 0.75], np.float32)


def test_the_lists_cover_every_ufunc_like_name():
    for name in UNARY + BINARY:
        assert callable(getattr(tnp, name)), name


@pytest.mark.parametrize("container", [list, tuple])
@pytest.mark.parametrize("name", UNARY)
def test_unary_refuses_a_list_as_jax(name, container):
    value = container(_operand(name).tolist())
    expected = _refusal(getattr(jnp, name), value)
    assert expected[0] is TypeError and "requires ndarray or scalar arguments" in expected[1]
    assert _refusal(getattr(tnp, name), value) == expected


@pytest.mark.parametrize("position", [0, 1])
@pytest.mark.parametrize("name", BINARY)
def test_binary_refuses_a_list_in_either_position_as_jax(name, position):
    args = [_operand(name), _operand(name)]
    args[position] = args[position].tolist()
    expected = _refusal(getattr(jnp, name), *args)
    assert expected[0] is TypeError and f"at position {position}." in expected[1]
    assert _refusal(getattr(tnp, name), *args) == expected


#: Names checked with numpy and Python scalars as well as arrays (the fast path's other accepted types).
_SCALAR_NAMES = {"sin", "deg2rad", "sinc", "heaviside", "add", "hypot", "isclose", "clip", "power", "gcd"}


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_arrays_and_scalars_are_accepted_with_jax_values(name):
    x = _operand(name)
    args = (x,) if name in UNARY else (x, x[::-1].copy())
    kinds = [args]
    if name in _SCALAR_NAMES:  # numpy scalars, Python scalars
        kinds += [tuple(a[1] for a in args), tuple(a[1].item() for a in args)]
    for operands in kinds:
        got, want = getattr(tnp, name)(*operands), getattr(jnp, name)(*operands)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_toolkit_arrays_and_asarray_of_a_list_are_accepted():
    x = tnp.asarray([1.0, 2.0])
    np.testing.assert_allclose(np.asarray(tnp.sin(x) + tnp.add(x, 1)), np.sin([1.0, 2.0]) + [2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tnp.add(tnp.asarray([1, 2]), np.int32(3))), [4, 5])


def test_inside_jit_tracers_are_accepted_and_lists_refused():
    import toolkit
    out = toolkit.jit(lambda v: tnp.hypot(v, 1.0))(np.ones(2, np.float32))
    np.testing.assert_allclose(np.asarray(out), np.hypot(1.0, 1.0) * np.ones(2), rtol=1e-6)
    with pytest.raises(TypeError, match=r"^hypot requires ndarray or scalar arguments, got <class 'list'> at "
                                        r"position 1\.$"):
        toolkit.jit(lambda v: tnp.hypot(v, [1.0, 2.0]))(np.ones(2, np.float32))
