"""``toolkit.numpy``'s host I/O (``frombuffer``, ``fromstring``, ``load``, ``save``, ``savez``, ``fromfile``,
``fromiter``) against ``jax.numpy`` 0.10.2 in the same run: values, dtypes (64-bit bytes canonicalized with x64 off,
kept with x64 on), weak types, ``bfloat16`` restored by ``load``, constants inside ``jit``, the signatures, JAX's
errors (numpy's parse errors, traced buffers, strings, files, counts and offsets, the unimplemented functions), and
toolkit's pickle rule: ``load`` never unpickles (``allow_pickle=True`` refused, object arrays and pickle files
refused before anything runs). Files are written only under ``tmp_path``."""

from __future__ import annotations

import array
import inspect
import io
import pickle

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.numpy import host_io as tio

from _oracle import assert_same, assert_same_typed, raises_like

jax = pytest.importorskip("jax")
jnp = jax.numpy

F64_BYTES = np.array([0.5, -1.25, 1 / 3], np.float64).tobytes()
I64_BYTES = np.array([1, -2, 2**40], np.int64).tobytes()


def _buffer_cases(io_module, np_module):
    """(name, result) of frombuffer and fromstring over the inputs and dtypes that differ in canonicalization."""
    return [
        ("f64_default", io_module.frombuffer(F64_BYTES)),
        ("i64_count", io_module.frombuffer(I64_BYTES, dtype=np.int64, count=2)),
        ("uint8_offset", io_module.frombuffer(b"\x00\x01\x02\x03\x04", dtype=np_module.uint8, offset=1)),
        ("positional", io_module.frombuffer(b"1234", np.uint8, 2, 1)),
        ("complex128", io_module.frombuffer(np.array([1 + 2j], np.complex128).tobytes(), dtype=complex)),
        ("bool", io_module.frombuffer(b"\x01\x00", dtype=bool)),
        ("bfloat16", io_module.frombuffer(b"\x80\x3f\x00\x40", dtype=np_module.bfloat16)),
        ("bytearray", io_module.frombuffer(bytearray(b"12"), dtype=np.uint8)),
        ("memoryview_int16", io_module.frombuffer(memoryview(b"1234"), dtype=np.int16)),
        ("python_array", io_module.frombuffer(array.array("i", [0, 1, 2]), dtype=np_module.int32)),
        ("numpy_array", io_module.frombuffer(np.arange(3, dtype=np.float32), dtype=np.uint16)),
        ("own_array", io_module.frombuffer(np_module.arange(3.0), dtype=np_module.float32)),
        ("uint64", io_module.frombuffer(np.array([2**40], np.uint64).tobytes(), dtype=np.uint64)),
        ("text_int", io_module.fromstring("1 2 3", dtype=int, sep=" ")),
        ("text_float_count", io_module.fromstring("0.1, 0.2, 0.3", dtype=float, count=2, sep=",")),
        ("text_default", io_module.fromstring("0.1 2", sep=" ")),
        ("text_complex", io_module.fromstring("1 2", dtype=complex, sep=" ")),
        ("text_bool", io_module.fromstring("1 0", dtype=bool, sep=" ")),
        ("text_uint64", io_module.fromstring("7 8", dtype=np.uint64, sep=" ")),
    ]


def _assert_cases_same(ours, theirs):
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    for (name, o), (_, t) in zip(ours, theirs):
        assert_same_typed(o, t, what=name)


def test_frombuffer_and_fromstring_values_dtypes_and_weak_types_as_jax():
    _assert_cases_same(_buffer_cases(tio, tnp), _buffer_cases(jnp, jnp))


@pytest.mark.x64
def test_64_bit_bytes_and_text_keep_64_bits_under_x64(tmp_path):
    np.save(tmp_path / "i64.npy", np.array([2**40, -1], np.int64))

    def cases(io_module):
        return [("f64", io_module.frombuffer(F64_BYTES)), ("i64", io_module.frombuffer(I64_BYTES, dtype=np.int64)),
                ("text", io_module.fromstring("1 2", dtype=int, sep=" ")),
                ("load_i64", io_module.load(tmp_path / "i64.npy"))]

    _assert_cases_same(cases(tio), cases(jnp))


def test_concrete_inputs_are_constants_inside_jit(tmp_path):
    np.save(tmp_path / "f.npy", np.array([10.0, 20.0]))

    def f(io_module, np_module):
        def run(x):
            return (x + io_module.frombuffer(b"\x01\x02", dtype=np_module.uint8),
                    x * io_module.fromstring("3 4", dtype=int, sep=" "), x + io_module.load(tmp_path / "f.npy"))
        return run

    ours, theirs = toolkit.jit(f(tio, tnp))(np.uint8(1)), jax.jit(f(jnp, jnp))(np.uint8(1))
    for name, o, t in zip(("frombuffer", "fromstring", "load"), ours, theirs):
        assert_same_typed(o, t, what=name)


