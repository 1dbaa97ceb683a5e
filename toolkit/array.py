"""``toolkit.Array``: a device array with numpy-style conveniences.

An ``Array`` wraps jaxlib's device array (``ArrayImpl``) together with its
abstract value and its toolkit sharding. Operators and methods (``+``,
``.sum()``, ``.at[...]``) are installed by ``toolkit.numpy`` and run eagerly
through XLA; inside ``jit`` the same methods act on tracers.

Example::

    >>> x = toolkit.device_put(np.arange(4.0))
    >>> np.asarray(x * 2)
    array([0., 2., 4., 6.])
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from toolkit.core import dtypes, pytrees, tracing
from toolkit.core.avals import ShapedArray, abstract_token
from toolkit.lax.sharding import device_put_p
from toolkit.memory import Space, space_to_kind
from toolkit.runtime import arrays as runtime_arrays
from toolkit.runtime import client as runtime_client
from toolkit.runtime import native_pytrees
from toolkit.runtime import transfer_guards
from toolkit.shard import PartitionSpec, Sharding, SingleDeviceSharding, placement
from toolkit.shard.explicit import type_sharding
from toolkit.shard.resolve import resolve_sharding


class Array:
    """A (possibly sharded) array living on devices."""

    __slots__ = ("_impl", "aval", "_sharding", "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, impl: Any, aval: ShapedArray, sharding: Any = None, committed: bool = False):
        self._impl = impl
        self.aval = aval
        self._sharding = sharding
        # Committed arrays were placed explicitly; jit runs where they are. So are explicitly sharded ones.
        self._committed = committed or aval.sharding is not None

    shape = property(lambda self: self.aval.shape, doc="The shape, a tuple of ints.")
    dtype = property(lambda self: self.aval.dtype, doc="The element type (a NumPy dtype).")
    ndim = property(lambda self: len(self.aval.shape), doc="The rank (number of dimensions).")
    size = property(lambda self: self.aval.size, doc="The number of elements.")
    weak_type = property(lambda self: self.aval.weak_type,
                         doc="Whether the type is weak (a Python scalar's: the other operand's type wins).")

    @property
    def sharding(self) -> Any:
        """The array's ``toolkit.shard`` sharding."""
        if self._sharding is None:
            self._sharding = SingleDeviceSharding(runtime_arrays.impl_devices(self._impl)[0])
        return self._sharding

    def devices(self) -> set:
        """Every device holding part of the array (with several processes, other processes' too)."""
        return set(runtime_arrays.impl_devices(self._impl))

    # -- global arrays ---------------------------------------------------------
    @property
    def committed(self) -> bool:
        """Whether the array was placed explicitly (``device_put`` with a target, ``make_array_from_*``,
        a jit output with committed inputs); ``jit`` then runs where it lives."""
        return self._committed

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process addresses every device of the array's sharding (always, with one process).

        A fully replicated array spanning several processes is not fully addressable.
        """
        return self.sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return self.sharding.is_fully_replicated

    @property
    def nbytes(self) -> int:
        """The global array's size in bytes (``size * itemsize``, not counting replicas)."""
        return self.size * self.dtype.itemsize

    def on_device_size_in_bytes(self) -> int:
        """The bytes all devices together use for it: one shard's on-device size times the number of devices."""
        self._check_alive()
        return runtime_arrays.on_device_size_in_bytes(self._impl, self.sharding.num_devices)

    def copy_to_host_async(self) -> None:
        """Start copying this process's shards to the host, so a later ``np.asarray`` waits less."""
        self._check_alive()
        runtime_arrays.copy_to_host_async(self._impl, self._unique_piece_positions())

    def _unique_piece_positions(self) -> list[int] | None:
        """Positions of this process's pieces holding distinct parts (None: fully replicated, one suffices)."""
        if self.sharding.is_fully_replicated:
            return None
        seen, positions = set(), []
        indices = self.sharding.devices_indices_map(self.shape)
        for position, piece in enumerate(runtime_arrays.single_device_arrays(self._impl)):
            key = _index_key(indices[runtime_arrays.piece_device(piece)])
            if key not in seen:
                seen.add(key)
                positions.append(position)
        return positions

    def _shard_aval(self) -> ShapedArray:
        return ShapedArray(self.sharding.shard_shape(self.shape), self.dtype, self.weak_type)

    def _piece_array(self, piece: Any) -> "Array":
        return Array(piece, self._shard_aval(), SingleDeviceSharding(runtime_arrays.piece_device(piece)),
                     committed=True)

    @property
    def addressable_shards(self) -> list["Shard"]:
        """One ``Shard`` (device, index, data) per device of this process holding part of the array."""
        self._check_alive()
        indices = self.sharding.devices_indices_map(self.shape)
        shards = []
        for piece in runtime_arrays.single_device_arrays(self._impl):
            device = runtime_arrays.piece_device(piece)
            shards.append(Shard(device, indices[device], self._piece_array(piece)))
        return shards

    @property
    def global_shards(self) -> list["Shard"]:
        """One ``Shard`` per device of the sharding, in its device order, including devices of other
        processes, whose ``data`` is None."""
        self._check_alive()
        if self.is_fully_addressable:
            return self.addressable_shards
        local = {shard.device: shard for shard in self.addressable_shards}
        indices = self.sharding.devices_indices_map(self.shape)
        return [local.get(device) or Shard(device, indices[device], None)
                for device in self.sharding._device_assignment]

    def addressable_data(self, index: int) -> "Array":
        """The data of this process's ``index``-th shard, a single-device ``Array``.

        As JAX: for a fully replicated array every shard is the whole value and
        the first one is returned whatever ``index`` is.
        """
        self._check_alive()
        if self.is_fully_replicated:
            return self._piece_array(runtime_arrays.fully_replicated_piece(self._impl))
        pieces = runtime_arrays.single_device_arrays(self._impl)
        return self._piece_array(pieces[index])

    def _process_has_full_value(self) -> bool:
        """Whether this process's devices together hold every distinct part of the array."""
        if self.is_fully_addressable:
            return True
        if not self.sharding.addressable_devices:
            return False
        everything = {_index_key(i) for i in self.sharding.devices_indices_map(self.shape).values()}
        local = {_index_key(i) for i in self.sharding.addressable_devices_indices_map(self.shape).values()}
        return everything == local

    def _host_value(self) -> np.ndarray:
        self._check_alive()
        sharding = self._sharding  # None until asked for: one device of this process
        if sharding is None or (type(sharding) is SingleDeviceSharding and sharding.is_fully_addressable):
            return runtime_arrays.piece_to_numpy(self._impl)
        if not self.is_fully_addressable and not self._process_has_full_value():
            raise RuntimeError(
                f"cannot fetch the value of an Array of shape {self.aval.str_short()} that spans devices of "
                "other processes (it is not fully addressable) into numpy. Gather it first with "
                "toolkit.multihost.process_allgather(x, tiled=True), or read this process's part through "
                "x.addressable_shards")
        if self.sharding.is_fully_replicated or len(self.sharding._device_assignment) == 1:
            return runtime_arrays.to_numpy(self._impl)
        return runtime_arrays.to_numpy(self._impl, self.sharding.devices_indices_map(self.shape))

    def block_until_ready(self) -> "Array":
        """Wait until the value is computed (dispatch is asynchronous); returns the array itself."""
        runtime_arrays.block_until_ready(self._impl)
        return self

    def is_deleted(self) -> bool:
        """Whether the device buffers are gone (``delete()``, or donated to a jit call)."""
        return self._impl.is_deleted()

    def is_ready(self) -> bool:
        """Whether the value is computed, without waiting (``jax.Array.is_ready``)."""
        return self._impl.is_ready()

    def clone(self) -> "Array":
        """Another array over the same buffers (``jax.Array.clone``: deleting either deletes both)."""
        return Array(self._impl, self.aval, self._sharding, self._committed)

    def tobytes(self, order: Literal["C", "F", "A", "K"] = "C") -> bytes:
        """The value's bytes, as numpy's ``tobytes`` of ``np.asarray(a)`` (copies to the host)."""
        return self._host_value().tobytes(order)

    def __bytes__(self) -> bytes:
        # bytes(x) of a jax.Array is its buffer's bytes (the buffer protocol), except that Python asks an object
        # with __index__ for an index first: a 0-d integer array n gives n zero bytes, in JAX as in numpy.
        if not self.shape and dtypes.is_integer(self.dtype):
            return bytes(self.__index__())
        return self.tobytes()

    def platform(self) -> str:
        """The platform of the devices holding it (``"cpu"``, ...), as ``jax.Array.platform()``."""
        return self._impl.platform()

    def unsafe_buffer_pointer(self) -> int:
        """The address of the device buffer of an array on one device (``jax.Array.unsafe_buffer_pointer``)."""
        if len(self.sharding._device_assignment) != 1:
            raise ValueError("unsafe_buffer_pointer() is supported only for unsharded arrays.")
        return self._impl.unsafe_buffer_pointer()

    @property
    def device_buffer(self) -> Any:
        """Removed, as in JAX: ``addressable_data(0)``."""
        raise AttributeError("arr.device_buffer has been deprecated. Use arr.addressable_data(0)")

    @property
    def device_buffers(self) -> Any:
        """Removed, as in JAX: ``[s.data for s in arr.addressable_shards]``."""
        raise AttributeError("arr.device_buffers has been deprecated. Use [x.data for x in arr.addressable_shards]")

    def delete(self) -> None:
        """Free the device buffers now; later use of the array raises."""
        self._impl.delete()

    def _check_alive(self) -> None:
        if self._impl.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()} (deleted explicitly or "
                               "donated to a jit call with donate_argnums)")

    def __array__(self, dtype: Any = None, context: Any = None, copy: bool | None = None) -> np.ndarray:
        # The host value is read-only (it may alias the device buffer, as jax.Array's does); numpy 2 passes
        # copy=True for np.array(x) and np.asarray(x, copy=True) and returns what this gives without copying
        # it again, so the copy it asks for is made here, writable (as JAX's).
        value = self._host_value()
        if dtype is None and copy is None:
            return value
        return np.asarray(value, dtype=dtype) if copy is None else np.asarray(value, dtype=dtype, copy=copy)

    def __toolkit_array__(self) -> "Array":
        return self

    def item(self) -> Any:
        """The value of a one-element array as a Python scalar (copies to the host)."""
        return np.asarray(self).item()

    def tolist(self) -> Any:
        """The value as nested Python lists of scalars (copies to the host)."""
        return np.asarray(self).tolist()

    def __bool__(self) -> bool:
        return bool(np.asarray(self))

    def __int__(self) -> int:
        return int(np.asarray(self))

    def __float__(self) -> float:
        return float(np.asarray(self))

    def __complex__(self) -> complex:
        return complex(np.asarray(self))

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype.name}")
        return int(np.asarray(self))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self) -> int:
        raise TypeError("toolkit arrays are unhashable")

    def __repr__(self) -> str:
        # JAX's layout: numpy's text with ", " separators, the dtype (and weak type) after a comma.
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if not self._impl.is_deleted() and not self._process_has_full_value():
            # As JAX: an array spanning other processes' devices shows no values (process_allgather does).
            return f"{prefix}shape={self.shape}, {dtype_str})"
        line_width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(np.asarray(self), prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=line_width)
        last_line_len = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 2 > line_width else " "
        return f"{prefix}{body},{sep}{dtype_str})"

    def __str__(self) -> str:
        # As JAX: numpy's str of the value (no "Array(...)"), unless the value is not all here.
        if not self._impl.is_deleted() and not self._process_has_full_value():
            return repr(self)
        return str(np.asarray(self))

    @property
    def device(self) -> Any:
        """The one device holding the array, or its sharding when it spans several (``jax.Array.device``)."""
        self._check_alive()
        devices = self.sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else self.sharding

    @property
    def itemsize(self) -> int:
        """Bytes per element (``dtype.itemsize``)."""
        return self.dtype.itemsize

    def _device_copy(self) -> "Array":
        """A new Array with the same value, sharding, weak type and commitment (``copy()``, ``copy.copy``,
        ``copy.deepcopy``); made through the host, so only arrays this process holds entirely."""
        value = self._host_value()
        impl = placement.device_put_sharded(value, self.sharding, weak_type=self.aval.weak_type)
        return Array(impl, self.aval, self.sharding, self._committed)

    def __reduce__(self) -> tuple:
        # Pickling is the user's choice, as in JAX: the value goes through numpy's pickle, and unpickling
        # puts it on the default device with the same weak type (toolkit never unpickles files itself).
        return (_reconstruct_array, (np.asarray(self), bool(self.weak_type)))

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """A DLPack capsule of the value (CPU arrays on one device; made from the host copy)."""
        self._check_dlpack()
        host = np.asarray(self)  # read-only: jaxlib's host buffer
        if max_version is None or tuple(max_version) < (1, 0):
            # DLPack before 1.0 cannot mark a tensor read-only (numpy refuses to export one that way), and
            # consumers such as jax.numpy.from_dlpack ask for that format: export a writable copy.
            host = np.array(host)
        return host.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        """``(kDLCPU, 0)`` for a CPU array on one device (DLPack's device type 1)."""
        self._check_dlpack()
        return (1, 0)

    def _check_dlpack(self) -> None:
        self._check_alive()
        devices = self.sharding.device_set
        if len(devices) != 1:
            raise BufferError("to_dlpack can only pack a dlpack tensor from an array on a singular device, but an "
                              f"array with a sharding over {len(devices)} devices was provided")
        platform = runtime_client.platform_of(next(iter(devices)))
        if platform != "cpu":
            raise BufferError(f"__dlpack__ of a {platform} array is not supported by toolkit yet (CPU arrays only)")

    def __format__(self, spec: str) -> str:
        # As JAX (numpy's behaviour for its arrays): f"{x}" is str(x) and f"{x:.3f}" formats a 0-d value; an array
        # whose value is not all in this process shows its repr.
        if not self._impl.is_deleted() and not self._process_has_full_value():
            return repr(self)
        value = self._host_value()
        return format(value if self.ndim else value[()], spec)


