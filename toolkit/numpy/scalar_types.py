"""``toolkit.numpy``'s scalar types: ``float32``, ``int8``, ``bfloat16``, ... as ``jax.numpy`` has them.

Each is a class that stands for its dtype wherever a dtype is taken (``zeros(3, float32)``,
``np.dtype(float32)``, ``x.dtype == float32``) and, called, makes an array of that type:
``float32(1.5)`` is ``array(1.5, dtype=float32)`` (strongly typed, like JAX's), ``int8(300)`` is an
``OverflowError`` as in JAX, ``float32([1, 2])`` converts the list. (JAX's ``_ScalarMeta``.)
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit.core import dtypes
from toolkit.numpy._core import asarray


class _ScalarMeta(type):
    """The metaclass of the scalar types: compares and hashes like JAX's, converts when called."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other or cls.dtype == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        """``x`` (a number, string, array or nested list) as an array of this type."""
        if isinstance(x, str):
            x = np.asarray(x).astype(cls.dtype)  # numpy parses the number ("1.5")
        return asarray(x, cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __getattr__(cls, name: str) -> Any:
        # Beyond JAX: the dtype's attributes (itemsize, kind, name...) are the type's, so code written when
        # these names were numpy dtypes keeps working.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls.dtype, name)

    def __repr__(cls) -> str:
        return f"<class 'toolkit.numpy.{cls.__name__}'>"


def _make_scalar_type(name: str, dtype: np.dtype) -> type:
    return _ScalarMeta(name, (object,), {"dtype": dtype, "__module__": "toolkit.numpy",
                                          "__doc__": f"The ``{dtype.name}`` type: ``{name}(x)`` is ``x`` as an "
                                                     f"array of ``{dtype.name}``."})


bool_ = _make_scalar_type("bool_", dtypes.bool_)
int8 = _make_scalar_type("int8", dtypes.int8)
int16 = _make_scalar_type("int16", dtypes.int16)
int32 = _make_scalar_type("int32", dtypes.int32)
int64 = _make_scalar_type("int64", dtypes.int64)
uint8 = _make_scalar_type("uint8", dtypes.uint8)
uint16 = _make_scalar_type("uint16", dtypes.uint16)
uint32 = _make_scalar_type("uint32", dtypes.uint32)
uint64 = _make_scalar_type("uint64", dtypes.uint64)
bfloat16 = _make_scalar_type("bfloat16", dtypes.bfloat16)
float16 = _make_scalar_type("float16", dtypes.float16)
float32 = _make_scalar_type("float32", dtypes.float32)
float64 = _make_scalar_type("float64", dtypes.float64)
complex64 = _make_scalar_type("complex64", dtypes.complex64)
complex128 = _make_scalar_type("complex128", dtypes.complex128)
float8_e3m4 = _make_scalar_type("float8_e3m4", np.dtype(getattr(ml_dtypes, "float8_e3m4")))
float8_e4m3 = _make_scalar_type("float8_e4m3", np.dtype(getattr(ml_dtypes, "float8_e4m3")))
float8_e4m3b11fnuz = _make_scalar_type("float8_e4m3b11fnuz", np.dtype(getattr(ml_dtypes, "float8_e4m3b11fnuz")))
float8_e4m3fn = _make_scalar_type("float8_e4m3fn", np.dtype(getattr(ml_dtypes, "float8_e4m3fn")))
float8_e4m3fnuz = _make_scalar_type("float8_e4m3fnuz", np.dtype(getattr(ml_dtypes, "float8_e4m3fnuz")))
float8_e5m2 = _make_scalar_type("float8_e5m2", np.dtype(getattr(ml_dtypes, "float8_e5m2")))
float8_e5m2fnuz = _make_scalar_type("float8_e5m2fnuz", np.dtype(getattr(ml_dtypes, "float8_e5m2fnuz")))
float8_e8m0fnu = _make_scalar_type("float8_e8m0fnu", np.dtype(getattr(ml_dtypes, "float8_e8m0fnu")))
float4_e2m1fn = _make_scalar_type("float4_e2m1fn", np.dtype(getattr(ml_dtypes, "float4_e2m1fn")))
int2 = _make_scalar_type("int2", np.dtype(getattr(ml_dtypes, "int2")))
int4 = _make_scalar_type("int4", np.dtype(getattr(ml_dtypes, "int4")))
uint2 = _make_scalar_type("uint2", np.dtype(getattr(ml_dtypes, "uint2")))
uint4 = _make_scalar_type("uint4", np.dtype(getattr(ml_dtypes, "uint4")))

#: numpy's abstract-free aliases JAX also has.
single, double = float32, float64
csingle, cdouble = complex64, complex128
#: JAX's names for the 64-bit defaults (``int32``/``float32``/... with x64 off, when called).
int_, uint, float_, complex_ = int64, uint64, float64, complex128

#: numpy's abstract scalar classes, for ``issubdtype`` (JAX re-exports numpy's).
generic, number, integer, signedinteger, unsignedinteger = (
    np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger)
inexact, floating, complexfloating, character, flexible, object_ = (
    np.inexact, np.floating, np.complexfloating, np.character, np.flexible, np.object_)
