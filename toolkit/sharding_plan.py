"""Where a jit computation runs: its devices and the sharding of every input and output.

The plan is made once per trace from ``jit``'s ``in_shardings``/``out_shardings``
and the committed arrays among the arguments, following JAX's rules:

* explicit shardings win; they fix the device assignment;
* otherwise committed arguments (placed with an explicit device or sharding)
  fix it, and must all agree, or a ``ValueError`` names the arguments;
* otherwise the concrete mesh of ``set_mesh`` fixes it (and every other
  placement must name the mesh's devices, in its order);
* otherwise the computation runs on the default device.

With more than one device the module is partitioned SPMD by XLA, inputs and
outputs carrying ``mhlo.sharding`` attributes (GSPMD) or ``sdy.sharding``
attributes (Shardy, see :func:`partitioner_choice`).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Sequence

from toolkit.array import Array
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.core.program import Program, kept_inputs, subprograms
from toolkit.core.sharding_types import type_sharding
from toolkit.memory import Space, space_to_kind
from toolkit.runtime import client as runtime_client
from toolkit.shard import (AbstractMesh, AxisType, GSPMDSharding, Mesh, NamedSharding, PartitionSpec, Sharding,
                           SingleDeviceSharding, get_mesh, named_sharding_from_hlo)
from toolkit.shard.explicit import concrete_sharding
from toolkit.shard.mesh import get_concrete_mesh
from toolkit.shard.resolve import abstract_only_context, resolve_tree


PARTITIONERS = ("gspmd", "shardy")


def partitioner_choice(explicit: str | None = None) -> str:
    """Which SPMD partitioner a lowering targets: ``explicit``, else ``$TOOLKIT_PARTITIONER``, else ``"shardy"``.

    Shardy is the default, as in JAX 0.10 (XLA deprecates GSPMD propagation);
    ``TOOLKIT_PARTITIONER=gspmd`` or ``lower(partitioner="gspmd")`` selects GSPMD.

    Raises ``ValueError`` for anything but ``"gspmd"``/``"shardy"``.

    Example::

        partitioner_choice("shardy")  # -> "shardy"
    """
    source = "partitioner" if explicit is not None else "TOOLKIT_PARTITIONER"
    choice = explicit if explicit is not None else (os.environ.get("TOOLKIT_PARTITIONER") or "shardy")
    normalized = choice.strip().lower() if isinstance(choice, str) else choice
    if normalized not in PARTITIONERS:
        raise ValueError(f"{source} must be 'gspmd' or 'shardy', got {choice!r}")
    return normalized


def _flatten_prefix(prefix: Any, tree: pytrees.PyTreeDef, what: str) -> list[Any]:
    """Broadcast a pytree prefix of shardings over the leaves of ``tree``."""
    if prefix is None or isinstance(prefix, Sharding):
        return [prefix] * tree.num_leaves
    dummy = pytrees.structure_of(tree, [0] * tree.num_leaves)
    try:
        return pytrees.broadcast_prefix(prefix, dummy, is_leaf=lambda x: x is None or isinstance(x, Sharding))
    except ValueError as exc:
        raise ValueError(f"{what} must be a sharding or a pytree prefix of the arguments: {exc}") from None


class ShardingPlan:
    """How one jit call's arguments and results are laid out: its devices, the arguments' shardings, the
    results' shardings (given or left to the compiler) and the ``with_sharding_constraint`` shardings inside.
    """
    def __init__(self, devices: Sequence[Any], arg_shardings: Sequence[Any], out_shardings_spec: Any,
                 out_tree: pytrees.PyTreeDef, committed: Sequence[bool],
                 constraint_shardings: Sequence[Any] = ()):
        self.devices = tuple(devices)
        #: ``(sharding, rank)`` of each ``with_sharding_constraint`` in the program (Shardy needs their mesh).
        self.constraint_shardings = tuple(constraint_shardings)
        #: ``"gspmd"`` or ``"shardy"``; ``Traced.lower`` sets it (:func:`partitioner_choice`).
        self.partitioner = "shardy"
        self.num_partitions = len(self.devices)
        self.platform = self.devices[0].platform
        self._arg_shardings = list(arg_shardings)
        self._args_given = [s is not None for s in self._arg_shardings]
        self._out_spec = out_shardings_spec
        self._out_tree = out_tree
        self.committed = any(committed)
        #: Per flat output: the concrete NamedSharding of an explicitly sharded output type, else None.
        self.explicit_out_shardings: list[Any] | None = None
        #: The memory kinds the body names (traced ``device_put``s and sharding constraints), which count in
        #: JAX's "are all shardings in the default memory" test as the inputs' and outputs' do.
        self.body_memory_kinds: list[str] = []
        #: Per flat output, the memory kind its value is in (``"device"``/``"pinned_host"``, see
        #: :func:`propagate_memory_kinds`); None when nothing names another memory than the default.
        self.propagated_out_kinds: list[str] | None = None
        #: The concrete mesh of ``set_mesh`` the computation runs over, or None: inputs and outputs nothing
        #: else places are laid out over it (:meth:`context_default_sharding`).
        self.context_mesh: Mesh | None = None
        #: The rank of each input (set with ``context_mesh``): its default sharding's spec depends on it.
        self._arg_ranks: tuple[int, ...] = ()

    # -- inputs ----------------------------------------------------------------
    def arg_sharding(self, i: int, aval: ShapedArray) -> Any:
        """The sharding argument ``i`` is laid out with: the one given or the array's, else the default (the
        first device, or replicated over the mesh).
        """
        sharding = self._arg_shardings[i]
        if sharding is None:
            if self.context_mesh is not None:
                # Not kept in _arg_shardings: an export records the inputs given no sharding as unspecified.
                return self.context_default_sharding(aval.ndim)
            sharding = self._arg_shardings[i] = self._default_sharding()
        return sharding

    def _default_sharding(self) -> Any:
        if self.num_partitions == 1:
            return SingleDeviceSharding(self.devices[0])
        return GSPMDSharding.get_replicated(self.devices)

    def context_default_sharding(self, ndim: int) -> NamedSharding:
        """The sharding of a value of rank ``ndim`` that nothing places, over the context mesh: replicated, its
        spec ``P(None, ...)`` (one None per dimension, the type JAX gives it) when the mesh has an Explicit axis,
        else ``P()`` (as JAX recovers XLA's replicated choice over an Auto mesh)."""
        mesh = self.context_mesh
        assert mesh is not None
        if AxisType.Explicit in mesh.axis_types:
            return _replicated_over(mesh, ndim)
        return NamedSharding(mesh, PartitionSpec())

    def arg_runtime_sharding(self, i: int, aval: ShapedArray) -> Any:
        """jaxlib's sharding object for argument ``i`` of type ``aval`` (what device_put and the executable use)."""
        return self.arg_sharding(i, aval)._runtime_sharding(aval.ndim)

    def check_committed(self, leaf: Array, i: int, path: str) -> None:
        """Raise ``ValueError`` if argument ``leaf`` (at ``path``) is committed to other devices than the
        computation's (single-device computations only; sharded ones reshard).
        """
        if getattr(leaf, "_committed", False) and leaf.devices() != set(self.devices) and self.num_partitions == 1:
            ids = sorted(d.id for d in leaf.devices())
            raise ValueError(f"argument {path} is committed to devices {ids}, but the computation runs on "
                             f"{[d.id for d in self.devices]}; move it with toolkit.device_put first")

    def annotated_arg_shardings(self, kept: Sequence[int]) -> list[Any]:
        """Shardings to write on the module's arguments (all of them when SPMD, else none)."""
        if self.num_partitions == 1:
            return []
        if self.context_mesh is not None:
            return [self._arg_shardings[i] or self.context_default_sharding(self._arg_ranks[i]) for i in kept]
        return [self._arg_shardings[i] or self._default_sharding() for i in kept]

    def memory_kinds(self, kept: Sequence[int]) -> tuple[list[str | None], list[str | None], list[bool]] | None:
        """What to write on ``@main`` for memory kinds: the kind of each kept argument and each output
        (``mhlo.memory_kind``), and which outputs to place (``annotate_device_placement``).

        As JAX (``are_all_shardings_default_mem_kind``): None — write nothing — unless some given
        sharding, or a memory the body puts a value in (a traced ``device_put``), names a memory kind
        other than the devices' default. Then an argument with a sharding gets its kind (None without
        one); every output gets one (where no sharding was given: the memory its value is in, JAX's
        propagated kind) and only outputs with a sharding are placed.
        """
        default = self._default_kind()
        # A given sharding without a kind is in the default memory (JAX canonicalizes it so); a
        # default filled in later (arg_sharding) was not given.
        given = [s if g else None for s, g in zip(self._arg_shardings, self._args_given)]
        args = [None if s is None else s.memory_kind or default for s in (given[i] for i in kept)]
        flat_outs = self._out_shardings_flat(self._out_tree.num_leaves)
        outs = [None if s is None else s.memory_kind or default for s in flat_outs]
        if all(k is None or k == default for k in args + outs + self.body_memory_kinds):
            return None
        propagated: list[str | None] = [default] * len(outs)
        if self.propagated_out_kinds is not None:
            propagated = list(self.propagated_out_kinds)
        return args, [k or p or default for k, p in zip(outs, propagated)], [s is not None for s in flat_outs]

    def _default_kind(self) -> str | None:
        default_memory = getattr(self.devices[0], "default_memory", None)
        return default_memory().kind if default_memory is not None else None

    # -- outputs ---------------------------------------------------------------
    def _out_shardings_flat(self, count: int) -> list[Any]:
        flat = _flatten_prefix(self._out_spec, self._out_tree, "out_shardings") if self._out_spec is not None \
            else [None] * count
        explicit = self.explicit_out_shardings
        if explicit is not None:
            # Outputs whose types are explicitly sharded are laid out as their types say; on a mesh with Auto axes
            # too, XLA lays out the rest (JAX's _concretize_abstract_out_shardings: the type's unsharded
            # dimensions unconstrained, so the result asks for nothing and the body's constraints hold the type).
            # Requested out_shardings win (and retype the output, see out_shardings).
            flat = [f if f is not None else None if _with_auto_axes(e) else e for f, e in zip(flat, explicit)]
        return flat

    def annotated_out_shardings(self) -> list[Any]:
        """The results' shardings to write on ``@main`` (none for a single-device computation)."""
        if self.num_partitions == 1:
            return []
        return self._out_shardings_flat(self._out_tree.num_leaves)

    def recovery_mesh(self) -> Any:
        """The mesh XLA's chosen shardings are written over (``NamedSharding``), or None.

        As JAX (``maybe_recover_user_shardings``): the mesh of the first
        ``NamedSharding`` among the inputs' shardings, else among the sharding
        constraints, else among ``out_shardings``, else the current mesh
        (``set_mesh``) — provided its devices are the computation's, in order
        (HLO shardings name devices by position).
        """
        if self.num_partitions == 1:
            return None
        candidates = [s for s in self._arg_shardings if s is not None]
        candidates += [s for s, _ in self.constraint_shardings]
        candidates += [s for s in self._out_shardings_flat(self._out_tree.num_leaves) if s is not None]
        meshes = [s.mesh for s in candidates if isinstance(s, NamedSharding)]
        current = get_mesh()
        if current is not None:
            meshes.append(current)
        for mesh in meshes:
            if isinstance(mesh, Mesh) and tuple(mesh.devices.flat) == self.devices:
                return mesh
        return None

    def output_propagation(self) -> list[bool] | None:
        """For SPMD: which outputs XLA may lay out itself (those without a requested sharding)."""
        if self.num_partitions == 1:
            return None
        return [s is None for s in self._out_shardings_flat(self._out_tree.num_leaves)]

    def out_shardings(self, out_avals: Sequence[ShapedArray], chosen: Sequence[Any] | None = None) -> list[Any]:
        """Per-output shardings: the requested ones, else XLA's choice, else the single device."""
        flat = self._out_shardings_flat(len(out_avals))
        result = []
        for i, aval in enumerate(out_avals):
            sharding = flat[i]
            if sharding is None:
                if chosen is not None and self.num_partitions > 1:
                    sharding = chosen[i]
                    typed = self.explicit_out_shardings[i] if self.explicit_out_shardings is not None else None
                    if typed is not None and typed.is_equivalent_to(sharding, aval.ndim):
                        sharding = typed  # XLA kept the type's layout: the type's spec, as JAX gives it
                elif self.context_mesh is not None:
                    # Nothing chosen (one device: XLA partitions nothing): replicated over the context mesh.
                    sharding = self.context_default_sharding(aval.ndim)
                else:
                    sharding = chosen[i] if chosen is not None else self._default_sharding()
                kind = None if self.propagated_out_kinds is None else self.propagated_out_kinds[i]
                if kind is not None and kind != sharding.memory_kind:
                    # The memory the value is in (a traced device_put's), which @main's result says too.
                    sharding = sharding.with_memory_kind(kind)
            else:
                # On Explicit axes a requested out_sharding is the output's type too (as JAX). Compiled hands
                # its own list of output avals in, so they are retyped here.
                typed = type_sharding(sharding, aval.ndim)
                if typed != aval.sharding and isinstance(out_avals, list):
                    out_avals[i] = aval.update(sharding=typed)
            result.append(sharding)
        return result


def _body_sharding(eqn: Any) -> tuple[Any, int]:
    """``(sharding, rank)`` a body equation fixes: a constraint's, or for ``shard_map`` its whole mesh
    (the computation runs on the mesh's devices, and Shardy's module declares the mesh)."""
    if eqn.primitive.name == "shard_map":
        mesh = eqn.params["mesh"]
        return NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names))), 1
    return eqn.params["sharding"], eqn.inputs[0].aval.ndim


