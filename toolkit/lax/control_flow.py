"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop`` and ``scan``,
and ``jax.lax``'s ``associative_scan`` and ``map`` built on them.

The user's Python callables are traced once into sub-programs (carried in the
equation's parameters), so the loop or branch is one equation of the program
and lowers to one ``stablehlo.while`` / ``stablehlo.case`` — Python never
unrolls it. Operands and carries are pytrees (``toolkit.core.pytrees``);
outer traced values a branch or body uses are passed as extra operands.

Example::

    def newton_sqrt(a):
        def body(x):
            return 0.5 * (x + a / x)
        return toolkit.lax.fori_loop(0, 20, lambda i, x: body(x), a)
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes, tracing
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.program import Program, Var
from toolkit.core.shape_poly import is_symbolic_dim
from toolkit.lax import body_traces, elementwise
from toolkit.lax import structural
from toolkit.core import sharding_types

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("control_flow")

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "associative_scan", "map", "cond_p", "while_p",
           "scan_p"]


# --- shared helpers -------------------------------------------------------------


def _leaf_aval(x: Any, what: str) -> ShapedArray:
    try:
        return aval_of(x)
    except TypeError:
        raise TypeError(f"{what} must be an array, a numpy value or a Python scalar, "
                        f"got a value of type {type(x).__name__}: {x!r}") from None


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal up to weak typing (a weak and a strong f32[] lower to the same MLIR type)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _leaf_paths(tree: pytrees.PyTreeDef, prefix: str) -> list[str]:
    """``prefix`` plus the key path of every leaf of ``tree`` (for error messages)."""
    dummy = pytrees.structure_of(tree, [0] * tree.num_leaves)
    return [prefix + pytrees.keystr(path) for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]


def _trace_tree_fun(fun: Callable[..., Any], in_tree: pytrees.PyTreeDef, in_avals: Sequence[ShapedArray],
                    what: str, user_fun: Callable[..., Any] | None = None
                    ) -> tuple[Program, list[Any], pytrees.PyTreeDef]:
    """Trace ``fun(*args)`` where ``args`` is the tuple ``in_tree`` describes; flat outputs + their tree.

    The trace is kept for ``user_fun`` (default ``fun``: the user's function ``fun`` wraps, if it does) and
    found again by the next trace of it in the same context (``toolkit.lax.body_traces``)."""
    # A wrapper's trace (scan's pair check) is its own: the same function traced plainly may differ in its output tree.
    key = body_traces.context_key(in_tree, tuple(in_avals)) + ((what,) if user_fun is not None else ())
    found = body_traces.find(user_fun or fun, key)
    if found is not None:
        (program, out_tree), captured = found
        return program, captured, out_tree
    out_tree_box: list[pytrees.PyTreeDef] = []

    def flat_fun(*tracers: Any) -> list[Any]:
        args = pytrees.tree_unflatten(in_tree, list(tracers))
        out = fun(*args)
        leaves, out_tree = pytrees.tree_flatten(out)
        out_tree_box.append(out_tree)
        for i, leaf in enumerate(leaves):
            if not (isinstance(leaf, (tracing.Tracer, np.ndarray, np.generic)) or dtypes.is_python_scalar(leaf)
                    or hasattr(leaf, "aval")):
                raise TypeError(f"{what} returned a value of type {type(leaf).__name__} at output leaf {i}; "
                                "it must return arrays (or pytrees of them)")
        return leaves

    program, captured = tracing.trace_flat(flat_fun, list(in_avals), [f"an input of {what}"] * len(in_avals))
    body_traces.keep(user_fun or fun, key, (program, out_tree_box[0]), list(captured))
    return program, list(captured), out_tree_box[0]


