"""Array members beside JAX's: str/repr, device, itemsize, copy, conjugate, view, round, dlpack, pickling and
copying (issue 23, item 4)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

VALUES = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([1, -2, 3], np.int8),
    np.array(True),
    np.zeros((2, 0), np.float32),
    np.linspace(0, 1, 2000, dtype=np.float32),
    np.array([1 + 2j, 3 - 1j], np.complex64),
    np.array(2.5, np.float32),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{v.dtype}{v.shape}")
def test_repr_and_str_as_jax_prints(value):
    t, j = toolkit.device_put(value), jnp.asarray(value)
    assert repr(t) == repr(j)
    assert str(t) == str(j)


def test_repr_of_weak_typed_and_bfloat16_values():
    assert repr(tnp.asarray(3.0)) == repr(jnp.asarray(3.0))  # weak_type=True shown
    assert repr(tnp.ones(3, dtype="bfloat16")) == repr(jnp.ones(3, dtype=jnp.bfloat16))
    long = np.arange(40, dtype=np.float32).reshape(4, 10) * 1000.5
    assert repr(toolkit.device_put(long)) == repr(jnp.asarray(long))


def test_device_and_itemsize():
    x = toolkit.device_put(np.ones((2, 2), np.int16))
    assert x.device == toolkit.devices()[0]
    assert x.itemsize == jnp.ones((2, 2), jnp.int16).itemsize == 2
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        x.device


def test_device_of_a_sharded_array_is_its_sharding(mesh):
    from toolkit.shard import NamedSharding, PartitionSpec

    sharding = NamedSharding(mesh, PartitionSpec("x", "y"))
    x = toolkit.device_put(np.ones((2, 4), np.float32), sharding)
    assert x.device == sharding


def test_copy_and_deepcopy_give_new_equal_arrays():
    x = toolkit.device_put(np.arange(4, dtype=np.float32))
    for y in (x.copy(), copy.copy(x), copy.deepcopy(x)):
        assert isinstance(y, toolkit.Array) and y is not x
        assert y.dtype == x.dtype and y.weak_type == x.weak_type
        np.testing.assert_array_equal(y, x)
    w = copy.deepcopy(tnp.asarray(1.5))
    assert w.weak_type and jnp.asarray(1.5).copy().weak_type
    x_copy = x.copy()
    x.delete()
    np.testing.assert_array_equal(x_copy, np.arange(4))  # a separate buffer


def test_copy_inside_jit_matches_jax():
    got = toolkit.jit(lambda a: a.copy() * 2)(np.ones(3, np.float32))
    want = jax.jit(lambda a: a.copy() * 2)(np.ones(3, np.float32))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weak", [False, True])
def test_pickle_round_trip_as_jax(weak):
    x = tnp.asarray(3.0) if weak else toolkit.device_put(np.arange(6, dtype=np.int32).reshape(2, 3))
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, toolkit.Array)
    assert y.dtype == x.dtype and y.shape == x.shape and y.weak_type == x.weak_type
    np.testing.assert_array_equal(y, x)
    j = jnp.asarray(3.0) if weak else jnp.arange(6, dtype=jnp.int32).reshape(2, 3)
    assert repr(pickle.loads(pickle.dumps(j))) == repr(y)


def test_conjugate_matches_jax():
    v = np.array([1 + 2j, -3j], np.complex64)
    np.testing.assert_array_equal(toolkit.device_put(v).conjugate(), jnp.asarray(v).conjugate())
    r = np.array([1.0, -2.0], np.float32)
    got, want = toolkit.device_put(r).conjugate(), jnp.asarray(r).conjugate()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("ndigits", [None, 0, 1, 2])
def test_round_matches_jax(ndigits):
    v = np.array([0.5, 1.5, 2.25, -1.555, 7.0], np.float32)
    got = round(toolkit.device_put(v), ndigits) if ndigits is not None else round(toolkit.device_put(v))
    want = round(jnp.asarray(v), ndigits) if ndigits is not None else round(jnp.asarray(v))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert got.dtype == want.dtype


@pytest.mark.parametrize("src,dst", [
    ("float32", "int32"), ("float32", "uint8"), ("float32", "int16"), ("uint8", "float32"), ("int16", "float32"),
    ("bool", "uint8"), ("uint8", "bool"), ("int8", "bool"), ("float32", "float32"),
])
def test_view_matches_jax(src, dst):
    value = (np.arange(8) % 2 if "bool" in (src, dst) else np.arange(8) + 1).astype(src).reshape(2, 4)
    got, want = toolkit.device_put(value).view(dst), jnp.asarray(value).view(dst)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("src,dst", [
    ("complex64", "float32"), ("complex64", "int32"), ("complex64", "uint8"), ("complex64", "float16"),
    ("complex64", "bool"), ("complex64", "complex64"), ("float32", "complex64"), ("int32", "complex64"),
    ("float16", "complex64"), ("bool", "complex64"),
])
def test_complex_view_matches_jax_bit_for_bit(src, dst):
    # JAX views a complex array as its parts interleaved, and makes a complex one as re + 1j * im: infinities
    # and NaNs in a part come out as JAX's arithmetic makes them, so the bits are compared.
    rng = np.random.default_rng(0)
    value = (rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))).astype(np.complex64)
    value[0, 0], value[1, 1] = complex(np.inf, np.nan), complex(-0.0, np.inf)
    samples = {"complex64": value, "float32": value.real, "float16": value.real.astype(np.float16),
               "int32": value.real.view(np.int32), "bool": np.abs(value.real) > 1}
    value = np.ascontiguousarray(samples[src], src)
    got = np.asarray(toolkit.device_put(value).view(dst))
    want = np.asarray(jnp.asarray(value).view(dst))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    jitted = np.asarray(toolkit.jit(lambda a: a.view(dst))(value))
    np.testing.assert_array_equal(jitted.view(np.uint8), want.view(np.uint8))


def test_view_in_jit_of_a_scalar_and_errors():
    got = toolkit.jit(lambda a: a.view("int32"))(np.float32(1.0))
    assert int(got) == int(jnp.float32(1.0).view(jnp.int32)) == 0x3F800000
    x = toolkit.device_put(np.ones(3, np.float32))
    assert x.view() is x
    with pytest.raises(ValueError, match="divisor"):
        toolkit.device_put(np.ones(3, np.int16)).view("float32")
    with pytest.raises(ValueError, match="0d"):
        tnp.asarray(np.float32(1)).view("int16")
    with pytest.raises(NotImplementedError, match="type"):
        x.view("int32", type=np.ndarray)
    with pytest.raises(ValueError, match="divisor"):
        jnp.ones(3, jnp.int16).view(jnp.float32)


def test_dlpack_on_cpu_matches_jax():
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = toolkit.device_put(value)
    assert x.__dlpack_device__()[0] == int(jnp.asarray(value).__dlpack_device__()[0]) == 1
    np.testing.assert_array_equal(np.from_dlpack(x), value)


def test_dlpack_of_a_sharded_array_is_a_buffer_error(mesh):
    from toolkit.shard import NamedSharding, PartitionSpec

    x = toolkit.device_put(np.ones((2, 4), np.float32), NamedSharding(mesh, PartitionSpec("x", "y")))
    with pytest.raises(BufferError, match="singular device"):
        x.__dlpack__()


@pytest.mark.x64
def test_64_bit_values_print_pickle_and_view_as_jax():
    value = np.array([1.5, -2.0], np.float64)
    x, j = toolkit.device_put(value), jnp.asarray(value)
    assert x.dtype == j.dtype == np.float64
    assert repr(x) == repr(j) and str(x) == str(j)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype == np.float64 and repr(y) == repr(pickle.loads(pickle.dumps(j)))
    got, want = x.view(np.int32), j.view(jnp.int32)
    assert got.shape == want.shape == (4,)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert x.itemsize == j.itemsize == 8


# -- the rest of jax.Array's methods --------------------------------------------------------------------------

#: jax.Array members toolkit's Array leaves out: ``format`` (a PJRT layout object; toolkit has no layouts API) and
#: ``traceback`` (JAX records where each array was made; toolkit's arrays keep no traceback).
ABSENT_MEMBERS = {"format", "traceback"}


def test_every_jax_array_member_is_here():
    ours = {n for n in dir(tnp.ones(3)) if not n.startswith("_")}
    theirs = {n for n in dir(jnp.ones(3)) if not n.startswith("_")}
    assert theirs - ours == ABSENT_MEMBERS


def _method_results(L, N):
    x, i = N.array([3.0, 1.0, 2.0, 5.0]), N.arange(5, dtype="int32")
    c = N.array([1 + 2j, 3 - 4j], dtype=np.complex64)
    cases = [lambda: x.argpartition(1), lambda: i.byteswap(), lambda: c.byteswap(), lambda: i.byteswap().byteswap(),
             lambda: i.astype("uint8").byteswap(), lambda: N.array([0, 1, 0]).choose([N.arange(3.0), N.arange(3.0) * 10]),
             lambda: x.compress(N.array([True, False, True, True])), lambda: x.nonzero(), lambda: x.ptp(),
             lambda: N.sort(x).searchsorted(2.5, side="right"), lambda: x.to_device(L.devices()[0]),
             lambda: x.tobytes(), lambda: x.is_ready(), lambda: x.platform(), lambda: x.clone(),
             lambda: type(x.unsafe_buffer_pointer()).__name__,
             lambda: L.jit(lambda v: (v.ptp(), v.nonzero(size=2), v.searchsorted(2.0), v.argpartition(1),
                                      v.compress(v > 1, size=2), v.byteswap(), v.to_device(L.devices()[0])))(x)]
    out = []
    for case in cases:
        r = case()
        out.append([np.asarray(a).tolist() for a in L.tree_util.tree_leaves(r)] if not isinstance(r, (bytes, bool, str))
                   else r)
    errors = [lambda: x.flat, lambda: x.device_buffer, lambda: x.device_buffers,
              lambda: x.to_device(L.devices()[0], stream=1)]
    for case in errors:
        with pytest.raises(Exception) as raised:
            case()
        out.append((type(raised.value).__name__, str(raised.value)))
    return out


def test_array_methods_as_jax():
    """argpartition, byteswap (complex and one-byte too), choose, compress, nonzero, ptp, searchsorted, to_device,
    eagerly and under jit, the concrete-only members, and JAX's errors for flat, device_buffer(s) and streams."""
    assert _method_results(toolkit, tnp) == _method_results(jax, jnp)


