"""The :class:`Ref` box and jit's discharge of Refs (see :mod:`toolkit.refs` for the public functions).

Kept in core, with no array imports (a Ref reads and writes through its value's own ``[...]`` and ``.at``),
so that ``toolkit.stages`` can discharge Refs without importing toolkit.numpy.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Callable

import numpy as np

from toolkit.core import pytrees, tracing
from toolkit.core.avals import ShapeDtypeStruct
from toolkit.core.dynamic_slices import Slice


class RefWriteError(ValueError):
    """A Ref written where toolkit cannot carry the write back (a control-flow body or a freed Ref)."""


class AbstractRef:
    """The type of a :class:`Ref`: its value's shape and dtype (JAX's ``jax.ref.AbstractRef``)."""

    def __init__(self, inner_aval: Any):
        self.inner_aval = inner_aval
        self.shape = tuple(inner_aval.shape)
        self.dtype = np.dtype(inner_aval.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractRef) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((AbstractRef, self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"Ref{{{self.dtype.name}{list(self.shape)}}}"


class Ref:
    """A mutable array reference: ``ref[idx]`` reads, ``ref[idx] = v`` writes (see the module docstring)."""

    __slots__ = ("_value", "_builder", "_state", "__weakref__")

    def __init__(self, value: Any):
        self._value = value
        self._builder = tracing.current_builder()  # the trace allowed to write it
        self._state = "live"

    def _alive(self, what: str) -> None:
        if self._state != "live":
            raise RefWriteError(f"cannot {what} a Ref that was already {self._state}")

    def _check_write(self) -> None:
        self._alive("write")
        if tracing.current_builder() is not self._builder:
            raise RefWriteError(
                f"a Ref made outside this traced body was written inside it (here: {_enclosing_case()}; in "
                "general a lax.cond/while_loop/scan/fori_loop body, a jit closing over the Ref, or a "
                "transformation such as grad/vmap): "
                "toolkit does not thread Ref writes through control flow; carry the value explicitly, or pass "
                "the Ref as an argument of the jitted function")

    @property
    def shape(self) -> tuple:
        """The value's shape."""
        return tuple(self._value.shape)

    @property
    def dtype(self) -> np.dtype:
        """The value's dtype."""
        return np.dtype(self._value.dtype)

    @property
    def ndim(self) -> int:
        """The value's rank."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def aval(self) -> AbstractRef:
        """The Ref's type (:class:`AbstractRef`)."""
        return AbstractRef(ShapeDtypeStruct(self.shape, self.dtype))

    def __array__(self, dtype: Any = None, context: Any = None, copy: bool | None = None) -> np.ndarray:
        # np.asarray(ref): the value (without this numpy would iterate, and clamped indices never end); numpy
        # keeps what this returns for np.array(ref) (copy=True), so the copy is asked of the value's conversion.
        self._alive("read")
        return np.asarray(self._value, dtype=dtype) if copy is None else np.asarray(self._value, dtype=dtype, copy=copy)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx: Any) -> Any:
        self._alive("read")
        if _whole(idx):
            return self._value
        self._check_static_slices(idx)
        return self._value[idx]

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._check_write()
        if _whole(idx):
            self._value = self._value.at[...].set(value)  # cast to the Ref's dtype and broadcast, as JAX's
        else:
            self._check_static_slices(idx)
            self._value = self._value.at[idx].set(value)

    def _check_static_slices(self, idx: Any) -> None:
        # JAX's Ref indexing refuses a ds() with a static start that does not fit (arrays clamp instead).
        items = idx if isinstance(idx, tuple) else (idx,)
        if any(item is Ellipsis or item is None for item in items):
            return  # positions not fixed: the array indexing checks the rest
        for dim, item in enumerate(items):
            if (isinstance(item, Slice) and isinstance(item.start, int) and dim < self.ndim
                    and not 0 <= item.start <= self.shape[dim] - item.extent):
                raise ValueError(f"Out of bound slice: start={item.start}, size={item.size}, stride={item.stride}, "
                                 f"dim={self.shape[dim]}.")

    def get(self, idx: Any = ()) -> Any:
        """``ref[idx]``."""
        return self[... if _whole(idx) else idx]

    def set(self, value: Any, idx: Any = ()) -> None:
        """``ref[idx] = value``."""
        self[... if _whole(idx) else idx] = value

    def __repr__(self) -> str:
        if self._state != "live":
            return f"Ref(<{self._state}>)"
        return f"Ref({self._value!r})"