def _reconstruct_array(value: np.ndarray, weak_type: bool) -> Array:
    """Unpickle an ``Array`` (see ``Array.__reduce__``): the numpy value put on the default device."""
    host, aval = _host_value(value)
    aval = aval.update(weak_type=weak_type)
    target = SingleDeviceSharding(runtime_client.default_device())
    return Array(placement.device_put_sharded(host, target, weak_type=weak_type), aval, target, False)


class Token:
    """A concrete XLA token (JAX's ``core.Token``): what ``toolkit.lax.create_token()`` and ``after_all`` return
    outside a trace, and what a jit call returns for a token result.

    It holds the runtime buffer of the token (``_buf``) and no data: no shape, dtype or arithmetic (``t + 1`` is
    Python's ``TypeError``, as JAX's), and ``toolkit.numpy`` refuses it. Passed to a jit call it becomes the
    token parameter (an empty ``bool`` buffer in its place once the token's own computation is done, as JAX
    passes one); ``toolkit.typeof(t)`` is ``AbstractToken()``.
    """

    __slots__ = ("_buf",)
    #: The token type (``toolkit.core.avals.abstract_token``): how traces and jit signatures read a token.
    aval = abstract_token

    def __init__(self, buf: Any):
        self._buf = buf

    def block_until_ready(self) -> None:
        """Wait until the computation that made this token is done (JAX's ``Token.block_until_ready``)."""
        self._buf.block_until_ready()