def common_captured(traced: Sequence[tuple[Program, list[Any]]],
                    num_explicit: int | Sequence[int]) -> tuple[list[Program], list[Any]]:
    """Give every program the same trailing inputs: the union of what each captured.

    ``traced`` holds ``trace_flat`` results; ``num_explicit`` is the number of
    explicit inputs of every program, or one count per program. A program
    receives an unused input for an outer value only another one uses.
    """
    counts = [num_explicit] * len(traced) if isinstance(num_explicit, int) else list(num_explicit)
    union: list[Any] = []
    seen: dict[int, int] = {}
    for _, captured in traced:
        for t in captured:
            if id(t) not in seen:
                seen[id(t)] = len(union)
                union.append(t)
    programs = []
    for (program, captured), count in zip(traced, counts):
        own = {id(t): v for t, v in zip(captured, program.invars[count:])}
        extra = [own[id(t)] if id(t) in own else Var(t.aval) for t in union]
        if extra == program.invars[count:]:  # its inputs already: the program itself (a kept body stays one object)
            programs.append(program)
            continue
        programs.append(Program(program.constvars, program.consts, program.invars[:count] + extra,
                                program.outvars, program.eqns))
    return programs, union


def _describe_avals(avals: Sequence[ShapedArray]) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


# --- cond / switch --------------------------------------------------------------


def _cond_rule(index: ShapedArray, *operands: ShapedArray, branches: tuple) -> list[ShapedArray]:
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise ValueError("cond: needs at least one branch")
    for k, branch in enumerate(branches):
        if len(branch.invars) != len(operands) or not all(
                _types_match(a, b) for a, b in zip(operands, branch.in_avals)):
            raise TypeError(f"cond: branch {k} takes {_describe_avals(branch.in_avals)} but the operands are "
                            f"{_describe_avals(operands)}")
    outs = branches[0].out_avals
    for k, branch in enumerate(branches[1:], 1):
        if len(branch.outvars) != len(outs) or not all(_types_match(a, b) for a, b in zip(outs, branch.out_avals)):
            raise TypeError(f"cond: branch {k} returns {_describe_avals(branch.out_avals)} but branch 0 returns "
                            f"{_describe_avals(outs)}")
    return [a.update(weak_type=all(b.out_avals[i].weak_type for b in branches)) for i, a in enumerate(outs)]


cond_p = family.primitive("cond", shape_rule=_cond_rule, multiple_results=True)


def _trace_branches(branches: Sequence[Callable[..., Any]], names: Sequence[str], operands: tuple,
                    mismatch_message: str) -> tuple[list[Any], pytrees.PyTreeDef]:
    """Trace every branch on ``operands``, check they agree and bind ``cond_p`` (index added by the caller)."""
    leaves, in_tree = pytrees.tree_flatten(operands)
    avals = [_leaf_aval(x, "an operand of cond/switch") for x in leaves]
    traced, out_trees = [], []
    for branch, name in zip(branches, names):
        if not callable(branch):
            raise TypeError(f"{name} must be callable, got {type(branch).__name__}")
        program, captured, out_tree = _trace_tree_fun(branch, in_tree, avals, name)
        traced.append((program, captured))
        out_trees.append(out_tree)
    for k in range(1, len(traced)):
        if out_trees[k] != out_trees[0]:
            raise TypeError(f"{mismatch_message} output must have same type structure, got {out_trees[0]} "
                            f"from {names[0]} and {out_trees[k]} from {names[k]}")
        first, other = traced[0][0].out_avals, traced[k][0].out_avals
        paths = _leaf_paths(out_trees[0], "output")
        for path, a, b in zip(paths, first, other):
            if not _types_match(a, b):
                raise TypeError(f"{mismatch_message} output must have identical types: {path} is "
                                f"{a.str_short()} in {names[0]} but {b.str_short()} in {names[k]}")
    programs, captured = common_captured(traced, len(leaves))
    return [tuple(programs), leaves + captured], out_trees[0]


#: ``operand=`` not given (JAX's sentinel: None is an operand like any other).
_NO_OPERAND: Any = object()


