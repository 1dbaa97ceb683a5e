"""PRNG keys: ``PRNGKey``/``key``, ``split``, ``fold_in``, ``key_data``/``wrap_key_data``, ``bits``.

Two kinds of key, as in JAX:

* **legacy raw keys** (``PRNGKey(seed)``): ``uint32`` arrays whose trailing
  dimensions are the key shape of the *default* implementation
  (``jax_default_prng_impl``: ``uint32[2]`` for threefry2x32, ``uint32[4]``
  for rbg...); every function that takes a key reads a raw key with the
  default implementation, checks its trailing shape against it, and
  ``split``/``fold_in`` return raw keys for raw keys;
* **typed keys** (``key(seed, impl=...)``): JAX gives them the dtype
  ``key<tag>`` (``key<fry>``, ``key<rbg>``...). toolkit has no extended dtypes,
  so a typed key is a :class:`PRNGKeyArray`, a pytree whose one leaf is the
  ``uint32[*shape, *key_shape]`` key data and whose tree carries the
  implementation, with ``shape`` (without the key's trailing dimensions),
  ``ndim``, ``dtype`` (prints ``key<tag>``), indexing, iteration, ``==``, JAX's
  structural methods (``reshape``, ``T``/``transpose``, ``swapaxes``, ``ravel``/``flatten``,
  ``squeeze``, ``take``, ``copy``, ``at[...].set/get``) and placement (``sharding``,
  ``devices()``, ``committed``, ``block_until_ready``, ``delete``, ...). Being a
  pytree it passes through ``jit``, ``vmap`` (a batch axis
  of a key array is an axis of its data; do not map the trailing data axes)
  and ``grad`` (as a non-differentiated argument), keeping its implementation,
  but it is not a ``toolkit.Array``: ``toolkit.numpy`` functions do not take it
  (JAX refuses most of them on keys as well).

Every function goes through the key's implementation (:mod:`toolkit.random.prng_impls`): its ``split``,
``fold_in`` and ``random_bits`` on the raw data of one key.
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
from toolkit.random.prng_impls import PRNGS, KeyTy, PRNGImpl, resolve_prng_impl
from toolkit import numpy as tnp

__all__ = ["PRNGKeyArray", "KeyTy", "PRNGKey", "key", "split", "fold_in", "key_data", "wrap_key_data", "bits",
           "key_impl", "key_dtype", "clone", "check_prng_key", "check_key_data", "return_keys"]


class PRNGKeyArray:
    """An array of typed keys of one implementation (``jax.random.key``'s result), backed by
    ``uint32[*shape, *impl.key_shape]`` data."""

    __slots__ = ("_impl", "_base")
    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    def __init__(self, impl: PRNGImpl, base: Any):
        self._impl = impl
        self._base = base

    @property
    def shape(self) -> tuple:
        """The shape of the array of keys (without the key data's trailing dimensions)."""
        return tuple(self._base.shape[:-self._impl.key_ndim])

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
        """The key dtype (``key<tag>`` of the implementation, as JAX's typed keys)."""
        return self._impl.key_dtype

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
        return PRNGKeyArray(self._impl, self._base[(*idx, *(slice(None),) * self._impl.key_ndim)])

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        """The same keys in ``shape`` (ints or one tuple)."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        return PRNGKeyArray(self._impl, self._base.reshape(*tuple(shape), *self._impl.key_shape))

    # --- JAX's structural methods of key arrays: the key data's trailing axes follow along -----------------

    def _axis(self, axis: int) -> int:
        if not -self.ndim <= axis < self.ndim:
            raise ValueError(f"axis {axis} is out of bounds for a key array of rank {self.ndim}")
        return axis % self.ndim

    def _with(self, base: Any) -> PRNGKeyArray:
        return PRNGKeyArray(self._impl, base)

    def _key_axes(self) -> tuple[int, ...]:
        return tuple(range(self.ndim, self.ndim + self._impl.key_ndim))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        """The keys with their axes permuted (reversed without ``axes``), as ``jax.Array.transpose``."""
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)) else axes
        order = tuple(reversed(range(self.ndim))) if axes in ((), None) else tuple(self._axis(a) for a in axes)
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the key array's {self.ndim} axes")
        return self._with(tnp.transpose(self._base, order + self._key_axes()))

    T = property(lambda self: self.transpose(), doc="The keys with their axes reversed.")

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        """The keys with two axes exchanged."""
        order = list(range(self.ndim))
        a, b = self._axis(axis1), self._axis(axis2)
        order[a], order[b] = order[b], order[a]
        return self.transpose(tuple(order))

    def ravel(self) -> PRNGKeyArray:
        """The keys as a 1-D key array."""
        return self.reshape(self.size)

    flatten = ravel

    def squeeze(self, axis: int | Sequence[int] | None = None) -> PRNGKeyArray:
        """The keys without size-1 axes (all of them, or ``axis``), never the key data's own."""
        if axis is None:
            axes = tuple(i for i, n in enumerate(self.shape) if n == 1)
        else:
            axes = tuple(self._axis(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        return self._with(tnp.squeeze(self._base, axes))

    def take(self, indices: Any, axis: int | None = None) -> PRNGKeyArray:
        """The keys at ``indices`` along ``axis`` (of the flattened keys without one), as ``jnp.take``."""
        keys = self.ravel() if axis is None else self
        return keys._with(tnp.take(keys._base, indices, axis=0 if axis is None else self._axis(axis)))

    def copy(self) -> PRNGKeyArray:
        """A new key array with the same keys."""
        return self._with(tnp.array(self._base, copy=True))

    @property
    def at(self) -> _KeysAt:
        """``keys.at[idx].set(other_keys)`` / ``.get()``: JAX's functional update of a key array."""
        return _KeysAt(self)

    # Placement, as a jax key array's (its data's, the key axes left out of a NamedSharding's spec).
    @property
    def sharding(self) -> Any:
        """Where the keys are: the key data's sharding, without the data's trailing key axes."""
        sharding = self._base.sharding
        spec = getattr(sharding, "spec", None)
        if spec is not None and len(spec) > self.ndim:
            sharding = sharding.update(spec=type(spec)(*spec[:self.ndim]))  # (its memory kind kept)
        return sharding

    committed = property(lambda self: self._base.committed, doc="Whether the key data was placed explicitly.")
    device = property(lambda self: self._base.device, doc="The one device holding the keys, else their sharding.")
    is_fully_addressable = property(lambda self: self._base.is_fully_addressable,
                                    doc="Whether this process addresses every device of the keys.")
    is_fully_replicated = property(lambda self: self._base.is_fully_replicated,
                                   doc="Whether every device holds all the keys.")
    itemsize = property(lambda self: self.dtype.itemsize, doc="Bytes of one key (its data: 8 for threefry).")
    nbytes = property(lambda self: self.size * self.dtype.itemsize, doc="Bytes of all the keys' data.")

    def devices(self) -> set:
        """Every device holding part of the keys."""
        return self._base.devices()

    def block_until_ready(self) -> PRNGKeyArray:
        """Wait until the keys are computed; returns the key array itself."""
        self._base.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        """Whether the key data's buffers are gone."""
        return self._base.is_deleted()

    def delete(self) -> None:
        """Free the key data's buffers."""
        self._base.delete()

    def _eq(self, other: Any, op_name: str) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        if other._impl is not self._impl:
            raise TypeError(f"{op_name} does not accept dtypes {self.dtype}, {other.dtype}.")
        key_axes = tuple(range(-self._impl.key_ndim, 0))
        return tnp.all(tnp.equal(self._base, other._base), axis=key_axes)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._eq(other, "equal")

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        out = self._eq(other, "not_equal")
        return out if out is NotImplemented else ~out

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base}"


class _KeysAt:
    """``keys.at``: indexed, returns an update whose ``set``/``get`` work on the key data."""

    __slots__ = ("_keys",)

    def __init__(self, keys: PRNGKeyArray):
        self._keys = keys

    def __getitem__(self, idx: Any) -> _KeysUpdate:
        return _KeysUpdate(self._keys, idx if isinstance(idx, tuple) else (idx,))


class _KeysUpdate:
    __slots__ = ("_keys", "_idx")

    def __init__(self, keys: PRNGKeyArray, idx: tuple):
        self._keys, self._idx = keys, idx

    def _data_index(self) -> tuple:
        return (*self._idx, *(slice(None),) * self._keys._impl.key_ndim)

    def get(self, **kwargs: Any) -> PRNGKeyArray:
        """The keys at the index (``keys[idx]``)."""
        return self._keys._with(self._keys._base.at[self._data_index()].get(**kwargs))

    def set(self, values: PRNGKeyArray, **kwargs: Any) -> PRNGKeyArray:
        """A new key array with the keys at the index replaced by ``values`` (keys of the same implementation)."""
        if not isinstance(values, PRNGKeyArray) or values._impl is not self._keys._impl:
            raise TypeError(f"keys.at[...].set: expected keys of dtype {self._keys.dtype}, got "
                            f"{getattr(values, 'dtype', type(values).__name__)}")
        return self._keys._with(self._keys._base.at[self._data_index()].set(values._base, **kwargs))


def _flatten_keys(keys: PRNGKeyArray) -> tuple[tuple[Any], PRNGImpl]:
    return (keys._base,), keys._impl


def _unflatten_keys(impl: Any, leaves: Any) -> PRNGKeyArray:
    return PRNGKeyArray(impl, *leaves)


# The implementation is the tree's aux data: jit keys its traces on it and vmap/jit rebuild keys of the same one.
pytrees.register_pytree_node(PRNGKeyArray, _flatten_keys, _unflatten_keys)


def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array)) or np.isscalar(x) or (hasattr(x, "shape") and hasattr(x, "dtype"))


def check_key_data(impl: PRNGImpl, data: Any) -> None:
    """Raise JAX's ``TypeError`` unless ``data`` is ``uint32`` key data of ``impl`` (trailing dims its key shape)."""
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data "
                        f"to have ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}")
    if tuple(data.shape[-impl.key_ndim:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end with "
                        f"{impl.key_shape}; got shape={tuple(data.shape)} for impl={impl!r}")
    if data.dtype != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={np.dtype(data.dtype).name}")


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, PRNGImpl, bool]:
    """``(raw key data, implementation, was_raw)`` for a typed or raw key; raises as JAX's ``_check_prng_key``.

    A raw key is read with the default implementation (``jax_default_prng_impl``), as JAX reads it.
    """
    if isinstance(key, PRNGKeyArray):
        data, impl, raw = key._base, key._impl, False
    elif _arraylike(key):
        if isinstance(key, np.generic) or np.isscalar(key) and not isinstance(key, str):
            key = np.asarray(key)
        impl = PRNGS[flag_value("jax_default_prng_impl")]  # prng_impls.default_prng_impl(), inline: a hot path
        check_key_data(impl, key)
        data, raw = key, True
        _legacy_key_policy()
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and len(data.shape) > impl.key_ndim:
        shape = tuple(data.shape) if raw else tuple(data.shape[:-impl.key_ndim])
        raise ValueError(f"{name} accepts a single key, but was given a key array of"
                         f" shape {shape} != (). Use jax.vmap for batching.")
    return data, impl, raw


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