def token_argument(token: Token, sharding: Any) -> Any:
    """The runtime array a token parameter of an executable takes, laid out by ``sharding``: an empty ``bool``
    buffer, once the token's computation is done (JAX's ``_token_shard_arg``)."""
    token.block_until_ready()
    return placement.device_put_sharded(np.zeros((0,), np.bool_), sharding, weak_type=False)


def _index_key(index: tuple) -> tuple:
    return tuple((s.start, s.stop, s.step) if isinstance(s, slice) else s for s in index)


class Shard:
    """One device's part of an array: ``device``, ``index`` (slices into the global array) and ``data``
    (None for a device of another process, in ``Array.global_shards``)."""

    __slots__ = ("device", "index", "data")

    def __init__(self, device: Any, index: tuple, data: Array | None):
        self.device, self.index, self.data = device, index, data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, data={self.data!r})"


def _host_value(x: Any) -> tuple[np.ndarray, ShapedArray]:
    if dtypes.is_python_scalar(x):
        aval = ShapedArray((), dtypes.dtype_of(x), weak_type=type(x) is not bool)  # as JAX: bools are never weak
        return np.asarray(x, aval.dtype), aval
    value = np.asarray(x)
    if value.dtype == object:
        raise TypeError(f"cannot put a value of type {type(x).__name__} on a device: {x!r}")
    dtype = dtypes.canonicalize_dtype(value.dtype)  # numpy's float64 is float32 with x64 off (JAX's device_put)
    if dtype != value.dtype:
        value = value.astype(dtype)
    return value, ShapedArray(value.shape, dtype)