def test_signatures_are_jax():
    for name in ("frombuffer", "fromstring"):
        ours, theirs = inspect.signature(getattr(tio, name)), inspect.signature(getattr(jnp, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
               [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
    # JAX's load(file, *args, **kwargs) passes numpy.load's parameters on; toolkit's names them.
    ours_load, numpy_load = inspect.signature(tio.load).parameters, inspect.signature(np.load).parameters
    assert list(ours_load)[:5] == list(numpy_load)[:5]
    assert all(ours_load[n].default == numpy_load[n].default for n in list(numpy_load)[1:5])
    # save and savez are numpy's own, in JAX and in toolkit.
    assert tio.save is jnp.save is np.save and tio.savez is jnp.savez is np.savez


@pytest.mark.parametrize("call", [
    lambda m: m.frombuffer("abc"),  # str is not a buffer: TypeError
    lambda m: m.frombuffer(b"abc", dtype=np.float32),  # size not a multiple of the item size
    lambda m: m.frombuffer(b"1234", dtype=np.uint8, count=5),
    lambda m: m.frombuffer(b"1234", dtype=np.uint8, offset=5),
    lambda m: m.frombuffer(b"1234", dtype=np.uint8, offset=-1),
    lambda m: m.frombuffer(b"12345678", dtype=object),
    lambda m: m.frombuffer(b"12", dtype="foo"),
    lambda m: m.fromstring("1 2 3"),  # sep is required (keyword-only)
    lambda m: m.fromstring("1 2 3", int, 2, " "),
    lambda m: m.fromstring("\x01\x02", dtype=np.uint8, sep=""),  # numpy 2 removed the binary mode
    lambda m: m.fromstring("ab", dtype="S1", sep=","),
    lambda m: m.fromfile("never_opened.bin"),
    lambda m: m.fromiter(range(3), dtype=int),
], ids=["str_buffer", "ragged_size", "count_too_large", "offset_past_end", "negative_offset", "object_dtype",
        "unknown_dtype", "no_sep", "sep_positional", "binary_mode", "string_dtype_text", "fromfile", "fromiter"])
def test_errors_are_jax(call):
    raises_like(lambda: call(tio), lambda: call(jnp))


def test_a_dtype_toolkit_lacks_is_a_type_error_as_in_jax():
    # JAX's message names its internal `stage`; toolkit's names the dtype. The type is JAX's.
    with pytest.raises(TypeError):
        jnp.frombuffer(b"abcd", dtype="S2")
    with pytest.raises(TypeError, match="bytes16"):
        tio.frombuffer(b"abcd", dtype="S2")


def test_traced_arguments_are_jax_errors(tmp_path):
    """A traced buffer, string or file is a TypeError, a traced count or offset an integer conversion error, a
    traced array given to save/savez an array conversion error: JAX's types (toolkit's errors are its own
    classes of the same bases)."""
    path = tmp_path / "traced.npy"  # numpy opens it before it reads the array
    array_cases = {
        "frombuffer": (lambda m, x: m.frombuffer(x), TypeError, TypeError),
        "fromstring": (lambda m, x: m.fromstring(x, sep=" "), TypeError, TypeError),
        "load": (lambda m, x: m.load(x), TypeError, TypeError),
        "save": (lambda m, x: m.save(path, x), toolkit.errors.TracerArrayConversionError,
                 jax.errors.TracerArrayConversionError),
        "savez": (lambda m, x: m.savez(path, x), toolkit.errors.TracerArrayConversionError,
                  jax.errors.TracerArrayConversionError),
    }
    for name, (call, ours, theirs) in array_cases.items():
        with pytest.raises(theirs):
            jax.jit(lambda x: call(jnp, x))(np.arange(3.0, dtype=np.float32))
        with pytest.raises(ours) as got:
            toolkit.jit(lambda x: call(tio, x))(np.arange(3.0, dtype=np.float32))
        if name in ("frombuffer", "fromstring", "load"):
            assert f"toolkit.numpy.{name}" in str(got.value) and "traced" in str(got.value), name
    integer_cases = {
        "frombuffer_count": lambda m, c: m.frombuffer(F64_BYTES, count=c),
        "frombuffer_offset": lambda m, c: m.frombuffer(F64_BYTES, offset=c),
        "fromstring_count": lambda m, c: m.fromstring("1 2 3", count=c, sep=" "),
    }
    for name, call in integer_cases.items():
        with pytest.raises(jax.errors.TracerIntegerConversionError):
            jax.jit(lambda c: call(jnp, c))(8)
        with pytest.raises(toolkit.errors.TracerIntegerConversionError):
            toolkit.jit(lambda c: call(tio, c))(8)


def test_save_writes_toolkit_arrays_and_load_reads_them_as_jax(tmp_path):
    arrays = {"f32": np.array([[1.5, -2.0]], np.float32), "bf16": np.array([1, 2.5, -3], "bfloat16"),
              "i32": np.arange(4, dtype=np.int32), "scalar": np.float32(7.0)}
    for name, value in arrays.items():
        tio.save(tmp_path / f"ours_{name}.npy", tnp.asarray(value))
        jnp.save(tmp_path / f"theirs_{name}.npy", jnp.asarray(value))
        assert (tmp_path / f"ours_{name}.npy").read_bytes() == (tmp_path / f"theirs_{name}.npy").read_bytes(), name
    np.save(tmp_path / "ours_f64.npy", np.array([0.1, 0.5]))  # numpy's 64-bit files: canonicalized on load
    np.save(tmp_path / "ours_i64.npy", np.array([2**40, 3], np.int64))
    for name in [*arrays, "f64", "i64"]:
        path = tmp_path / f"ours_{name}.npy"
        assert_same_typed(tio.load(path), jnp.load(path), what=name)
    with open(tmp_path / "ours_bf16.npy", "rb") as file:  # an open file, a memory map, numpy's header limit
        assert_same_typed(tio.load(file), jnp.load(tmp_path / "ours_bf16.npy"), what="file object")
    assert_same_typed(tio.load(tmp_path / "ours_f32.npy", mmap_mode="r", max_header_size=10000),
                      jnp.load(tmp_path / "ours_f32.npy", mmap_mode="r"), what="memory map")
    buffer = io.BytesIO()
    tio.save(buffer, tnp.arange(3, dtype=tnp.bfloat16))
    buffer.seek(0)
    assert_same_typed(tio.load(buffer), jnp.arange(3, dtype=jnp.bfloat16), what="BytesIO")
    # A dtype toolkit and JAX lack stays numpy's array.
    np.save(tmp_path / "text.npy", np.array(["a", "bc"]))
    ours, theirs = tio.load(tmp_path / "text.npy"), jnp.load(tmp_path / "text.npy")
    assert type(ours) is type(theirs) is np.ndarray
    assert_same(ours, theirs)


def test_savez_writes_toolkit_arrays_and_load_gives_numpys_npz_as_jax(tmp_path):
    tio.savez(tmp_path / "ours.npz", tnp.arange(3.0), weights=tnp.ones(2, tnp.bfloat16))
    jnp.savez(tmp_path / "theirs.npz", jnp.arange(3.0), weights=jnp.ones(2, jnp.bfloat16))
    with tio.load(tmp_path / "ours.npz") as ours, jnp.load(tmp_path / "theirs.npz") as theirs:
        assert type(ours) is type(theirs) and sorted(ours.files) == sorted(theirs.files) == ["arr_0", "weights"]
        for key in theirs.files:  # numpy arrays; bfloat16 stays numpy's V2 in an npz, as in JAX
            assert type(ours[key]) is type(theirs[key]) is np.ndarray
            assert_same(ours[key], theirs[key])


_unpickled: list[str] = []


def _record_unpickling() -> str:
    _unpickled.append("ran")
    return "ran"


class _RunsWhenUnpickled:
    """Pickles to a call of ``_record_unpickling``: any unpickling of it is seen in ``_unpickled``."""

    def __reduce__(self):
        return _record_unpickling, ()


def test_load_never_unpickles(tmp_path):
    objects = np.array([_RunsWhenUnpickled(), 1], dtype=object)
    np.save(tmp_path / "objects.npy", objects, allow_pickle=True)
    (tmp_path / "plain.pickle").write_bytes(pickle.dumps(_RunsWhenUnpickled()))
    np.savez(tmp_path / "objects.npz", numbers=np.arange(2), objects=objects)
    _unpickled.clear()
    # numpy's refusals, as JAX's (allow_pickle=False by default).
    for name in ("objects.npy", "plain.pickle"):
        raises_like(lambda: tio.load(tmp_path / name), lambda: jnp.load(tmp_path / name))
    with tio.load(tmp_path / "objects.npz") as ours, jnp.load(tmp_path / "objects.npz") as theirs:
        assert_same(ours["numbers"], theirs["numbers"])
        raises_like(lambda: ours["objects"], lambda: theirs["objects"])
    # toolkit's rule: allow_pickle=True (by keyword or position) is refused before the file is read.
    for call in (lambda p: tio.load(p, allow_pickle=True), lambda p: tio.load(p, None, True),
                 lambda p: tio.load(p, allow_pickle=1)):
        for name in ("objects.npy", "plain.pickle", "objects.npz"):
            with pytest.raises(ValueError, match="allow_pickle=True.*never unpickles"):
                call(tmp_path / name)
    assert _unpickled == []