def return_keys(raw: bool, impl: PRNGImpl, data: Any) -> Any:
    """Keys of the kind the caller passed: raw data for raw keys, else typed keys of ``impl``."""
    return data if raw else PRNGKeyArray(impl, data)


def _seed_data(ctor_name: str, seed: Any, impl: PRNGImpl) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not hasattr(seed, "shape") else len(seed.shape):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of "
                        f"shape {tuple(np.shape(seed))} != (). Use jax.vmap for batching")
    return impl.seed(seed)


def _impl_or_dtype(fn_name: str, impl: Any, dtype: Any) -> Any:
    if dtype is not None:
        if impl is not None:
            raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to jax.random.{fn_name}")
        return dtype
    return impl


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A legacy raw key from an integer seed (``jax.random.PRNGKey``): ``uint32[*key_shape]`` of ``impl``.

    ``impl``: an implementation name (``"threefry2x32"``, ``"rbg"``, ...), its ``key_dtype()``, or None for the
    default (``jax_default_prng_impl``). For threefry2x32 in JAX's default 32-bit mode the key is
    ``[0, seed mod 2**32]``. The raw key records no implementation: pass it only while the same implementation
    is the default, as in JAX.

    Example::

        k = toolkit.random.PRNGKey(0)                # Array([0, 0], dtype=uint32)
        r = toolkit.random.PRNGKey(1, impl="rbg")    # Array([0, 1, 0, 1], dtype=uint32)

    With ``jax_enable_custom_prng`` on (``toolkit.enable_custom_prng``) it is a typed key, as JAX's.
    """
    impl_obj = PRNGS[flag_value("jax_default_prng_impl")] if impl is None else resolve_prng_impl(impl)
    data = _seed_data("PRNGKey", seed, impl_obj)
    if flag_value("jax_enable_custom_prng"):
        return PRNGKeyArray(impl_obj, data)
    return data


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed key (a scalar :class:`PRNGKeyArray`, dtype ``key<tag>``) from an integer seed (``jax.random.key``).

    ``impl`` (or ``dtype``, not both): an implementation name, a key dtype, or None for the default
    (``jax_default_prng_impl``, threefry2x32 unless set).

    Example::

        k = toolkit.random.key(0, impl="philox4x32")   # dtype key<phx4>, data uint32[2]
    """
    if impl is None and dtype is None:
        impl_obj = PRNGS[flag_value("jax_default_prng_impl")]  # prng_impls.default_prng_impl(), inline: a hot path
    else:
        impl_obj = resolve_prng_impl(_impl_or_dtype("key", impl, dtype))
    return PRNGKeyArray(impl_obj, _seed_data("key", seed, impl_obj))


