"""Registering foreign-function (XLA custom call) targets with jaxlib's CPU runtime (``jax.ffi``'s registry).

The registry is jaxlib's (``xla_client.register_custom_call_target``), the one JAX's ``jax.ffi.register_ffi_target``
fills: a target registered by either is callable from both.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import jaxlib
from jaxlib import xla_client

from toolkit.runtime.executable import _register_cpu_custom_calls

__all__ = ["include_dir", "pycapsule", "register_target"]


def register_target(name: str, fn: Any, platform: str, api_version: int, **kwargs: Any) -> None:
    """Register ``fn`` (a PyCapsule, or a dict of FFI stage name -> PyCapsule) as custom-call target ``name``."""
    _register_cpu_custom_calls()  # jaxlib's LAPACK targets first, as toolkit's first compilation would
    xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def pycapsule(funcptr: Any) -> Any:
    """A PyCapsule holding the address of the ctypes function pointer ``funcptr`` (what registration takes)."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The folder of XLA's FFI C++ headers shipped with jaxlib (``xla/ffi/api/ffi.h``)."""
    return os.path.join(os.path.dirname(jaxlib.__file__), "include")