def _check_abstract_placement(abstract: AbstractMesh, shardings: Sequence[Any],
                              platforms: Sequence[str] | None) -> None:
    """Refuse to place a computation over an abstract mesh alone: no device among ``shardings`` (those not over
    an ``AbstractMesh``) fixes its devices. Without ``platforms`` JAX's ``ValueError`` (its words, toolkit's
    argument names); with them, JAX lowers for devices to come, which toolkit's plans (concrete devices) cannot.
    """
    if any(not (isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh)) for s in shardings):
        return  # a concrete sharding gives the devices, as in JAX
    if not platforms:
        raise ValueError("Passing platforms via toolkit.export or jit(f).trace(*args).lower(platforms=...) is "
                         "required when only AbstractMesh exists in a jitted computation. Got context mesh: "
                         f"{abstract}")
    raise AbstractMeshPlacement(abstract, platforms)


class AbstractMeshPlacement(NotImplementedError):
    """A computation placed by an abstract mesh alone (``use_abstract_mesh``, no concrete sharding), lowered for
    ``platforms``: JAX lowers it for devices to come; toolkit's plans need devices, so ``Traced.lower`` lowers it
    over the mesh laid on this process's devices instead (and ``Lowered.compile`` asks for the devices, as JAX's).
    Raised by :func:`plan_shardings`; ``mesh`` is the abstract mesh."""

    def __init__(self, mesh: AbstractMesh, platforms: Sequence[str]):
        super().__init__(
            f"toolkit cannot plan a computation for platforms {tuple(platforms)} over the abstract mesh {mesh} "
            "alone: its plans are placed on concrete devices (Traced.lower lays the mesh over this process's "
            "devices; toolkit.export(jit(f), platforms=...) does too), or enter a concrete mesh of that shape with "
            "toolkit.set_mesh")
        self.mesh = mesh


