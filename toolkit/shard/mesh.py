"""Device meshes: an n-d array of devices whose axes have names.

``Mesh(devices, axis_names)`` holds real devices; ``AbstractMesh(axis_sizes,
axis_names)`` only the shape (what an exported function records), and
optionally an ``AbstractDevice`` saying what kind of device it stands for.
Using a ``Mesh`` as a context manager makes it the *current mesh*, which
``get_mesh()`` returns (and which ``jit`` may use for bare ``PartitionSpec``
shardings); its abstract form becomes the *current abstract mesh*, which
``get_abstract_mesh()`` returns and ``use_abstract_mesh`` replaces on its own.
``ManualAxisType`` is the manual-axis part of a type: the mesh axes a value
varies over, and those it is unreduced or reduced over.

Example::

    >>> from toolkit.runtime.client import devices
    >>> mesh = Mesh(np.array(devices()[:8]).reshape(2, 4), ("x", "y"))
    >>> mesh.shape
    OrderedDict([('x', 2), ('y', 4)])
    >>> with mesh:
    ...     assert get_mesh() is mesh
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import functools
import math
import threading
import weakref
from typing import AbstractSet, Any, Hashable, Iterator, Literal, Sequence

import numpy as np

from toolkit.runtime.client import devices as all_devices
from toolkit.shard.mesh_utils import create_device_mesh

MeshAxisName = Hashable


class AxisType(enum.Enum):
    """How an axis is handled: ``Auto`` (the partitioner decides), ``Explicit`` or ``Manual``."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


_MANUAL_AXIS_TYPES: "weakref.WeakValueDictionary[tuple, ManualAxisType]" = weakref.WeakValueDictionary()


class ManualAxisType:
    """How a value relates to the Manual mesh axes of a ``shard_map`` body (JAX's ``jax.sharding.ManualAxisType``).

    ``varying``: the axes along which the value differs from device to device; ``unreduced``: the axes over
    which it is a partial sum still to be reduced; ``reduced``: the axes over which it has been reduced. Each
    is a set of mesh axis names (keyword only; any set is stored as a ``frozenset``). An axis may not be both
    varying and unreduced, nor both varying and reduced (``ValueError``, JAX's message); a non-set field is a
    ``TypeError``.

    Immutable and interned as in JAX: equal fields give the same object, so ``==`` and ``hash`` follow the
    fields. ``empty`` is True only for ``ManualAxisType()``. toolkit's avals do not carry it (see
    docs/differences-from-jax.md): it is a value of its own here.

    Example::

        >>> ManualAxisType(varying={"x"})
        ManualAxisType(varying=frozenset({'x'}), unreduced=frozenset(), reduced=frozenset())
    """

    __slots__ = ("varying", "unreduced", "reduced", "__weakref__")

    varying: frozenset
    unreduced: frozenset
    reduced: frozenset

    def __new__(cls, *, varying: AbstractSet = frozenset(), unreduced: AbstractSet = frozenset(),
                reduced: AbstractSet = frozenset()) -> "ManualAxisType":
        for field, value in (("varying", varying), ("unreduced", unreduced), ("reduced", reduced)):
            if not isinstance(value, AbstractSet):
                # JAX intersects the fields as given, so a list or tuple fails there with Python's TypeError.
                raise TypeError(f"ManualAxisType's {field} must be a set of mesh axis names, got {value!r} of type "
                                f"{type(value).__name__}")
        if varying & unreduced:
            raise ValueError(f"varying and unreduced cannot have common mesh axes. Got varying={varying} and "
                             f"unreduced={unreduced}")
        if varying & reduced:
            raise ValueError(f"varying and reduced cannot have common mesh axes. Got varying={varying} and "
                             f"reduced={reduced}")
        key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
        interned = _MANUAL_AXIS_TYPES.get(key)
        if interned is None:
            interned = object.__new__(cls)
            for field, value in zip(cls.__slots__, key):
                object.__setattr__(interned, field, value)
            _MANUAL_AXIS_TYPES[key] = interned
        return interned

    # No __eq__ or __hash__: interned objects compare by identity, which is equality of the fields.

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __getnewargs_ex__(self) -> tuple[tuple, dict]:
        # Pickling and copying go through __new__, which interns again.
        return (), {"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced}

    def __getstate__(self) -> None:
        return None  # the fields travel as __new__'s arguments

    def __repr__(self) -> str:
        return f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, reduced={self.reduced})"

    def update(self, **kwargs: AbstractSet) -> "ManualAxisType":
        """A copy with the given ``varying``, ``unreduced`` or ``reduced`` replaced."""
        kwargs.setdefault("varying", self.varying)
        kwargs.setdefault("unreduced", self.unreduced)
        kwargs.setdefault("reduced", self.reduced)
        return ManualAxisType(**kwargs)

    def to_ct_mat(self) -> "ManualAxisType":
        """The type of a cotangent: unreduced and reduced swapped (reverse mode turns one into the other)."""
        return self.update(unreduced=self.reduced, reduced=self.unreduced)

    @property
    def empty(self) -> bool:
        """Whether no axis is mentioned (the default ``ManualAxisType()``)."""
        return self is EMPTY_MANUAL_AXIS_TYPE

    def invarying(self, mesh: Any) -> frozenset:
        """The Manual axes of ``mesh`` this value is neither varying, unreduced nor reduced over."""
        return frozenset(mesh.manual_axes) - self.vur

    @property
    def vur(self) -> frozenset:
        """Every axis mentioned: ``varying | unreduced | reduced``."""
        return self.varying | self.unreduced | self.reduced


