"""Shardy (``sdy``) text for shardings: the mesh symbol and per-value shardings.

JAX's default partitioner reads these instead of ``mhlo.sharding`` strings::

    sdy.mesh @mesh = <["x"=2, "y"=4]>
    func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) ...

Example::

    >>> shardy_mesh_text(mesh)
    'sdy.mesh @mesh = <["x"=2, "y"=4]>'
    >>> shardy_sharding_text(NamedSharding(mesh, P("x")), 2)
    '#sdy.sharding<@mesh, [{"x"}, {}]>'
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Sequence

from toolkit.shard.hlo_sharding import as_named_sharding
from toolkit.shard.mesh import AbstractMesh, Mesh
from toolkit.shard.named_sharding import NamedSharding, check_rank
from toolkit.shard.partition_spec import UNCONSTRAINED
from toolkit.shard.sharding import Sharding


def _quote(name: Any) -> str:
    return '"' + str(name).replace("\\", "\\\\").replace('"', '\\"') + '"'


def shardy_mesh_attr_text(mesh: Mesh | AbstractMesh) -> str:
    """``<["x"=2, "y"=4]>`` (device ids are positions in the mesh, so iota and omitted)."""
    return "<[" + ", ".join(f"{_quote(n)}={s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes)) + "]>"


class ShardyMeshSymbols:
    """The ``sdy.mesh`` symbols of one module: each distinct mesh gets one name, as JAX names them.

    The first mesh is ``@mesh``, later ones ``@mesh_0``, ``@mesh_1``, ... in
    the order they are first asked for. The lowering (sharding constraints,
    ``shard_map``) and the annotation of ``@main`` share one table, so a mesh
    has the same symbol everywhere; ``annotate_shardings`` declares them all.

    Example::

        >>> symbols = ShardyMeshSymbols()
        >>> symbols.name_for(mesh_2x4), symbols.name_for(mesh_8), symbols.name_for(mesh_2x4)
        ('mesh', 'mesh_0', 'mesh')
        >>> symbols.declarations()
        [('mesh', '<["x"=2, "y"=4]>'), ('mesh_0', '<["z"=8]>')]
    """

    def __init__(self, first_name: str = "mesh"):
        self.first_name = first_name
        self._names: dict[str, str] = {}  # mesh attribute text -> symbol name

    def name_for_text(self, mesh_text: str) -> str:
        """The symbol for the mesh whose attribute text (``<[...]>``) is ``mesh_text``."""
        name = self._names.get(mesh_text)
        if name is None:
            taken = set(self._names.values())
            candidates = itertools.chain([self.first_name], (f"{self.first_name}_{i}" for i in itertools.count()))
            name = next(c for c in candidates if c not in taken)
            self._names[mesh_text] = name
        return name

    def adopt(self, name: str, mesh_text: str) -> None:
        """Record a symbol the module already declares, so an equal mesh reuses it and new ones avoid its name."""
        self._names.setdefault(mesh_text, name)

    def name_for(self, mesh: Mesh | AbstractMesh) -> str:
        """The symbol for ``mesh``."""
        return self.name_for_text(shardy_mesh_attr_text(mesh))

    def first(self) -> str | None:
        """The first mesh's symbol, or None before any."""
        return next(iter(self._names.values()), None)

    def declarations(self) -> list[tuple[str, str]]:
        """``(symbol, mesh text)`` for every mesh, in naming order."""
        return [(name, text) for text, name in self._names.items()]

    def __len__(self) -> int:
        return len(self._names)


def shardy_mesh_text(mesh: Mesh | AbstractMesh, name: str = "mesh") -> str:
    """The ``sdy.mesh`` symbol declaration for ``mesh``."""
    return f"sdy.mesh @{name} = {shardy_mesh_attr_text(mesh)}"


def _dimension_text(entry: Any, open_dim: bool = False) -> str:
    """One dimension's ``{...}``: its axes, then ``?`` when it is open to more (UNCONSTRAINED, or ``open_dim``)."""
    names = () if entry is None or entry is UNCONSTRAINED else entry if isinstance(entry, tuple) else (entry,)
    parts = [_quote(n) for n in names] + (["?"] if open_dim or entry is UNCONSTRAINED else [])
    return "{" + ", ".join(parts) + "}"


def shardy_sharding_text(sharding: Sharding, ndim: int, mesh_name: str = "mesh", *,
                         open_dims: bool = False, replicated: Sequence[str] = ()) -> str:
    """The ``#sdy.sharding<...>`` attribute for a rank-``ndim`` value.

    Non-named shardings are converted first (see ``as_named_sharding``), so
    their mesh is the one :func:`shardy_mesh_for` returns. ``open_dims``: every
    dimension open to more axes (``{"x", ?}``, ``{?}``); ``replicated``: axes the
    propagation may not shard any dimension on (``replicated={"z"}``).
    """
    named = _named(sharding, ndim)
    check_rank(named.spec, ndim, f"NamedSharding spec {named.spec}")
    entries = list(named.spec) + [None] * (ndim - len(named.spec))
    dims = ", ".join(_dimension_text(e, open_dims) for e in entries)
    tail = ", replicated={" + ", ".join(_quote(n) for n in replicated) + "}" if replicated else ""
    return f"#sdy.sharding<@{mesh_name}, [{dims}]{tail}>"


def shardy_mesh_for(sharding: Sharding, ndim: int) -> Mesh | AbstractMesh:
    """The mesh a sharding's Shardy form refers to."""
    return _named(sharding, ndim).mesh


def _named(sharding: Sharding, ndim: int) -> NamedSharding:
    if isinstance(sharding, NamedSharding):
        return sharding
    return as_named_sharding(sharding, ndim)


_MESH_RE = re.compile(r'<\s*\[(?P<axes>[^\]]*)\]')
_AXIS_RE = re.compile(r'"(?P<name>(?:[^"\\]|\\.)*)"\s*=\s*(?P<size>\d+)')
_SHARDING_RE = re.compile(r'#sdy\.sharding<\s*@(?P<mesh>[\w.$-]+)\s*,\s*\[(?P<dims>.*?)\]\s*(?P<rest>[^>]*)>')


def parse_shardy_mesh(text: str) -> list[tuple[str, int]]:
    """``[("x", 2), ("y", 4)]`` from ``<["x"=2, "y"=4]>`` (or a whole ``sdy.mesh`` line)."""
    match = _MESH_RE.search(text)
    if match is None:
        raise ValueError(f"not a Shardy mesh: {text!r}")
    return [(m.group("name"), int(m.group("size"))) for m in _AXIS_RE.finditer(match.group("axes"))]


def parse_shardy_sharding(text: str) -> tuple[str, list[list[str]]]:
    """``("mesh", [["x"], []])`` from ``#sdy.sharding<@mesh, [{"x"}, {}]>``."""
    match = _SHARDING_RE.search(text)
    if match is None:
        raise ValueError(f"not a Shardy sharding: {text!r}")
    dims = re.findall(r"\{([^}]*)\}", match.group("dims"))
    return match.group("mesh"), [re.findall(r'"((?:[^"\\]|\\.)*)"', d) for d in dims]
