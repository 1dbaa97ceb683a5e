"""The stages of compilation, as ``jax.stages`` describes them.

``jit(f)`` gives a ``Wrapped``. For concrete or abstract arguments:

* ``Wrapped.trace(*args)`` → ``Traced``: the typed program (``.program``);
* ``Traced.lower()`` / ``Wrapped.lower(*args)`` → ``Lowered``: a StableHLO
  module, plus the named pass pipeline ``compile`` will run on it;
* ``Lowered.compile()`` → ``Compiled``: an XLA executable; calling it runs it.

``Wrapped.__call__`` does all of it once per abstract signature and caches the executable, so the steady-state call
is: flatten the arguments, look up the signature, execute.

The stage objects are here; the work between them is beside them: ``toolkit.dispatch`` (a call's arguments, the fast
path, argument placement, eager execution), ``toolkit.jit_cache`` (what is cached by function, and under which
keys), ``toolkit.jit_lowering`` (the ``@main`` module of a trace) and ``toolkit.jit_compilation`` (passes, then
XLA).

Example::

    >>> f = toolkit.jit(lambda x, y: x @ y + 1.0)
    >>> lowered = f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    >>> print(lowered.as_text())          # StableHLO
    >>> compiled = lowered.compile()
    >>> compiled.cost_analysis()["flops"]
"""

from __future__ import annotations

import functools
import io
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from jaxlib.mlir import ir

from toolkit import compiled_format, jit_cache
from toolkit.array import Array, device_put, identity, install_jitted_copy
from toolkit.core import dtypes, host_callbacks, mutable_refs, pytrees, trace_cache, tracing
from toolkit.core.avals import ArgInfo, ShapedArray, is_static_shape
from toolkit.core.program import ClosedProgram, Program, kept_inputs
from toolkit.core.config import cache_state, flag_value
from toolkit.call_trees import argument_paths, infer_argnums_and_argnames
from toolkit.compiled import Compiled, PolymorphicCompiled
from toolkit.dispatch import (MISS, PARTITIONER_VARIABLE, ArgumentSignature, FastPath, detached, fast_caller,
                              install_eager_handlers, signature_of)
from toolkit.ir.context import shared_context
from toolkit.jit_compilation import checked_compiler_options, passes_then_xla
from toolkit.jit_lowering import lower_traced
from toolkit.lax import approximate_top_k
from toolkit.lax.calls import jit_call_p
from toolkit.lax.sharding import constrain_to_jit_sharding
from toolkit.passes import dump as ir_dump
from toolkit.passes.default_pipeline import jit_pipeline, jit_pipeline_generation, jit_pipeline_text
from toolkit.passes.pipeline import Pipeline, parse_pipeline
from toolkit.passes.registry import registry_generation
from toolkit.runtime import client as runtime_client, executable as runtime_executable, xla_shape_functions
from toolkit.shard.mesh import (OPEN_CONTEXTS, AbstractMesh, abstract_mesh_on, get_abstract_mesh, mesh_context,
                                 mesh_context_is_empty, set_mesh)
from toolkit.shard.resolve import abstract_only_context, resolve_tree
from toolkit.sharding_plan import (AbstractMeshPlacement, _flatten_prefix, device_or_backend_shardings, out_info_specs,
                                   partitioner_choice, plan_shardings)

CompilerOptions = dict[str, str | bool]  # jax.stages.CompilerOptions: the XLA options Lowered.compile() takes
_TRACE_STATE = tracing._state
_environ_get = os.environ.get


# --- the stages ---------------------------------------------------------------


def _compile_settings() -> tuple:
    """What a compilation depends on beyond the arguments: the jit pipeline and the partitioner.

    Part of ``Wrapped``'s executable cache key: the pipeline as printed (plus the registry's generation, in case
    a pass name now means another class) and the partitioner ``$TOOLKIT_PARTITIONER`` selects (unset and
    ``shardy`` are one key: Shardy is the default), and the configuration flags traces depend on
    (``toolkit.core.config.cache_state()``: x64 on or off). The fast path (``toolkit.dispatch.FastPath``) keys
    on the cheaper ``jit_pipeline_generation`` instead and reads the variable only for executables partitioned
    over several devices: with one partition the partitioner changes nothing.
    """
    return (jit_pipeline_text(), registry_generation(), partitioner_choice(), cache_state())


