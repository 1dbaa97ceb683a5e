"""``PartitionSpec``: how each dimension of an array maps onto mesh axes.

Each entry is ``None`` (the dimension is not split), a mesh axis name (split
over that axis), a tuple of axis names (split over their product, the first
name major) or ``PartitionSpec.UNCONSTRAINED`` (the partitioner may choose).
Missing trailing entries mean ``None``.

``PartitionSpec`` subclasses ``tuple`` so that indexing, ``len`` and
iteration work, but it has no ``_fields``: toolkit's pytree utilities treat it
as a leaf, like JAX does.

Example::

    >>> P = PartitionSpec
    >>> P("x", None, ("y", "z"))
    PartitionSpec('x', None, ('y', 'z'))
    >>> P(("x",)) == P("x")       # one-name tuples are the name itself
    True
"""

from __future__ import annotations

from typing import Any, Hashable

AxisName = Hashable


class _Unconstrained:
    """The ``UNCONSTRAINED`` marker: this dimension's sharding is the partitioner's choice."""

    _instance: "_Unconstrained | None" = None

    def __new__(cls) -> "_Unconstrained":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> Any:
        return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _canonical_entry(entry: Any) -> Any:
    # JAX's canonical forms: () means "not split", a one-name tuple is the name.
    if isinstance(entry, list):
        entry = tuple(entry)
    if isinstance(entry, tuple) and not isinstance(entry, PartitionSpec):
        if len(entry) == 0:
            return None
        if len(entry) == 1:
            return entry[0]
        if any(name is None or isinstance(name, (tuple, _Unconstrained)) for name in entry):
            raise TypeError(f"a PartitionSpec entry tuple must hold axis names only, got {entry!r}")
        return entry
    if isinstance(entry, PartitionSpec):
        raise TypeError(f"a PartitionSpec entry cannot be another PartitionSpec, got {entry!r}")
    return entry


class PartitionSpec(tuple):
    """A tuple of per-dimension partitionings (see the module docstring).

    Example::

        >>> spec = PartitionSpec("x", None)
        >>> len(spec), spec[0], spec.index(None)
        (2, 'x', 1)
    """

    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions: Any) -> "PartitionSpec":
        return super().__new__(cls, tuple(_canonical_entry(p) for p in partitions))

    @property
    def partitions(self) -> tuple:
        """The entries as a plain tuple."""
        return tuple(self)

    def __repr__(self) -> str:
        # JAX's: P(...) with the entries as a tuple prints them (P('x',), P('x', None), P()).
        return f"P({repr(tuple(self))[1:-1]})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PartitionSpec):
            return tuple.__eq__(self, other)
        if isinstance(other, tuple):
            # JAX compares a spec equal to the plain tuple of its canonical entries.
            try:
                return tuple.__eq__(self, PartitionSpec(*other))
            except TypeError:
                return False
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((PartitionSpec, tuple(self)))

    def __add__(self, other: Any) -> "PartitionSpec":
        if isinstance(other, tuple):
            return PartitionSpec(*self, *other)
        return NotImplemented

    def __radd__(self, other: Any) -> "PartitionSpec":
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self)
        return NotImplemented

    def index(self, value: Any, *args: Any) -> int:  # type: ignore[override]
        """Position of the first entry equal to ``value`` (canonicalised like an entry)."""
        return tuple(self).index(_canonical_entry(value), *args)

    def count(self, value: Any) -> int:  # type: ignore[override]
        """How many entries equal ``value`` (compared in canonical form, as JAX's ``PartitionSpec``)."""
        return tuple(self).count(_canonical_entry(value))

    def __reduce__(self) -> Any:
        return (PartitionSpec, tuple(self))

    def axis_names_used(self) -> list:
        """Every axis name the spec mentions, in order (duplicates kept)."""
        names: list[Any] = []
        for entry in self:
            if entry is None or entry is UNCONSTRAINED:
                continue
            names.extend(entry if isinstance(entry, tuple) else (entry,))
        return names


P = PartitionSpec