def _concrete_context_mesh() -> Mesh | None:
    """The concrete mesh of ``set_mesh`` (JAX's ``get_concrete_mesh``), or None when there is none or it is empty
    (the deprecated ``with mesh:`` is not one: jit ignores it, as JAX's)."""
    mesh = get_concrete_mesh()
    return mesh if mesh is not None and not mesh.empty else None


def _devices_text(devices: Sequence[Any]) -> str:
    return f"with device ids {[d.id for d in devices]} on platform {devices[0].platform.upper()}"


def _context_mismatch(context: Mesh, what: str, sharding: Any) -> ValueError:
    """JAX's error for a placement (``what``: its kind, as JAX names it) on other devices than the context mesh's."""
    return ValueError(f"Received incompatible devices for jitted computation. Got jit's context mesh "
                      f"{_devices_text(tuple(context.devices.flat))} and {what} "
                      f"{_devices_text(tuple(sharding._device_assignment))}")


def _check_context_args(context: Mesh, traced: Any, arg_shardings: Sequence[Any]) -> None:
    """Raise JAX's ``ValueError`` when an argument's placement (a committed array's sharding or a given
    ``in_sharding``) names other devices, or another order of them, than the context mesh: as JAX, the
    computation then runs nowhere consistent. Shardings over an ``AbstractMesh`` name no devices and pass."""
    expected = tuple(context.devices.flat)
    for i, (given, own) in enumerate(zip(arg_shardings, traced._arg_shardings)):
        if own is not None and not _over_abstract_mesh(own) and tuple(own._device_assignment) != expected:
            aval = traced.flat_in_avals[i]
            shape = f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument {traced.arg_paths[i]} of "
                f"{traced._wrapped.name} with shape {shape} and {_devices_text(tuple(own._device_assignment))} "
                f"and jit's context mesh {_devices_text(expected)}")
        if given is not None and not _over_abstract_mesh(given) and tuple(given._device_assignment) != expected:
            raise _context_mismatch(context, "ARG_SHARDING", given)