class Wrapped:
    """A function wrapped by ``jit``: call it, or ``trace``/``lower`` it explicitly."""

    _function_cache = True  # traces and lowerings go to toolkit.core.trace_cache (see toolkit.jit_cache)
    _executables_by_module = False  # eager execution's jits: toolkit.executables_by_module says why

    def __init__(self, fun: Callable, *, static_argnums: Any = (), static_argnames: Any = (),
                 donate_argnums: Any = (), keep_unused: bool = False, in_shardings: Any = None,
                 out_shardings: Any = None, inline: bool = False, compiler_options: Mapping[str, Any] | None = None):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        self.compiler_options = dict(checked_compiler_options(compiler_options) or {}) or None  # for every compile
        self.fun = fun
        self.static_argnums, self.static_argnames = infer_argnums_and_argnames(fun, static_argnums, static_argnames)
        self.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums or ())
        overlap = set(self.donate_argnums) & set(self.static_argnums)
        if overlap:
            raise ValueError(f"arguments {sorted(overlap)} cannot be both static and donated")
        self.keep_unused = keep_unused
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.inline = inline  # called while tracing: inline the body instead of a `jit` call
        self.name = getattr(fun, "__name__", "fun")
        self._cache: dict[Any, Compiled] = {}  # (signature, compile settings, current mesh) -> executable
        self._fast_path = FastPath(True, self.static_argnums, self.static_argnames)  # earlier calls' executables
        self._fast_path_joined = False  # whether the first call took the function's (jit_cache.shared_fast_path)
        self._has_static = bool(self.static_argnums or self.static_argnames)
        functools.update_wrapper(self, fun, updated=())

    # -- signature -------------------------------------------------------------
    def _signature(self, args: tuple, kwargs: dict) -> ArgumentSignature:
        return signature_of(args, kwargs, self.static_argnums, self.static_argnames)

    # -- stages ----------------------------------------------------------------
    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """Trace for these arguments (arrays or ``ShapeDtypeStruct`` specs)."""
        if mutable_refs.has_refs(args, kwargs):  # Refs: the discharged function's trace (Ref values in, final values out)
            return mutable_refs.trace_with_refs(self, args, kwargs, jit)
        return self._trace(self._signature(args, kwargs))

    def _trace(self, sig: ArgumentSignature) -> "Traced":
        # Traces are cached by the function (toolkit.core.trace_cache), not by this jit object: a fresh
        # jit of a function traced before at this signature reuses its program, as jax.jit does.
        key = jit_cache.trace_key(self, sig)
        cached = trace_cache.TRACES.get(self.fun, key) if key is not None else None
        if cached is not None:
            program, out_tree, paths = cached.program, cached.out_tree, cached.paths
        else:
            program, out_tree, captured, paths = jit_cache.trace_on_miss(self, sig, key)
            if key is not None and not captured:
                trace_cache.TRACES.put(self.fun, key, jit_cache.TraceEntry(program, out_tree, paths))
        donated = jit_cache.donated_leaves(self, sig)
        traced = Traced(self, program, sig.tree, out_tree, sig.avals, donated, paths, sig.shardings)
        traced._trace_key = key
        if OPEN_CONTEXTS[0]:
            # The abstract mesh values were typed over (out_info types the untyped ones over an all-Explicit one).
            traced._trace_mesh = get_abstract_mesh()
            if abstract_only_context() is not None:
                traced._signature = sig  # to trace again over the abstract mesh laid on devices (Traced.lower)
        return traced

    def _trace_program(self, sig: ArgumentSignature) -> tuple[Program, pytrees.PyTreeDef, list, list[str]]:
        """The function traced at ``sig`` (static arguments put back): ``(program, out_tree, captured, paths)``."""
        paths = argument_paths(sig.tree, tuple(sig.static_args))
        out_tree_box: list[Any] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            args, kwargs = pytrees.tree_unflatten(sig.tree, list(tracers))
            if self._has_static:
                merged = list(args)
                for i in sorted(sig.static_args):
                    merged.insert(i, sig.static_args[i])
                args = tuple(merged)
                kwargs = {**kwargs, **sig.static_kwargs}
            out_leaves, out_tree = pytrees.tree_flatten(self.fun(*args, **kwargs))
            out_tree_box.append(out_tree)
            for i, leaf in enumerate(out_leaves):
                if not (isinstance(leaf, (tracing.Tracer, Array, np.ndarray, np.generic))
                        or dtypes.is_python_scalar(leaf)):
                    raise TypeError(f"{self.name} returned a value of type {type(leaf).__name__} at output leaf "
                                    f"{i}; jit functions must return arrays (or pytrees of them)")
            return out_leaves

        program, captured = tracing.trace_flat(flat_fun, list(sig.avals),
                                               [f"argument {p} of {self.name}" for p in paths], frames_root=True)
        return program, out_tree_box[0], list(captured), paths

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """Trace and lower to StableHLO for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes as a pytree of ``ShapeDtypeStruct``, without compiling."""
        return self.trace(*args, **kwargs).out_info

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # f(x) with x's aval object of the last hit: FastPath.call's checks here, a call level less (~5% of it).
        # The hit's config tuple, the same object, means disable_jit is still off (blocks and updates renew it).
        last = self._fast_path.last_single
        if last is not None and len(args) == 1 and not kwargs and type(x := args[0]) is Array \
                and x.aval is last.aval and last.call is not None and last.state is cache_state() \
                and last.generation == jit_pipeline_generation() and not _TRACE_STATE.builders and not OPEN_CONTEXTS[0]:
            out = last.call(args)
            if out is not MISS:
                return out
        # Any other call equal to the last general hit (static or keyword arguments): the general fast path's first
        # step, asked here before the checks and call levels below (its config tuple also answers disable_jit).
        last_tried = self._fast_path.last_general is not None and not _TRACE_STATE.builders and not OPEN_CONTEXTS[0]
        if last_tried and (out := self._fast_path.call_last_general(args, kwargs)) is not MISS:
            return out
        if flag_value("jax_disable_jit"):  # toolkit.disable_jit(): run the Python body op by op, as JAX
            return self.fun(*args, **kwargs)
        # Fast paths (toolkit.dispatch.FastPath): positional Arrays called before, then any call equal to an
        # earlier one. Never while tracing: a nested jit call is a call of its program in the enclosing one. Never
        # under a mesh context either: they remember calls made outside any and do not key on it.
        if not _TRACE_STATE.builders and not OPEN_CONTEXTS[0]:
            out = self._fast_call(args, kwargs, last_tried)
            if out is MISS and not self._fast_path_joined:  # the first call: the function's other jit objects'
                self._fast_path, self._fast_path_joined = jit_cache.shared_fast_path(self), True
                out = self._fast_call(args, kwargs, False)
            if out is not MISS:
                return out
        if mutable_refs.has_refs(args, kwargs):  # Refs among the arguments: discharged (values in, final values out)
            return mutable_refs.call_with_refs(self, args, kwargs, jit)
        if tracing.is_tracing():
            if self.inline:
                return self.fun(*args, **kwargs)  # jit(..., inline=True): inline into the enclosing trace
            return self._call_in_trace(args, kwargs)  # nested jit: a `jit` call of its traced program
        generation = jit_pipeline_generation()  # read before compiling: a change meanwhile must miss
        settings = _compile_settings()
        sig = self._signature(args, kwargs)
        # The current mesh (set_mesh) gives bare PartitionSpecs and mesh-less shard_maps their meaning.
        context = mesh_context()
        key = (sig.tree, sig.avals, sig.shardings, sig.static_key, settings, context)
        compiled = self._cache.get(key)
        if compiled is None:
            # Arrays have static shapes, so their lowering compiles to a Compiled; only a ShapeDtypeStruct with
            # symbolic dimensions gives a PolymorphicCompiled, which has no values to run on.
            any_compiled = self._trace(sig).lower().compile()
            if not isinstance(any_compiled, Compiled):
                raise TypeError(f"{self.name}: an argument has symbolic dimensions (a ShapeDtypeStruct) and "
                                "cannot be run; pass arrays, or use .trace()/.lower() (or toolkit.export) "
                                "to stage a shape-polymorphic function")
            compiled = any_compiled
            self._cache[key] = compiled
        # Into the fast caches (again when they missed: a pipeline changed and back); not under a mesh context.
        if compiled._positional_fast_ok and mesh_context_is_empty():
            self._fast_path.remember_call(args, kwargs, sig.leaves, sig.avals, detached(compiled), generation,
                                          _environ_get(PARTITIONER_VARIABLE), settings[-1])
        return compiled._call_flat(sig.leaves)

    def _fast_call(self, args: tuple, kwargs: dict, last_tried: bool) -> Any:
        """The fast paths' answer (positional Arrays first, then any call equal to an earlier one), else MISS;
        ``last_tried``: the last general hit was compared already."""
        out = self._fast_path.call(args) if not kwargs and not self._has_static else MISS
        return self._fast_path.call_general(args, kwargs, last_tried) if out is MISS else out

    def _call_in_trace(self, args: tuple, kwargs: dict) -> Any:
        """A call while tracing: a ``jit`` equation (``toolkit.lax.calls.jit_call_p``) of this function's program.

        The program is traced once per signature (and trace context) and reused, so
        calling the function twice lowers to two ``func.call``s of one private
        function, as in JAX. ``in_shardings``/``out_shardings`` become sharding
        constraints on the operands and results, as JAX makes them; static
        arguments select the program; donation means nothing inside a trace.
        """
        sig = self._signature(args, kwargs)
        leaves = list(sig.leaves)
        if self.in_shardings is not None:
            leaves = self._constrain_nested(leaves, sig.tree, "in_shardings")
        program, out_tree, captured = jit_cache.nested_program(self, sig)
        outs = jit_call_p.bind(*leaves, *captured, name=self.name, jaxpr=program)
        if self.out_shardings is not None:
            outs = self._constrain_nested(list(outs), out_tree, "out_shardings")
        return pytrees.tree_unflatten(out_tree, list(outs))

    def _constrain_nested(self, leaves: list, tree: pytrees.PyTreeDef, what: str) -> list:
        spec = resolve_tree(getattr(self, what), f"jit's {what}")
        if what == "in_shardings" and isinstance(spec, (list, tuple)):
            spec = (tuple(spec), {})  # a prefix of the positional arguments, as for the outer jit
        flat = _flatten_prefix(spec, tree, what)
        return [x if s is None else constrain_to_jit_sharding(x, s) for x, s in zip(leaves, flat)]

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # ``@jit`` on a method: bind ``self`` like a plain function would.
        return self if instance is None else functools.partial(self, instance)

    def clear_cache(self) -> None:
        """Forget every compiled executable and traced program of this function (the next call traces and
        compiles again).
        """
        self._cache.clear()
        self._fast_path.clear()

    def __repr__(self) -> str:
        return f"Wrapped({self.name})"


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        donate_argnames: str | Sequence[str] = (), keep_unused: bool = False, in_shardings: Any = None,
        out_shardings: Any = None, device: Any = None, backend: str | None = None, inline: bool = False,
        compiler_options: Mapping[str, Any] | None = None) -> Any:
    """Compile ``fun`` with XLA, tracing it once per abstract signature.

    Works as ``jit(f)``, ``jit(f, static_argnums=1)`` or as a decorator
    ``@jit`` / ``@partial(jit, static_argnames="n")``.

    Called inside another traced function, it is a ``jit`` equation of its own
    program, lowered to a ``func.call`` of a private function named after it (as
    JAX does); ``inline=True`` traces its body into the caller's program instead.

    ``compiler_options`` (XLA option names to values) apply to every compilation, under ``Lowered.compile``'s
    own; ``device``/``backend`` are JAX's deprecated one-device placement (with its ``DeprecationWarning``).

    Example::

        @toolkit.jit
        def f(x):
            return toolkit.numpy.tanh(x) * 2
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, in_shardings=in_shardings, out_shardings=out_shardings,
                                 device=device, backend=backend, inline=inline, compiler_options=compiler_options)
    if device is not None or backend is not None:
        in_shardings, out_shardings = device_or_backend_shardings(device, backend, in_shardings, out_shardings)
    if donate_argnames:  # JAX's donate_argnames, as positions: an argument passed by keyword is not donated
        donate_argnums = infer_argnums_and_argnames(fun, donate_argnums, donate_argnames)[0]
    return Wrapped(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, keep_unused=keep_unused, in_shardings=in_shardings,
                   out_shardings=out_shardings, inline=inline, compiler_options=compiler_options)


class Traced:
    """A traced function: its typed program and the trees of its inputs and outputs."""

    _trace_key: tuple | None = None  # its key in the trace cache (jit_cache.trace_key); None: not cached
    _signature: ArgumentSignature | None = None  # the call's, kept when traced under an abstract mesh alone
    _trace_mesh: AbstractMesh | None = None  # get_abstract_mesh() of the trace, when a mesh context was open

    def __init__(self, wrapped: Wrapped, program: Program, in_tree: pytrees.PyTreeDef,
                 out_tree: pytrees.PyTreeDef, in_avals: Sequence[ShapedArray], donated: Sequence[bool],
                 arg_paths: Sequence[str], arg_shardings: Sequence[Any] | None = None):
        self._wrapped = wrapped
        self.program = program
        self.in_tree = in_tree
        self.out_tree = out_tree
        #: The inputs' abstract values, one per leaf of ``in_tree`` (``in_avals`` is their tree, as JAX's).
        self.flat_in_avals = tuple(in_avals)
        self.donated = tuple(donated)
        self.arg_paths = tuple(arg_paths)
        self._arg_shardings = tuple(arg_shardings) if arg_shardings is not None else (None,) * len(in_avals)

    @property
    def fun_name(self) -> str:
        """The name of the traced function."""
        return self._wrapped.name

    @property
    def args_info(self) -> Any:
        """``(args, kwargs)`` pytree of ``ArgInfo`` (abstract value, donated)."""
        return pytrees.tree_unflatten(self.in_tree, [ArgInfo(a, d) for a, d in zip(self.flat_in_avals, self.donated)])

    @property
    def in_avals(self) -> Any:
        """The inputs' abstract values as the ``(args, kwargs)`` tree (``jax.stages.Traced.in_avals``)."""
        return pytrees.tree_unflatten(self.in_tree, list(self.flat_in_avals))

    @property
    def out_avals(self) -> Any:
        """The results' abstract values as the output tree (``jax.stages.Traced.out_avals``)."""
        return pytrees.tree_unflatten(self.out_tree, list(self.program.out_avals))

    @property
    def jaxpr(self) -> ClosedProgram:
        """The traced program, as ``toolkit.make_jaxpr`` gives it (JAX's ``ClosedJaxpr``); also ``program``."""
        return ClosedProgram(self.program)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The positions of the donated inputs among the flat leaves of ``(args, kwargs)``, as JAX's."""
        return tuple(i for i, donated in enumerate(self.donated) if donated)

    @property
    def out_info(self) -> Any:
        """The outputs as a pytree of ``ShapeDtypeStruct``, with JAX's shardings (``sharding_plan.out_info_specs``)."""
        return pytrees.tree_unflatten(self.out_tree, out_info_specs(self))

    def as_text(self, source_info: bool = False) -> str:
        """The program, printed (``source_info=True`` adds file:line per equation)."""
        return self.program.pretty(source_info=source_info)

    def lower(self, *, platforms: Sequence[str] | None = None, dim_vars_as_arguments: bool = False,
              partitioner: str | None = None, lowering_platforms: Sequence[str] | None = None) -> "Lowered":
        """Lower the program to a StableHLO module.

        ``platforms`` (several: a platform-index argument) and ``dim_vars_as_arguments``
        (dimension variables passed in rather than computed) are what ``toolkit.export`` uses.
        ``partitioner`` (``"shardy"`` or ``"gspmd"``; default ``$TOOLKIT_PARTITIONER``, else
        ``"shardy"``, as JAX 0.10) picks the sharding form written and the XLA partitioner ``compile`` uses,
        e.g. ``jit(f, in_shardings=s).trace(x).lower(partitioner="shardy")``.

        Traced under ``use_abstract_mesh`` alone with nothing else placing the computation, ``platforms`` are
        required (JAX's ``ValueError`` otherwise) and the module is JAX's, over the abstract mesh; its
        ``compile`` needs ``device_assignment=``, as JAX's.

        ``lowering_platforms`` is JAX's name of ``platforms`` (``jax.stages.Traced.lower``); give one of them.
        """
        if lowering_platforms is not None:
            if platforms is not None:
                raise TypeError("Traced.lower: give platforms or lowering_platforms (JAX's name), not both")
            platforms = lowering_platforms
        try:
            plan = plan_shardings(self, platforms=platforms)
        except AbstractMeshPlacement as refusal:
            if self._signature is None:
                raise
            # JAX lowers for devices to come; toolkit's lowerings are placed, so this one is made over the mesh
            # laid on this process's first devices (as toolkit.export does) and compiles only for given ones.
            how = {"platforms": platforms, "dim_vars_as_arguments": dim_vars_as_arguments,
                   "partitioner": partitioner}
            lowered = self._lower_over(refusal.mesh, runtime_client.devices()[:refusal.mesh.size], how)
            lowered._over_abstract_mesh = (refusal.mesh, self, how)
            return lowered
        plan.partitioner = partitioner_choice(partitioner)
        # Lowerings are cached with the trace they lower (toolkit.core.trace_cache): the bytecode is
        # kept, and each Lowered of a hit parses its own module when it is first asked for one.
        key = jit_cache.lowering_key(self, plan, platforms, dim_vars_as_arguments)
        cached = trace_cache.TRACES.get(self._wrapped.fun, key) if key is not None else None
        if cached is not None and cached.program is self.program and jit_cache.rules_unchanged(cached.rules):
            lowered = Lowered(self, None, cached.kept, plan, platforms or (), source=cached.bytecode)
            lowered._cache_key = key
            if ir_dump.dump_dir() or ir_dump.report_dir():
                lowered._timeline = ir_dump.start_timeline(f"jit_{self.fun_name}", traced=self.program.pretty,
                                                           module=lowered._module)
            return lowered
        kept = kept_inputs(self.program, self._wrapped.keep_unused)
        module = lower_traced(self, plan, kept, platforms, dim_vars_as_arguments)
        source = None
        if key is not None:
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            source = buffer.getvalue()
            trace_cache.TRACES.put(self._wrapped.fun, key, jit_cache.LoweringEntry(
                self.program, source, tuple(kept), jit_cache.rules_snapshot(self.program)))
        lowered = Lowered(self, module, kept, plan, platforms or (), source=source)
        lowered._cache_key = key
        # TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT: the timeline compile() continues (None when both are unset).
        lowered._timeline = ir_dump.start_timeline(f"jit_{self.fun_name}", traced=self.program.pretty, module=module)
        return lowered

    def _lower_over(self, mesh: AbstractMesh, devices: Sequence[Any], how: dict[str, Any]) -> "Lowered":
        """This trace's function traced again and lowered under ``set_mesh`` of ``mesh`` laid on ``devices``."""
        assert self._signature is not None  # kept by Wrapped._trace under an abstract mesh alone
        with set_mesh(abstract_mesh_on(mesh, devices)):
            return self._wrapped._trace(self._signature).lower(**how)


