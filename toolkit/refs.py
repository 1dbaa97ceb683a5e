"""Mutable array references (JAX's ``jax.new_ref`` / ``jax.ref``): a Python box whose value is replaced.

A :class:`Ref` holds an array; ``ref[...]`` reads it, ``ref[idx] = v`` replaces it with ``value.at[idx].set(v)``
(a functional update: ``dynamic_update_slice`` for ``ds`` items, else a scatter). Eagerly and inside a trace a
Ref is plain state of the Python program: the traced program only sees the values. A Ref passed INTO a jitted
function is discharged, as JAX does: the function takes its value and returns its final value, and the box is
updated after the call (:func:`call_with_refs`, which ``toolkit.jit`` calls).

A Ref may only be written in the trace that made it (or, for a Ref passed to jit, that jit's trace): a write
from a ``lax.cond``/``while_loop``/``scan``/``fori_loop`` body or a nested transformation to a Ref of an
enclosing trace raises :class:`RefWriteError` (thread the value as a carry instead): never a leaked tracer.
"""

from __future__ import annotations

from typing import Any

from toolkit.core.mutable_refs import (  # noqa: F401  (re-exported: the Ref box and jit's discharge live in core)
    AbstractRef, Ref, RefWriteError, _require_ref, _whole, call_with_refs, has_refs)
from toolkit.numpy import asarray, zeros


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new :class:`Ref` holding ``init_val`` (JAX's ``jax.new_ref``). ``memory_space`` (a Pallas notion) must
    be None; ``kind`` is None or ``'no_grad_no_remat'`` (accepted, with no effect: toolkit has no Ref effects)."""
    if memory_space is not None:
        raise NotImplementedError(f"new_ref: memory_space={memory_space!r} is not supported (toolkit has one "
                                  "memory space)")
    if kind not in (None, "no_grad_no_remat"):
        raise ValueError(f"new_ref: kind must be None or 'no_grad_no_remat', got {kind!r}")
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: init_val is already a Ref; read it with ref[...] first")
    return Ref(asarray(init_val))


def empty_ref(ty: Any, *, memory_space: Any = None) -> Ref:
    """A new :class:`Ref` of type ``ty`` (a ShapeDtypeStruct, an array or an :class:`AbstractRef`'s inner type).
    JAX leaves it uninitialized; toolkit fills it with zeros."""
    inner = ty.inner_aval if isinstance(ty, AbstractRef) else ty
    if not (hasattr(inner, "shape") and hasattr(inner, "dtype")):
        raise TypeError(f"empty_ref: expected a type with .shape and .dtype, got {type(ty).__name__}")
    return new_ref(zeros(tuple(inner.shape), inner.dtype), memory_space=memory_space)


def freeze(ref: Ref) -> Any:
    """The Ref's value; the Ref is invalidated (later reads and writes raise), as JAX's ``freeze``."""
    _require_ref(ref, "freeze")
    ref._alive("freeze")
    value = ref._value
    ref._state, ref._value = "frozen", None
    return value


def free_ref(ref: Ref) -> None:
    """Invalidate the Ref (JAX's ``free_ref``): later reads and writes raise."""
    _require_ref(ref, "free_ref")
    ref._alive("free")
    ref._state, ref._value = "freed", None


def get(ref: Ref, idx: Any = ()) -> Any:
    """``ref[idx]`` (JAX's ``jax.ref.get``)."""
    _require_ref(ref, "get")
    return ref.get(idx)


def set(ref: Ref, idx: Any, value: Any) -> None:  # noqa: A001  (JAX's name)
    """``ref[idx] = value`` (JAX's ``jax.ref.set``)."""
    _require_ref(ref, "set")
    ref.set(value, idx)


def swap(ref: Ref, idx: Any, value: Any) -> Any:
    """Write ``value`` at ``idx`` and return what was there (JAX's ``jax.ref.swap``)."""
    _require_ref(ref, "swap")
    old = ref.get(idx)
    ref.set(value, idx)
    return old


def addupdate(ref: Ref, idx: Any, value: Any) -> None:
    """``ref[idx] += value`` (JAX's ``jax.ref.addupdate``)."""
    _require_ref(ref, "addupdate")
    ref._check_write()
    key = ... if _whole(idx) else idx
    ref._value = ref._value + value if key is Ellipsis else ref._value.at[key].add(value)