def key_dtype(impl_spec: Any = None) -> KeyTy:
    """The dtype of typed keys of ``impl_spec`` (``jax.random.key_dtype``; None: the default implementation)."""
    return resolve_prng_impl(impl_spec).key_dtype


def key_impl(keys: Any) -> str:
    """The name of the implementation of ``keys`` (``"threefry2x32"``, ``"rbg"``...; raw keys: the default's)."""
    _, impl, _ = check_prng_key("key_impl", keys, allow_batched=True)
    return impl.name


def key_data(keys: Any) -> Any:
    """The ``uint32[*shape, *key_shape]`` data under typed (or raw) keys (``jax.random.key_data``)."""
    data, _, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """Typed keys of ``impl`` (or ``dtype``; None: the default) over ``uint32`` key data whose trailing dimensions
    are the implementation's key shape (``jax.random.wrap_key_data``)."""
    impl_obj = resolve_prng_impl(_impl_or_dtype("wrap_key_data", impl, dtype))
    if isinstance(key_bits_array, np.generic):
        key_bits_array = np.asarray(key_bits_array)
    check_key_data(impl_obj, key_bits_array)
    return PRNGKeyArray(impl_obj, key_bits_array)


def clone(key: Any) -> Any:
    """``key`` itself (JAX's ``clone`` matters only to its key-reuse checker)."""
    return key


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (``num`` may be a shape) from one key (``jax.random.split``), by the key's implementation."""
    data, impl, raw = check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return return_keys(raw, impl, impl.split(data, canonicalize_shape(shape)))


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (``jax.random.fold_in``), by the key's implementation."""
    base, impl, raw = check_prng_key("fold_in", key)
    if np.ndim(data) if not hasattr(data, "shape") else len(data.shape):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {tuple(np.shape(data))} != (). Use jax.vmap for batching.")
    if hasattr(data, "dtype") and not isinstance(data, np.generic):
        data = lax.convert_element_type(data, dtypes.uint32)
    else:
        data = np.asarray(data, dtype=np.uint32)
    return return_keys(raw, impl, impl.fold_in(base, data))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random unsigned integers of ``shape`` (``jax.random.bits``; default dtype ``uint32``)."""
    data, impl, _ = check_prng_key("bits", key)
    dtype = dtypes.uint32 if dtype is None else dtypes.canonicalize_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype.name}")
    return impl.random_bits(data, dtype.itemsize * 8, canonicalize_shape(shape))
