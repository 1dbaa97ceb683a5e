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

import contextlib
import functools
import operator
import sys
import threading
from types import FrameType
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from toolkit.core import dtypes, eager_functions
from toolkit.core.avals import ShapedArray, abstract_token, aval_of, leaf_avals
from toolkit.core.error_classes import (  # noqa: F401  (the tracer's errors, named here too: tracing.<Error>)
    ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError,
)
from toolkit.core.program import Equation, Literal, Program, SourceInfo, Var, subprograms
from toolkit.core import pytrees
from toolkit.core.source_locations import (  # noqa: F401  (Scope, Transform, render_name_stack: tracing.<name> too)
    Scope, Transform, chain, collect_outer, render_name_stack, user_source_info, with_name_stack,
)


class Tracer:
    """A stand-in for an array value inside a trace; carries its abstract value, and in a concrete trace
    (``trace_flat(known=...)``: JAX's eager ``grad``/``jvp`` on concrete arguments) also the value it stands
    for, when every value it was computed from is known.

    Array methods and operators are added by ``toolkit.numpy``.
    """

    __slots__ = ("aval", "_builder", "_var", "_origin", "_known", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, builder: "ProgramBuilder", var: Var, origin: Any, known: Any = None):
        self.aval = var.aval
        self._builder = builder
        self._var = var
        self._origin = origin
        self._known = known

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

    def _concretization_error(self, what: str, advice: str,
                              error: type[TypeError] = ConcretizationTypeError) -> TypeError:
        return error(
            f"{what} needs a concrete value, but got {self._describe()}. {advice} "
            "Alternatively mark the argument static with jit's static_argnums/static_argnames.")

    def __bool__(self) -> bool:
        if self._known is not None:
            return bool(self._known)
        raise self._concretization_error(
            "Python control flow (`if`, `while`, `and`/`or`, bool())",
            "Use toolkit.lax.cond, toolkit.lax.switch or toolkit.lax.while_loop for value-dependent "
            "control flow, or toolkit.numpy.where to select between values.", TracerBoolConversionError)

    def __int__(self) -> int:
        if self._known is not None:
            return int(self._known)
        raise self._concretization_error("int()", "Keep the value as an array inside the traced function.")

    def __float__(self) -> float:
        raise self._concretization_error("float()", "Keep the value as an array inside the traced function.")

    def __complex__(self) -> complex:
        raise self._concretization_error("complex()", "Keep the value as an array inside the traced function.")

    # float() and complex() stay errors in a concrete trace too, as JAX's: they would drop the derivative.

    def __index__(self) -> int:
        if self._known is not None:
            return operator.index(self._known)
        raise self._concretization_error(
            "Using a value as a Python index or size",
            "Use toolkit.lax.dynamic_slice / dynamic_index for data-dependent indexing.", TracerIntegerConversionError)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TracerArrayConversionError(
            f"{self._describe()} cannot be converted to a numpy array inside a traced function; "
            "use toolkit.numpy instead of numpy on traced values.")

    def tolist(self) -> Any:
        raise ConcretizationTypeError(f"The tolist() method was called on {self._describe()}.")

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


class _ConstantOrigin(str):
    """The origin of a tracer standing for a constant: its description, and the constant's value
    (so ``ensure_compile_time_eval`` can compute with it eagerly). A str, as other origins are."""

    value: Any


def _constant_origin(value: Any) -> _ConstantOrigin:
    origin = _ConstantOrigin("a constant captured by the traced function")
    origin.value = value
    return origin


class _State(threading.local):
    def __init__(self) -> None:
        self.builders: list[ProgramBuilder] = []
        #: The name stack new equations record (transformations and scopes; reset in each traced sub-program).
        self.name_stack: tuple = ()
        #: The source new equations record instead of the Python stack's: set while an equation is bound
        #: again by a transformation, so what it makes points at the user's line that made the original.
        self.source: SourceInfo | None = None
        #: The ``toolkit.compute_on`` type new equations record (None: the default), as JAX's eqn contexts.
        self.compute_type: str | None = None
        #: Inside ``ensure_compile_time_eval``: primitives on concrete values run eagerly even while tracing
        #: (JAX's ``eager_constant_folding`` flag).
        self.compile_time_eval = False


