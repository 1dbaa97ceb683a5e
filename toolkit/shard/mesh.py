"""Device meshes: an n-d array of devices whose axes have names.

``Mesh(devices, axis_names)`` holds real devices; ``AbstractMesh(axis_sizes,
axis_names)`` only the shape (what an exported function records). Using a
``Mesh`` as a context manager makes it the *current mesh*, which
``get_mesh()`` returns (and which ``jit`` may use for bare ``PartitionSpec``
shardings).

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
import enum
import functools
import math
import threading
from typing import Any, Hashable, Iterator, Literal, Sequence

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
        """The same shape, axis names and types without devices."""
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

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
        _mesh_stack().append(self)
        return self

    def __exit__(self, *exc_info: Any) -> Literal[False]:
        _mesh_stack().pop()
        return False


class AbstractMesh(_MeshBase):
    """Axis sizes and names without devices (JAX's ``AbstractMesh``).

    Example::

        >>> AbstractMesh((2, 4), ("x", "y")).shape
        OrderedDict([('x', 2), ('y', 4)])
    """

    def __init__(self, axis_sizes: Sequence[int], axis_names: str | Sequence[MeshAxisName],
                 axis_types: AxisType | tuple[AxisType, ...] | None = None):
        names = _normalize_axis_names(axis_names)
        sizes = tuple(int(s) for s in axis_sizes)
        if len(sizes) != len(names):
            raise ValueError(f"AbstractMesh got {len(sizes)} axis sizes {sizes} for {len(names)} axis names {names}")
        if any(s < 1 for s in sizes):
            raise ValueError(f"AbstractMesh axis sizes must be positive, got {sizes}")
        self._axis_sizes = sizes
        self.axis_names = names
        self.axis_types = _normalize_axis_types(names, axis_types)
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

    def update(self, axis_sizes: Any = None, axis_names: Any = None, axis_types: Any = None) -> "AbstractMesh":
        """A copy with the given ``axis_sizes``, ``axis_names`` or ``axis_types`` replaced."""
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types)

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("AbstractMesh",) + self._key())

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple) or "()"
        return f"AbstractMesh({axes}, axis_types={self.axis_types})"


_state = threading.local()


def _mesh_stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def get_mesh() -> Mesh | None:
    """The innermost mesh entered with ``with mesh:`` / ``set_mesh``, or None."""
    stack = _mesh_stack()
    return stack[-1] if stack else None


def get_abstract_mesh() -> AbstractMesh | None:
    """The abstract form of :func:`get_mesh` (None without a current mesh)."""
    stack = _mesh_stack()
    return stack[-1].abstract_mesh if stack else None


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
        yield mesh


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
