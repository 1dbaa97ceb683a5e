"""Abstract values: what the tracer knows about an array without its data.

A shape is a tuple whose entries are ``int`` or symbolic dimension
expressions (see ``toolkit.core.shape_poly``); every shape rule is written with
plain arithmetic on the entries so both kinds work.

Example::

    >>> ShapedArray((2, 3), np.float32)
    ShapedArray(float32[2,3])
    >>> ShapeDtypeStruct((4,), "int32")
    ShapeDtypeStruct(shape=(4,), dtype=int32)
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes

DimSize = Any  # int, or a symbolic dimension expression
Shape = tuple[DimSize, ...]


def is_constant_dim(d: Any) -> bool:
    return type(d) is int or isinstance(d, (int, np.integer))


def canonicalize_shape(shape: Any, what: str = "shape") -> Shape:
    """Normalise a shape to a tuple of ints (or symbolic dimensions)."""
    if isinstance(shape, (int, np.integer)) or _is_symbolic(shape):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of dimension sizes, got {shape!r}") from None
    result = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)):
            raise TypeError(f"{what} entries must be integers, got {d!r} in {shape!r}")
        if isinstance(d, (int, np.integer)):
            d = operator.index(d)
            if d < 0:
                raise ValueError(f"{what} entries must be non-negative, got {d} in {tuple(shape)!r}")
            result.append(d)
        elif _is_symbolic(d):
            result.append(d)
        else:
            raise TypeError(f"{what} entries must be integers or symbolic dimensions, got {d!r} in {shape!r}")
    return tuple(result)


def _is_symbolic(d: Any) -> bool:
    return getattr(d, "_is_symbolic_dim", False)


def shape_size(shape: Shape) -> DimSize:
    """The number of elements; symbolic when a dimension is."""
    return math.prod(shape) if all(type(d) is int for d in shape) else _symbolic_prod(shape)


def _symbolic_prod(shape: Shape) -> DimSize:
    size: DimSize = 1
    for d in shape:
        size = size * d
    return size


def is_static_shape(shape: Shape) -> bool:
    """True when every dimension of ``shape`` is a plain ``int`` (no symbolic dimension)."""
    return all(type(d) is int for d in shape)


def format_shape(shape: Shape) -> str:
    return ",".join(str(d) for d in shape)


class ShapedArray:
    """An array's shape, dtype and whether its dtype is weak (from a Python scalar).

    Immutable and hashable: used as part of jit's cache keys.
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "_hash")

    def __init__(self, shape: Sequence[DimSize], dtype: Any, weak_type: bool = False, sharding: Any = None):
        self.shape = shape if type(shape) is tuple and all(type(d) is int for d in shape) else canonicalize_shape(shape)
        self.dtype = dtypes.check_dtype(dtype)  # as given: values are canonicalized where they enter (aval_of)
        self.weak_type = bool(weak_type)
        #: None, or (explicit sharding, "sharding in types") a ``NamedSharding`` over an
        #: ``AbstractMesh`` with Explicit axes whose spec has one entry per dimension
        #: (see ``toolkit.core.sharding_types``). jaxlib's device_put reads it too.
        self.sharding = sharding
        self._hash: int | None = None  # computed on the first hash()

    @property
    def ndim(self) -> int:
        """The rank (number of dimensions)."""
        return len(self.shape)

    @property
    def size(self) -> DimSize:
        """The number of elements (symbolic for a symbolic shape)."""
        return shape_size(self.shape)

    _NO_SHARDING = object()

    def update(self, shape: Sequence[DimSize] | None = None, dtype: Any = None,
               weak_type: bool | None = None, sharding: Any = _NO_SHARDING) -> "ShapedArray":
        """A copy with the given fields replaced (``sharding=None`` drops an explicit sharding)."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           self.sharding if sharding is ShapedArray._NO_SHARDING else sharding)

    def strip_weak_type(self) -> "ShapedArray":
        """The same type without the weak-type flag."""
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False, self.sharding)

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            sharding = self.sharding
            h = self._hash = hash((self.shape, self.dtype, self.weak_type) if sharding is None
                                  else (self.shape, self.dtype, self.weak_type, sharding))
        return h

    def _dims_text(self) -> str:
        sharding = self.sharding
        if sharding is None:
            return format_shape(self.shape)
        return format_sharded_shape(self.shape, sharding.spec)

    def str_short(self) -> str:
        """``f32[2,3]``-style text (``f32[8@x,4]`` when explicitly sharded), as in the program printout."""
        return f"{short_dtype_name(self.dtype)}[{self._dims_text()}]"

    def __str__(self) -> str:
        """JAX's ``str(jax.typeof(x))``: ``float32[8@x,4]``, ``~float32[]`` when weakly typed."""
        weak = "~" if self.weak_type else ""
        return f"{weak}{_long_dtype_name(self.dtype)}[{self._dims_text()}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({_long_dtype_name(self.dtype)}[{self._dims_text()}]{weak})"


