"""``toolkit.numpy.pad``'s modes ``linear_ramp``, ``maximum``, ``minimum``, ``mean``, ``median``, ``empty`` and a
callable ``mode`` against ``jnp.pad`` in the same run, bit for bit: values, dtypes and weak types for ranks 0 to 3,
every ``pad_width`` form (an int, a pair, per-axis pairs, zeros), float32/float16/int32/int8/uint8/uint32/bool/
complex64 arrays, ``stat_length`` (None, an int, a pair, per-axis pairs, longer than the axis, negative as JAX
slices it) and ``end_values`` forms, empty axes, eagerly and under ``toolkit.jit`` (and ``vmap``/``grad``), and
JAX's errors (type and message): keyword arguments a mode does not take, unknown modes, bad widths, a
``stat_length`` of 0, unhashable ``stat_length``/``end_values``, an empty axis's ramp, a traced ``pad_width``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like

RNG = np.random.default_rng(7)

ARRAYS = {
    "f32_1d": RNG.standard_normal(5).astype(np.float32),
    "f32_2d": RNG.standard_normal((3, 4)).astype(np.float32),
    "f32_3d": RNG.standard_normal((2, 3, 4)).astype(np.float32),
    "i32_1d": RNG.integers(-9, 10, 6).astype(np.int32),
    "i32_2d": RNG.integers(-9, 10, (3, 4)).astype(np.int32),
    "i32_3d": RNG.integers(-9, 10, (2, 3, 4)).astype(np.int32),
    "i8_2d": RNG.integers(-128, 128, (3, 4)).astype(np.int8),
    "u8_2d": RNG.integers(0, 256, (4, 3)).astype(np.uint8),
    "f16_2d": RNG.standard_normal((3, 4)).astype(np.float16),
    "bool_2d": RNG.standard_normal((3, 4)) > 0,
    "c64_2d": (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64),
}

#: pad_width forms; "per_axis" is one distinct pair per axis (zeros included).
WIDTHS = [0, 2, (1, 3), ((2, 0),), "per_axis"]


def _form(value, ndim, least=0):
    """``value``, or for "per_axis" one distinct pair per axis (each at least ``least``)."""
    if isinstance(value, str) and value == "per_axis":
        return tuple((i % 3 + least, (i + 2) % 4 + least) for i in range(ndim))
    return value


def assert_bitwise(ours, theirs, what=""):
    """``ours`` has ``theirs``'s (JAX's) shape, dtype and weak type, and its values bit for bit (NaN where JAX's is,
    zeros of its sign)."""
    assert type(ours).__module__.startswith("toolkit"), (what, type(ours))
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.shape, o.dtype) == (t.shape, t.dtype), (what, o.shape, o.dtype, t.shape, t.dtype)
    assert bool(getattr(ours, "weak_type", False)) == bool(getattr(theirs, "weak_type", False)), what
    np.testing.assert_array_equal(o, t, err_msg=str(what))
    if o.dtype.kind in "fc":
        np.testing.assert_array_equal(np.signbit(o.real), np.signbit(t.real), err_msg=str(what))


def _compare(jnp, a, width, **kwargs):
    assert_bitwise(tnp.pad(a, width, **kwargs), jnp.pad(a, width, **kwargs), (np.shape(a), width, kwargs))


#: (mode, array name): every statistic of every array but complex medians (JAX refuses them: test_errors_match_jax).
STAT_CASES = [(m, n) for m in ["maximum", "minimum", "mean", "median"] for n in ARRAYS
              if not (m == "median" and n.startswith("c64"))]


@pytest.mark.parametrize("mode,name", STAT_CASES, ids=[f"{m}-{n}" for m, n in STAT_CASES])
def test_stat_modes_match_jax(jnp, mode, name):
    a = ARRAYS[name]
    for width in WIDTHS:
        _compare(jnp, a, _form(width, a.ndim), mode=mode, stat_length=None)
    for width in [(1, 3), "per_axis"]:
        for stat_length in [1, 2, (1, 3), ((3, 1),), "per_axis", 100]:  # 100: longer than any axis
            _compare(jnp, a, _form(width, a.ndim), mode=mode, stat_length=_form(stat_length, a.ndim, least=1))
    _compare(jnp, a, 2, mode=mode)  # stat_length left out


@pytest.mark.parametrize("name", ["f32_1d", "i32_2d", "i32_3d"])
def test_stat_length_negative_counts_as_jax_slices(jnp, name):
    """JAX does not check a negative ``stat_length``: it slices ``[:n]`` and ``[-n:]`` with it (``-1`` leaves one
    value out at each end)."""
    a = ARRAYS[name]
    for mode in ["maximum", "minimum", "mean", "median"]:
        for stat_length in [-1, ((2, -1),)] + ([-2] if a.ndim == 1 else []):  # (-2 of a size-2 axis: no values)
            _compare(jnp, a, (2, 1), mode=mode, stat_length=stat_length)


def test_integer_statistics_round_half_to_even_in_the_dtype(jnp):
    """The mean or median of integers is rounded half to even (``jnp.round``) and converted to the dtype directly:
    uint32 values past int32's range are kept, int8 means land in int8."""
    cases = [np.array([1, 2], np.int32), np.array([1, 4], np.int32), np.array([-5, 5, 2, 3], np.int8),
             np.array([2**31 + 5, 2**32 - 1], np.uint32), np.array([1, 2, 3, 6], np.int32)]
    for a in cases:
        for mode in ["mean", "median", "maximum"]:
            _compare(jnp, a, 2, mode=mode)
            _compare(jnp, a, (1, 3), mode=mode, stat_length=(2, 3))