#: ``ManualAxisType()``: no manual axis mentioned (JAX's ``core.empty_mat``); kept alive so ``empty`` holds.
EMPTY_MANUAL_AXIS_TYPE = ManualAxisType()


def _normalize_axis_names(axis_names: Any) -> tuple:
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    names = tuple(axis_names)
    if any(name is None for name in names):
        raise ValueError(f"mesh axis names cannot be None, got {names}")
    repeated = sorted({str(n) for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"mesh axis names must be unique; {', '.join(repeated)} appears more than once in {names}")
    return names


def _normalize_axis_types(axis_names: tuple, axis_types: Any) -> tuple:
    if axis_types is None:
        return (AxisType.Auto,) * len(axis_names)
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,)
    axis_types = tuple(axis_types)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(f"axis_types must be AxisType values, got {axis_types}")
    if len(axis_types) != len(axis_names):
        raise ValueError(f"got {len(axis_types)} axis_types for {len(axis_names)} axis names {axis_names}")
    return axis_types


class _MeshBase:
    axis_names: tuple
    axis_types: tuple
    size: int

    @property
    def shape(self) -> "collections.OrderedDict[Any, int]":
        """Axis name -> axis size, in axis order."""
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def axis_sizes(self) -> tuple[int, ...]:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def empty(self) -> bool:
        return self.size == 0

    @property
    def auto_axes(self) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Manual)

    # JAX's predicates: False for a mesh without axes (JAX's all_axis_types_match).
    @property
    def are_all_axes_auto(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Auto``."""
        return bool(self.axis_types) and all(t is AxisType.Auto for t in self.axis_types)

    @property
    def are_all_axes_explicit(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Explicit``."""
        return bool(self.axis_types) and all(t is AxisType.Explicit for t in self.axis_types)

    @property
    def are_all_axes_manual(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Manual``."""
        return bool(self.axis_types) and all(t is AxisType.Manual for t in self.axis_types)

    def axis_size(self, name: Any) -> int:
        """The size of axis ``name``; ``ValueError`` naming the mesh's axes if it has none such."""
        try:
            return self.axis_sizes[self.axis_names.index(name)]
        except ValueError:
            raise ValueError(f"mesh axis {name!r} is not in the mesh; its axes are {self.axis_names}") from None


class Mesh(_MeshBase):
    """An n-d array of devices with one name per axis (JAX's ``jax.sharding.Mesh``).

    ``devices`` is an ndarray (or nested sequence) of devices whose rank equals
    ``len(axis_names)``. All devices must be distinct and of one platform.

    Example::

        >>> mesh = Mesh(np.array(devices()).reshape(4, 2), ("data", "model"))
        >>> mesh.size, mesh.axis_sizes
        (8, (4, 2))
    """

    def __init__(self, devices: np.ndarray | Sequence[Any], axis_names: str | Sequence[MeshAxisName],
                 axis_types: AxisType | tuple[AxisType, ...] | None = None):
        array = devices if isinstance(devices, np.ndarray) else np.array(devices, dtype=object)
        array = np.array(array, dtype=object)
        names = _normalize_axis_names(axis_names)
        if array.ndim != len(names):
            raise ValueError(
                f"Mesh needs one axis name per dimension of `devices`: devices has ndim "
                f"{array.ndim} (shape {array.shape}) but got {len(names)} axis names {names}")
        flat = tuple(array.flat)
        empty = len(names) == 0 and (len(flat) == 0 or flat[0] is None)
        if not empty:
            ids = [d.id for d in flat]
            if len(set(ids)) != len(ids):
                repeated = sorted({i for i in ids if ids.count(i) > 1})
                raise ValueError(f"Mesh devices must be distinct; device ids {repeated} appear more than once")
            platforms = sorted({d.platform for d in flat})
            if len(platforms) > 1:
                raise ValueError(
                    f"Mesh devices must all be of one platform, got devices of platforms {platforms}")
        array.flags.writeable = False
        self.devices: np.ndarray = array
        self.axis_names: tuple = names
        self.axis_types: tuple = _normalize_axis_types(names, axis_types)
        self.size: int = 0 if empty else math.prod(array.shape)
        self._flat_devices_tuple: tuple = () if empty else flat

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The size of each axis (``devices.shape``), in ``axis_names``' order."""
        return tuple(self.devices.shape)

    @functools.cached_property
    def device_ids(self) -> np.ndarray:
        """The ids of the devices, as an int ndarray of the mesh's shape."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @functools.cached_property
    def _flat_devices_set(self) -> set:
        return set(self._flat_devices_tuple)

    @property
    def is_scalar(self) -> bool:
        """Whether the mesh is one device without axes (JAX's ``Mesh.is_scalar``)."""
        return self.size == 1 and not self.axis_names

    @property
    def local_devices(self) -> list:
        """Every device of the mesh, flat (this class does not tell processes apart: see ``is_multi_process``)."""
        return list(self._flat_devices_tuple)

    @property
    def local_mesh(self) -> "Mesh":
        """The mesh itself (this class does not tell processes apart: see ``is_multi_process``)."""
        return self  # one process owns every device

    @property
    def is_multi_process(self) -> bool:
        """Always False: JAX's attribute; ``local_devices``/``local_mesh`` treat every device as this process's."""
        return False

    @functools.cached_property
    def abstract_mesh(self) -> "AbstractMesh":
        """The same shape, axis names and types, with the ``AbstractDevice`` of its first device instead of devices.

        As in JAX, it is therefore not equal to an ``AbstractMesh`` built without ``abstract_device``; a mesh
        without axes gives the empty abstract mesh (no device).
        """
        if not self.axis_names:
            return AbstractMesh((), ())
        first = self.devices.flat[0]
        device = None if first is None else AbstractDevice.of(first)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types, abstract_device=device)

    def update(self, devices: Any = None, axis_names: Any = None, axis_types: Any = None) -> "Mesh":
        """A copy with the given ``devices``, ``axis_names`` or ``axis_types`` replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def _key(self) -> tuple:
        return (tuple(int(d.id) for d in self._flat_devices_tuple),
                tuple(d.platform for d in self._flat_devices_tuple[:1]),
                self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        axes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, axis_types={self.axis_types})"

    def __enter__(self) -> "Mesh":
        # The current abstract mesh follows the current mesh until the block ends (as JAX's set_mesh does);
        # the one it replaces is kept beside the mesh to be restored.
        _mesh_stack().append(self)
        _abstract_restore_stack().append(_swap_abstract_mesh(self.abstract_mesh))
        _count_context(+1)
        return self

    def __exit__(self, *exc_info: Any) -> Literal[False]:
        _mesh_stack().pop()
        _swap_abstract_mesh(_abstract_restore_stack().pop())
        _count_context(-1)
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class AbstractDevice:
    """The kind of device an ``AbstractMesh`` stands for (JAX's ``jax.sharding.AbstractDevice``).

    ``device_kind`` is a device's ``device_kind`` (``"cpu"``, ``"TPU v6 lite"``), ``num_cores`` its core count
    (TPU ``num_cores``, GPU ``core_count``, None elsewhere) and ``platform`` its platform (``"cpu"``, ``"tpu"``,
    ``"gpu"``). Frozen; equal and hashed by the three fields.

    Example::

        >>> AbstractDevice(device_kind="TPU v6 lite", num_cores=1, platform="tpu")
        AbstractDevice(device_kind=TPU v6 lite, num_cores=1, platform=tpu)
    """

    device_kind: str
    num_cores: int | None
    platform: str

    @classmethod
    def of(cls, device: Any) -> "AbstractDevice":
        """The abstract device of a concrete one, read as ``Mesh.abstract_mesh`` reads it."""
        if device.platform == "tpu":
            num_cores = getattr(device, "num_cores", None)
        elif device.platform == "gpu":
            num_cores = getattr(device, "core_count", None)
        else:
            num_cores = None
        return cls(device_kind=device.device_kind, num_cores=num_cores, platform=device.platform)

    def __repr__(self) -> str:
        return f"AbstractDevice({self._repr()})"

    def _repr(self) -> str:
        # The fields unquoted, as JAX prints them (also inside an AbstractMesh's repr).
        return f"device_kind={self.device_kind}, num_cores={self.num_cores}, platform={self.platform}"


class AbstractMesh(_MeshBase):
    """Axis sizes and names without devices (JAX's ``AbstractMesh``).

    ``abstract_device`` (keyword only) optionally says which kind of device the mesh stands for; it is part of
    the mesh's equality, hash and repr, as in JAX (so ``Mesh.abstract_mesh``, which has one, differs from the
    same shape built without it). An abstract mesh is not a context manager: ``use_abstract_mesh`` makes it
    current.

    Example::

        >>> AbstractMesh((2, 4), ("x", "y")).shape
        OrderedDict([('x', 2), ('y', 4)])
    """

    def __init__(self, axis_sizes: Sequence[int], axis_names: str | Sequence[MeshAxisName],
                 axis_types: AxisType | tuple[AxisType, ...] | None = None, *,
                 abstract_device: AbstractDevice | None = None):
        names = _normalize_axis_names(axis_names)
        sizes = tuple(int(s) for s in axis_sizes)
        if len(sizes) != len(names):
            raise ValueError(f"AbstractMesh got {len(sizes)} axis sizes {sizes} for {len(names)} axis names {names}")
        if any(s < 1 for s in sizes):
            raise ValueError(f"AbstractMesh axis sizes must be positive, got {sizes}")
        self._axis_sizes = sizes
        self.axis_names = names
        self.axis_types = _normalize_axis_types(names, axis_types)
        if abstract_device is not None and not isinstance(abstract_device, AbstractDevice):
            # JAX stores anything here and fails later, printing it; refuse it where it is given.
            raise TypeError(f"AbstractMesh's abstract_device must be an AbstractDevice or None, got "
                            f"{abstract_device!r} of type {type(abstract_device).__name__}")
        self.abstract_device: AbstractDevice | None = abstract_device
        self.size = math.prod(sizes) if sizes else 0

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The size of each axis, in ``axis_names``' order."""
        return self._axis_sizes

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        """The mesh itself (it is already abstract)."""
        return self

    @property
    def devices(self) -> Any:
        """Always raises ``ValueError``: an abstract mesh has no devices."""
        raise ValueError("AbstractMesh has no devices")

    @property
    def device_ids(self) -> Any:
        """Always raises ``ValueError``: an abstract mesh has no devices."""
        raise ValueError("AbstractMesh has no device_ids")

    def update(self, axis_sizes: Any = None, axis_names: Any = None, axis_types: Any = None,
               **kwargs: Any) -> "AbstractMesh":
        """A copy with the given ``axis_sizes``, ``axis_names``, ``axis_types`` or ``abstract_device=`` replaced.

        ``abstract_device`` is kept unless given (``abstract_device=None`` drops it), as in JAX.
        """
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types, **kwargs)

    def __enter__(self) -> Any:
        raise ValueError("AbstractMesh does not implement __enter__")

    def __exit__(self, *exc_info: Any) -> Any:
        raise ValueError("AbstractMesh does not implement __exit__")

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("AbstractMesh",) + self._key())

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple) or "()"
        device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"