def block_until_ready_tree(x: Any) -> Any:
    """Wait for every ``Array`` (and ``Token``) in the pytree ``x`` (``toolkit.block_until_ready``); returns ``x``.

    The leaves come from jaxlib's C++ flatten (built-in nodes), and any other
    leaf is flattened by toolkit's registry, so registered classes are looked
    into as ``tree_leaves`` does; the arrays are waited for with one call into
    jaxlib. If that fails (a deleted array), they are waited for one by one,
    raising the error of the first that fails.
    """
    native = native_pytrees.flatten(x)
    leaves = native[0] if native is not None else pytrees.tree_leaves(x)
    arrays: list[Array] = []
    for leaf in leaves:
        if isinstance(leaf, Array):
            arrays.append(leaf)
        elif type(leaf) is Token:
            arrays.append(leaf._buf)
        elif native is not None:  # a node only toolkit knows (OrderedDict, registered classes): its arrays
            arrays.extend(a for a in pytrees.tree_leaves(leaf) if isinstance(a, Array))
    if len(arrays) == 1:
        arrays[0].block_until_ready()
    elif arrays:
        try:
            native_pytrees.block_until_ready([a._impl for a in arrays])
        except Exception:  # noqa: BLE001 - jaxlib's error types; the one-by-one wait raises the array's own error
            for array in arrays:
                array.block_until_ready()
    return x


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False, may_alias: Any = None) -> Any:
    """Put ``x`` (a pytree of arrays) on a device or lay it out by a sharding (JAX's ``jax.device_put``).

    ``device`` is a device from ``toolkit.devices()``, a ``toolkit.shard`` sharding, a ``PartitionSpec`` (under
    ``toolkit.set_mesh``), ``None`` for the default device, a ``toolkit.memory.Space`` (the array's own sharding
    in that memory, as JAX's; concrete values only), or a pytree prefix of ``x`` holding those.
    On a mesh with Explicit axes the sharding becomes part of the array's type
    (``toolkit.typeof(x)`` prints ``float32[8@x,4]``).

    ``donate`` (a bool, or a pytree prefix of bools): the input may be consumed, and is deleted when it is a
    toolkit array (toolkit always copies, so the input is deleted after the copy). ``may_alias``: ``False``
    always makes a new buffer; ``True`` or ``None`` (unless donating) returns ``x`` itself when it is already
    placed so. Both true is a ``ValueError``, as JAX's. ``src`` (where ``x`` is) is accepted and not needed:
    toolkit arrays know their placement.

    Inside ``jit`` (a traced ``x``) it is JAX's: the value is unchanged (XLA places the program's results; an
    Explicit mesh's sharding becomes the value's type, as ``reshard``), after JAX's check that the sharding
    divides the shape. A memory kind (a sharding's, or a ``Space``) puts the value in that memory: the
    results computed from it are returned there (``mhlo.memory_kind`` on ``@main``'s results, as JAX on CPU).
    """
    leaves, tree = pytrees.tree_flatten(x)
    kinds = (Sharding, PartitionSpec, runtime_client.Device, Space)
    if device is None or isinstance(device, kinds):
        targets = [device] * len(leaves)
    else:
        targets = pytrees.broadcast_prefix(device, x, is_leaf=lambda t: t is None or isinstance(t, kinds))
    semantics = list(zip(_per_leaf(donate, x, leaves), _per_leaf(may_alias, x, leaves)))
    for donating, aliasing in semantics:
        if donating and aliasing:
            raise ValueError("may_alias and donate cannot be True at the same time.")
    # Only a concrete mesh gives a spec devices to put on (JAX's get_concrete_mesh): never an abstract one alone.
    targets = [resolve_sharding(t, "device_put", ValueError, abstract_use="never") if isinstance(t, PartitionSpec)
               else t for t in targets]
    if any(isinstance(leaf, tracing.Tracer) for leaf in leaves):
        return pytrees.tree_unflatten(tree, [_put_traced(leaf, t) if isinstance(leaf, tracing.Tracer)
                                             else _put_one(leaf, t) for leaf, t in zip(leaves, targets)])
    targets = [_in_space(leaf, t) if isinstance(t, Space) else t for leaf, t in zip(leaves, targets)]
    with transfer_guards.explicit_device_put():  # explicit: only the *_explicit guard levels refuse it (JAX)
        out = [_put_one(leaf, t) for leaf, t in zip(leaves, targets)]
    for i, (leaf, (donating, aliasing)) in enumerate(zip(leaves, semantics)):
        if (donating or aliasing is False) and out[i] is leaf:
            out[i] = leaf._device_copy()
        if donating and isinstance(leaf, Array):
            leaf.delete()
    return pytrees.tree_unflatten(tree, out)


