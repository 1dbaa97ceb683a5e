"""PRNG keys: ``PRNGKey``/``key``, ``split``, ``fold_in``, ``key_data``/``wrap_key_data``, ``bits``.

Two kinds of key, as in JAX:

* **legacy raw keys** (``PRNGKey(seed)``): ``uint32`` arrays whose last axis
  has size 2; every function that takes a key accepts them and ``split``/
  ``fold_in`` return raw keys for raw keys;
* **typed keys** (``key(seed)``): JAX gives them the dtype ``key<fry>``.
  toolkit has no extended dtypes, so a typed key is a :class:`PRNGKeyArray`,
  a pytree (its one leaf is the ``uint32[..., 2]`` key data) with ``shape``
  (the key shape, without the trailing 2), ``ndim``, ``dtype`` (prints
  ``key<fry>``), indexing, iteration, ``reshape`` and ``==``. Being a pytree it
  passes through ``jit``, ``vmap`` (a batch axis of a key array is an axis of
  its data; do not map the last data axis) and ``grad`` (as a non-
  differentiated argument), but it is not a ``toolkit.Array``: ``toolkit.numpy``
  functions do not take it (JAX refuses most of them on keys as well).

Bit-exactness with ``jax.random`` (threefry2x32, ``jax_threefry_partitionable``
True, JAX's default 32-bit mode) is described in :mod:`toolkit.random.threefry`.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from toolkit import lax
from toolkit.array import Array
from toolkit.core import dtypes, pytrees
from toolkit.core.config import flag_value
from toolkit.core.avals import canonicalize_shape
from toolkit.random import threefry
from toolkit import numpy as tnp

__all__ = ["PRNGKeyArray", "KeyTy", "PRNGKey", "key", "split", "fold_in", "key_data", "wrap_key_data", "bits",
           "key_impl", "key_dtype", "clone", "check_prng_key", "return_keys"]

IMPL_NAME = "threefry2x32"


class KeyTy:
    """The dtype of typed threefry keys; ``str()`` is ``key<fry>`` as in JAX."""

    name = "key<fry>"

    def __repr__(self) -> str:
        return "key<fry>"

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyTy) or other == "key<fry>"

    def __hash__(self) -> int:
        return hash("key<fry>")


KEY_DTYPE = KeyTy()


class PRNGKeyArray:
    """An array of typed threefry2x32 keys (``jax.random.key``'s result), backed by ``uint32[*shape, 2]`` data."""

    __slots__ = ("_base",)
    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    def __init__(self, base: Any):
        self._base = base

    @property
    def shape(self) -> tuple:
        """The shape of the array of keys (without the key data's trailing dimension)."""
        return tuple(self._base.shape[:-1])

    @property
    def ndim(self) -> int:
        """The rank of the array of keys."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of keys."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> KeyTy:
        """The key dtype (``key<fry>``, as JAX's typed keys)."""
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return PRNGKeyArray(self._base[(*idx, slice(None))])

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        """The same keys in ``shape`` (ints or one tuple)."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        return PRNGKeyArray(self._base.reshape(*tuple(shape), 2))

    def _eq(self, other: Any) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return tnp.all(tnp.equal(self._base, other._base), axis=-1)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._eq(other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        out = self._eq(other)
        return out if out is NotImplemented else ~out

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{self._base}"


pytrees.register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None), lambda _, leaves: PRNGKeyArray(*leaves))


def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array)) or np.isscalar(x) or (hasattr(x, "shape") and hasattr(x, "dtype"))


def _check_key_data(data: Any) -> None:
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data "
                        f"to have ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != (2,):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); "
                        f"got shape={tuple(data.shape)} for impl={IMPL_NAME}")
    if data.dtype != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={np.dtype(data.dtype).name}")


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """``(raw key data, was_raw)`` for a typed or raw key; raises as JAX's ``_check_prng_key``."""
    if isinstance(key, PRNGKeyArray):
        data, raw = key._base, False
    elif _arraylike(key):
        if isinstance(key, np.generic) or np.isscalar(key) and not isinstance(key, str):
            key = np.asarray(key)
        _check_key_data(key)
        data, raw = key, True
        _legacy_key_policy()
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and len(data.shape) > 1:
        shape = tuple(data.shape) if raw else tuple(data.shape[:-1])
        raise ValueError(f"{name} accepts a single key, but was given a key array of"
                         f" shape {shape} != (). Use jax.vmap for batching.")
    return data, raw


def _legacy_key_policy() -> None:
    """A raw key was passed: warn or raise as ``jax_legacy_prng_key`` / ``jax_enable_custom_prng`` say (JAX's)."""
    policy = flag_value("jax_legacy_prng_key")
    advice = ("Legacy uint32 key array passed as key to jax.random function. Please create keys using "
              'jax.random.key(). If use of a raw key array was intended, set jax_legacy_prng_key="allow".')
    if policy == "error":
        raise ValueError(advice)
    if policy == "warn":
        warnings.warn(advice, stacklevel=4)
    elif flag_value("jax_enable_custom_prng"):
        warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. Assuming valid "
                      "threefry2x32 key for now.", FutureWarning, stacklevel=4)


def return_keys(raw: bool, data: Any) -> Any:
    """Keys of the kind the caller passed: raw data for raw keys, else typed keys."""
    return data if raw else PRNGKeyArray(data)


def _seed_data(ctor_name: str, seed: Any) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not hasattr(seed, "shape") else len(seed.shape):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of "
                        f"shape {tuple(np.shape(seed))} != (). Use jax.vmap for batching")
    return threefry.threefry_seed(seed)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A legacy raw key, ``uint32[2]``, from an integer seed (``jax.random.PRNGKey``).

    As JAX in its default 32-bit mode the key is ``[0, seed mod 2**32]``.

    Example::

        k = toolkit.random.PRNGKey(0)       # Array([0, 0], dtype=uint32)

    With ``jax_enable_custom_prng`` on (``toolkit.enable_custom_prng``) it is a typed key, as JAX's.
    ``impl``: the implementation, as for :func:`key` (only ``"threefry2x32"``, its ``key_dtype()`` or None).
    """
    _check_impl(impl)
    if flag_value("jax_enable_custom_prng"):
        return PRNGKeyArray(_seed_data("PRNGKey", seed))
    return _seed_data("PRNGKey", seed)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed key (a scalar :class:`PRNGKeyArray`, dtype ``key<fry>``) from an integer seed (``jax.random.key``).

    Only the default implementation, ``"threefry2x32"``, exists.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    _check_impl(impl)
    return PRNGKeyArray(_seed_data("key", seed))


#: The implementations JAX 0.10.2 has besides threefry2x32 (``jax._src.random.prng.prngs``); toolkit has none of them.
_JAX_ONLY_IMPLS = ("philox2x32", "philox4x32", "rbg", "unsafe_rbg", "threefry4x32")


def _check_impl(impl: Any) -> None:
    """Accept what names threefry2x32 (None: the default); refuse others as JAX's ``resolve_prng_impl``."""
    if impl is None or isinstance(impl, KeyTy):
        return
    if type(impl) is str:
        if impl == IMPL_NAME:
            return
        if impl in _JAX_ONLY_IMPLS:
            # JAX has it; toolkit has threefry keys only (docs/differences-from-jax.md, default_prng_impl).
            raise ValueError(f'unrecognized PRNG implementation "{impl}": toolkit.random has only '
                             f'"{IMPL_NAME}" (JAX\'s "{impl}" keys are not implemented).')
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: "{IMPL_NAME}"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def key_dtype(impl_spec: Any = None) -> KeyTy:
    """The dtype of typed keys of ``impl_spec`` (``jax.random.key_dtype``): ``key<fry>``, the only one toolkit has."""
    _check_impl(impl_spec)
    return KEY_DTYPE


