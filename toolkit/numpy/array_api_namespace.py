"""The Python Array API standard's entry points: ``x.__array_namespace__()``, the version, the namespace's info.

Libraries written against the standard (``array_api_compat``, SciPy's and scikit-learn's Array API support) find
the functions of an array through ``x.__array_namespace__()`` and ask the namespace what it has through
``__array_namespace_info__()``; ``jax.numpy`` answers both for JAX's arrays, and this module answers them for
toolkit's, with JAX's values (the standard's 2024.12 revision; dtypes by the standard's kinds, 64-bit ones only
with x64; devices ``None`` first, meaning "uncommitted").

Example::

    x.__array_namespace__() is toolkit.numpy                       # True
    tnp.__array_namespace_info__().default_dtypes()["integral"]    # int32 (int64 with x64)
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

from toolkit.core import config, dtypes
from toolkit.runtime import client as runtime_client

#: The revision of the Array API standard ``toolkit.numpy`` follows (JAX 0.10's).
__array_api_version__ = "2024.12"

#: The Array API standard's dtype kinds, each as the kind letters (``toolkit.core.dtypes.kind_of``) it holds.
KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("b",), "signed integer": ("i",), "unsigned integer": ("u",), "integral": ("i", "u"),
    "real floating": ("f",), "complex floating": ("c",), "numeric": ("i", "u", "f", "c"),
}


# The standard's dtypes: its kinds hold these (with x64 also the 64-bit ones), not numpy's other types.
_STANDARD_NAMES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64")
_X64_NAMES = ("int64", "uint64", "float64", "complex128")


def array_namespace(self: Any, *, api_version: str | None = None) -> ModuleType:
    """``x.__array_namespace__()``: ``toolkit.numpy``; ``api_version`` must be ``None`` or the one revision."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"api_version={api_version!r} is not available; "
                         f"available versions are: {[__array_api_version__]}")
    return sys.modules["toolkit.numpy"]


class ArrayNamespaceInfo:
    """What ``toolkit.numpy`` offers, as the Array API standard's inspection object describes it."""

    _capabilities = {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def capabilities(self) -> dict[str, Any]:
        """Boolean masks and data-dependent shapes are not supported under transformations; XLA's rank limit."""
        return dict(self._capabilities)

    def default_device(self) -> None:
        """``None``: arrays are uncommitted unless placed, and jit chooses where they run."""
        return None

    def devices(self) -> list[Any]:
        """``None`` (uncommitted), then every device of the default backend."""
        return [None, *runtime_client.devices()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        """The dtypes functions create by default (device-independent), under the current x64 setting."""
        del device
        return {"real floating": dtypes.default_float_dtype(), "complex floating": dtypes.default_complex_dtype(),
                "integral": dtypes.default_int_dtype(), "indexing": dtypes.default_int_dtype()}

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """The standard's dtypes of ``kind`` (a kind name or a tuple of them; ``None``: numeric and bool)."""
        del device
        names = _STANDARD_NAMES + (_X64_NAMES if config.flag_value("jax_enable_x64") else ())
        kinds = ("numeric", "bool") if kind is None else kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in KINDS:
                raise ValueError(f"unknown dtype kind {k!r}: expected one of {list(KINDS)}")
        return {name: np.dtype(name) for name in names
                if any(dtypes.kind_of(np.dtype(name)) in KINDS[k] for k in kinds)}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The namespace's inspection object (``jax.numpy.__array_namespace_info__()``)."""
    return ArrayNamespaceInfo()
