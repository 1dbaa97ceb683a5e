"""Tracing: turning a Python function into a ``Program``.

While a ``ProgramBuilder`` is active, every ``Primitive.bind`` is recorded as an
equation and returns ``Tracer``s that stand for the results. With no builder
active, ``bind`` runs the primitive eagerly through the handler that
``toolkit.stages`` installs (compile once per signature, then execute).

Builders nest for control flow: a body traced inside another trace captures
the outer tracers it uses as extra inputs, and large constants always become
constants of the outermost program, so sub-programs are closed over their
explicit inputs alone.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from types import CodeType, FrameType
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of, leaf_avals
from toolkit.core.program import Equation, Literal, Program, SourceInfo, Var
from toolkit.core import pytrees


class ConcretizationTypeError(TypeError):
    """A traced value was used where Python needs a concrete value."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the trace that made it (e.g. stored in a global)."""


class TracerArrayConversionError(TypeError):
    """A traced value was converted to a numpy array."""


_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Programs shipped with toolkit (the demo, command-line tools) count as user code.
_USER_CODE_INSIDE_TOOLKIT = _TOOLKIT_DIR + "tools" + os.sep


def user_source_info(builder: "ProgramBuilder | None" = None) -> SourceInfo | None:
    """Where the user called us: the innermost stack frame outside toolkit itself, with its callers.

    The callers are the user's frames between it and the start of ``builder``'s
    outermost trace (none without a builder), as the lowering turns them into
    call-site locations. When the whole trace runs inside toolkit (a function of
    toolkit's own, jitted), the user's frame that called it is taken, without callers.
    Each frame's description is cached per (code, instruction): a repeated call
    site costs one dictionary look-up per frame.
    """
    frame: FrameType | None = sys._getframe(2)
    stop = builder.root.entry_frame if builder is not None else None
    frames: list[SourceInfo] = []
    while frame is not None:
        if id(frame) == stop:
            if frames:
                break
            stop = None  # only toolkit inside the trace: the first user frame outside it, as before
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith(_TOOLKIT_DIR) or filename.startswith(_USER_CODE_INSIDE_TOOLKIT):
            entry = _FRAME_INFO.get((id(code), frame.f_lasti))
            frames.append(entry[1] if entry is not None and entry[0] is code else _describe_frame(code, frame.f_lasti))
            if stop is None or len(frames) == _MAX_FRAMES:
                break
        frame = frame.f_back
    if not frames:
        return None
    if len(frames) == 1:
        return frames[0]
    key = tuple(map(id, frames))  # the frames are _FRAME_INFO's: their ids are stable while cached
    chain = _CHAINS.get(key)
    if chain is None:
        if len(_CHAINS) > 100_000:
            _CHAINS.clear()
        first = frames[0]
        chain = _CHAINS[key] = SourceInfo(first.file, first.line, first.function, first.column, first.end_line,
                                          first.end_column, tuple(frames[1:]))
    return chain


#: (id(code), instruction offset) -> (code, the user's frame there as a SourceInfo without callers).
#: Keyed by id: a code object hashes its whole contents. The entry keeps the code alive, so its id is
#: not reused while cached.
_FRAME_INFO: dict[tuple[int, int], tuple[CodeType, SourceInfo]] = {}
#: (ids of the frames' SourceInfos) -> the SourceInfo of that call chain (cleared with _FRAME_INFO).
_CHAINS: dict[tuple[int, ...], SourceInfo] = {}
_MAX_FRAMES = 100  # as JAX's default jax_traceback_in_locations_limit