def _check_context_placements(context: Mesh, out_shardings: Sequence[Any], constraints: Sequence[Any]) -> None:
    """As :func:`_check_context_args`, for the given ``out_shardings`` and the shardings the body fixes."""
    expected = tuple(context.devices.flat)
    for what, shardings in (("explicit output sharding", out_shardings),
                            ("sharding_constraint inside jit", constraints)):
        for sharding in shardings:
            if not _over_abstract_mesh(sharding) and tuple(sharding._device_assignment) != expected:
                raise _context_mismatch(context, what, sharding)


def _context_typed_outs(context: Mesh, traced: Any, out_spec: Any,
                        explicit_outs: list[Any] | None) -> list[Any] | None:
    """Under a context mesh with an Explicit axis every result is typed over it, as in JAX: the results with
    neither a requested sharding nor an explicitly sharded type are replicated over the mesh, ``P(None, ...)``.
    (toolkit does not type the values traced under such a mesh, so an untyped result came from untyped, that
    is replicated, inputs.) Over Auto axes XLA chooses them: ``explicit_outs`` is returned as it is."""
    if AxisType.Explicit not in context.axis_types:
        return explicit_outs
    out_avals = traced.program.out_avals
    given = _flatten_prefix(out_spec, traced.out_tree, "out_shardings") if out_spec is not None \
        else [None] * len(out_avals)
    typed = explicit_outs if explicit_outs is not None else [None] * len(out_avals)
    return [t if t is not None or g is not None else _replicated_over(context, a.ndim)
            for t, g, a in zip(typed, given, out_avals)]