_state = threading.local()

#: What ``get_abstract_mesh`` returns when neither a mesh nor ``use_abstract_mesh`` has set one (JAX's
#: ``empty_abstract_mesh``): an abstract mesh without axes, whose ``empty`` is True.
EMPTY_ABSTRACT_MESH = AbstractMesh((), ())

#: The abstract context before anything set it (JAX's ``config_ext.unset``): unlike an explicitly set
#: abstract mesh, it never makes ``use_abstract_mesh`` check the size of the mesh it enters.
_UNSET: Any = object()


#: How many mesh contexts (``with mesh:``, ``set_mesh``, ``use_abstract_mesh``) are open, in any thread. jit's
#: fast paths do not key on the context, so they answer only while this is 0: one list read on the hot path
#: (a context open in another thread only sends calls the keyed way, which is always right).
OPEN_CONTEXTS = [0]
_OPEN_CONTEXTS_LOCK = threading.Lock()


def _count_context(change: int) -> None:
    with _OPEN_CONTEXTS_LOCK:
        OPEN_CONTEXTS[0] += change


def _mesh_stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def _abstract_restore_stack() -> list:
    """The abstract contexts that ``Mesh.__enter__`` replaced, restored by the matching ``__exit__``."""
    stack = getattr(_state, "abstract_restore", None)
    if stack is None:
        stack = _state.abstract_restore = []
    return stack


