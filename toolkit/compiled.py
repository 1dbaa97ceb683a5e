"""The last stage: ``Compiled``, an XLA executable with its calling signature, and ``PolymorphicCompiled``, one
executable per concrete shape of a shape-polymorphic lowering (``jax.stages.Compiled``).

``toolkit.stages.Lowered.compile`` makes them (``toolkit.stages`` names both too); a call goes through
``toolkit.dispatch`` (the arguments checked, the fast path) to :meth:`Compiled._call_flat`, which places the
arguments and runs the executable.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from toolkit import compiled_format
from toolkit.array import Array, Token, token_argument
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray, abstract_token, is_static_shape
from toolkit.dispatch import (ANY_PARTITIONER, MISS, ArgumentSignature, FastPath, call_compiled, fast_caller,
                              place_argument)
from toolkit.jit_compilation import compile_for_shapes
from toolkit.passes.default_pipeline import jit_pipeline_generation
from toolkit.runtime import arrays as runtime_arrays, executable as runtime_executable
from toolkit.sharding_plan import shardings_from_hlo, with_chosen_inputs

#: What the lowering arguments below are: a ``toolkit.stages.Lowered`` (a layer above, which makes Compiled).
LoweredStage = Any

__all__ = ["Compiled", "PolymorphicCompiled"]


class Compiled:
    """A compiled executable; call it with arguments of the signature it was lowered for."""

    _compiler_options: Mapping[str, Any] | None = None  # the XLA options it was compiled with

    def serialize(self) -> bytes:
        """The executable and its calling signature as bytes; ``toolkit.deserialize_compiled`` loads them.

        The container (a JSON header and PJRT's executable bytes, no pickle) is
        described in ``docs/compiled.md`` and ``toolkit/compiled_format.py``; it is
        keyed by the jaxlib version, platform, device kind and count and compile
        options, and loading refuses any mismatch.
        """
        return compiled_format.serialize(self)

    def __init__(self, lowered: LoweredStage, executable: Any, *, in_avals: Sequence[ShapedArray] | None = None,
                 out_avals: Sequence[ShapedArray] | None = None):
        self._lowered = lowered
        self._executable = executable
        traced = lowered._traced
        plan = lowered._plan
        # A specialization of a shape-polymorphic lowering has concrete avals of its own.
        self._in_avals = tuple(in_avals) if in_avals is not None else traced.flat_in_avals
        self._kept = lowered.kept_var_idx
        if plan.num_partitions > 1 and getattr(plan, "inputs_from_executable", False):
            plan = with_chosen_inputs(plan, runtime_executable.parameter_shardings(executable), self._in_avals,
                                      self._kept)
        self._paths = traced.arg_paths
        self._out_tree = traced.out_tree
        self._out_avals = list(out_avals) if out_avals is not None else traced.program.out_avals
        self._plan = plan
        self._arg_runtime_shardings = [plan.arg_runtime_sharding(i, self._in_avals[i]) for i in self._kept]
        self._arg_devices = [list(s._device_assignment) for s in self._arg_runtime_shardings]
        chosen = None
        if plan.num_partitions > 1:
            chosen = shardings_from_hlo(runtime_executable.output_shardings(executable), plan.devices,
                                        self._out_avals, plan.recovery_mesh())
        self._out_shardings = plan.out_shardings(self._out_avals, chosen)
        self._handlers = [runtime_arrays.result_handler(a, s._runtime_sharding(a.ndim))
                          for a, s in zip(self._out_avals, self._out_shardings)]
        self._donated = [traced.donated[i] for i in self._kept]
        # Token results are handed out as Tokens, token arguments passed as empty buffers (the full path does both).
        self._token_outputs = [i for i, a in enumerate(self._out_avals) if a is abstract_token]
        self._has_tokens = bool(self._token_outputs) or any(a is abstract_token for a in self._in_avals)
        # The fast call paths apply when nothing is donated and no token crosses: the positional one (Arrays only;
        # the fast caller passes the kept ones, as _call_flat does) always then, the general one (host scalars and
        # numpy values placed by position) when every input is kept.
        self._positional_fast_ok = not any(self._donated) and not self._has_tokens
        self._fast_ok = self._positional_fast_ok and len(self._kept) == len(self._in_avals)
        self._single_output = self._out_tree == pytrees.tree_structure(0)

    def _copy_for(self, lowered: LoweredStage | None) -> "Compiled":
        """This executable as the compilation of ``lowered``, an equal lowering (the compile cache's key says so).

        Everything ``__init__`` derived (argument and output shardings, result
        handlers, the fast caller once made) depends only on what that key
        fixes, so the copy shares it; only the lowering it answers for differs.
        """
        compiled = object.__new__(Compiled)
        compiled.__dict__.update(self.__dict__)
        # None only for the compile cache's template, which is copied for a lowering before any use.
        compiled._lowered = lowered  # type: ignore[assignment]
        return compiled

    in_tree = property(lambda self: self._lowered.in_tree,
                       doc="The pytree structure of the (args, kwargs) the executable takes.")
    out_tree = property(lambda self: self._lowered.out_tree, doc="The pytree structure of the results.")
    args_info = property(lambda self: self._lowered.args_info,
                         doc="Per argument (in the args/kwargs tree): its shape, dtype and whether it is donated.")
    out_info = property(lambda self: self._lowered.out_info,
                        doc="Per result (in the output tree): its ``ShapeDtypeStruct``.")
    in_avals = property(lambda self: pytrees.tree_unflatten(self._lowered.in_tree, list(self._in_avals)),
                        doc="The inputs' abstract values as the ``(args, kwargs)`` tree (unused ones too, as JAX's).")
    donate_argnums = property(lambda self: self._lowered.donate_argnums,
                              doc="The positions of the donated inputs among the flat leaves of ``(args, kwargs)``.")

    def as_text(self) -> str:
        """The optimized HLO XLA compiled."""
        return runtime_executable.optimized_hlo_text(self._executable)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost model of the executable: ``{"flops": ..., "bytes accessed": ..., ...}``."""
        return runtime_executable.cost_analysis(self._executable)

    def memory_analysis(self) -> Any:
        """XLA's memory statistics (argument, output, temp and generated-code sizes in bytes)."""
        return runtime_executable.memory_analysis(self._executable)

    def runtime_executable(self) -> Any:
        """The underlying PJRT loaded executable."""
        return self._executable

    @property
    def input_shardings(self) -> Any:
        """``(args, kwargs)`` pytree of the shardings XLA chose for the inputs."""
        chosen = runtime_executable.parameter_shardings(self._executable)
        per_kept = shardings_from_hlo(chosen, self._plan.devices, [self._in_avals[i] for i in self._kept],
                                      self._plan.recovery_mesh())
        flat = [None] * len(self._in_avals)
        for i, s in zip(self._kept, per_kept):
            flat[i] = s
        for i in range(len(flat)):
            if flat[i] is None:
                flat[i] = self._plan.arg_sharding(i, self._in_avals[i])
        return pytrees.tree_unflatten(self.in_tree, flat)

    @property
    def output_shardings(self) -> Any:
        """Pytree (like the outputs) of the shardings XLA gave the outputs."""
        chosen = runtime_executable.output_shardings(self._executable)
        return pytrees.tree_unflatten(self.out_tree, shardings_from_hlo(chosen, self._plan.devices, self._out_avals,
                                                                          self._plan.recovery_mesh()))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_compiled(self, args, kwargs)  # toolkit.dispatch: checked, or a call seen before

    def _call_fast(self, leaves: Sequence[Array]) -> Any:
        """Call with the flat argument Arrays, already laid out as compiled; ``MISS`` when they are not.

        The first call replaces this method, on the instance, by a closure over
        what every call reads (see ``toolkit.dispatch.fast_caller``).
        """
        # An instance attribute that shadows this method: later calls go straight to the closure.
        self._call_fast = call = fast_caller(self)  # type: ignore[method-assign, assignment]
        return call(leaves)

    def _call_flat(self, leaves: Sequence[Any]) -> Any:
        impls = []
        for position, i in enumerate(self._kept):
            leaf = leaves[i]
            rsharding = self._arg_runtime_shardings[position]
            if type(leaf) is Array and leaf._impl._sharding is rsharding:
                impls.append(leaf._impl)
            elif type(leaf) is Token:
                impls.append(token_argument(leaf, self._plan.arg_sharding(i, self._in_avals[i])))
            else:
                impls.append(place_argument(self, leaf, i, position))
        outs = runtime_executable.execute(self._executable, impls, self._handlers)
        committed = self._plan.committed
        flat: list[Any] = [Array(impl, aval, sharding, committed)
                           for impl, aval, sharding in zip(outs, self._out_avals, self._out_shardings)]
        for i in self._token_outputs:
            flat[i] = Token(flat[i])
        return pytrees.tree_unflatten(self._out_tree, flat)


class PolymorphicCompiled:
    """``Lowered.compile()`` of a shape-polymorphic lowering: one XLA executable per concrete shape.

    Calling it binds the argument shapes into ``@main`` (``toolkit-bind-shapes``),
    refines the module to static shapes (``toolkit-refine-shapes``, which checks
    the shape assertions), runs the lowering's pass pipeline and compiles; the
    result is cached per shape. ``specialize(*args)`` returns that static
    ``Compiled`` for inspection (``as_text``, ``cost_analysis``, ...).
    """

    def __init__(self, lowered: LoweredStage, compiler_options: Mapping[str, Any] | None):
        self._lowered = lowered
        self._compiler_options = compiler_options
        self._specializations: dict[tuple, Compiled] = {}
        # The specializations earlier calls took: a call at a shape seen before costs what a static call
        # does (no signature, no checks, no specialization lookup). The program is fixed: x64 changes nothing.
        self._fast_path = FastPath(keyed_on_config=False)

    in_tree = property(lambda self: self._lowered.in_tree, doc="The pytree structure of the (args, kwargs) it takes.")
    out_tree = property(lambda self: self._lowered.out_tree, doc="The pytree structure of the results.")
    args_info = property(lambda self: self._lowered.args_info,
                         doc="Per argument: its (symbolic) shape, dtype and whether it is donated.")
    out_info = property(lambda self: self._lowered.out_info, doc="Per result: its (symbolic) ``ShapeDtypeStruct``.")

    def _concrete_avals(self, sig: ArgumentSignature) -> tuple[ShapedArray, ...]:
        traced = self._lowered._traced
        if sig.tree != traced.in_tree:
            raise TypeError(f"the compiled function {traced.fun_name} was called with arguments of tree structure "
                            f"{sig.tree}, but it was compiled for {traced.in_tree}")
        for path, given, expected in zip(traced.arg_paths, sig.avals, traced.flat_in_avals):
            mismatch = given.dtype != expected.dtype or len(given.shape) != len(expected.shape) or any(
                type(e) is int and g != e for g, e in zip(given.shape, expected.shape))
            if mismatch or not is_static_shape(given.shape):
                raise TypeError(f"argument {path} of the compiled function {traced.fun_name} has type "
                                f"{given.str_short()}, but it was compiled for {expected.str_short()}")
        return sig.avals

    def serialize(self) -> bytes:
        """Raises ``TypeError``: it needs concrete shapes; ``specialize(*args)`` gives the static ``Compiled``
        for given argument shapes, which has it.
        """
        raise self._polymorphic("serialize()")

    def specialize(self, *args: Any, **kwargs: Any) -> Compiled:
        """The static executable for these (concrete) argument shapes."""
        sig = self._lowered._traced._wrapped._signature(args, kwargs)
        return self._specialization(self._concrete_avals(sig))

    def _specialization(self, avals: tuple[ShapedArray, ...]) -> Compiled:
        key = tuple((a.shape, a.dtype) for a in avals)
        compiled = self._specializations.get(key)
        if compiled is None:
            compiled = self._specializations[key] = self._compile_for(avals)
        return compiled

    def _compile_for(self, avals: tuple[ShapedArray, ...]) -> Compiled:
        executable, out_avals = compile_for_shapes(self._lowered, avals, self._compiler_options)
        compiled = Compiled(self._lowered, executable, in_avals=avals, out_avals=out_avals)
        compiled._compiler_options = self._compiler_options
        return compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            # f(x) at the last hit's aval object: its specialization, without FastPath.call's pipeline and
            # partitioner checks (specializations compile with their lowering's, so none goes stale).
            last = self._fast_path.last_single
            if last is not None and len(args) == 1 and type(args[0]) is Array and last.aval is args[0].aval:
                out = last.entry.compiled._call_fast(args)
                if out is not MISS:
                    return out
            out = self._fast_path.call(args)
            if out is not MISS:
                return out
        wrapped = self._lowered._traced._wrapped
        sig = wrapped._signature(args, kwargs)
        generation = jit_pipeline_generation()
        compiled = self._specialization(self._concrete_avals(sig))
        if compiled._positional_fast_ok and not kwargs and not wrapped._has_static \
                and all(type(leaf) is Array for leaf in sig.leaves):
            # Compiled with the pipeline and partitioner of its lowering: any later one will do.
            self._fast_path.remember(args, len(sig.leaves), sig.avals, compiled, generation, ANY_PARTITIONER, ())
        return compiled._call_flat(sig.leaves)

    def _polymorphic(self, what: str) -> Exception:
        return TypeError(f"{what} needs concrete shapes: this executable is shape-polymorphic; "
                         "use .specialize(*args) for the executable of given argument shapes")

    def as_text(self) -> str:
        """Raises ``TypeError``: it needs concrete shapes; ``specialize(*args)`` gives the static ``Compiled``
        for given argument shapes, which has it.
        """
        raise self._polymorphic("as_text()")

    def cost_analysis(self) -> dict[str, float]:
        """Raises ``TypeError``: it needs concrete shapes; ``specialize(*args)`` gives the static ``Compiled``
        for given argument shapes, which has it.
        """
        raise self._polymorphic("cost_analysis()")

    def memory_analysis(self) -> Any:
        """Raises ``TypeError``: it needs concrete shapes; ``specialize(*args)`` gives the static ``Compiled``
        for given argument shapes, which has it.
        """
        raise self._polymorphic("memory_analysis()")

    def runtime_executable(self) -> Any:
        """Raises ``TypeError``: it needs concrete shapes; ``specialize(*args)`` gives the static ``Compiled``
        for given argument shapes, which has it.
        """
        raise self._polymorphic("runtime_executable()")