_state = _State()


class _SourceContext:
    """Sets the name stack, source and compute type new equations record, and restores them on exit."""

    __slots__ = ("name_stack", "source", "compute_type", "_saved")

    def __init__(self, name_stack: tuple, source: SourceInfo | None, compute_type: str | None):
        self.name_stack = name_stack
        self.source = source
        self.compute_type = compute_type

    def __enter__(self) -> None:
        state = _state
        self._saved = (state.name_stack, state.source, state.compute_type)
        state.name_stack, state.source, state.compute_type = self.name_stack, self.source, self.compute_type

    def __exit__(self, *exc: Any) -> None:
        _state.name_stack, _state.source, _state.compute_type = self._saved


def transform_name_stack(name: str) -> _SourceContext:
    """Equations made inside are under the transformation ``name`` (``jvp``, ``transpose``, ``vmap``), as JAX's
    ``source_info_util.transform_name_stack``: their ops are named ``.../name(...)/primitive``."""
    return _SourceContext(_state.name_stack + (Transform(name),), _state.source, _state.compute_type)


def compute_type_context(compute_type: str | None) -> _SourceContext:
    """Equations made inside record ``compute_type`` (``toolkit.compute_on``'s; None leaves the current one)."""
    return _SourceContext(_state.name_stack, _state.source, compute_type or _state.compute_type)


def current_compute_type() -> str | None:
    """The ``toolkit.compute_on`` type equations made now record (None: the default)."""
    return _state.compute_type


def current_source_override() -> SourceInfo | None:
    """The source equations made now record instead of the stack's (inside ``equation_context``), if any."""
    return _state.source


def equation_context(source: SourceInfo | None, *transforms: str) -> _SourceContext:
    """Where equations made while an equation traced at ``source`` is bound again are located.

    They record ``source``'s frames (the user's line that made the original
    equation, not the transformation's caller) and the current name stack,
    then ``transforms`` (outermost first), then ``source``'s own name stack --
    JAX's ``user_context`` as its interpreters use it. A ``source`` of None
    changes only the name stack.
    """
    stack = _state.name_stack
    if transforms:
        stack = stack + tuple(Transform(t) for t in transforms)
    if source is None:
        return _SourceContext(stack, _state.source, _state.compute_type)
    if source.name_stack:
        stack = stack + source.name_stack
    # The equation's compute type comes back with it (JAX re-enters eqn.ctx when it binds an equation again).
    return _SourceContext(stack, source if source.file else _state.source, source.compute_type or _state.compute_type)