def _per_leaf(flags: Any, x: Any, leaves: list) -> list:
    """``donate=``/``may_alias=``: one value for every leaf, or a pytree prefix of ``x`` holding them."""
    if flags is None or isinstance(flags, bool):
        return [flags] * len(leaves)
    return pytrees.broadcast_prefix(flags, x, is_leaf=lambda f: f is None or isinstance(f, bool))


def _put_traced(x: Any, target: Any) -> Any:
    """JAX's ``device_put`` of a traced value: its primitive (``toolkit.lax.sharding.device_put_p``).

    A sharding or a ``toolkit.memory.Space`` may name another memory than the device's: the value is then in
    that memory, which ``jit`` writes on ``@main``'s results (``toolkit/sharding_plan.py``), as JAX's does.
    """
    if target is None:
        return x
    if target is Space.Any:
        # JAX 0.10.2 fails inside its lowering (an AssertionError); refused here with the eager path's error.
        raise ValueError("device_put to toolkit.memory.Space.Any: name Space.Device or Space.Host")
    if not isinstance(target, (Sharding, runtime_client.Device, Space)):
        raise TypeError(f"device_put expects a device or a toolkit.shard sharding, got {target!r}")
    return device_put_p.bind(x, device=target)


def _in_space(x: Any, space: Space) -> Sharding:
    """The sharding ``x`` has (its device's, for a host value) in memory ``space`` (JAX's device_put to a Space)."""
    if space is Space.Any:
        raise ValueError("device_put to toolkit.memory.Space.Any: name Space.Device or Space.Host")
    if isinstance(x, Array):
        return x.sharding.with_memory_kind(space_to_kind(space))
    if hasattr(x, "aval") and not isinstance(x, np.ndarray):
        raise NotImplementedError("device_put of a traced value to a toolkit.memory.Space is not supported yet; "
                                  "put the argument in that memory before the jit call")
    return SingleDeviceSharding(runtime_client.default_device(), memory_kind=space_to_kind(space))