def _swap_abstract_mesh(new: Any) -> Any:
    """Make ``new`` (an ``AbstractMesh`` or ``_UNSET``) this thread's abstract context; the previous one."""
    previous = getattr(_state, "abstract", _UNSET)
    _state.abstract = new
    return previous


def get_mesh() -> Mesh | None:
    """The innermost mesh entered with ``with mesh:`` / ``set_mesh``, or None."""
    stack = _mesh_stack()
    return stack[-1] if stack else None


def mesh_context() -> tuple[Mesh | None, Any]:
    """What a trace may read of the mesh context, for jit's caches to key on: the current mesh (``get_mesh()``)
    and the abstract context (``use_abstract_mesh``'s mesh, ``set_mesh``'s abstract mesh, or a marker for none).

    A function traced under one abstract mesh is traced again under another, as JAX's jit is; with neither
    set this is ``(None, <unset>)``, the same object every time.
    """
    stack = _mesh_stack()
    return (stack[-1] if stack else None, getattr(_state, "abstract", _UNSET))


def mesh_context_is_empty() -> bool:
    """Whether no mesh and no abstract mesh are in context (jit's fast path answers only such calls)."""
    return not _mesh_stack() and getattr(_state, "abstract", _UNSET) is _UNSET


def get_abstract_mesh() -> AbstractMesh:
    """The current abstract mesh (JAX's ``jax.sharding.get_abstract_mesh``).

    The innermost of ``use_abstract_mesh(m)`` (``m`` itself) and ``set_mesh(mesh)`` / ``with mesh:``
    (``mesh.abstract_mesh``, with its ``AbstractDevice``); the empty ``AbstractMesh((), ())`` when there is
    none, as in JAX (test ``.empty``, not ``is None``).
    """
    current = getattr(_state, "abstract", _UNSET)
    return EMPTY_ABSTRACT_MESH if current is _UNSET else current


