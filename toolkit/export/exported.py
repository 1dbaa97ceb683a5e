"""``Exported``: a function lowered to StableHLO, with everything needed to call it later.

The fields and their meaning are those of ``jax.export.Exported`` (JAX
0.10.2), so a blob moves between toolkit and JAX unchanged
(``toolkit.export.serialization``). ``export()`` and ``Exported.call`` are
built on top of this record elsewhere in ``toolkit.export``.

Example::

    >>> exp = deserialize(blob)                      # doctest: +SKIP
    >>> exp.fun_name, exp.in_avals, exp.platforms     # doctest: +SKIP
    ('f', (ShapedArray(float32[4]),), ('cpu',))
    >>> print(exp.mlir_module())                     # doctest: +SKIP
    module @jit_f ...
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence

from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import ShapedArray
from toolkit.core.pytrees import PyTreeDef
from toolkit.export.memory_spaces import memory_kind_to_space, memory_space_of, with_memory_space
from toolkit.export.shardings import ExportedNamedSharding, as_exported_named_sharding, to_toolkit_named_sharding
from toolkit.ir.context import shared_context
from toolkit.ir.serialization import deserialize_portable_artifact
from toolkit.runtime.client import default_platform

#: The calling conventions of the exported module's ``main`` that toolkit reads and writes.
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10

#: The wire-format version this toolkit writes the layout of (JAX 0.10.2's
#: ``_SERIALIZATION_VERSION``): de-duplicated avals/meshes/shardings (10) and
#: ``AbstractDevice.platform`` (11).
serialization_version = 11
#: The number stored in the blob's ``serialization_version`` field. JAX 0.10.2
#: stores 3 whatever layout it writes, because deserializers from before
#: November 2025 rejected anything but 2 and 3; toolkit does the same.
serialization_version_stored = 3
#: The oldest wire-format version toolkit reads (JAX's first, November 2023).
minimum_supported_serialization_version = 1
#: The newest wire-format version toolkit reads.
maximum_supported_serialization_version = 11


class DisabledSafetyCheck:
    """A safety check to skip when exporting or calling an ``Exported``.

    Build with :meth:`platform`, :meth:`custom_call` or
    :meth:`shape_assertions`; compares and hashes by value.

    >>> DisabledSafetyCheck.custom_call("my_kernel").is_custom_call()
    'my_kernel'
    >>> str(DisabledSafetyCheck.platform())
    'platform'
    """

    __slots__ = ("_impl",)

    def __init__(self, _impl: str):
        # Use the named constructors; the text form is what JAX prints.
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling on a platform that is not among ``Exported.platforms``."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow exporting a custom call to ``target_name``, which is not known to be stable."""
        if not isinstance(target_name, str) or not target_name:
            raise ValueError(f"custom_call target must be a non-empty string, got {target_name!r}.")
        return cls(f"custom_call:{target_name}")

    @classmethod
    def shape_assertions(cls) -> DisabledSafetyCheck:
        """Skip the shape-assertion checks when calling a shape-polymorphic module.

        JAX 0.10.2 no longer has this check and cannot deserialize a blob
        that carries it.
        """
        return cls("shape_assertions")

    def is_custom_call(self) -> str | None:
        """The custom-call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl, re.DOTALL)
        return m.group(1) if m else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True)
class Effect:
    """A side effect of an exported module: an opaque effect named by its serialized type string.

    toolkit does not interpret effects; it keeps the name the wire format
    carries (JAX writes ``str(type(e))``, e.g.
    ``"<class 'jax._src.debugging.OrderedDebugEffect'>"``), so any effect
    type — JAX's, a library's, one toolkit has never seen — reads, prints,
    re-serializes unchanged and calls: an ordered effect gets a token
    threaded through the call (``Exported.ordered_effects``), an unordered one
    nothing. Two effects are equal when their names are.
    """

    type_name: str

    def __post_init__(self) -> None:
        if not isinstance(self.type_name, str) or not self.type_name:
            raise ValueError(f"An effect type name must be a non-empty string, got {self.type_name!r}.")

    def __str__(self) -> str:
        return self.type_name


#: JAX's lowerable effect types that show up in exports (for reference: any
#: non-empty type name reads and writes, as an opaque :class:`Effect`).
known_effect_type_names: set[str] = {
    "<class 'jax._src.debugging.DebugEffect'>",
    "<class 'jax._src.debugging.OrderedDebugEffect'>",
    "<class 'jax._src.callback.IOEffect'>",
    "<class 'jax._src.callback.OrderedIOEffect'>",
}


def register_effect_type_name(type_name: str) -> None:
    """Record ``type_name`` in :data:`known_effect_type_names`.

    Not needed to read or write it any more: unknown effect types are kept as
    opaque :class:`Effect` s. Kept for callers that registered names before.
    """
    if not isinstance(type_name, str) or not type_name:
        raise ValueError(f"An effect type name must be a non-empty string, got {type_name!r}.")
    known_effect_type_names.add(type_name)


def default_export_platform() -> str:
    """The platform ``export`` targets when not told: the default backend's (``"cuda"`` with a GPU, else ``"cpu"``;
    ``TOOLKIT_PLATFORMS`` decides when set). Makes no device client."""
    return default_platform()


def portable_artifact_target() -> str:
    """The StableHLO version exported artifacts target (what JAX targets: the WEEK_4 requirement)."""
    return stablehlo.get_version_from_compatibility_requirement(stablehlo.StablehloCompatibilityRequirement.WEEK_4)


_PRODUCER = re.compile(rb"StableHLO_v(\d+)\.(\d+)\.(\d+)")


def artifact_version(blob: bytes) -> str | None:
    """The StableHLO version a portable artifact was written for (its producer string), or None."""
    match = _PRODUCER.search(bytes(blob[:64]))
    return None if match is None else ".".join(g.decode() for g in match.groups())


def _is_portable_artifact(blob: bytes) -> bool:
    return blob[:4] == b"ML\xefR"


@dataclasses.dataclass(frozen=True)
class Exported:
    """A function lowered to StableHLO, with its calling signature. Same fields as ``jax.export.Exported``.

    Attributes:
      fun_name: the exported function's name, for messages.
      in_tree: structure of the ``(args, kwargs)`` tuple the function takes.
      in_avals: the flat input avals (shapes may hold symbolic dimensions).
      out_tree: structure of the result.
      out_avals: the flat result avals.
      in_shardings_hlo, out_shardings_hlo: per flat input/result, an
        ``HloSharding`` or ``None`` (unspecified). As in JAX 0.10.2, an export
        with named shardings leaves them all ``None`` (JAX: "not used for exports
        created after 3/17/2026"); a deserialized one has them derived from the
        named shardings, as JAX's deserializer does.
      nr_devices: how many devices the module was lowered for.
      platforms: the platforms it was lowered for (``"cpu"``, ``"cuda"``, ...).
      ordered_effects, unordered_effects: the module's effects (:class:`Effect`).
      disabled_safety_checks: checks disabled at export (:class:`DisabledSafetyCheck`).
      mlir_module_serialized: the module, as a StableHLO portable artifact.
      calling_convention_version: the convention of the module's ``main`` (9 or 10).
      module_kept_var_idx: sorted indices of ``in_avals`` the module takes
        (unused ones were dropped).
      uses_global_constants: whether ``main`` needs shape refinement before
        compilation (symbolic dimensions or a platform index).
      _get_vjp: optional ``exported -> Exported`` giving the VJP function.
      _in_named_shardings, _out_named_shardings: per flat input/result, an
        :class:`~toolkit.export.shardings.ExportedNamedSharding` or ``None``;
        ``None`` for the whole field when only HloShardings are known (blobs
        from before JAX's serialization version 6).

    Immutable; two ``Exported`` compare equal field by field (``_get_vjp``
    excluded). Example::

        exp = toolkit.export.deserialize(blob)
        text = exp.mlir_module()
        blob2 = exp.serialize()
    """

    fun_name: str
    in_tree: PyTreeDef
    in_avals: tuple[ShapedArray, ...]
    out_tree: PyTreeDef
    out_avals: tuple[ShapedArray, ...]
    in_shardings_hlo: tuple[Any, ...]
    out_shardings_hlo: tuple[Any, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[Effect, ...]
    unordered_effects: tuple[Effect, ...]
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None = dataclasses.field(default=None, compare=False)
    _in_named_shardings: tuple[ExportedNamedSharding | None, ...] | None = None
    _out_named_shardings: tuple[ExportedNamedSharding | None, ...] | None = None

    def _comparison_key(self) -> tuple:
        # Symbolic dimensions compare by their printed form: a deserialized export has the same
        # expressions in a fresh symbolic scope, and is still the same export. HloShardings compare as
        # derived from the named ones where an export left them None (a deserialized one has them).
        avals = lambda avals: tuple((tuple(str(d) for d in a.shape), a.dtype, a.weak_type,  # noqa: E731
                                     memory_space_of(a)) for a in avals)
        derived = {"in_shardings_hlo": lambda: self._hlo_shardings("in"),
                   "out_shardings_hlo": lambda: self._hlo_shardings("out")}
        return tuple(avals(getattr(self, f.name)) if f.name in ("in_avals", "out_avals")
                     else derived[f.name]() if f.name in derived else getattr(self, f.name)
                     for f in dataclasses.fields(self) if f.compare)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Exported):
            return NotImplemented
        return self._comparison_key() == other._comparison_key()

    def __hash__(self) -> int:
        return hash(self._comparison_key())

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        for name in ("in_avals", "out_avals", "in_shardings_hlo", "out_shardings_hlo", "platforms",
                     "ordered_effects", "unordered_effects", "disabled_safety_checks"):
            set_(name, tuple(getattr(self, name)))
        set_("mlir_module_serialized", bytes(self.mlir_module_serialized))
        set_("module_kept_var_idx", tuple(int(i) for i in self.module_kept_var_idx))
        set_("nr_devices", int(self.nr_devices))
        set_("calling_convention_version", int(self.calling_convention_version))
        set_("uses_global_constants", bool(self.uses_global_constants))
        for aval in self.in_avals + self.out_avals:
            if not isinstance(aval, ShapedArray):
                raise TypeError(f"Exported avals must be ShapedArray, got {aval!r}.")
        if not isinstance(self.in_tree, PyTreeDef) or not isinstance(self.out_tree, PyTreeDef):
            raise TypeError("Exported in_tree and out_tree must be PyTreeDefs.")
        if self.in_tree.num_leaves != len(self.in_avals):
            raise ValueError(f"in_tree has {self.in_tree.num_leaves} leaves but there are {len(self.in_avals)} in_avals.")
        if self.out_tree.num_leaves != len(self.out_avals):
            raise ValueError(f"out_tree has {self.out_tree.num_leaves} leaves but there are "
                             f"{len(self.out_avals)} out_avals.")
        for name, avals in (("in", self.in_avals), ("out", self.out_avals)):
            named = getattr(self, f"_{name}_named_shardings")
            hlo = getattr(self, f"{name}_shardings_hlo")
            if named is None and all(h is None for h in hlo) and len(hlo) in (0, len(avals)):
                # Nothing specified: the same as every sharding unspecified.
                named = (None,) * len(avals)
                if not hlo:
                    hlo = (None,) * len(avals)
                    set_(f"{name}_shardings_hlo", hlo)
            if named is not None:
                if not hlo:  # every field per flat value, as JAX's (None: left to the named shardings)
                    hlo = (None,) * len(avals)
                    set_(f"{name}_shardings_hlo", hlo)
                named = tuple(as_exported_named_sharding(s) for s in named)
                if len(named) != len(avals):
                    raise ValueError(f"_{name}_named_shardings has {len(named)} entries for {len(avals)} {name}_avals.")
                set_(f"_{name}_named_shardings", named)
                # As JAX (update_aval_with_sharding): a named sharding's memory kind is its aval's memory space.
                set_(f"{name}_avals", tuple(a if s is None else with_memory_space(a, memory_kind_to_space(s.memory_kind))
                                            for a, s in zip(avals, named)))
            if hlo and len(hlo) != len(avals):
                raise ValueError(f"{name}_shardings_hlo has {len(hlo)} entries for {len(avals)} {name}_avals.")
        if not all(isinstance(c, DisabledSafetyCheck) for c in self.disabled_safety_checks):
            raise TypeError(f"disabled_safety_checks must be DisabledSafetyChecks, got {self.disabled_safety_checks}.")
        if list(self.module_kept_var_idx) != sorted(set(self.module_kept_var_idx)) or any(
                not 0 <= i < len(self.in_avals) for i in self.module_kept_var_idx):
            raise ValueError(f"module_kept_var_idx {self.module_kept_var_idx} must be sorted, distinct indices "
                             f"of the {len(self.in_avals)} in_avals.")

    # -- the module ------------------------------------------------------------

    def mlir_module(self) -> str:
        """The text of the embedded StableHLO module (deserialized from the portable artifact), with locations.

        Raises ``ValueError`` when ``mlir_module_serialized`` is not a
        readable portable artifact.
        """
        if not _is_portable_artifact(self.mlir_module_serialized):
            raise ValueError("mlir_module_serialized is not a StableHLO portable artifact "
                             "(it does not start with the MLIR bytecode magic 'ML\\xefR').")
        with shared_context() as context:
            # Its ValueError names the artifact's StableHLO version when that is newer than jaxlib's.
            # With locations, as JAX's mlir_module() prints them (loc("x"), file:line of each op).
            module = deserialize_portable_artifact(self.mlir_module_serialized, context)
            return module.operation.get_asm(enable_debug_info=True)

    # -- serialization ---------------------------------------------------------

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The JAX-compatible flatbuffer bytes of this ``Exported``.

        ``vjp_order=k`` also stores ``k`` levels of VJP functions; it needs
        :meth:`has_vjp` (``ValueError`` otherwise).
        """
        # function-level: breaks the cycle exported -> serialization -> exported (serialization reads and writes
        # this record; the method is JAX's API on the record)
        from toolkit.export.serialization import serialize

        return serialize(self, vjp_order=vjp_order)

    # -- differentiation -------------------------------------------------------

    def has_vjp(self) -> bool:
        """Whether a VJP function is available (toolkit exports: from ``toolkit.ad``; deserialized: if stored)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: takes the flat primal inputs then one cotangent per flat output."""
        if self._get_vjp is None:
            raise ValueError(f"No VJP is available for the Exported {self.fun_name!r}: it was not "
                             "serialized with vjp_order > 0 (only freshly exported functions can be differentiated).")
        return self._get_vjp(self)

    # -- shardings -------------------------------------------------------------

    def _hlo_shardings(self, side: str) -> tuple[Any, ...]:
        """The ``HloSharding`` (or None) of each flat input (``side="in"``) or result (``"out"``): the recorded
        ``*_shardings_hlo``, or, when those are all None, derived from the named shardings (what a fresh export
        records, as JAX's)."""
        avals = getattr(self, f"{side}_avals")
        hlo = getattr(self, f"{side}_shardings_hlo") or (None,) * len(avals)
        named = getattr(self, f"_{side}_named_shardings")
        if named is None or any(h is not None for h in hlo):
            return tuple(hlo)
        return tuple(None if s is None else s.to_hlo_sharding(a.ndim) for s, a in zip(named, avals))

    def in_shardings_jax(self, mesh: Any) -> tuple[Any, ...]:
        """The input shardings as ``toolkit.shard.NamedSharding`` over ``mesh`` (None = unspecified).

        ``mesh`` must have the axis names, sizes and types used at export.
        """
        return self._shardings_over(mesh, self._in_named_shardings, self.in_shardings_hlo, self.in_avals)

    def out_shardings_jax(self, mesh: Any) -> tuple[Any, ...]:
        """The result shardings as ``toolkit.shard.NamedSharding`` over ``mesh``; see :meth:`in_shardings_jax`."""
        return self._shardings_over(mesh, self._out_named_shardings, self.out_shardings_hlo, self.out_avals)

    @staticmethod
    def _shardings_over(mesh, named, hlo, avals) -> tuple[Any, ...]:
        if named is None:
            if all(h is None for h in hlo):
                return (None,) * len(avals)
            raise NotImplementedError(
                "This Exported records HloShardings only (written before JAX's serialization version 6); "
                f"turning them into named shardings over a mesh is not supported yet: {hlo}.")
        return tuple(None if s is None else to_toolkit_named_sharding(s, mesh) for s in named)

    # -- calling ---------------------------------------------------------------

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Call the exported function (eagerly or inside ``toolkit.jit``); see ``toolkit.export.call``."""
        # function-level: breaks the cycle exported -> call -> exported (the call primitive is built on this record;
        # the method is JAX's API on the record)
        from toolkit.export.call import call_exported

        return call_exported(self, *args, **kwargs)

    # -- printing --------------------------------------------------------------

    def __str__(self) -> str:
        # Short on purpose: used in messages and locations, never the module itself.
        return f"Exported(fun_name={self.fun_name}, ...)"

    def __repr__(self) -> str:
        return (f"Exported(fun_name={self.fun_name!r}, in_avals={self.in_avals}, out_avals={self.out_avals}, "
                f"platforms={self.platforms}, nr_devices={self.nr_devices}, "
                f"calling_convention_version={self.calling_convention_version}, "
                f"mlir_module_serialized=<{len(self.mlir_module_serialized)} bytes>)")
