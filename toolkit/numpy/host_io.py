"""Arrays from and to host bytes and files, as ``jax.numpy`` 0.10.2 has them: ``frombuffer`` and ``fromstring``
(numpy parses on the host, the result becomes a toolkit array), ``load`` (numpy's ``.npy`` reader, ``bfloat16``
restored), numpy's own ``save`` and ``savez``, and ``fromfile``/``fromiter``, which JAX leaves unimplemented.

The results are host values made arrays, so 64-bit dtypes follow the x64 switch (``frombuffer`` of ``float64``
bytes is ``float32`` with x64 off) and none is weakly typed. Every function needs concrete inputs: a traced buffer,
string or file is a ``TypeError``, a traced ``count``/``offset`` a ``TracerIntegerConversionError``, as in JAX; a
concrete input inside ``jit`` becomes a constant of the trace.

toolkit never unpickles what it reads: ``load`` refuses ``allow_pickle=True`` (JAX passes it on to numpy) and
numpy's reader then refuses object arrays and pickle files with its ``ValueError``.

Example::

    tnp.save(path, tnp.arange(3, dtype=tnp.bfloat16))
    tnp.load(path)                                      # Array([0, 1, 2], dtype=bfloat16)
    tnp.frombuffer(b"\\x01\\x02", dtype=tnp.uint8)       # Array([1, 2], dtype=uint8)
"""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any, Literal, NoReturn

import numpy as np

from toolkit.array import Array
from toolkit.core import dtypes
from toolkit.core.tracing import Tracer
from toolkit.numpy._core import asarray

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

#: numpy's writers, as ``jax.numpy`` re-exports them: they take toolkit arrays (``np.asanyarray`` reads their
#: values; a traced value is a ``TracerArrayConversionError``). Writing is not reading: the pickle rule is ``load``'s.
save = np.save
savez = np.savez

_PURE_FUNCTIONS_URL = "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"


def _refuse_traced(function: str, parameter: str, value: Any) -> None:
    # numpy would say "a bytes-like object is required, not 'Tracer'"; say why instead (same type: TypeError).
    if isinstance(value, Tracer):
        raise TypeError(f"toolkit.numpy.{function} reads its {parameter} on the host while tracing, so it needs a "
                        f"concrete value, not the traced value {value!r}; pass the {parameter} from outside the "
                        "traced function (it becomes a constant)")


def frombuffer(buffer: bytes | Any, dtype: DTypeLike = float, count: int = -1, offset: int = 0) -> Array:
    """The bytes of ``buffer`` read as a 1-D array of ``dtype`` (numpy's ``frombuffer``), as a toolkit array.

    ``buffer`` is a bytes-like object (bytes, bytearray, memoryview, a numpy array, anything with the buffer
    protocol) or a concrete toolkit array (its bytes on the host). ``dtype`` parses the bytes (``float64`` by
    default) before the result is canonicalized: with x64 off ``float64`` bytes give ``float32``, ``int64`` give
    ``int32``. ``count`` items (all with -1) are read after skipping ``offset`` bytes. The result is not weakly
    typed. numpy's errors stay: a size not a multiple of the item size, an ``offset`` past the end or a ``count``
    too large are ``ValueError``; a non-buffer is a ``TypeError``; a dtype toolkit lacks (``S2``) is a
    ``TypeError``.
    """
    _refuse_traced("frombuffer", "buffer", buffer)
    if isinstance(buffer, Array):
        # JAX's Array exports the buffer protocol (its host copy); toolkit's reads the same bytes through numpy.
        buffer = np.asarray(buffer)
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: DTypeLike = float, count: int = -1, *, sep: str) -> Array:
    """The numbers in the text ``string`` separated by ``sep`` as a 1-D array of ``dtype`` (numpy's ``fromstring``
    in text mode), as a toolkit array.

    ``sep`` is required (numpy 2 removed the binary mode: ``sep=""`` is its ``ValueError``; use ``frombuffer``).
    ``dtype`` is ``float64`` by default and canonicalized as in ``frombuffer``; ``count`` items are read (all with
    -1). The result is not weakly typed.
    """
    _refuse_traced("fromstring", "string", string)
    return asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def _impure(function: str, consumed: str) -> NoReturn:
    # JAX's text, naming toolkit's functions.
    raise NotImplementedError(
        f"toolkit.numpy.{function}() is not implemented because it may be non-pure and thus unsafe for use "
        f"with JIT and other JAX transformations. Consider using toolkit.numpy.asarray(np.{function}(...)) "
        f"instead, although care should be taken if np.{function} is used within a jax transformations "
        f"because of its potential side-effect of consuming the {consumed} object; for more information see "
        f"{_PURE_FUNCTIONS_URL}")


def fromfile(*args: Any, **kwargs: Any) -> NoReturn:
    """Unimplemented, as in JAX: reading a file is a side effect (it consumes the file object) that ``jit`` and the
    other transformations cannot see. Always raises ``NotImplementedError``; use
    ``toolkit.numpy.asarray(np.fromfile(...))`` outside traced functions."""
    _impure("fromfile", "file")


def fromiter(*args: Any, **kwargs: Any) -> NoReturn:
    """Unimplemented, as in JAX: it consumes the iterable, a side effect the transformations cannot see. Always
    raises ``NotImplementedError``; use ``toolkit.numpy.asarray(np.fromiter(...))`` outside traced functions."""
    _impure("fromiter", "iterable")


def load(file: IO[bytes] | str | os.PathLike[Any], mmap_mode: Literal["r+", "r", "w+", "c"] | None = None,
         allow_pickle: bool = False, fix_imports: bool = True, encoding: Literal["ASCII", "latin1", "bytes"] = "ASCII",
         **kwargs: Any) -> Any:
    """The array of a ``.npy`` file as a toolkit array (numpy's ``load``, with ``bfloat16`` restored).

    The parameters are ``numpy.load``'s (JAX's ``load(file, *args, **kwargs)`` passes them on; ``kwargs`` is
    ``max_header_size``). numpy writes ``bfloat16`` as the raw type ``V2``; a ``.npy`` array of that type is read
    back as ``bfloat16``. The array is canonicalized as every host value (``float64`` is ``float32`` with x64 off)
    and not weakly typed; one of a dtype toolkit lacks (strings) stays a numpy array, as in JAX. A ``.npz`` file
    gives numpy's ``NpzFile`` of numpy arrays (no ``bfloat16`` restored), as in JAX.

    Differs from JAX: ``allow_pickle=True`` is a ``ValueError``. toolkit never unpickles serialized data (a pickle
    runs arbitrary code when read); with ``allow_pickle=False`` numpy refuses object arrays and pickle files with
    its ``ValueError`` before reading any pickled byte.
    """
    if allow_pickle:
        raise ValueError(
            "toolkit.numpy.load does not take allow_pickle=True: toolkit never unpickles serialized data (reading a "
            "pickle can run arbitrary code). Object arrays and pickle files are refused; save numeric arrays "
            "(toolkit.numpy.save, savez) instead.")
    _refuse_traced("load", "file", file)
    out = np.load(file, mmap_mode, False, fix_imports, encoding, **kwargs)
    if isinstance(out, np.ndarray):
        # numpy does not know bfloat16: np.save wrote it as two raw bytes per item (V2), which are its bits.
        if out.dtype == "V2":
            out = out.view(dtypes.bfloat16)
        try:
            return asarray(out)
        except TypeError:  # a dtype toolkit lacks (strings, other raw types): numpy's array, as JAX returns it
            return out
    return out