def test_clone_shares_the_buffers_as_jax():
    for lib in (toolkit, jax):
        x = lib.device_put(np.ones(3, np.float32))
        y = x.clone()
        assert y is not x and y.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
        x.delete()
        assert y.is_deleted()


class _Quantity:
    """A value of another library with its own reflected operators (a unit, a symbolic expression)."""

    def __radd__(self, other):
        return ("radd", type(other).__name__)

    def __rmatmul__(self, other):
        return ("rmatmul", type(other).__name__)

    def __eq__(self, other):
        return "quantity =="

    __hash__ = object.__hash__


# Operands toolkit.numpy takes (each operator's values are checked elsewhere: here that they still reach it), and
# ones it does not.
OPERANDS = [2, np.array([1, 2, 3], np.int16), [1, 2, 3], (1, 2, 3), {1: 2}, {1}, None, "a", object()]
BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "lshift", "rshift", "lt",
          "le", "eq", "ne", "gt", "ge", "matmul"]


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the exception's class is what is compared
        return type(e)
    if isinstance(out, tuple):
        return tuple(_outcome(lambda v=v: v) for v in out)
    return (np.asarray(out), getattr(out, "weak_type", None)) if hasattr(out, "dtype") else out


def _same_outcome(ours, theirs):
    if isinstance(ours, tuple) and len(ours) == 2 and isinstance(ours[0], np.ndarray):
        return ours[1] == theirs[1] and ours[0].dtype == theirs[0].dtype and \
            np.array_equal(ours[0], theirs[0], equal_nan=ours[0].dtype.kind in "fc")
    if isinstance(ours, tuple):
        return all(_same_outcome(a, b) for a, b in zip(ours, theirs, strict=True))
    return ours == theirs