_CASES = {"cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan", "custom_root",
          "custom_linear_solve", "grad", "value_and_grad", "vjp", "jvp", "linearize", "vmap", "checkpoint",
          "remat", "shard_map", "jacfwd", "jacrev", "hessian"}


def _enclosing_case() -> str:
    """The outermost toolkit transformation or control-flow function the current Python call runs in (read
    from the call stack, only to word the error)."""
    frame = sys._getframe(2)
    found: list[str] = []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_qualname.split(".<locals>")[0]  # grad's inner `wrapped` counts as grad
        if module.startswith("toolkit."):
            if name in _CASES:
                found.append(f"lax.{name}" if module.startswith("toolkit.lax") else name)
            elif module == "toolkit.stages" and name == "Wrapped.__call__":
                found.append("jit")
        elif found:
            break  # back in the user's code: the outermost toolkit call found is the case
        frame = frame.f_back  # type: ignore[assignment]
    return found[-1] if found else "a separately traced body"


def _whole(idx: Any) -> bool:
    """Whether ``idx`` selects the whole value (``...`` or ``()``); never compares a traced index."""
    return idx is Ellipsis or (type(idx) is tuple and len(idx) == 0)


def _require_ref(ref: Any, what: str) -> None:
    if not isinstance(ref, Ref):
        raise TypeError(f"{what}: expected a Ref (toolkit.new_ref), got {type(ref).__name__}")


def has_refs(args: tuple, kwargs: dict) -> bool:
    """Whether any leaf of the call's arguments is a :class:`Ref`."""
    return any(isinstance(leaf, Ref) for leaf in pytrees.tree_leaves((args, kwargs)))


_DISCHARGED: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def call_with_refs(wrapped: Any, args: tuple, kwargs: dict, make_jit: Callable[..., Any]) -> Any:
    """Call the jitted ``wrapped`` with Refs among its arguments, discharging them as JAX does: a jitted
    function of the values that also returns each Ref's final value; the boxes are updated afterwards."""
    jitted, values, refs = _discharged(wrapped, args, kwargs, make_jit)
    out, finals = jitted(*values)
    for r, v in zip(refs, finals):
        r._value = v
    return out


def trace_with_refs(wrapped: Any, args: tuple, kwargs: dict, make_jit: Callable[..., Any]) -> Any:
    """``wrapped.trace(...)`` with Refs among the arguments: the discharged function's trace (flat argument
    leaves in; the outputs, then each Ref's final value, out). The Refs are not changed."""
    jitted, values, _ = _discharged(wrapped, args, kwargs, make_jit)
    return jitted.trace(*values)


def _discharged(wrapped: Any, args: tuple, kwargs: dict, make_jit: Callable[..., Any]) -> tuple[Any, list, list]:
    """``(jitted, values, refs)``: the discharged jitted function (cached per argument structure), the flat
    argument leaves with each Ref replaced by its value, and the Refs in order."""
    if getattr(wrapped, "_has_static", False):
        raise NotImplementedError(f"{wrapped.name}: Refs passed to a jitted function with static arguments are "
                                  "not supported; close over the static values instead")
    leaves, tree = pytrees.tree_flatten((args, kwargs))
    positions = tuple(i for i, leaf in enumerate(leaves) if isinstance(leaf, Ref))
    refs = [leaves[i] for i in positions]
    if len({id(r) for r in refs}) != len(refs):
        raise RefWriteError(f"{wrapped.name}: the same Ref is passed twice (aliased Refs are not supported)")
    for r in refs:
        r._check_write()
    cache = _DISCHARGED.setdefault(wrapped, {})
    jitted = cache.get((tree, positions))
    if jitted is None:
        fun = wrapped.fun

        def discharged(*flat: Any) -> Any:
            flat_list = list(flat)
            inner = [Ref(flat_list[i]) for i in positions]
            for i, r in zip(positions, inner):
                flat_list[i] = r
            a, k = pytrees.tree_unflatten(tree, flat_list)
            out = fun(*a, **k)
            for r in inner:
                r._alive("return")
            return out, [r._value for r in inner]

        discharged.__name__ = getattr(wrapped, "name", "discharged")
        jitted = cache[(tree, positions)] = make_jit(discharged)
    return jitted, [leaf._value if isinstance(leaf, Ref) else leaf for leaf in leaves], refs