#: Per device, the sharding numpy values put there without a target share: its jaxlib sharding is made once, and
#: arrays placed alike carry the same sharding object (the fast call paths compare shardings by identity first).
_DEFAULT_SHARDINGS: dict[Any, SingleDeviceSharding] = {}


def _default_sharding() -> SingleDeviceSharding:
    """The sharding of a value put without a target: the default device's, one object per device."""
    device = runtime_client.default_device()
    sharding = _DEFAULT_SHARDINGS.get(device)
    if sharding is None:
        sharding = _DEFAULT_SHARDINGS.setdefault(device, SingleDeviceSharding(device))
    return sharding


#: (shape, dtype) -> the one ``ShapedArray`` every numpy value of that shape and (canonical) dtype put without a
#: target gets: eager ops compare their arguments' avals by identity first (``toolkit.dispatch``), so a loop over
#: fresh numpy values hits as one over device arrays does. Bounded: cleared when full.
_HOST_ARRAY_AVALS: dict[tuple, ShapedArray] = {}
HOST_ARRAY_AVALS_MAX = 1024


def _put_host_array(value: np.ndarray) -> Array:
    """``value`` (a numpy array of a canonical dtype) on the default device, uncommitted: what ``_put_one(value,
    None)`` makes, without its general checks (every eager operation on a numpy argument comes here)."""
    sharding = _default_sharding()
    key = (value.shape, value.dtype)
    aval = _HOST_ARRAY_AVALS.get(key)
    if aval is None:
        if len(_HOST_ARRAY_AVALS) >= HOST_ARRAY_AVALS_MAX:
            _HOST_ARRAY_AVALS.clear()
        aval = _HOST_ARRAY_AVALS[key] = ShapedArray(value.shape, value.dtype)
    if not value.flags.c_contiguous:  # jaxlib copies from a C-ordered buffer
        value = np.ascontiguousarray(value)
    impl = runtime_arrays.put_shards(aval, sharding._runtime_sharding(value.ndim), (value,), (sharding._device,))
    return Array(impl, aval, sharding, False)