def plan_shardings(traced: Any, platforms: Sequence[str] | None = None) -> ShardingPlan:
    """The plan for a ``Traced``: devices, input and output shardings.

    ``platforms`` are those lowered for (None: the devices'); under ``use_abstract_mesh`` alone (an Explicit
    axis, no concrete mesh) a computation no sharding places is refused (:func:`_check_abstract_placement`).
    """
    wrapped = traced._wrapped
    in_tree = traced.in_tree
    arg_shardings: list[Any] = [None] * in_tree.num_leaves
    # Bare PartitionSpecs mean NamedShardings over the current mesh (toolkit.set_mesh).
    in_shardings = resolve_tree(wrapped.in_shardings, "jit's in_shardings")
    if in_shardings is not None:
        args_tree_prefix = in_shardings
        if isinstance(args_tree_prefix, Sharding):
            arg_shardings = [args_tree_prefix] * in_tree.num_leaves
        else:
            args_only: tuple[Any, dict] = (tuple(args_tree_prefix) if isinstance(args_tree_prefix, (list, tuple)) else args_tree_prefix,
                         {})
            # kwargs are never sharded explicitly: a prefix over (args, {}) only.
            arg_shardings = _flatten_prefix(args_only, in_tree, "in_shardings")
    # Committed arguments: shardings of the ShapeDtypeStructs or committed arrays passed in.
    committed = [False] * in_tree.num_leaves
    arg_placements = list(traced._arg_shardings)
    for i, spec_sharding in enumerate(arg_placements):
        if arg_shardings[i] is None and spec_sharding is not None:
            arg_shardings[i] = spec_sharding
            committed[i] = True
    if not wrapped.keep_unused and any(s is not None for s in arg_shardings):
        # As JAX (lower_sharding_computation prunes them first): an argument the program does not read neither
        # places the computation nor commits its results, whatever its sharding or device.
        kept = set(kept_inputs(traced.program, False))
        for i in range(len(arg_shardings)):
            if i not in kept:
                arg_shardings[i], committed[i], arg_placements[i] = None, False, None
    explicit = [s for s in arg_shardings if s is not None]
    # Eager primitives too (toolkit.dispatch.EagerExecutables keys their executables on the mesh context).
    context = _concrete_context_mesh()
    if context is not None:
        _check_context_args(context, traced, arg_shardings)
    committed_args = [(traced.arg_paths[i], s) for i, s in enumerate(arg_placements) if s is not None]
    if in_shardings is None and committed_args:
        first_path, first = committed_args[0]
        for path, s in committed_args[1:]:
            if set(s._device_assignment) != set(first._device_assignment):
                raise ValueError(
                    f"received incompatible devices for jitted computation {wrapped.name}: argument {first_path} is "
                    f"on devices {sorted(d.id for d in first._device_assignment)} and argument {path} on devices "
                    f"{sorted(d.id for d in s._device_assignment)}")
    constraints, body_kinds, puts_to_space = _body_placements(traced.program)
    out_spec = resolve_tree(wrapped.out_shardings, "jit's out_shardings")
    abstract = abstract_only_context()
    if abstract is not None:
        given_outs = [] if out_spec is None else _flatten_prefix(out_spec, traced.out_tree, "out_shardings")
        _check_abstract_placement(abstract, [s for s in explicit + given_outs + [c for c, _ in constraints]
                                             if s is not None], platforms)
    explicit_outs = _explicit_out_shardings(traced, arg_shardings, out_spec,
                                            [s.mesh for s, _ in constraints if isinstance(s, NamedSharding)])
    out_explicit = [s for s in explicit_outs or () if s is not None]
    given_out_shardings = [s for s in _flatten_prefix(out_spec, traced.out_tree, "out_shardings") if s is not None] \
        if out_spec is not None else []
    out_explicit += given_out_shardings
    constraint_shardings = [s for s, _ in constraints]
    if context is not None:
        _check_context_placements(context, given_out_shardings, constraint_shardings)
        explicit_outs = _context_typed_outs(context, traced, out_spec, explicit_outs)
    all_explicit = explicit + out_explicit + constraint_shardings
    # As JAX's _get_and_check_device_assignment: a sharding over an AbstractMesh names no devices (its positions
    # are those of the computation's devices), so only the others place the computation.
    placing = [s for s in all_explicit if not _over_abstract_mesh(s)]
    if placing:
        devices = tuple(placing[0]._device_assignment)
        for s in placing[1:]:
            if tuple(s._device_assignment) != devices:
                # HLO shardings index devices by position, so the orders must agree too.
                raise ValueError(f"the shardings given to jit use different device assignments: "
                                 f"{[d.id for d in devices]} and {[d.id for d in s._device_assignment]}")
    elif context is not None:
        # As JAX's _get_and_check_device_assignment: nothing else places the computation, so the context mesh
        # does (its devices in its order; the placements above were checked to be those).
        devices = tuple(context.devices.flat)
    else:
        devices = (runtime_client.default_device(),)
    plan = ShardingPlan(devices, arg_shardings, out_spec, traced.out_tree, committed, constraints)
    if context is not None:
        # Uncommitted inputs are laid out over the mesh (as JAX: replicated; see arg_sharding).
        plan.context_mesh = context
        plan._arg_ranks = tuple(aval.ndim for aval in traced.flat_in_avals)
    # As JAX: outputs are committed when the computation's placement was given (explicit shardings too), so a
    # global output passed on keeps its layout instead of being re-placed from the host. A traced device_put to
    # a memory space commits them too (JAX's transfer_mem_kind_in_jaxpr).
    plan.committed = plan.committed or bool(all_explicit) or puts_to_space or context is not None
    plan.body_memory_kinds = body_kinds
    default = plan._default_kind()
    given_kinds = [s.memory_kind for s in explicit + out_explicit] + body_kinds
    if any(k is not None and k != default for k in given_kinds):
        # As JAX (propagated_out_mem_kinds): the results are in the memories their values are in; the
        # arguments' are those of the arrays passed (their types' memory spaces), not in_shardings'.
        in_kinds = [space_to_kind(Space.Host) if s is not None and s.memory_kind == "pinned_host" else "device"
                    for s in traced._arg_shardings]
        plan.propagated_out_kinds = propagate_memory_kinds(traced.program, in_kinds)
        if explicit_outs is not None:
            # An explicitly typed output's sharding is in its value's memory (JAX's
            # _concretize_abstract_out_shardings).
            explicit_outs = [None if s is None or s.memory_kind == k else s.with_memory_kind(k)
                             for s, k in zip(explicit_outs, plan.propagated_out_kinds)]
    plan.explicit_out_shardings = explicit_outs
    return plan