def _keyword_operand(operands: tuple, operand: Any) -> tuple:
    """The operands of ``cond``/``switch`` given JAX's backward-compatible ``operand=`` keyword."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, got "
                        f"operand={operand!r} and positional operands {operands}")
    return (operand,)


@family.function(binds=(cond_p,))
def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, decided at run time.

    ``pred`` is a boolean (or number, compared with 0) scalar. Both branches are
    traced and must return pytrees of identical structure, shapes and dtypes.
    Lowers to ``stablehlo.case``. ``operand=``: JAX's older calling convention, one (pytree) operand by
    keyword, the same as passing it positionally (with positional operands too, JAX's ``TypeError``).

    Example::

        y = toolkit.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
    """
    operands = _keyword_operand(operands, operand)
    if not tracing.is_tracing():
        return tracing.eager_call(lambda p, ops: cond(p, true_fun, false_fun, *ops), pred, operands)
    pred_aval = _leaf_aval(pred, "cond's pred")
    if pred_aval.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {pred_aval.str_short()}")
    if pred_aval.dtype != dtypes.bool_:
        if not dtypes.is_integer(pred_aval.dtype) and not dtypes.is_float(pred_aval.dtype):
            raise TypeError(f"cond: pred must be a boolean or number, got {pred_aval.str_short()}")
        pred = elementwise.ne(pred, np.zeros((), pred_aval.dtype)) if not dtypes.is_python_scalar(pred) else bool(pred)
    (branches, args), out_tree = _trace_branches([false_fun, true_fun], ["false_fun", "true_fun"], operands,
                                                 "true_fun and false_fun")
    index = elementwise.convert_element_type(pred, dtypes.int32)
    outs = cond_p.bind(index, *args, branches=branches)
    return pytrees.tree_unflatten(out_tree, outs)


@family.function(binds=(cond_p,))
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped into ``[0, len(branches) - 1]``.

    ``operand=``: as :func:`cond`'s (JAX's older convention: one operand by keyword).

    Example::

        y = toolkit.lax.switch(k, [jnp.sin, jnp.cos, jnp.tanh], x)
    """
    operands = _keyword_operand(operands, operand)
    branches = list(branches)
    if not branches:
        raise ValueError("switch: empty branches sequence")
    if not tracing.is_tracing():
        branches = tuple(branches)  # a closure of hashable values: the same branches compile once
        return tracing.eager_call(lambda i, ops: switch(i, branches, *ops), index, operands)
    index_aval = _leaf_aval(index, "switch's index")
    if index_aval.shape != ():
        raise TypeError(f"switch: the branch index must be a scalar, got {index_aval.str_short()}")
    if not dtypes.is_integer(index_aval.dtype):
        raise TypeError(f"switch: the branch index must be an integer, got {index_aval.str_short()}")
    if len(branches) == 1:
        return branches[0](*operands)
    names = [f"branches[{k}]" for k in range(len(branches))]
    (programs, args), out_tree = _trace_branches(branches, names, operands, "switch branches")
    idx = elementwise.convert_element_type(index, dtypes.int32)
    idx = elementwise.clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    outs = cond_p.bind(idx, *args, branches=programs)
    return pytrees.tree_unflatten(out_tree, outs)


# --- while_loop / fori_loop -----------------------------------------------------


def _while_rule(*operands: ShapedArray, cond_program: Program, body_program: Program, cond_nconsts: int,
                body_nconsts: int) -> list[ShapedArray]:
    carry = operands[cond_nconsts + body_nconsts:]
    body_carry = body_program.in_avals[:len(carry)]
    if len(body_program.invars) != len(carry) + body_nconsts or len(cond_program.invars) != len(carry) + cond_nconsts:
        raise TypeError("while: the body and condition programs do not match the operands")
    if len(body_program.outvars) != len(carry) or not all(
            _types_match(a, b) for a, b in zip(carry, body_program.out_avals)):
        raise TypeError(f"while: body returns {_describe_avals(body_program.out_avals)} for a carry of "
                        f"{_describe_avals(carry)}")
    if not all(_types_match(a, b) for a, b in zip(carry, body_carry)):
        raise TypeError(f"while: the body takes {_describe_avals(body_carry)} for a carry of {_describe_avals(carry)}")
    pred = cond_program.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise TypeError(f"while: the condition must return one bool scalar, got {_describe_avals(pred)}")
    return list(body_carry)


while_p = family.primitive("while", shape_rule=_while_rule, multiple_results=True)


#: At most this many traces of a loop body: a weak initial carry promoted, then made strong, then checked.
_CARRY_PASSES = 3


def _carry_mismatch(what: str, in_tree, out_tree, in_avals, out_avals, prefix: str) -> str | None:
    """A message describing how the output carry differs from the input, or None when they agree."""
    if in_tree != out_tree:
        return (f"{what} output and input must have identical types: the output pytree structure {out_tree} "
                f"differs from the input carry structure {in_tree}")
    for path, a, b in zip(_leaf_paths(in_tree, prefix), in_avals, out_avals):
        if not _types_match(a, b):
            kind = "shapes" if a.shape != b.shape else "dtypes"
            return (f"{what} output and input must have identical types: the input carry component {path} has "
                    f"type {a.str_short()} but the corresponding output carry component has type "
                    f"{b.str_short()}, so the {kind} do not match")
    return None


def _promoted(a: ShapedArray, b: ShapedArray) -> ShapedArray:
    """JAX's ``_promote_weak_typed_input``: a weakly typed initial carry (``0``) that the body's result ``b`` does not
    match in dtype takes the dtype the two promote to, strongly typed (``0`` beside a float result: float32), as
    JAX's convert_element_type of the initial value makes it."""
    if not a.weak_type or _types_match(a, b):
        return a
    dtype, _ = dtypes.result_type_with_weak((a.dtype, True), (b.dtype, b.weak_type))
    return a.update(dtype=dtype, weak_type=False)