class Lowered:
    """A lowered function: a StableHLO module and the pass pipeline ``compile`` runs on it."""

    _timeline: ir_dump.Timeline | None = None  # this compilation's when dumping or reporting
    _module_obj: ir.Module | None = None
    _source: bytes | None = None  # the module's bytecode, while no one has been handed the module (see _module)
    _cache_key: tuple | None = None  # its key in the trace cache (jit_cache.lowering_key); None: not cached
    # (abstract mesh, Traced, lower()'s arguments) of a lowering over an abstract mesh alone (Traced.lower)
    _over_abstract_mesh: tuple | None = None

    def __init__(self, traced: Traced, module: ir.Module | None, kept_var_idx: Sequence[int], plan: Any,
                 platforms: Sequence[str] = (), *, source: bytes | None = None):
        # ``module`` may be None when ``source`` (its bytecode) is given: a cached lowering's module is
        # parsed when first asked for. ``source`` with a module must be that module's bytecode.
        self._traced = traced
        self._module_obj = module
        self._source = source
        self.kept_var_idx = tuple(kept_var_idx)
        self._plan = plan
        self.platforms = tuple(platforms) or (plan.platform,)
        #: The passes ``compile`` runs (user-extendable; see ``toolkit.passes.jit_pipeline``).
        self.pipeline: Pipeline = jit_pipeline()

    def _platform_pipeline(self) -> Pipeline:
        """For a multi-platform lowering: fold the platform index for the platform compiled for."""
        if len(self.platforms) == 1:
            return Pipeline()
        if self._plan.platform not in self.platforms:
            raise ValueError(f"cannot compile for {self._plan.platform!r}: the module was lowered for "
                             f"{self.platforms}")
        return parse_pipeline(f"builtin.module(toolkit-platform-specialize{{platform={self._plan.platform} "
                              f"platforms={','.join(self.platforms)} quiet=true}})")

    in_tree = property(lambda self: self._traced.in_tree,
                       doc="The pytree structure of the (args, kwargs) it was lowered for.")
    out_tree = property(lambda self: self._traced.out_tree, doc="The pytree structure of the results.")
    args_info = property(lambda self: self._traced.args_info,
                         doc="Per argument (in the args/kwargs tree): its shape, dtype and whether it is donated.")
    out_info = property(lambda self: self._traced.out_info,
                        doc="Per result (in the output tree): its ``ShapeDtypeStruct``.")
    in_avals = property(lambda self: self._traced.in_avals,
                        doc="The inputs' abstract values as the ``(args, kwargs)`` tree (unused ones too, as JAX's).")
    donate_argnums = property(lambda self: self._traced.donate_argnums,
                              doc="The positions of the donated inputs among the flat leaves of ``(args, kwargs)``.")

    def compiler_ir(self, dialect: str = "stablehlo") -> Any:
        """The module as an ``ir.Module`` (``"stablehlo"``) or HLO text (``"hlo"``)."""
        if dialect == "stablehlo":
            return self._module
        if dialect == "hlo":
            return runtime_executable.mlir_to_hlo_text(self._bytecode())
        raise ValueError(f"unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    def as_text(self, dialect: str = "stablehlo", debug_info: bool = False) -> str:
        """The module as text; ``debug_info=True`` prints each op's source location."""
        if dialect == "stablehlo":
            return self._module.operation.get_asm(enable_debug_info=debug_info)
        if dialect == "hlo":
            return self.compiler_ir("hlo")
        raise ValueError(f"unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    @property
    def _module(self) -> ir.Module:
        """The module, this ``Lowered``'s own: parsed from the cached bytecode on first use.

        Once handed out it may be changed in place (``compiler_ir()`` gives it to
        the user), so from then on the bytecode is written from it again.
        """
        module = self._module_obj
        if module is None and self._source is not None:
            with shared_context() as context:
                module = ir.Module.parse(self._source, context)
            self._module_obj = module
        self._source = None
        return module

    @_module.setter
    def _module(self, module: ir.Module | None) -> None:
        self._module_obj, self._source = module, None

    def _bytecode(self) -> bytes:
        source = self._source
        if source is not None:
            return source
        buffer = io.BytesIO()
        self._module.operation.write_bytecode(buffer)
        return buffer.getvalue()

    def _with_passes(self, pipeline: str | Pipeline) -> "Lowered":
        """A copy of this lowering whose ``pipeline`` ends with ``pipeline`` (the module itself is shared, not run)."""
        if isinstance(pipeline, str):
            extra = parse_pipeline(pipeline)
        elif isinstance(pipeline, Pipeline):
            extra = pipeline
        else:
            raise TypeError(f"pipeline must be MLIR pipeline text or a toolkit.passes.Pipeline, got "
                            f"{type(pipeline).__name__}")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.pipeline = self.pipeline + extra
        return copy

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate of the unoptimized module (``flops``, ``bytes accessed``, ...)."""
        return runtime_executable.hlo_cost_analysis(self._bytecode())

    def compile(self, compiler_options: Mapping[str, Any] | None = None, *,
                pipeline: str | Pipeline | None = None,
                device_assignment: Sequence[Any] | None = None) -> Compiled | PolymorphicCompiled:
        """Run the pass pipeline on a copy of the module, then compile it with XLA.

        A lowering with symbolic shapes gives a :class:`PolymorphicCompiled` (one executable per shape called).

        ``compiler_options`` are XLA debug options, e.g. ``{"xla_cpu_enable_fast_math": False}``.
        ``pipeline`` (MLIR pipeline text such as ``"toolkit-simplify, cse"``, or a
        :class:`~toolkit.passes.Pipeline`) runs after the jit pipeline (``self.pipeline``),
        for this compilation only; bad text raises the parser's ``ValueError``.
        ``device_assignment`` (JAX's): the devices to compile for, in mesh order; required for a lowering over
        an abstract mesh alone (``RuntimeError`` without it, as JAX's), else it must be the lowering's own
        devices (JAX's ``ValueError``).
        """
        if self._over_abstract_mesh is not None:
            mesh, traced, how = self._over_abstract_mesh
            if device_assignment is None:
                raise RuntimeError("device_assignment cannot be `None` during compilation. Please pass a tuple of "
                                   "devices to `.compile(device_assignment=)`")
            return traced._lower_over(mesh, device_assignment, how).compile(compiler_options, pipeline=pipeline)
        if device_assignment is not None:
            given, own = list(device_assignment), list(self._plan.devices)
            if given != own:
                raise ValueError(
                    "device_assignment passed to `.compile` must match the device_assignment calculated from array "
                    f"shardings and out_shardings. Got device ids passed to compile {[d.id for d in given]} on "
                    f"platform {given[0].platform.upper() if given else None} and devices ids calculated from array "
                    f"shardings and out_shardings {[d.id for d in own]} on platform {own[0].platform.upper()}")
        if pipeline is not None:
            return self._with_passes(pipeline).compile(compiler_options)
        # jit's options first, this call's over them (as JAX appends them to its compile arguments)
        compiler_options = {**(self._traced._wrapped.compiler_options or {}),
                            **(checked_compiler_options(compiler_options) or {})} or None
        if not all(is_static_shape(a.shape) for a in self._traced.flat_in_avals):
            return PolymorphicCompiled(self, compiler_options)
        pipeline = self._platform_pipeline() + self.pipeline
        timeline = ir_dump.timeline_for(self)  # None unless TOOLKIT_DUMP_IR_TO / TOOLKIT_REPORT is set
        # Executables are cached with the lowering they compile (as JAX's _cached_compilation): a fresh
        # jit(f)(x) of a function compiled before runs its executable without compiling again.
        # The cache holds a Compiled with no lowering (a template): a hit copies it for this lowering, so what
        # Compiled derives from the executable (result handlers, shardings, the fast caller) is made once.
        # Not while dumping or reporting: each compilation writes its own timeline.
        key = jit_cache.compile_key(self, pipeline, compiler_options) if timeline is None else None
        template = trace_cache.TRACES.get(self._traced._wrapped.fun, key) if key is not None else None
        if template is not None:
            return template._copy_for(self)
        module = self._module
        if pipeline.elements:
            with module.context:
                module = ir.Module.parse(self._bytecode())
        executable = passes_then_xla(self, module, pipeline, compiler_options, timeline)
        compiled = Compiled(self, executable)
        compiled._compiler_options = compiler_options  # part of the key of a serialized executable
        if key is not None:
            # The copies a cache hit makes share the template's fast caller; this compilation makes its own
            # on its first fast call, as every Compiled does (Compiled._call_fast).
            template = compiled._copy_for(None)
            # The instance attribute shadows the method (Compiled._call_fast says why).
            template._call_fast = fast_caller(template)  # type: ignore[method-assign, assignment]
            trace_cache.TRACES.put(self._traced._wrapped.fun, key, template)
        return compiled

# Primitives and lax functions outside a trace run as executables of this jit (toolkit.dispatch), and a
# device_put of an array spanning other processes is a jitted copy (as JAX's).
install_eager_handlers(jit)
# approx_top_k's shape rule (in lax, below the runtime) sizes its unaggregated output with XLA's function.
approximate_top_k.install_reduction_output_size(xla_shape_functions.approx_top_k_reduction_output_size)
install_jitted_copy(lambda x, target: jit(identity, out_shardings=target)(x))


def _callback_arrays(args: tuple) -> tuple:
    """A host callback's operands as arrays on the CPU device: JAX 0.10 device_puts each one before calling the
    user's function (``pure_callback``, ``io_callback``, ``debug.callback`` and ``debug.print`` alike)."""
    cpu = runtime_client.local_devices(backend="cpu")[0]
    return tuple(device_put(a, cpu) if isinstance(a, np.ndarray) else a for a in args)


host_callbacks.install_argument_arrays(_callback_arrays)


def deserialize_compiled(data: bytes, *, compiler_options: Mapping[str, Any] | None = None) -> Compiled:
    """Load bytes of ``Compiled.serialize()``: a ``Compiled`` with the same trees, shardings and results.

    Refuses (``ValueError`` naming what differs) bytes written for another jaxlib,
    platform, device kind or count, or, when ``compiler_options`` is given, other
    XLA options; and corrupt bytes (the header's SHA-256 of the executable is
    checked before jaxlib parses it). Executables are code: load only files you trust.
    """
    return compiled_format.deserialize(data, _compiled_from_record, compiler_options=compiler_options)


def _compiled_from_record(record: compiled_format.CompiledRecord) -> Compiled:
    """A callable ``Compiled`` around a loaded executable: stage objects for its signature, no function."""
    def loaded(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a deserialized executable has no Python function to trace")
    loaded.__name__ = record.name
    traced = Traced(Wrapped(loaded), record.program, record.in_tree, record.out_tree, record.in_avals,
                    record.donated, record.arg_paths, [None] * len(record.in_avals))
    lowered = Lowered.__new__(Lowered)
    lowered._traced, lowered._module, lowered.kept_var_idx, lowered._plan = traced, None, record.kept, record.plan
    lowered.platforms = (record.plan.platform,)
    lowered.pipeline = None  # type: ignore[assignment]  # never compiled again: a loaded executable has no passes
    compiled = Compiled(lowered, record.executable, in_avals=record.in_avals, out_avals=record.out_avals)
    compiled._compiler_options = record.compiler_options
    return compiled