def out_info_specs(traced: Any) -> list[ShapeDtypeStruct]:
    """A ``ShapeDtypeStruct`` per flat result of ``traced`` with its sharding as JAX's ``Traced.out_info`` gives it:
    the ``out_shardings`` asked for, else the result's type's when every axis of its mesh is Explicit or Manual,
    else None. A result toolkit left untyped (replicated) that was traced under such a mesh is typed replicated
    over it, as JAX types every value there."""
    out_avals = traced.program.out_avals
    given = traced._wrapped.out_shardings
    asked = [None] * len(out_avals) if given is None else _flatten_prefix(
        resolve_tree(given, "jit's out_shardings"), traced.out_tree, "out_shardings")
    trace_mesh = traced._trace_mesh
    if trace_mesh is not None and (trace_mesh.empty or not _explicit_or_manual(trace_mesh)):
        trace_mesh = None
    specs = []
    for aval, sharding in zip(out_avals, asked):
        typed = aval.sharding
        if sharding is None and typed is not None and _explicit_or_manual(typed.mesh):
            sharding = typed
        elif sharding is None and typed is None and trace_mesh is not None:
            sharding = _replicated_over(trace_mesh, aval.ndim)
        specs.append(ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=sharding))
    return specs


def _replicated_over(mesh: Any, ndim: int) -> NamedSharding:
    """Replicated over ``mesh`` as JAX types an unsharded value of rank ``ndim`` there: ``P(None, ...)``."""
    return NamedSharding(mesh, PartitionSpec(*([None] * ndim)))


def _with_auto_axes(sharding: Any) -> bool:
    """Whether ``sharding`` is a ``NamedSharding`` over a mesh with Auto axes (an explicitly typed value's there is
    only partly fixed by its type)."""
    return isinstance(sharding, NamedSharding) and bool(sharding.mesh.auto_axes)


def _explicit_or_manual(mesh: Any) -> bool:
    """Whether every axis of ``mesh`` is Explicit or Manual (JAX types values over such a mesh)."""
    return all(t in (AxisType.Explicit, AxisType.Manual) for t in mesh.axis_types)


def _over_abstract_mesh(sharding: Any) -> bool:
    """Whether ``sharding`` is a ``NamedSharding`` over an ``AbstractMesh`` (a type, without devices)."""
    return isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh)


def _body_placements(program: Program) -> tuple[list[tuple[Any, int]], list[str], bool]:
    """What ``program``'s equations say about placement, in one walk: the shardings that place the computation
    (sharding constraints and ``shard_map`` bodies, then traced ``device_put``s to a sharding, JAX's
    ``get_intermediate_shardings``; a put to a device does not place it), each with its value's rank; the
    memory kinds the puts and constraints name (JAX's ``jaxpr_transfer_mem_kinds``); and whether a put names a
    memory space (which commits the results, JAX's ``transfer_mem_kind_in_jaxpr``)."""
    constraints: list[tuple[Any, int]] = []
    puts: list[tuple[Any, int]] = []
    kinds: list[str] = []
    to_space = False
    for eqn in program.walk():
        name = eqn.primitive.name
        if name in ("sharding_constraint", "shard_map"):
            constraints.append(_body_sharding(eqn))
        if name not in ("device_put", "sharding_constraint"):
            continue
        target = eqn.params.get("device" if name == "device_put" else "sharding")
        if name == "device_put" and isinstance(target, Sharding):
            puts.append((target, eqn.inputs[0].aval.ndim))
        if isinstance(target, Sharding) and target.memory_kind is not None:
            kinds.append(target.memory_kind)
        elif isinstance(target, Space):
            to_space = to_space or name == "device_put"
            if target is not Space.Any:
                kinds.append(space_to_kind(target))
    return constraints + puts, kinds, to_space