def _describe_frame(code: CodeType, lasti: int) -> SourceInfo:
    """A user's frame (``code`` running the instruction at ``lasti``) as a ``SourceInfo``, cached."""
    # co_positions has one entry per 2-byte code unit; lasti is the offset of the running instruction.
    position = next(itertools.islice(code.co_positions(), lasti // 2, None), None) if lasti >= 0 else None
    line, end_line, column, end_column = position or (None, None, None, None)
    if line is None:
        line = code.co_firstlineno if lasti < 0 else _line_of(code, lasti)
    info = SourceInfo(code.co_filename, line, code.co_qualname, column or 0, end_line or line, end_column or 0)
    if len(_FRAME_INFO) > 100_000:  # code made at run time (exec) must not grow it without bound
        _FRAME_INFO.clear()
        _CHAINS.clear()
    _FRAME_INFO[(id(code), lasti)] = (code, info)
    return info


def _line_of(code: CodeType, lasti: int) -> int:
    """The line of the instruction at ``lasti`` (when co_positions has none)."""
    line = code.co_firstlineno
    for start, end, number in code.co_lines():
        if start <= lasti < end and number is not None:
            return number
    return line


class Tracer:
    """A stand-in for an array value inside a trace; carries only its abstract value.

    Array methods and operators are added by ``toolkit.numpy``.
    """

    __slots__ = ("aval", "_builder", "_var", "_origin", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, builder: "ProgramBuilder", var: Var, origin: Any):
        self.aval = var.aval
        self._builder = builder
        self._var = var
        self._origin = origin

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _describe(self) -> str:
        origin = self._origin
        if isinstance(origin, Equation):
            where = f" at {origin.source_info}" if origin.source_info else ""
            return f"the traced value {self.aval.str_short()} produced by `{origin.primitive.name}`{where}"
        if isinstance(origin, str):
            return f"the traced value {self.aval.str_short()} of {origin}"
        return f"a traced value {self.aval.str_short()}"

    def _concretization_error(self, what: str, advice: str) -> ConcretizationTypeError:
        return ConcretizationTypeError(
            f"{what} needs a concrete value, but got {self._describe()}. {advice} "
            "Alternatively mark the argument static with jit's static_argnums/static_argnames.")

    def __bool__(self) -> bool:
        raise self._concretization_error(
            "Python control flow (`if`, `while`, `and`/`or`, bool())",
            "Use toolkit.lax.cond, toolkit.lax.switch or toolkit.lax.while_loop for value-dependent "
            "control flow, or toolkit.numpy.where to select between values.")

    def __int__(self) -> int:
        raise self._concretization_error("int()", "Keep the value as an array inside the traced function.")

    def __float__(self) -> float:
        raise self._concretization_error("float()", "Keep the value as an array inside the traced function.")

    def __complex__(self) -> complex:
        raise self._concretization_error("complex()", "Keep the value as an array inside the traced function.")

    def __index__(self) -> int:
        raise self._concretization_error(
            "Using a value as a Python index or size",
            "Use toolkit.lax.dynamic_slice / dynamic_index for data-dependent indexing.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TracerArrayConversionError(
            f"{self._describe()} cannot be converted to a numpy array inside a traced function; "
            "use toolkit.numpy instead of numpy on traced values.")

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.aval.shape[0]))

    def __hash__(self) -> int:
        raise TypeError(f"{self._describe()} is unhashable")

    def __repr__(self) -> str:
        return f"Tracer<{self.aval.str_short()}>"


class _State(threading.local):
    def __init__(self) -> None:
        self.builders: list[ProgramBuilder] = []


_state = _State()


def current_builder() -> "ProgramBuilder | None":
    builders = _state.builders
    return builders[-1] if builders else None


def is_tracing() -> bool:
    return bool(_state.builders)