class AbstractToken(ShapedArray):
    """The abstract value of an XLA token (JAX's ``core.AbstractToken``): orders effects, holds no data.

    There is one, :data:`abstract_token`. It is a ``ShapedArray`` of ``bool[0]`` so that the layers
    handling values by shape and dtype (placement, result buffers, cache keys) treat a token as JAX's
    runtime does (``core.get_token_aval()``: a token crosses a jit boundary as an empty bool buffer);
    the lowering gives it the MLIR type ``!stablehlo.token``, and ``toolkit.lax.after_all`` accepts only
    it. Printed as JAX prints it: ``AbstractToken()``, ``Tok`` in a program.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__((0,), np.dtype(np.bool_))

    def update(self, shape: Sequence[DimSize] | None = None, dtype: Any = None,
               weak_type: bool | None = None, sharding: Any = ShapedArray._NO_SHARDING) -> ShapedArray:
        """The token itself: a token has no shape, dtype, weak type or sharding to replace (JAX's has none)."""
        return self

    def strip_weak_type(self) -> "AbstractToken":
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractToken

    def __hash__(self) -> int:
        return hash(AbstractToken)

    def str_short(self) -> str:
        return "Tok"

    def __str__(self) -> str:
        return "AbstractToken()"

    __repr__ = __str__


#: The token type: what ``toolkit.lax.create_token`` and ``after_all`` return and ``typeof`` gives for a token.
abstract_token = AbstractToken()


def _long_dtype_name(dtype: np.dtype) -> str:
    return "float0" if dtype == dtypes.float0 else dtype.name  # numpy calls float0 "void"


def _spec_entry_text(entry: Any) -> str:
    if isinstance(entry, tuple):
        return "(" + ",".join(str(n) for n in entry) + ")"
    if repr(entry) == "UNCONSTRAINED":
        return "?"
    return str(entry)


def format_sharded_shape(shape: Shape, spec: Sequence[Any]) -> str:
    """``8@x,4``: each dimension followed by ``@`` and the mesh axes splitting it (JAX's type text)."""
    parts = []
    for i, d in enumerate(shape):
        entry = spec[i] if i < len(spec) else None
        parts.append(str(d) if entry is None else f"{d}@{_spec_entry_text(entry)}")
    return ",".join(parts)


_SHORT_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def short_dtype_name(dtype: np.dtype) -> str:
    if dtype == dtypes.float0:
        return "float0"  # numpy names it "void"
    return _SHORT_NAMES.get(dtype.name, dtype.name)


class ShapeDtypeStruct:
    """A shape, a dtype and an optional sharding: an argument spec for ``trace``, ``lower`` and ``export``.

    ``shape`` entries may be symbolic dimensions (``toolkit.export.symbolic_shape``).
    """

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Sequence[DimSize], dtype: Any, *, sharding: Any = None,
                 weak_type: bool = False):
        self.shape = canonicalize_shape(shape)
        self.dtype = dtypes.check_dtype(dtype)  # as given: values are canonicalized where they enter (aval_of)
        self.sharding = sharding
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        """The rank (number of dimensions)."""
        return len(self.shape)

    @property
    def size(self) -> DimSize:
        """The number of elements (symbolic for a symbolic shape)."""
        return shape_size(self.shape)

    def update(self, **changes: Any) -> "ShapeDtypeStruct":
        """A copy with ``shape``, ``dtype``, ``sharding`` and/or ``weak_type`` replaced (JAX's ``update``).

        JAX's ``is_ref`` and ``manual_axis_type`` are accepted at their defaults only (toolkit's specs have
        neither); any other name is a ``TypeError`` (JAX ignores unknown names).
        """
        for name, default in (("is_ref", False), ("manual_axis_type", None)):
            if changes.pop(name, default) != default:
                raise TypeError(f"ShapeDtypeStruct.update: {name} is not supported by toolkit's ShapeDtypeStruct")
        unknown = set(changes) - {"shape", "dtype", "sharding", "weak_type"}
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: unexpected field(s) {sorted(unknown)}; expected shape, dtype, "
                            "sharding or weak_type")
        return ShapeDtypeStruct(changes.get("shape", self.shape), changes.get("dtype", self.dtype),
                                sharding=changes.get("sharding", self.sharding),
                                weak_type=changes.get("weak_type", self.weak_type))

    def to_aval(self) -> ShapedArray:
        """The ``ShapedArray`` this describes (with its sharding in the type when it has one)."""
        if self.sharding is None:
            return ShapedArray(self.shape, self.dtype, self.weak_type)
        from toolkit.core.sharding_types import type_sharding  # function-level: sharding_types imports avals
        return ShapedArray(self.shape, self.dtype, self.weak_type, type_sharding(self.sharding, len(self.shape)))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.sharding == other.sharding
                and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.sharding, self.weak_type))

    def __repr__(self) -> str:
        sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"