def key_impl(keys: Any) -> str:
    """The implementation name of ``keys``: always ``"threefry2x32"``."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return IMPL_NAME


def key_data(keys: Any) -> Any:
    """The ``uint32[..., 2]`` data under typed (or raw) keys (``jax.random.key_data``)."""
    data, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """Typed keys over ``uint32[..., 2]`` key data (``jax.random.wrap_key_data``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
        impl = dtype
    _check_impl(impl)
    if isinstance(key_bits_array, np.generic):
        key_bits_array = np.asarray(key_bits_array)
    _check_key_data(key_bits_array)
    return PRNGKeyArray(key_bits_array)


def clone(key: Any) -> Any:
    """``key`` itself (JAX's ``clone`` matters only to its key-reuse checker)."""
    return key


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (``num`` may be a shape) from one key (``jax.random.split``)."""
    data, raw = check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return return_keys(raw, threefry.threefry_split(data, canonicalize_shape(shape)))


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (``jax.random.fold_in``)."""
    base, raw = check_prng_key("fold_in", key)
    if np.ndim(data) if not hasattr(data, "shape") else len(data.shape):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {tuple(np.shape(data))} != (). Use jax.vmap for batching.")
    if hasattr(data, "dtype") and not isinstance(data, np.generic):
        data = lax.convert_element_type(data, dtypes.uint32)
    else:
        data = np.asarray(data, dtype=np.uint32)
    return return_keys(raw, threefry.threefry_fold_in(base, data))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random unsigned integers of ``shape`` (``jax.random.bits``; default dtype ``uint32``)."""
    data, _ = check_prng_key("bits", key)
    dtype = dtypes.uint32 if dtype is None else dtypes.canonicalize_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype.name}")
    return threefry.threefry_random_bits(data, dtype.itemsize * 8, canonicalize_shape(shape))