class ProgramBuilder:
    """Records equations while a function is traced; ``build`` makes the ``Program``."""

    def __init__(self, parent: "ProgramBuilder | None" = None):
        self.parent = parent
        self.root: ProgramBuilder = self if parent is None else parent.root
        #: The root's: ``id`` of the frame that runs the traced function (where source info stops
        #: collecting callers; the frame is alive while its trace records equations).
        self.entry_frame: int | None = None
        self.invars: list[Var] = []
        self.eqns: list[Equation] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, Tracer] = {}
        self._const_sources: list[Any] = []  # numpy constants converted to their canonical dtype: ids stay taken
        # Outer tracers used inside this (nested) trace, and the inputs standing for them.
        self.captured_outer: list[Tracer] = []
        self._captured: dict[int, Tracer] = {}
        self.finished = False

    def __enter__(self) -> "ProgramBuilder":
        _state.builders.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        popped = _state.builders.pop()
        assert popped is self

    # -- inputs ---------------------------------------------------------------
    def new_input(self, aval: ShapedArray, origin: str = "an argument") -> Tracer:
        var = Var(aval)
        self.invars.append(var)
        return Tracer(self, var, origin)

    def _is_ancestor(self, builder: "ProgramBuilder") -> bool:
        b = self.parent
        while b is not None:
            if b is builder:
                return True
            b = b.parent
        return False

    def to_tracer(self, x: Any) -> Tracer:
        """A tracer of this builder for ``x``: a tracer, an outer tracer or a constant."""
        if isinstance(x, Tracer):
            if x._builder is self:
                return x
            if x._builder.finished or not self._is_ancestor(x._builder):
                raise UnexpectedTracerError(
                    f"{x._describe()} escaped the trace that created it and was used again "
                    "(a leaked tracer: for example stored in a global or a closure outliving the trace). "
                    "Return values from the traced function instead.")
            return self._capture(x)
        if self.parent is not None:
            return self._capture(self.parent.to_tracer(x))
        return self._constant(x)

    def _capture(self, outer: Tracer) -> Tracer:
        inner = self._captured.get(id(outer))
        if inner is None:
            var = Var(outer.aval)
            inner = Tracer(self, var, outer._origin)
            self._captured[id(outer)] = inner
            self.captured_outer.append(outer)
        return inner

    def _constant(self, value: Any) -> Tracer:
        tracer = self._const_ids.get(id(value))
        if tracer is None:
            var = Var(aval_of(value).strip_weak_type() if not dtypes.is_python_scalar(value) else aval_of(value))
            tracer = Tracer(self, var, "a constant captured by the traced function")
            self.constvars.append(var)
            if isinstance(value, np.ndarray) and value.dtype != var.aval.dtype:
                # A captured float64 constant is float32 with x64 off (JAX); the original keeps its id taken.
                self._const_sources.append(value)
                self.consts.append(value.astype(var.aval.dtype))
            else:
                self.consts.append(value)
            self._const_ids[id(value)] = tracer
        return tracer

    def to_atom(self, x: Any) -> Var | Literal:
        if isinstance(x, Tracer):
            return self.to_tracer(x)._var
        if dtypes.is_python_scalar(x):
            return Literal(x, aval_of(x))
        if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
            dtype = dtypes.canonicalize_dtype(x.dtype)  # np.float64(1) is a float32 with x64 off (JAX)
            return Literal(np.asarray(x, dtype), ShapedArray((), dtype))
        return self.to_tracer(_as_constant_value(x))._var

    # -- equations ------------------------------------------------------------
    def add_equation(self, primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> list[Tracer]:
        atoms = [self.to_atom(a) for a in args]
        out_avals = primitive.abstract_eval(*(a.aval for a in atoms), **params)
        outs = [Var(aval) for aval in out_avals]
        eqn = Equation(primitive, atoms, outs, params, user_source_info(self))
        self.eqns.append(eqn)
        return [Tracer(self, v, eqn) for v in outs]

    def build(self, outputs: Sequence[Any]) -> Program:
        """The program computing ``outputs``; captured outer values become trailing inputs."""
        out_atoms = [self.to_atom(o) for o in outputs]
        invars = self.invars + [self._captured[id(t)]._var for t in self.captured_outer]
        self.finished = True
        return Program(self.constvars, self.consts, invars, out_atoms, self.eqns)


def _as_constant_value(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        dtypes.canonicalize_dtype(x.dtype)
        return x
    if hasattr(x, "aval") or hasattr(x, "__toolkit_array__"):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"a {type(x).__name__} is not an array; wrap it with toolkit.numpy.asarray")
    raise TypeError(f"a value of type {type(x).__name__} cannot be used as an array: {x!r}")


# --- binding -----------------------------------------------------------------

EagerHandler = Callable[[Any, Sequence[Any], dict[str, Any]], list[Any]]
_eager_handler: EagerHandler | None = None


def set_eager_handler(handler: EagerHandler) -> None:
    """Install how primitives run outside a trace (``toolkit.stages`` does this)."""
    global _eager_handler
    _eager_handler = handler


EagerCallHandler = Callable[..., Any]
_eager_call_handler: EagerCallHandler | None = None


def set_eager_call_handler(handler: EagerCallHandler) -> None:
    """Install how a traceable function runs outside a trace (``toolkit.stages`` installs ``jit(fun)(*args)``).

    Ops whose eager form is a whole program (control flow with bodies, reductions with a computation) call
    :func:`eager_call` instead of binding one primitive, so ``lax`` never imports ``stages``.
    """
    global _eager_call_handler
    _eager_call_handler = handler


def eager_call(fun: Callable[..., Any], *args: Any) -> Any:
    """Run ``fun(*args)`` outside any trace by compiling it as a whole (through the installed handler)."""
    if _eager_call_handler is None:
        raise RuntimeError("no eager call handler installed; import toolkit")
    return _eager_call_handler(fun, *args)


def bind(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    builder = current_builder()
    if builder is None:
        for a in args:
            if isinstance(a, Tracer):
                raise UnexpectedTracerError(
                    f"{a._describe()} escaped its trace and was passed to `{primitive.name}` "
                    "outside any traced function (a leaked tracer).")
        if _eager_handler is None:
            raise RuntimeError("no eager handler installed; import toolkit")
        outs = _eager_handler(primitive, args, params)
    else:
        outs = builder.add_equation(primitive, args, params)
    return outs if primitive.multiple_results else outs[0]


def trace_flat(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
               origins: Sequence[str] | None = None) -> tuple[Program, list[Tracer]]:
    """Trace ``fun(*tracers) -> flat outputs`` into a program.

    Inside another trace the result is a sub-program whose trailing inputs
    stand for the returned list of captured outer tracers.
    """
    builder = ProgramBuilder(current_builder())
    if builder.parent is None:
        builder.entry_frame = id(sys._getframe())
    with builder:
        tracers = [builder.new_input(a, origins[i] if origins else "an argument") for i, a in enumerate(in_avals)]
        outs = fun(*tracers)
        program = builder.build(list(outs))
    return program, builder.captured_outer


def trace_with_static_args(fun: Callable[..., Any], args: tuple, kwargs: dict, static_argnums: Sequence[int],
                           what: str) -> tuple[Program, Any, list[Tracer], list[Any]]:
    """Trace ``fun(*args, **kwargs)`` with the positional ``static_argnums`` kept as Python values.

    The other arguments (pytrees of arrays or specs) are flattened and traced;
    returns ``(program, out_tree, captured, leaves)`` with ``leaves`` the flat
    traced arguments. Errors name ``what`` and the leaf that is not an array.
    """
    for i in static_argnums:
        if not -len(args) <= i < len(args):
            raise ValueError(f"{what}: static_argnums {tuple(static_argnums)} is out of bounds for a call with "
                             f"{len(args)} positional arguments")
    positions = {i % len(args) for i in static_argnums} if args else set()
    leaves, in_tree = pytrees.tree_flatten(([a for i, a in enumerate(args) if i not in positions], kwargs))
    avals = leaf_avals(leaves, what, " or a ShapeDtypeStruct; mark it static with static_argnums")
    out_tree_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        dynamic_args, dynamic_kwargs = pytrees.tree_unflatten(in_tree, list(xs))
        remaining = iter(dynamic_args)
        full = [args[i] if i in positions else next(remaining) for i in range(len(args))]
        out_leaves, out_tree = pytrees.tree_flatten(fun(*full, **dynamic_kwargs))
        for i, leaf in enumerate(out_leaves):
            try:
                aval_of(leaf)
            except TypeError:
                raise TypeError(f"{what}: output leaf {i} of type {type(leaf).__name__} is not an array") from None
        out_tree_box.append(out_tree)
        return out_leaves

    program, captured = trace_flat(flat_fun, avals)
    return program, out_tree_box[0], captured, leaves