class NameScope:
    """``named_scope(name)``'s context manager and decorator (JAX's ``ExtendNameStackContextManager``).

    Entering pushes the scope ``name`` on the name stack equations record (their ops
    are named ``.../name/primitive``); exiting restores the stack. Called with a
    function, returns a function that runs it inside the scope.
    """

    __slots__ = ("name", "_saved")

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        state = _state
        self._saved = state.name_stack
        state.name_stack = state.name_stack + (Scope(self.name),)

    def __exit__(self, *exc: Any) -> None:
        _state.name_stack = self._saved

    def __call__(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        name = self.name

        @functools.wraps(fun)
        def scoped(*args: Any, **kwargs: Any) -> Any:
            with NameScope(name):
                return fun(*args, **kwargs)
        return scoped


def named_scope(name: str) -> NameScope:
    """A context manager (or decorator) naming the ops traced inside it, as ``jax.named_scope``.

    Ops made inside ``with named_scope("outer"):`` are located at
    ``loc("jit(f)/outer/<primitive>")`` in the lowered module and carry the HLO
    ``op_name`` metadata ``jit(f)/outer/<primitive>``; scopes nest
    (``outer/inner``) and transformations wrap them (``jvp(outer)``,
    ``transpose(jvp(outer))``, ``vmap(outer)``). Outside a trace it has no effect.
    Raises ``TypeError`` when ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return NameScope(name)


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` run inside ``named_scope(name)`` (default: ``fun.__name__``), as ``jax.named_call``.

    As in JAX 0.10, the call is not a separate sub-computation: its ops are
    inlined into the caller's and named ``.../name/<primitive>``. Raises
    ``TypeError`` when ``fun`` is not callable, or when ``name`` is given and is
    not a string, or is omitted and ``fun`` has no ``__name__``.
    """
    if not callable(fun):
        raise TypeError(f"named_call: expected a callable, got {type(fun).__name__}")
    if name is None:
        name = getattr(fun, "__name__", None)
        if not isinstance(name, str):
            raise TypeError(f"named_call: {fun!r} has no __name__; pass name=")
    elif not isinstance(name, str):
        raise TypeError(f"named_call: name must be a string, got {type(name).__name__}")
    return NameScope(name)(fun)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside it, primitives whose inputs are all concrete run eagerly even while tracing, as
    ``jax.ensure_compile_time_eval``.

    Under ``jit``, ``tnp.sin(2.0)`` inside it is a concrete ``Array`` (usable in
    Python control flow and as a static shape); values derived from the traced
    function's inputs still trace. Constants the trace would capture
    (numpy arrays made arrays) count as concrete. Thread-local; nests.
    """
    state = _state
    saved, state.compile_time_eval = state.compile_time_eval, True
    try:
        yield
    finally:
        state.compile_time_eval = saved


def current_name_stack() -> tuple:
    """The name stack equations made now record (a tuple of ``Scope``/``Transform``)."""
    return _state.name_stack


def current_builder() -> "ProgramBuilder | None":
    builders = _state.builders
    return builders[-1] if builders else None


def is_tracing() -> bool:
    return bool(_state.builders)


class ProgramBuilder:
    """Records equations while a function is traced; ``build`` makes the ``Program``."""

    def __init__(self, parent: "ProgramBuilder | None" = None, interpreted: bool = False, concrete: bool = False):
        self.parent = parent
        self.interpreted = interpreted  # the program is run by grad's or vmap's interpreter (compiled_whole reads it)
        #: A concrete trace: each equation whose inputs are all known is also run eagerly, so its outputs carry
        #: their values (Python control flow and data-dependent sizes follow them, as in JAX's eager grad).
        self.concrete = concrete
        self.root: ProgramBuilder = self if parent is None else parent.root
        #: The root's: ``id`` of the frame that runs the traced function (where source info stops
        #: collecting callers; the frame is alive while its trace records equations).
        self.entry_frame: int | None = None
        #: The builder whose trace started where this one's source frames stop (the root, or the nearest
        #: ``frames_root`` trace: a nested jit's ops name the frames inside it, as JAX's).
        self.frames_root: ProgramBuilder = self if parent is None else parent.frames_root
        #: The frames_root's: the user's frames outside its trace (None until first needed).
        self.outer_frames: tuple[SourceInfo, ...] | None = None
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
        #: Whether ``ensure_compile_time_eval`` ran a primitive eagerly here: constants made for it and then
        #: computed with eagerly may be unused, and ``build`` drops them.
        self.folded = False

    def __enter__(self) -> "ProgramBuilder":
        _state.builders.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        popped = _state.builders.pop()
        assert popped is self

    # -- inputs ---------------------------------------------------------------
    def new_input(self, aval: ShapedArray, origin: str = "an argument", known: Any = None) -> Tracer:
        var = Var(aval)
        self.invars.append(var)
        return Tracer(self, var, origin, known if self.concrete else None)

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
            inner = Tracer(self, var, outer._origin, known_value(outer) if self.concrete else None)
            self._captured[id(outer)] = inner
            self.captured_outer.append(outer)
        return inner

    def _constant(self, value: Any) -> Tracer:
        tracer = self._const_ids.get(id(value))
        if tracer is None:
            var = Var(aval_of(value).strip_weak_type() if not dtypes.is_python_scalar(value) else aval_of(value))
            if var.aval is abstract_token:  # a Token lowers to a fresh token (toolkit.lowering.lower): the
                value.block_until_ready()  # program comes after what made it, as a token argument's would
            self.constvars.append(var)
            if isinstance(value, np.ndarray) and value.dtype != var.aval.dtype:
                # A captured float64 constant is float32 with x64 off (JAX); the original keeps its id taken.
                self._const_sources.append(value)
                value = value.astype(var.aval.dtype)
            self.consts.append(value)
            tracer = Tracer(self, var, _constant_origin(value), value if self.concrete else None)
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
        state = _state
        info = state.source if state.source is not None else user_source_info(self)
        if state.name_stack or state.compute_type or (info is not None and (info.name_stack or info.compute_type)):
            info = with_name_stack(info, state.name_stack, state.compute_type)
        eqn = Equation(primitive, atoms, outs, params, info)
        self.eqns.append(eqn)
        if self.concrete:
            return self._known_outputs(eqn, args)
        return [Tracer(self, v, eqn) for v in outs]

    def _known_outputs(self, eqn: Equation, args: Sequence[Any]) -> list[Tracer]:
        """``eqn``'s output tracers with their values: the primitive run eagerly when all its inputs are known.
        Effects (callbacks, prints) are not run here: the program runs them once, when it is evaluated."""
        values = [known_value(a) for a in args]
        if any(v is None for v in values) or eqn.primitive.effectful or \
                any(e.primitive.effectful for sub in subprograms(eqn) for e in sub.walk()):
            return [Tracer(self, v, eqn) for v in eqn.outputs]
        results = _bind_at_compile_time(eqn.primitive, values, eqn.params)
        return [Tracer(self, v, eqn, r) for v, r in zip(eqn.outputs, results)]

    def build(self, outputs: Sequence[Any]) -> Program:
        """The program computing ``outputs``; captured outer values become trailing inputs."""
        out_atoms = [self.to_atom(o) for o in outputs]
        constvars, consts = self.constvars, self.consts
        if self.folded:
            constvars, consts = self._drop_unused_constants(out_atoms)
        invars = self.invars + [self._captured[id(t)]._var for t in self.captured_outer]
        self.finished = True
        return Program(constvars, consts, invars, out_atoms, self.eqns,
                       source_info=self._trace_source() if self.frames_root is self else None)

    def _drop_unused_constants(self, out_atoms: Sequence[Var | Literal]) -> tuple[list[Var], list[Any]]:
        """The constants an equation or output uses; captured constants no equation uses are no longer
        captured (``ensure_compile_time_eval`` computed with them eagerly)."""
        used = {id(a) for eqn in self.eqns for a in eqn.inputs}
        used.update(id(a) for a in out_atoms)
        self.captured_outer = [t for t in self.captured_outer
                               if id(self._captured[id(t)]._var) in used or type(t._origin) is not _ConstantOrigin]
        kept = [(v, c) for v, c in zip(self.constvars, self.consts) if id(v) in used]
        return [v for v, _ in kept], [c for _, c in kept]

    def _trace_source(self) -> SourceInfo | None:
        """Where this (root) trace was started: the user's frames outside it, as a chain (or None)."""
        outer = self.outer_frames
        if outer is None and self.entry_frame is not None:
            frame: FrameType | None = sys._getframe()
            while frame is not None and id(frame) != self.entry_frame:
                frame = frame.f_back
            outer = collect_outer(self, frame) if frame is not None else ()
        return chain([], outer) if outer else None


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
    """Install how a traceable function runs outside a trace (``toolkit.stages`` installs ``jit(fun)(*args)``):
    ops whose eager form is a whole program call :func:`eager_call`, so ``lax`` never imports ``stages``."""
    global _eager_call_handler
    _eager_call_handler = handler


def eager_call(fun: Callable[..., Any], *args: Any) -> Any:
    """Run ``fun(*args)`` outside any trace, compiled as a whole by the installed handler; a closure equal to
    one run before is that one (``eager_functions.stable``), so its trace and executable are found again."""
    if _eager_call_handler is None:
        raise RuntimeError("no eager call handler installed; import toolkit")
    return _eager_call_handler(eager_functions.stable(fun), *args)


def values_visible() -> bool:
    """Whether arguments' values can be seen here, as JAX's eager transformations see them: outside every trace,
    or inside a concrete one (an eager ``grad`` of a ``grad``). Under ``jit`` and ``vmap`` they cannot."""
    builder = current_builder()
    return builder is None or builder.concrete


def known_value(x: Any) -> Any:
    """The value ``x`` stands for: ``x`` itself when it is not a tracer, a tracer's value in a concrete trace
    (see :class:`Tracer`), else None. What JAX's ``concrete_or_error`` reads."""
    return x._known if isinstance(x, Tracer) else x


def concrete_args(args: Sequence[Any]) -> list[Any] | None:
    """``args`` with tracers of constants replaced by the constants; None when one is a traced value."""
    concrete = list(args)
    for i, a in enumerate(args):
        if isinstance(a, Tracer):
            origin = a._origin
            if type(origin) is not _ConstantOrigin:
                return None
            concrete[i] = origin.value
    return concrete


def _bind_at_compile_time(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Run ``primitive`` eagerly on concrete ``args`` while a trace is active (``ensure_compile_time_eval``):
    outside every trace, as JAX binds it with its eval trace (and without the flag, as its primitive callables)."""
    if _eager_handler is None:
        raise RuntimeError("no eager handler installed; import toolkit")
    state = _state
    saved = (state.builders, state.name_stack, state.source, state.compute_type, state.compile_time_eval)
    state.builders, state.name_stack, state.source, state.compute_type, state.compile_time_eval = \
        [], (), None, None, False
    try:
        return _eager_handler(primitive, args, params)
    finally:
        state.builders, state.name_stack, state.source, state.compute_type, state.compile_time_eval = saved


def bind(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    builders = _state.builders
    if not builders:  # outside every trace (eager): checked first, it is the op-by-op hot path
        for a in args:
            if isinstance(a, Tracer):
                raise UnexpectedTracerError(f"{a._describe()} escaped its trace and was passed to "
                                            f"`{primitive.name}` outside any traced function (a leaked tracer).")
        if _eager_handler is None:
            raise RuntimeError("no eager handler installed; import toolkit")
        outs = _eager_handler(primitive, args, params)
        return outs if primitive.multiple_results else outs[0]
    builder = builders[-1]
    if _state.compile_time_eval:
        concrete = concrete_args(args)
        if concrete is not None:
            folding: ProgramBuilder | None = builder
            while folding is not None:  # the constants may be captured from the enclosing traces
                folding.folded = True
                folding = folding.parent
            outs = _bind_at_compile_time(primitive, concrete, params)
            return outs if primitive.multiple_results else outs[0]
    outs = builder.add_equation(primitive, args, params)
    return outs if primitive.multiple_results else outs[0]


def trace_flat(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray], origins: Sequence[str] | None = None,
               *, frames_root: bool = False, interpreted: bool = False,
               known: Sequence[Any] | None = None) -> tuple[Program, list[Tracer]]:
    """Trace ``fun(*tracers) -> flat outputs`` into a program.

    Inside another trace the result is a sub-program whose trailing inputs stand for the returned list of
    captured outer tracers. ``frames_root`` (a nested ``jit``'s trace): its equations' source frames stop at
    this trace, as JAX locates a nested jit's ops. ``interpreted``: an interpreter runs the program (grad's,
    vmap's traces) instead of lowering it. The program's ``source_info`` (root traces) is where it started.
    ``known``: the values the inputs stand for (None where unknown): a concrete trace (see :class:`Tracer`),
    whose program is the path those values take."""
    builder = ProgramBuilder(current_builder(), interpreted, concrete=known is not None)
    if builder.parent is None or frames_root:
        builder.entry_frame = id(sys._getframe())
        builder.frames_root = builder
        if builder.parent is not None:
            builder.outer_frames = ()  # a nested jit's ops name the frames inside it (JAX's do)
    # A sub-program's equations are named relative to it (the lowering prefixes its region's name), as JAX
    # resets the name stack for every jaxpr it traces.
    saved, _state.name_stack = _state.name_stack, ()
    try:
        with builder:
            tracers = [builder.new_input(a, origins[i] if origins else "an argument", known[i] if known else None)
                       for i, a in enumerate(in_avals)]
            outs = fun(*tracers)
            program = builder.build(list(outs))
    finally:
        _state.name_stack = saved
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