class use_abstract_mesh:  # noqa: N801 - JAX's name; a class so that the object works as the context manager
    """Make ``mesh`` the current abstract mesh inside the ``with`` block (JAX's ``jax.sharding.use_abstract_mesh``).

    Only ``get_abstract_mesh()`` changes: ``get_mesh()`` keeps the concrete mesh of ``set_mesh``, if any. The
    new mesh may not change the number of devices of an abstract mesh already in context (an empty one on
    either side is exempt): ``ValueError``, and the context is left as it was. ``mesh`` must be an
    ``AbstractMesh`` (``ValueError`` otherwise, JAX's type). ``with`` binds None, as in JAX.

    Example::

        >>> with use_abstract_mesh(AbstractMesh((2, 4), ("x", "y"))):
        ...     get_abstract_mesh().shape_tuple
        (('x', 2), ('y', 4))
    """

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got type: {type(mesh)}")
        self.mesh = mesh

    def __enter__(self) -> None:
        self.prev = _swap_abstract_mesh(self.mesh)
        previous = self.prev
        if previous is not _UNSET and not previous.empty and not self.mesh.empty and previous.size != self.mesh.size:
            _swap_abstract_mesh(previous)
            raise ValueError(
                f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: {self.mesh} with "
                f"size={self.mesh.size} and prev mesh: {previous} with size={previous.size}")
        _count_context(+1)

    def __exit__(self, *exc_info: Any) -> Literal[False]:
        _swap_abstract_mesh(self.prev)
        _count_context(-1)
        return False