def test_statistics_of_nans(jnp):
    a = np.array([np.nan, 1.0, 2.0, -0.0], np.float32)
    for mode in ["maximum", "minimum", "mean", "median"]:
        _compare(jnp, a, 2, mode=mode)
        _compare(jnp, a, 2, mode=mode, stat_length=2)


@pytest.mark.parametrize("name", ["f32_1d", "f32_2d", "f32_3d", "i32_1d", "i32_2d", "i32_3d", "u8_2d", "i8_2d",
                                  "f16_2d", "bool_2d", "c64_2d"])
def test_linear_ramp_matches_jax(jnp, name):
    a = ARRAYS[name]
    end_forms = [None, 5, (-3, 7), ((1.5, -2.25),), "per_axis", (300, -300), (True, False)]
    if name.startswith(("c64", "f")):
        end_forms.append(2 + 1j if name.startswith("c64") else 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for width in WIDTHS:
            _compare(jnp, a, _form(width, a.ndim), mode="linear_ramp")
        for width in [(1, 3), "per_axis"]:
            for end_values in end_forms:
                kwargs = {} if end_values is None else {"end_values": _form(end_values, a.ndim)}
                _compare(jnp, a, _form(width, a.ndim), mode="linear_ramp", **kwargs)


def test_linear_ramp_zeros_and_wide_ramps(jnp):
    _compare(jnp, np.array([-0.0, 0.0], np.float32), 3, mode="linear_ramp", end_values=-0.0)
    _compare(jnp, np.array([1, 2], np.uint8), 3, mode="linear_ramp", end_values=(-3, 5))
    _compare(jnp, np.array([10, -10], np.int32), (17, 5), mode="linear_ramp", end_values=(-1000, 999))
    _compare(jnp, np.float32([0.1, 0.7]), (40, 33), mode="linear_ramp", end_values=((1e6, -3.3),))


@pytest.mark.parametrize("name", ["f32_1d", "i32_2d", "f32_3d", "bool_2d", "c64_2d", "u8_2d"])
def test_empty_mode_is_zeros(jnp, name):
    a = ARRAYS[name]
    for width in WIDTHS:
        _compare(jnp, a, _form(width, a.ndim), mode="empty")


def test_scalars_are_returned_as_they_are(jnp):
    for mode in ["mean", "median", "maximum", "minimum", "linear_ramp", "empty"]:
        _compare(jnp, 3.0, 3, mode=mode)          # weakly typed, as JAX's
        _compare(jnp, np.float32(3), 2, mode=mode)
        _compare(jnp, np.int32(3), -2, mode=mode)  # a 0-d array's widths are not checked


@pytest.mark.parametrize("mode", ["mean", "median", "maximum", "minimum", "linear_ramp", "empty"])
def test_weakly_typed_arrays_stay_weak(jnp, mode):
    import jax

    for value in (2.0, 2):
        assert_bitwise(tnp.pad(toolkit.lax.broadcast(value, (3,)), 1, mode=mode),
                       jnp.pad(jax.lax.broadcast(value, (3,)), 1, mode=mode), (mode, value))


def test_empty_axes(jnp):
    empty_rows, empty_cols = np.zeros((0, 3), np.float32), np.zeros((3, 0), np.int32)
    for a in (empty_rows, empty_cols):
        for mode in ["mean", "empty"]:
            for width in [0, 1, ((1, 2),), ((0, 0), (1, 1)), ((1, 1), (0, 0))]:
                _compare(jnp, a, width, mode=mode)
        _compare(jnp, a, 1, mode="mean", stat_length=2)
    # A maximum or minimum of no values (an empty axis, even unpadded, or a padded one after it): JAX's reduction
    # error; toolkit's reductions add the shape to the message, so its start is compared.
    for mode, op in [("maximum", "max"), ("minimum", "min")]:
        for a, width in [(empty_rows, 1), (empty_rows, 0), (empty_cols, ((1, 0), (0, 0)))]:
            for pad in (tnp.pad, jnp.pad):
                with pytest.raises(ValueError, match=f"^zero-size array to reduction operation {op} which has no "):
                    pad(a, width, mode=mode)


def test_empty_axis_edge_errors_match_jax(jnp):
    """An empty axis has no edge: JAX's ``lax.slice`` error for a ramp (even a zero-width one), its ``ValueError``
    for the copying modes when that axis is padded."""
    for a in (np.zeros((0, 3), np.float32), np.zeros((3, 0), np.float32)):
        for width in [1, 0, ((1, 1), (1, 1))]:
            raises_like(lambda: tnp.pad(a, width, mode="linear_ramp"), lambda: jnp.pad(a, width, mode="linear_ramp"))
        for mode in ["edge", "wrap", "reflect", "symmetric"]:
            raises_like(lambda: tnp.pad(a, 1, mode=mode), lambda: jnp.pad(a, 1, mode=mode))
            _compare(jnp, a, ((1, 1), (0, 0)) if a.shape[1] == 0 else ((0, 0), (1, 1)), mode=mode)


def pad_with(vector, pad_width, iaxis, kwargs):
    """numpy's ``pad`` documentation's example, in JAX's protocol (the row is returned, not changed in place)."""
    pad_value = kwargs.get("padder", 10)
    vector = vector.at[:pad_width[0]].set(pad_value)
    return vector.at[vector.shape[0] - pad_width[1]:].set(pad_value)


@pytest.mark.parametrize("name", ["f32_1d", "i32_2d", "f32_3d", "c64_2d", "u8_2d"])
def test_callable_mode_matches_jax(jnp, name):
    a = ARRAYS[name]
    for width in WIDTHS:
        width = _form(width, a.ndim)
        _compare(jnp, a, width, mode=pad_with)
        _compare(jnp, a, width, mode=pad_with, padder=1)


def test_callable_mode_results_and_arguments_as_jax(jnp):
    x = ARRAYS["i32_2d"]
    _compare(jnp, x, 2, mode=lambda v, w, i, k: v * 2.0)        # a weakly typed float result, as JAX's
    _compare(jnp, x, 2, mode=lambda v, w, i, k: v + i * 10 + w[0])
    _compare(jnp, x[0], 2, mode=lambda v, w, i, k: v[:3])       # a shorter row: the result is shorter
    _compare(jnp, x, -1, mode=lambda v, w, i, k: v)             # JAX does not check widths here: they crop
    _compare(jnp, np.zeros((0, 3), np.float32), 1, mode=pad_with)
    ours, theirs = [], []
    tnp.pad(x, ((1, 2), (3, 0)), mode=lambda v, w, i, k: ours.append((w, type(w[0]), i, k)) or v, z=1)
    jnp.pad(x, ((1, 2), (3, 0)), mode=lambda v, w, i, k: theirs.append((w, type(w[0]), i, k)) or v, z=1)
    assert ours == theirs  # ((np.int64(1), np.int64(2)), np.int64, 0, {"z": 1}), ...


MODES = [("mean", {}), ("median", {"stat_length": 2}), ("maximum", {"stat_length": (1, 3)}), ("minimum", {}),
         ("linear_ramp", {"end_values": (-1.5, 3)}), ("empty", {}), ("mean", {"stat_length": ((1, 2), (2, 1))})]


@pytest.mark.parametrize("mode,kwargs", MODES, ids=[f"{m}-{i}" for i, (m, _) in enumerate(MODES)])
def test_under_jit_matches_jax(jnp, mode, kwargs):
    import jax

    for name in ["f32_2d", "i32_2d", "u8_2d", "bool_2d"]:
        a = ARRAYS[name]
        assert_bitwise(toolkit.jit(lambda v: tnp.pad(v, ((1, 2), (0, 3)), mode=mode, **kwargs))(a),
                       jax.jit(lambda v: jnp.pad(v, ((1, 2), (0, 3)), mode=mode, **kwargs))(a), (name, "jit"))
        # inside a larger program: the padding is traced into it
        assert_bitwise(toolkit.jit(lambda v: tnp.pad(v * 3, 2, mode=mode, **kwargs) + 1)(a),
                       jax.jit(lambda v: jnp.pad(v * 3, 2, mode=mode, **kwargs) + 1)(a), (name, "jit inside"))


def test_callable_mode_under_jit(jnp):
    import jax

    a = ARRAYS["f32_3d"]
    assert_bitwise(toolkit.jit(lambda v: tnp.pad(v, ((1, 0), (2, 1), (0, 2)), pad_with, padder=-3.5))(a),
                   jax.jit(lambda v: jnp.pad(v, ((1, 0), (2, 1), (0, 2)), pad_with, padder=-3.5))(a))


@pytest.mark.parametrize("mode,kwargs", MODES[:6], ids=[m for m, _ in MODES[:6]])
def test_vmap_and_grad_match_jax(jnp, mode, kwargs):
    import jax

    a = ARRAYS["f32_2d"]
    assert_bitwise(toolkit.vmap(lambda v: tnp.pad(v, 2, mode=mode, **kwargs))(a),
                   jax.vmap(lambda v: jnp.pad(v, 2, mode=mode, **kwargs))(a))
    assert_bitwise(toolkit.grad(lambda v: (tnp.pad(v, 2, mode=mode, **kwargs) ** 2).sum())(a),
                   jax.grad(lambda v: (jnp.pad(v, 2, mode=mode, **kwargs) ** 2).sum())(a))


ERROR_CASES = [
    # keyword arguments a mode does not take
    ("i32_1d", 2, {"mode": "mean", "constant_values": 1}),
    ("i32_1d", 2, {"mode": "edge", "constant_values": 1}),
    ("i32_1d", 2, {"mode": "empty", "constant_values": 1}),
    ("i32_1d", 2, {"mode": "median", "end_values": 1}),
    ("i32_1d", 2, {"mode": "linear_ramp", "stat_length": 1}),
    ("i32_1d", 2, {"mode": "wrap", "reflect_type": "even"}),
    ("i32_1d", 2, {"mode": "constant", "stat_length": 1}),
    # modes
    ("i32_1d", 2, {"mode": "foo"}),
    ("i32_1d", 2, {"mode": None}),
    ("f32_2d", 2, {"mode": [1]}),
    # pad_width
    ("i32_1d", -1, {"mode": "mean"}),
    ("i32_1d", -1, {"mode": "empty"}),
    ("i32_1d", ((1, -1),), {"mode": "edge"}),
    ("i32_1d", -1, {}),
    ("i32_1d", 1.5, {"mode": "mean"}),
    ("i32_1d", True, {"mode": "linear_ramp"}),
    ("i32_1d", ((1,), (2,)), {"mode": "mean"}),
    ("i32_1d", ((1, 2), (2, 3)), {"mode": "mean"}),
    ("i32_1d", (1, (2, 3)), {"mode": "mean"}),
    ("f32_2d", (1, 2, 3), {"mode": "median"}),
    # stat_length
    ("i32_1d", 2, {"mode": "mean", "stat_length": 0}),
    ("f32_2d", 2, {"mode": "maximum", "stat_length": ((1, 2), (3, 0))}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": (1, 2, 3)}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": (1, (2, 3))}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": 1.5}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": True}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": -10}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": (2, -10)}),
    ("i32_1d", 2, {"mode": "mean", "stat_length": [1, 2]}),          # static in JAX: must hash
    ("i32_1d", 2, {"mode": "minimum", "stat_length": np.array([1, 2])}),
    ("i32_1d", -2, {"mode": "mean", "stat_length": [1]}),            # hashed before the widths are checked
    # end_values
    ("i32_1d", 2, {"mode": "linear_ramp", "end_values": [0, 10]}),
    ("i32_1d", 2, {"mode": "linear_ramp", "end_values": np.array([0, 10])}),
    ("i32_1d", 2, {"mode": "linear_ramp", "end_values": (1, 2, 3)}),
    ("i32_1d", 2, {"mode": "linear_ramp", "end_values": (1, None)}),
    ("i32_1d", 2, {"mode": "linear_ramp", "end_values": None}),
    # reflect_type must hash too, even for a scalar
    ("f32_2d", 2, {"mode": "reflect", "reflect_type": [1]}),
    # the statistic itself
    ("c64_2d", 1, {"mode": "median"}),
]