def _space_kind(kind: str | None) -> str:
    """The kind of the memory space a memory kind is in, as JAX maps them: only ``pinned_host`` is the host's
    space; ``unpinned_host`` and ``device`` are the device's (JAX's ``mem_kind_to_space``)."""
    return "pinned_host" if kind == "pinned_host" else "device"


def _typed_text(aval: ShapedArray, kind: str) -> str:
    """``aval`` as JAX's ``str_short`` writes it with its memory space (``float32<host>[8,4]``)."""
    space = "<host>" if kind == "pinned_host" else ""
    return f"{aval.dtype.name}{space}[{','.join(str(d) for d in aval.shape)}]"


#: The lattice value of a value computed from constants alone: it joins either memory. toolkit's programs
#: broadcast a scalar operand (``x + 1``) where JAX's keep the scalar, which JAX's rule skips.
_ANY = "any"


def propagate_memory_kinds(program: Program, in_kinds: Sequence[str]) -> list[str]:
    """The memory kind (``"device"`` or ``"pinned_host"``) each output of ``program`` is in, given its inputs'.

    JAX keeps a memory space in every type; toolkit's types have none, so this follows JAX's rules over the
    program: a ``device_put`` to a sharding or a ``toolkit.memory.Space`` puts its value in that memory (to a
    device: where it was); a call runs its body; any other equation's results are in the memory of its
    non-scalar operands (the device's when there are none), and — as JAX's ``_default_memory_space_rule`` —
    operands of one primitive in different memories are a ``ValueError`` (scatters take their operand's, an
    optimization barrier each operand's, as JAX's). Values computed from constants alone join either memory:
    toolkit broadcasts the scalars JAX's rule skips.
    """
    return [_ANY_AS_DEVICE.get(k, k) for k in _propagate(program, list(in_kinds))]


_ANY_AS_DEVICE = {_ANY: "device"}


def _propagate(program: Program, in_kinds: list[str]) -> list[str]:
    kinds: dict[int, str] = {v.id: k for v, k in zip(program.invars, in_kinds)}

    def kind_of(atom: Any) -> str:
        # Constants captured while tracing are in the device's memory; literals are scalars, which no rule reads.
        return kinds.get(getattr(atom, "id", -1), "device")

    for eqn in program.eqns:
        name = eqn.primitive.name
        subs = list(subprograms(eqn))
        if name == "device_put":
            target = eqn.params["device"]
            kind = kind_of(eqn.inputs[0])
            if isinstance(target, Sharding):
                kind = _space_kind(target.memory_kind) if target.memory_kind is not None else kind
            elif isinstance(target, Space) and target is not Space.Any:
                kind = space_to_kind(target)
            out = [kind]
        elif len(subs) == 1 and len(subs[0].invars) == len(eqn.inputs) and len(subs[0].outvars) == len(eqn.outputs):
            out = _propagate(subs[0], [kind_of(a) for a in eqn.inputs])  # a call: its body's
        elif name == "cond":
            # The branches' results (JAX's cond requires every branch's types, memory spaces too, to agree).
            out = _propagate(eqn.params["branches"][0], [kind_of(a) for a in eqn.inputs[1:]])
        elif name == "while":
            # A loop's carries keep their memories (JAX's while requires the body's output types to be its input
            # types): the carried operands' kinds, after the two programs' constants.
            out = [kind_of(a) for a in eqn.inputs[eqn.params["cond_nconsts"] + eqn.params["body_nconsts"]:]]
        elif name == "scan":
            # The carries keep theirs (as while's); the stacked results are in their body values' memories.
            carries = eqn.params["num_consts"] + eqn.params["num_carry"]
            body = _propagate(eqn.params["body"], [kind_of(a) for a in eqn.inputs])
            out = [kind_of(a) for a in eqn.inputs[eqn.params["num_consts"]:carries]] + body[eqn.params["num_carry"]:]
        elif name == "optimization_barrier":
            out = [kind_of(a) for a in eqn.inputs]  # JAX's barrier types each result as its operand
        elif name.startswith("scatter"):
            out = [kind_of(eqn.inputs[0])] * len(eqn.outputs)
        else:
            out = [_default_memory_kind(eqn, kind_of, check=not subs)] * len(eqn.outputs)
        for v, k in zip(eqn.outputs, out):
            kinds[v.id] = k
    return [kind_of(v) for v in program.outvars]