def aval_of(x: Any) -> ShapedArray:
    """The abstract value of a concrete argument (array, numpy value, Python scalar, spec)."""
    aval = getattr(x, "aval", None)
    if type(aval) is ShapedArray or aval is abstract_token:
        return aval
    if x is abstract_token:  # the token type as a spec (jit(f).trace(abstract_token)): a token argument
        return x
    if isinstance(x, ShapeDtypeStruct):  # jit(f).lower(spec): a float64 spec is lowered as float32 with x64 off (JAX)
        aval = x.to_aval()
        canonical = dtypes.canonicalize_dtype(aval.dtype)
        return aval if canonical == aval.dtype else aval.update(dtype=canonical)
    if dtypes.is_python_scalar(x):  # weakly typed, but for bool (as in JAX: a bool has only one type)
        return ShapedArray((), dtypes.dtype_of(x), weak_type=type(x) is not bool)
    if isinstance(x, (np.ndarray, np.generic)):  # numpy's 64-bit types are 32-bit with x64 off (JAX)
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        # Another library's array keeps the type it was made with (a JAX array made under x64); a spec or
        # host value is canonicalized like a numpy one.
        if not hasattr(x, "aval"):
            dtype = dtypes.canonicalize_dtype(dtype)
        return ShapedArray(shape, dtype, getattr(x, "weak_type", False))
    raise TypeError(f"a value of type {type(x).__name__} is not a valid toolkit array or spec: {x!r}")


def leaf_avals(leaves: Any, what: str, hint: str = "") -> list[ShapedArray]:
    """The abstract values of a function's flat argument leaves (see :func:`aval_of`).

    A leaf that is not an array or spec is a ``TypeError`` naming it:
    ``"{what}: argument leaf {i} of type {type} is not an array{hint}"``.
    """
    avals = []
    for i, leaf in enumerate(leaves):
        try:
            avals.append(aval_of(leaf))
        except TypeError:
            raise TypeError(f"{what}: argument leaf {i} of type {type(leaf).__name__} is not an array{hint}") from None
    return avals


@dataclass(frozen=True)
class ArgInfo:
    """What ``jax.stages``' ``args_info`` reports for one argument leaf: its abstract value and whether it is donated."""

    aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple:
        """The argument's shape."""
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        """The argument's dtype."""
        return self.aval.dtype