@pytest.mark.parametrize("name,width,kwargs", ERROR_CASES, ids=[str(i) for i in range(len(ERROR_CASES))])
def test_errors_match_jax(jnp, name, width, kwargs):
    a = ARRAYS[name]
    raises_like(lambda: tnp.pad(a, width, **kwargs), lambda: jnp.pad(a, width, **kwargs))


def test_scalar_errors_match_jax(jnp):
    raises_like(lambda: tnp.pad(3.0, 2, mode=pad_with), lambda: jnp.pad(3.0, 2, mode=pad_with))  # pairs of a 0-d
    raises_like(lambda: tnp.pad(3.0, -2, mode="reflect", reflect_type=[1]),
                lambda: jnp.pad(3.0, -2, mode="reflect", reflect_type=[1]))
    raises_like(lambda: tnp.pad([1.0, 2.0], 2, mode="mean"), lambda: jnp.pad([1.0, 2.0], 2, mode="mean"))


def _first_lines(call, count):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value).replace("jnp.", "toolkit.numpy.").splitlines()[:count]


def test_traced_arguments_error_as_jax(jnp):
    """A traced ``pad_width`` is JAX's ``ConcretizationTypeError`` (its first lines: JAX then names the traced
    function); a traced ``stat_length``/``end_values`` is its unhashable-static-argument ``ValueError``, as is a
    concrete array (JAX's last line names its own array types)."""
    import jax

    a = ARRAYS["f32_2d"]
    assert _first_lines(lambda: toolkit.jit(lambda w: tnp.pad(a, w, mode="mean"))(2), 2) == \
        _first_lines(lambda: jax.jit(lambda w: jnp.pad(a, w, mode="mean"))(2), 2)
    assert _first_lines(lambda: toolkit.jit(lambda w: tnp.pad(a, ((1, w), (0, 0)), mode="empty"))(2), 2) == \
        _first_lines(lambda: jax.jit(lambda w: jnp.pad(a, ((1, w), (0, 0)), mode="empty"))(2), 2)
    start = "Non-hashable static arguments are not supported. An error occurred while trying to hash an object of type"
    for ours in [lambda: toolkit.jit(lambda e: tnp.pad(a, 2, mode="linear_ramp", end_values=e))(1.5),
                 lambda: toolkit.jit(lambda s: tnp.pad(a, 2, mode="mean", stat_length=s))(2),
                 lambda: tnp.pad(a, 2, mode="linear_ramp", end_values=tnp.asarray(1.5))]:
        with pytest.raises(ValueError, match=f"^{start}"):
            ours()
    with pytest.raises(ValueError, match=f"^{start}"):
        jax.jit(lambda e: jnp.pad(a, 2, mode="linear_ramp", end_values=e))(1.5)