@contextlib.contextmanager
def set_mesh(mesh: Mesh) -> Iterator[Mesh]:
    """Make ``mesh`` the current mesh inside the ``with`` block.

    Example::

        >>> with set_mesh(mesh):
        ...     assert get_mesh() is mesh
    """
    if not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh expects a Mesh, got {type(mesh).__name__}")
    with mesh:
        stack = _concrete_stack()
        stack.append(mesh)
        try:
            yield mesh
        finally:
            stack.pop()


def _concrete_stack() -> list:
    """The meshes ``set_mesh`` entered, innermost last (``with mesh:`` alone does not push here)."""
    stack = getattr(_state, "concrete", None)
    if stack is None:
        stack = _state.concrete = []
    return stack


def get_concrete_mesh() -> Mesh | None:
    """The mesh of the innermost ``set_mesh`` block (JAX's ``get_concrete_mesh``), or None.

    jit runs a computation nothing else places over it. The deprecated ``with mesh:`` is not one: it sets
    ``get_mesh()`` (bare specs' meaning) but not the devices jit runs on, as JAX's legacy context.
    """
    stack = _concrete_stack()
    return stack[-1] if stack else None


def abstract_mesh_on(mesh: AbstractMesh, devices: Sequence[Any]) -> Mesh:
    """The ``AbstractMesh`` ``mesh`` laid over ``devices`` (exactly ``mesh.size`` of them, in order): a ``Mesh`` of
    its axis names, sizes and types. What a lowering over an abstract mesh alone is made with (toolkit's lowerings
    are placed on devices); ``ValueError`` when the device count differs."""
    devices = tuple(devices)
    if len(devices) != mesh.size:
        raise ValueError(f"{mesh} has {mesh.size} positions, but {len(devices)} devices were given to lay it on")
    return Mesh(np.array(devices, dtype=object).reshape(mesh.axis_sizes), mesh.axis_names,
                axis_types=mesh.axis_types)


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[MeshAxisName],
              axis_types: AxisType | tuple[AxisType, ...] | None = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """A ``Mesh`` of shape ``axis_shapes`` over the first ``prod(axis_shapes)`` of ``devices`` (JAX's ``jax.make_mesh``).

    ``axis_types`` defaults to ``AxisType.Explicit`` for every axis, as in JAX 0.10.

    Example::

        >>> make_mesh((2, 4), ("x", "y"))
        Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), axis_types=(Explicit, Explicit))
    """
    shape = tuple(int(s) for s in axis_shapes)
    names = _normalize_axis_names(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh got {len(shape)} axis shapes {shape} for {len(names)} axis names {names}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(names)
    pool = list(all_devices() if devices is None else devices)
    size = math.prod(shape)
    if size > len(pool):
        raise ValueError(f"Number of devices {len(pool)} must be >= the product of mesh_shape {shape}")
    return Mesh(create_device_mesh(shape, pool[:size]), names, axis_types)