def _default_memory_kind(eqn: Any, kind_of: Any, *, check: bool) -> str:
    """JAX's ``_default_memory_space_rule``: the memory of the non-scalar operands, which must agree."""
    previous = None
    for atom in eqn.inputs:
        if not atom.aval.ndim or kind_of(atom) == _ANY:
            continue
        if previous is not None and check and kind_of(previous) != kind_of(atom):
            raise ValueError(
                f"memory_space of all inputs passed to `{eqn.primitive.name}` must be the same. Got one operand "
                f"with type: {_typed_text(previous.aval, kind_of(previous))} and another operand with type: "
                f"{_typed_text(atom.aval, kind_of(atom))}")
        previous = atom
    # No non-scalar operand (JAX's rule says the device's): made from scalars or constants alone.
    return _ANY if previous is None else kind_of(previous)


def _explicit_out_shardings(traced: Any, arg_shardings: list[Any], out_spec: Any,
                            body_meshes: Sequence[Any] = ()) -> list[Any] | None:
    """Per flat output, the concrete ``NamedSharding`` its explicitly sharded type asks for (None if untyped).

    Inputs typed explicitly but given no sharding get theirs here too. None when nothing is typed. The concrete
    mesh is the current one, else an argument's, else one the body names (a ``device_put``'s sharding).
    """
    out_avals = traced.program.out_avals
    typed_in = [i for i, a in enumerate(traced.flat_in_avals) if a.sharding is not None]
    if not typed_in and all(a.sharding is None for a in out_avals):
        return None
    meshes = [s.mesh for s in arg_shardings if isinstance(s, NamedSharding)] + list(body_meshes)
    for i in typed_in:
        if arg_shardings[i] is None:
            arg_shardings[i] = concrete_sharding(traced.flat_in_avals[i].sharding, meshes)
    return [None if a.sharding is None else concrete_sharding(a.sharding, meshes) for a in out_avals]


def shardings_from_hlo(hlo_shardings: Sequence[Any] | None, devices: Sequence[Any],
                       avals: Sequence[ShapedArray], mesh: Any = None) -> list[Any]:
    """toolkit shardings for XLA's reported HloShardings (single device: ``SingleDeviceSharding``).

    With a ``mesh`` (see :meth:`ShardingPlan.recovery_mesh`) each one is a
    ``NamedSharding`` over it where a ``PartitionSpec`` can express it, as JAX
    recovers the user's kind of sharding; otherwise a ``GSPMDSharding``.
    """
    if len(devices) == 1 or hlo_shardings is None:
        return [SingleDeviceSharding(devices[0]) for _ in avals]
    if mesh is None:
        return [GSPMDSharding(tuple(devices), h) for h in hlo_shardings]
    result: list[Sharding] = []
    for hlo, aval in zip(hlo_shardings, avals):
        try:
            result.append(named_sharding_from_hlo(hlo, mesh, aval.ndim))
        except ValueError:
            result.append(GSPMDSharding(tuple(devices), hlo))
    return result


def with_chosen_inputs(plan: Any, parameter_shardings: Any, in_avals: Sequence[ShapedArray],
                       kept: Sequence[int]) -> Any:
    """A copy of ``plan`` whose kept inputs take the shardings XLA chose for them (``parameter_shardings``).

    For a loaded module (``toolkit.lab.loading``): an argument written without a
    sharding is open to the partitioner (Shardy may split it), so the
    executable, not the module, says how each argument must be laid out.
    """
    chosen = shardings_from_hlo(parameter_shardings, plan.devices, [in_avals[i] for i in kept])
    copy = object.__new__(type(plan))
    copy.__dict__.update(plan.__dict__)
    copy._arg_shardings = list(plan._arg_shardings)
    for i, sharding in zip(kept, chosen):
        copy._arg_shardings[i] = sharding
    return copy


def device_or_backend_shardings(device: Any, backend: str | None, in_shardings: Any,
                                out_shardings: Any) -> tuple[Any, Any]:
    """JAX's deprecated ``jit(device=)``/``jit(backend=)``, with its warning and errors: the one device's sharding
    for the inputs and results (``backend``: its first device)."""
    warnings.warn('backend and device argument on jit is deprecated. You can use '
                  '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the inputs to the jitted function to '
                  'get the same behavior.', DeprecationWarning, stacklevel=3)
    if device is not None and backend is not None:
        raise ValueError(f"can't specify both a device and a backend for jit, got device={device!r} and "
                         f"backend={backend!r}")
    if in_shardings is not None:
        raise ValueError("If backend or device is specified on jit, then in_shardings should not be specified.")
    if out_shardings is not None:
        raise ValueError("If backend or device is specified on jit, then out_shardings should not be specified.")
    if device is None:
        device = runtime_client.local_devices(backend=backend)[0]
    elif not isinstance(device, runtime_client.Device):
        raise TypeError(f"jit's device must be a device from toolkit.devices(), got {device!r}")
    sharding = SingleDeviceSharding(device)
    return sharding, sharding