def _next_carry_avals(what: str, in_tree: Any, out_tree: Any, avals: Sequence[ShapedArray],
                      out_avals: Sequence[ShapedArray]) -> list[ShapedArray] | None:
    """The carry types to trace the body at again, or None when its result has the carry's types. A weak initial
    value is promoted with the result's type (as JAX's); a weak one meeting a strong one of its dtype becomes
    strong; any other difference is JAX's TypeError."""
    if in_tree == out_tree:
        promoted = [_promoted(a, b) for a, b in zip(avals, out_avals)]
        if promoted != list(avals):
            return promoted
    problem = _carry_mismatch(what, in_tree, out_tree, avals, out_avals, "carry")
    if problem:
        raise TypeError(problem)
    strengthened = [a.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(avals, out_avals)]
    return None if strengthened == list(avals) else strengthened


def _cast_leaves(leaves: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    out = []
    for x, aval in zip(leaves, avals):
        x_aval = aval_of(x)
        if x_aval.weak_type != aval.weak_type or x_aval.dtype != aval.dtype:
            x = elementwise.convert_element_type(x, aval.dtype, weak_type=aval.weak_type)
        out.append(x)
    return out


@family.function(binds=(while_p,))
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``.

    ``init_val`` is a pytree; ``body_fun`` must return one of identical
    structure, shapes and dtypes, ``cond_fun`` a boolean scalar. Lowers to
    ``stablehlo.while``.

    Example::

        x = toolkit.lax.while_loop(lambda x: x < 100, lambda x: x * 2, 1)
    """
    if not tracing.is_tracing():
        return tracing.eager_call(lambda v: while_loop(cond_fun, body_fun, v), init_val)
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("while_loop: cond_fun and body_fun must be callable")
    leaves, tree = pytrees.tree_flatten(init_val)
    avals = [_leaf_aval(x, "while_loop's init_val") for x in leaves]
    args_tree = pytrees.tree_structure((init_val,))
    for _ in range(_CARRY_PASSES):
        body, body_captured, body_tree = _trace_tree_fun(body_fun, args_tree, avals, "body_fun")
        next_avals = _next_carry_avals("body_fun", tree, body_tree, avals, body.out_avals)
        if next_avals is None:
            break
        avals = next_avals  # a weak initial value met another type: retrace with the carry's settled type
    cond_program, cond_captured, _ = _trace_tree_fun(cond_fun, args_tree, avals, "cond_fun")
    pred = cond_program.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) {_describe_avals(pred)}")
    outs = while_p.bind(*cond_captured, *body_captured, *_cast_leaves(leaves, avals),
                        cond_program=cond_program, body_program=body, cond_nconsts=len(cond_captured),
                        body_nconsts=len(body_captured))
    return pytrees.tree_unflatten(tree, outs)


def _static_int(v: Any) -> int | None:
    """``v`` as a Python int when it is known while tracing (not a traced value nor a symbolic dimension)."""
    if isinstance(v, tracing.Tracer) or is_symbolic_dim(v):
        return None
    try:
        return int(v) if np.ndim(v) == 0 else None
    except (TypeError, ValueError):
        return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    As in JAX: when both bounds are known while tracing (Python or numpy
    integers), the loop is a ``scan`` of ``upper - lower`` steps whose carry is
    ``(i, val)`` (so reverse-mode differentiation works, and ``unroll`` may be
    given); otherwise (traced bounds, or a symbolic dimension) it is a
    ``while_loop`` over ``(i, upper, val)``, which only forward mode can
    differentiate.

    Example::

        total = toolkit.lax.fori_loop(0, 10, lambda i, acc: acc + i, 0)
    """
    lo_static, hi_static = _static_int(lower), _static_int(upper)
    if lo_static is not None and hi_static is not None:
        # As JAX's: known bounds of any real dtype count by int(bound) (fori_loop(0.0, 3.0, ...) runs 3 steps with
        # an int index), and an empty loop is a scan of length 0 (its result an array, like any other).
        length = max(hi_static - lo_static, 0)

        def scanned(carry: Any, _: Any) -> tuple[Any, None]:
            i, x = carry
            return (elementwise.add(i, 1), body_fun(i, x)), None

        (_, result), _ = scan(scanned, (lo_static, init_val), None, length=length,
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    if not tracing.is_tracing():
        return tracing.eager_call(lambda lo, hi, v: fori_loop(lo, hi, body_fun, v), lower, upper, init_val)
    # A symbolic bound (``x.shape[0]``) is a value computed from the argument shapes.
    lower, upper = (structural.dimension_as_value(v) if is_symbolic_dim(v) else v for v in (lower, upper))
    lo_aval, hi_aval = _leaf_aval(lower, "fori_loop's lower"), _leaf_aval(upper, "fori_loop's upper")
    for name, aval in (("lower", lo_aval), ("upper", hi_aval)):
        if aval.shape != ():  # a float bound counts in floats, as JAX's while loop over (i, upper, val) does
            raise TypeError(f"fori_loop: {name} must be a scalar, got {aval.str_short()}")
    if lo_aval.dtype != hi_aval.dtype:  # as JAX's: bounds of one dtype keep their types (a weak index stays weak)
        dtype = dtypes.promote_types(lo_aval.dtype, hi_aval.dtype)
        lower = elementwise.convert_element_type(lower, dtype)
        upper = elementwise.convert_element_type(upper, dtype)

    index_aval = _leaf_aval(lower, "fori_loop's lower")

    def body(carry):
        i, hi, val = carry
        # 1 in i's type, weak where i is (as JAX's increment): a weak float index keeps the result weak.
        one = elementwise.convert_element_type(np.ones((), index_aval.dtype), index_aval.dtype,
                                               weak_type=index_aval.weak_type)
        return elementwise.add(i, one), hi, body_fun(i, val)

    _, _, out = while_loop(lambda carry: elementwise.lt(carry[0], carry[1]), body, (lower, upper, init_val))
    return out


# --- scan -----------------------------------------------------------------------


def _scan_rule(*operands: ShapedArray, body: Program, num_carry: int, num_consts: int, length: int,
               reverse: bool, unroll: int) -> list[ShapedArray]:
    carry = operands[:num_carry]
    xs = operands[num_carry:len(operands) - num_consts]
    if len(body.invars) != len(operands):
        raise TypeError(f"scan: the body takes {len(body.invars)} inputs for {len(operands)} operands")
    for i, x in enumerate(xs):
        if x.ndim == 0 or x.shape[0] != length:
            raise TypeError(f"scan: scanned operand {i} of type {x.str_short()} needs a leading axis of size {length}")
        if not _types_match(x.update(shape=x.shape[1:]), body.in_avals[num_carry + i]):
            raise TypeError(f"scan: scanned operand {i} of type {x.str_short()} does not match the body's input "
                            f"{body.in_avals[num_carry + i].str_short()}")
    outs = body.out_avals
    if len(outs) < num_carry or not all(_types_match(a, b) for a, b in zip(carry, outs)):
        raise TypeError(f"scan: body returns {_describe_avals(outs[:num_carry])} for a carry of "
                        f"{_describe_avals(carry)}")
    ys = [ShapedArray((length,) + tuple(a.shape), a.dtype, a.weak_type) for a in outs[num_carry:]]
    return list(body.in_avals[:num_carry]) + ys


scan_p = family.primitive("scan", shape_rule=_scan_rule, multiple_results=True)


def _step_aval(aval: ShapedArray) -> ShapedArray:
    """The type of one step's slice of a scanned ``xs`` leaf: the leading dimension (and its spec entry) dropped."""
    if aval.sharding is None:
        return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)
    spec = sharding_types.spec_of(aval)[1:]
    assert sharding_types.hooks.make is not None  # installed by toolkit.shard.explicit, which made aval.sharding
    return aval.update(shape=aval.shape[1:], sharding=sharding_types.hooks.make(aval.sharding.mesh, spec))


@family.function(binds=(scan_p,))
def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns ``(carry, stacked ys)``.

    Semantics of ``jax.lax.scan``: ``xs`` is a pytree of arrays sharing a
    leading axis of size ``length`` (or ``None`` with ``length`` given);
    ``reverse=True`` walks from the end (``ys`` keep their positions).
    ``unroll`` is accepted for compatibility; the loop is always one
    ``stablehlo.while`` with a counter and dynamic slices.

    Example::

        def step(h, x):
            h = jnp.tanh(h @ W + x)
            return h, h
        h_final, hs = toolkit.lax.scan(step, h0, xs)
    """
    if not tracing.is_tracing():
        return tracing.eager_call(lambda c, x: scan(f, c, x, length=length, reverse=reverse, unroll=unroll), init, xs)
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    if not isinstance(unroll, (bool, int, np.integer)) or (not isinstance(unroll, bool) and unroll < 1):
        raise ValueError(f"scan: unroll must be a positive integer or a bool, got {unroll!r}")
    carry_leaves, carry_tree = pytrees.tree_flatten(init)
    xs_leaves, xs_tree = pytrees.tree_flatten(xs)
    carry_avals = [_leaf_aval(x, "scan's init") for x in carry_leaves]
    xs_avals = [_leaf_aval(x, "scan's xs") for x in xs_leaves]
    xs_paths = _leaf_paths(xs_tree, "xs")
    for path, a in zip(xs_paths, xs_avals):
        if a.ndim == 0:
            raise ValueError(f"scan: scanned value {path} of type {a.str_short()} is a scalar; "
                             "xs leaves need a leading axis to scan over")
    sizes = list(dict.fromkeys(a.shape[0] for a in xs_avals))  # distinct, in order (symbolic sizes don't sort)
    if len(sizes) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(f"{p} of size {a.shape[0]}" for p, a in zip(xs_paths, xs_avals)))
    if length is not None:
        length = length if is_symbolic_dim(length) else int(length)
        if sizes and sizes[0] != length:
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{sizes[0]}")
    elif sizes:
        length = sizes[0]
    else:
        raise ValueError("scan got no values to scan over and `length` not provided")
    if isinstance(unroll, bool):
        unroll = (1 if is_symbolic_dim(length) else max(length, 1)) if unroll else 1
    x_avals = [_step_aval(a) for a in xs_avals]
    args_tree = pytrees.tree_structure((init, xs))

    def pair_f(carry: Any, x: Any) -> tuple[Any, Any]:
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair (carry, y), got a value of type {type(out).__name__}")
        return tuple(out)

    for _ in range(_CARRY_PASSES):
        body, captured, out_tree = _trace_tree_fun(pair_f, args_tree, carry_avals + x_avals, "scan body", f)
        carry_out_tree, ys_tree = pytrees.treedef_children(out_tree)
        num_carry = carry_out_tree.num_leaves
        next_avals = _next_carry_avals("scan body function carry", carry_tree, carry_out_tree, carry_avals,
                                       body.out_avals[:num_carry])
        if next_avals is None:
            break
        carry_avals = next_avals
    outs = scan_p.bind(*_cast_leaves(carry_leaves, carry_avals), *xs_leaves, *captured, body=body,
                       num_carry=len(carry_leaves), num_consts=len(captured), length=length,
                       reverse=bool(reverse), unroll=int(unroll))
    carry_out = pytrees.tree_unflatten(carry_tree, outs[:len(carry_leaves)])
    ys = pytrees.tree_unflatten(ys_tree, outs[len(carry_leaves):])
    return carry_out, ys


# --- associative_scan: JAX's odd/even parallel-prefix recursion over static strided slices ----------------

def _interleave(a: Any, b: Any, axis: int) -> Any:
    """Elements of ``a`` at even and ``b`` at odd positions along ``axis`` (``a`` as long as ``b`` or one longer)."""
    a_aval, b_aval = aval_of(a), aval_of(b)
    a_len, b_len = a_aval.shape[axis], b_aval.shape[axis]
    a_pad, b_pad = [(0, 0, 0)] * a_aval.ndim, [(0, 0, 0)] * b_aval.ndim
    a_pad[axis] = (0, 1 if a_len == b_len else 0, 1)
    b_pad[axis] = (1, 0 if a_len == b_len else 1, 1)
    op = elementwise.bitwise_or if a_aval.dtype == np.bool_ else elementwise.add
    zero = np.zeros((), a_aval.dtype)
    return op(structural.pad(a, zero, a_pad), structural.pad(b, zero, b_pad))


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations ``fn(... fn(e[0], e[1]) ..., e[i])`` of the pytree ``elems`` along ``axis``.

    ``fn`` must be associative and vectorized (it combines whole slices); the
    recursion halves the axis each level (``O(log n)`` depth), as JAX's.

    Example::

        associative_scan(toolkit.lax.add, xs)            # == toolkit.lax.cumsum(xs)
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = pytrees.tree_flatten(elems)
    if not elems_flat:
        raise ValueError("lax.associative_scan: elems must contain at least one array")
    shapes = [tuple(aval_of(e).shape) for e in elems_flat]
    axis = structural.canonicalize_axis(axis, len(shapes[0]))
    if reverse:
        elems_flat = [structural.rev(e, (axis,)) for e in elems_flat]

    def combine(a_flat: list, b_flat: list) -> list:
        c = fn(pytrees.tree_unflatten(tree, a_flat), pytrees.tree_unflatten(tree, b_flat))
        return pytrees.tree_flatten(c)[0]

    num_elems = shapes[0][axis]
    if is_symbolic_dim(num_elems):
        raise NotImplementedError(f"associative scan over axis of non-constant size: {num_elems}.")
    if not all(shape[axis] == num_elems for shape in shapes[1:]):
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: {shapes})")

    def slices(elems: list, start: int, limit: int | None, stride: int = 1) -> list:
        return [structural.slice_in_dim(e, start, limit, stride, axis) for e in elems]

    def scan_(elems: list) -> list:
        n = aval_of(elems[0]).shape[axis]
        if n < 2:
            return elems
        reduced = combine(slices(elems, 0, -1, 2), slices(elems, 1, None, 2))
        odd = scan_(reduced)
        if n % 2 == 0:
            even = combine(slices(odd, 0, -1), slices(elems, 2, None, 2))
        else:
            even = combine(odd, slices(elems, 2, None, 2))
        even = [structural.concatenate([structural.slice_in_dim(e, 0, 1, axis=axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    scans = scan_(elems_flat)
    if reverse:
        scans = [structural.rev(s, (axis,)) for s in scans]
    return pytrees.tree_unflatten(tree, scans)


# --- map: a scan over the leading axis; batch_size vmaps f over chunks ------------------------------------

VmapHandler = Callable[[Callable[..., Any]], Callable[..., Any]]
#: ``toolkit.batching``'s ``vmap``, installed by it (:func:`set_vmap_handler`): ``batching`` imports
#: ``lax``, so ``lax`` reaches ``vmap`` only through this hook, as it reaches ``jit`` through the eager hooks.
_vmap_handler: VmapHandler | None = None


def set_vmap_handler(handler: VmapHandler) -> None:
    """Install how ``map(batch_size=)`` vectorizes ``f`` (``toolkit.batching`` installs its ``vmap``)."""
    global _vmap_handler
    _vmap_handler = handler


def _vmap(f: Callable[..., Any]) -> Callable[..., Any]:
    if _vmap_handler is None:
        raise RuntimeError("lax.map(batch_size=...) needs toolkit.batching's vmap; import toolkit")
    return _vmap_handler(f)


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 - jax.lax.map's name
    """``f`` applied to each slice of the pytree ``xs`` along its leading axis, stacked (a ``scan``).

    With ``batch_size``, ``f`` is vmapped over chunks of that many slices (the
    scan runs ``n // batch_size`` steps, the remainder is one extra vmapped call).

    Example::

        toolkit.lax.map(f, xs, batch_size=8)
    """
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    leaves, treedef = pytrees.tree_flatten(xs)
    if not leaves:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    n = aval_of(leaves[0]).shape[0]
    batch_size = int(batch_size)
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    batch_elems = num_batches * batch_size
    vf = _vmap(f)
    scan_ys = None
    if num_batches:
        scan_leaves = [structural.reshape(structural.slice_in_dim(leaf, 0, batch_elems),
                                          (num_batches, batch_size) + tuple(aval_of(leaf).shape[1:]))
                       for leaf in leaves]
        scan_ys = scan(lambda _, x: ((), vf(x)), (), pytrees.tree_unflatten(treedef, scan_leaves))[1]
    if num_batches == 0 or remainder:
        rest = pytrees.tree_unflatten(treedef, [structural.slice_in_dim(leaf, batch_elems, None) for leaf in leaves])
        rest_ys = vf(rest)

    def flatten(y: Any) -> Any:
        shape = tuple(aval_of(y).shape)
        return structural.reshape(y, (shape[0] * shape[1],) + shape[2:])

    if scan_ys is None:
        return rest_ys
    if remainder:
        return pytrees.tree_map(lambda y, r: structural.concatenate([flatten(y), r], 0), scan_ys, rest_ys)
    return pytrees.tree_map(flatten, scan_ys)