@pytest.mark.parametrize("value", [np.array([1.5, -2.0, 3.0], np.float32), np.array(7, np.int32)], ids=str)
def test_operators_defer_to_other_operands_as_jax(value):
    # Binary operators return NotImplemented for an operand toolkit.numpy does not take, as JAX's: x == None is
    # False (it raised TypeError), x + quantity is the quantity's __radd__, lists and tuples are refused.
    import operator
    ours, theirs = tnp.asarray(value), jnp.asarray(value)
    for other in OPERANDS:
        for name in BINARY:
            op = getattr(operator, name)
            for a, b in ((lambda: op(ours, other), lambda: op(theirs, other)),
                         (lambda: op(other, ours), lambda: op(other, theirs))):
                assert _same_outcome(_outcome(a), _outcome(b)), (name, other)
        assert _same_outcome(_outcome(lambda: divmod(ours, other)), _outcome(lambda: divmod(theirs, other)))
        assert _same_outcome(_outcome(lambda: divmod(other, ours)), _outcome(lambda: divmod(other, theirs)))
    assert ours + _Quantity() == ("radd", "Array") and ours @ _Quantity() == ("rmatmul", "Array")
    assert (ours == _Quantity()) == "quantity ==" == (theirs == _Quantity())
    assert ours != "a" and not (ours == None) and ours in [None, "a", ours]  # noqa: E711 - what is tested
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Array' and 'list'"):
        ours + [1]


def test_divmod_and_bytes_as_jax():
    for value in [np.array([7.5, -3.0], np.float32), np.array([7, -3], np.int32), np.array(5, np.uint8),
                  np.array([True, False])]:
        ours, theirs = tnp.asarray(value), jnp.asarray(value)
        assert _same_outcome(_outcome(lambda: divmod(ours, 2)), _outcome(lambda: divmod(theirs, 2)))
        assert _same_outcome(_outcome(lambda: divmod(3.5, ours)), _outcome(lambda: divmod(3.5, theirs)))
        assert bytes(ours) == bytes(theirs)
    q, r = toolkit.jit(lambda x: divmod(x, 3))(tnp.arange(5))
    np.testing.assert_array_equal(q, [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(r, [0, 1, 2, 0, 1])
    for value in [np.array(True), np.array(3, np.uint8), np.array(1.5, np.float32), np.array(0, np.int32)]:
        assert bytes(tnp.asarray(value)) == bytes(jnp.asarray(value))  # a 0-d integer is an index: n zero bytes
    with pytest.raises(ValueError, match="negative count"):
        bytes(tnp.asarray(-1))