def put_host_operand(value: np.ndarray) -> Array:
    """A numpy array (any dtype but object) as an eager operation's operand: in its canonical dtype (numpy's
    64-bit types are 32-bit with x64 off, as in JAX) on the default device, uncommitted."""
    dtype = dtypes.canonicalize_dtype(value.dtype)
    return _put_host_array(value if dtype == value.dtype else value.astype(dtype))


def _put_one(x: Any, target: Any) -> Any:
    if type(x) is Token:
        # A token holds no data to move: a new one after it, as JAX's device_put makes one.
        x.block_until_ready()
        return Token(x._buf)
    if target is None and type(x) is np.ndarray and x.dtype.kind != "O":
        return put_host_operand(x)  # numpy's float64 is float32 with x64 off (JAX's device_put)
    committed = target is not None
    if target is None and isinstance(x, Array) and x.aval.sharding is not None:
        return x  # explicitly sharded: stays as its type says
    if target is None:
        target = SingleDeviceSharding(x.sharding._device_assignment[0]) if isinstance(x, Array) \
            else _default_sharding()
    elif not isinstance(target, Sharding):
        if not isinstance(target, runtime_client.Device):
            raise TypeError(f"device_put expects a device or a toolkit.shard sharding, got {target!r}")
        target = SingleDeviceSharding(target)
    if isinstance(x, Array):
        if x._sharding is target or (x._sharding is not None and x._sharding == target):
            return x
        if not x.is_fully_addressable:
            return _reshard_global(x, target)
        value, aval = np.asarray(x), x.aval
    else:
        value, aval = _host_value(x)
    impl = placement.device_put_sharded(value, target, weak_type=aval.weak_type)
    typed = type_sharding(target, len(aval.shape))
    if typed is not None or aval.sharding is not None:
        aval = aval.update(sharding=typed)
    return Array(impl, aval, target, committed)


def _reshard_global(x: Array, target: Any) -> Array:
    """device_put of an array spanning other processes' devices: a jitted copy onto ``target``, which must
    span the same devices (as JAX; no process holds the whole value to re-slice)."""
    if set(target._device_assignment) != set(x.sharding._device_assignment):
        raise ValueError(
            "for a cross-process reshard, the input's and the target sharding's devices must be the same set; got "
            f"the input's device ids {[d.id for d in x.sharding._device_assignment]} and the target's "
            f"{[d.id for d in target._device_assignment]}")
    if _jitted_copy is None:
        raise RuntimeError("a cross-process reshard is a jit call, and toolkit.stages is not loaded: import toolkit")
    return _jitted_copy(x, target)


def identity(x: Any) -> Any:
    """``x`` itself: the function of the jitted copy :func:`install_jitted_copy` installs (one function, so its
    trace and executable are found again)."""
    return x


#: ``(array, target sharding) -> copy`` through jit with ``out_shardings=target``: installed by toolkit.stages, a
#: layer above, when it loads (as it installs eager execution), so that this module need not import it.
_jitted_copy: Any = None


def install_jitted_copy(copy: Any) -> None:
    """Install how an array spanning other processes is copied onto another sharding (``toolkit.stages``)."""
    global _jitted_copy
    _jitted_copy = copy


def from_impl(impl: Any, aval: ShapedArray, sharding: Any = None) -> Array:
    return Array(impl, aval, sharding)
