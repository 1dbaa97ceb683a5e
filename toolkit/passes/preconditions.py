"""What a C++ pass needs of a module before it may run, checked so that it fails cleanly instead of crashing.

Some C++ passes in jaxlib do not report a bad input as a pass failure: they
``CHECK``-fail (abort, SIGABRT) or dereference a null pointer (SIGSEGV),
taking the whole process down. The pipeline runner
(:mod:`toolkit.passes.pipeline`) calls :func:`check` on the module right
before each top-level element that contains such a pass; a violated
precondition fails the pipeline with ``pass 'NAME' cannot run on this
module: REASON`` (a :class:`~toolkit.passes.pipeline.PipelineError`).

The table is deliberately small: only passes found to crash (by the fuzzers,
``tests/fuzz``, and by running every registered ``sdy-*`` pass on the
reproducers in ``tests/fuzz/known/``), and only the conditions that were
seen to crash them.

=========================  ============================================================  ==================
pass                       precondition                                                   crash otherwise
=========================  ============================================================  ==================
sdy-propagation-pipeline   no ``vhlo.*`` ops (e.g. after ``stablehlo-legalize-to-vhlo``)  SIGABRT (CHECK)
sdy-propagation-pipeline   an entry point: a public ``func.func @main``, or a module of   SIGABRT (CHECK
                           exactly one ``func.func``                                      "Failed to lookup
                                                                                          function: main")
sdy-propagation-pipeline   no recursion in the ``func.call`` graph                        SIGSEGV
sdy-propagation-pipeline,  every ``func.call`` calls a ``func.func`` with a body          SIGSEGV
sdy-close-shardings,       (not a declaration)
sdy-lift-inlined-meshes
stablehlo-refine-shapes    every ``reduce_scatter`` has non-empty replica groups         SIGFPE
stablehlo-legalize-to-      every ``bitcast_convert`` that changes the element width has   SIGABRT ("LLVM
linalg                     a static result                                                ERROR: could not
                                                                                          reify")
=========================  ============================================================  ==================

``sdy-close-shardings`` and ``sdy-lift-inlined-meshes`` ran cleanly on the
other inputs (no ``@main``, VHLO ops, recursion). Every other registered C++
pass ran cleanly on all of them (checked with ``toolkit-opt --list-passes``
and the cases of ``test/lit/cli/sdy_preconditions.mlir``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from jaxlib.mlir import ir

#: A precondition: returns None when it holds, else why not (one line).
Check = Callable[[ir.Operation], "str | None"]


def _top_level_ops(module: ir.Operation) -> list[ir.Operation]:
    if not module.regions or not module.regions[0].blocks:
        return []
    return [op.operation for op in module.regions[0].blocks[0].operations]


def _string_attr(op: ir.Operation, name: str) -> str | None:
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    try:
        return ir.StringAttr(attr).value
    except (ValueError, TypeError):
        return None


def _functions(module: ir.Operation) -> dict[str, ir.Operation]:
    functions: dict[str, ir.Operation] = {}
    for op in _top_level_ops(module):
        if op.name == "func.func":
            name = _string_attr(op, "sym_name")
            if name is not None:
                functions.setdefault(name, op)
    return functions


def _is_public(func: ir.Operation) -> bool:
    return _string_attr(func, "sym_visibility") in (None, "public")


def _has_body(func: ir.Operation) -> bool:
    return bool(func.regions) and len(func.regions[0].blocks) > 0


def _callee(call: ir.Operation) -> str | None:
    if "callee" not in call.attributes:
        return None
    try:
        return ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    except (ValueError, TypeError):
        return None


def _walk(op: ir.Operation, visit: Callable[[ir.Operation], bool]) -> None:
    """Call ``visit`` on every op nested in ``op`` (``op`` included) until it returns True."""

    def callback(item: ir.Operation) -> ir.WalkResult:
        return ir.WalkResult.INTERRUPT if visit(item) else ir.WalkResult.ADVANCE

    op.walk(callback, ir.WalkOrder.PRE_ORDER)


def no_vhlo_ops(module: ir.Operation) -> str | None:
    """The module holds no ``vhlo.*`` op (VHLO is a serialization format, not something passes run on)."""
    found: list[str] = []

    def visit(op: ir.Operation) -> bool:
        if op.name.startswith("vhlo."):
            found.append(op.name)
            return True
        return False

    _walk(module, visit)
    if found:
        return (f"it holds VHLO ops ({found[0]}); convert them back with vhlo-legalize-to-stablehlo first")
    return None


def has_entry_function(module: ir.Operation) -> str | None:
    """A public ``func.func @main``, or a module of exactly one ``func.func`` (what Shardy takes as the entry point).

    One public function beside private ones is not enough: Shardy then looks up ``@main`` and aborts.
    """
    functions = _functions(module)
    public = [name for name, func in functions.items() if _is_public(func)]
    if "main" in public or (len(functions) == 1 and len(public) == 1):
        return None
    if "main" in functions:
        return "its func.func @main is not public (Shardy needs a public @main or a single function)"
    if not public:
        return "it has no public func.func (Shardy needs a public func.func @main)"
    return (f"it has {len(functions)} functions and none is a public @main "
            "(Shardy needs a public func.func @main or a single function)")


def _call_graph(module: ir.Operation) -> tuple[dict[str, ir.Operation], dict[str, list[str]]]:
    functions = _functions(module)
    edges: dict[str, list[str]] = {}
    for name, func in functions.items():
        callees: list[str] = []

        def visit(op: ir.Operation) -> bool:
            if op.name == "func.call":
                callee = _callee(op)
                if callee is not None:
                    callees.append(callee)
            return False

        _walk(func, visit)
        edges[name] = callees
    return functions, edges


def no_recursive_calls(module: ir.Operation) -> str | None:
    """No function reaches itself through ``func.call`` ops."""
    _, edges = _call_graph(module)
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    for root in edges:
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = [root]
        state[root] = 1
        while stack:
            name, index = stack[-1]
            callees = edges.get(name, [])
            if index == len(callees):
                stack.pop()
                path.pop()
                state[name] = 2
                continue
            stack[-1] = (name, index + 1)
            callee = callees[index]
            if state.get(callee) == 1:
                cycle = path[path.index(callee):] + [callee]
                return "its func.call graph is recursive (" + " -> ".join(f"@{n}" for n in cycle) + ")"
            if callee in edges and not state.get(callee):
                state[callee] = 1
                stack.append((callee, 0))
                path.append(callee)
    return None


def calls_have_bodies(module: ir.Operation) -> str | None:
    """Every ``func.call`` calls a ``func.func`` of the module that has a body (not a declaration)."""
    functions, edges = _call_graph(module)
    for caller, callees in edges.items():
        for callee in callees:
            func = functions.get(callee)
            if func is None:
                return f"@{caller} calls @{callee}, which is not a func.func of the module"
            if not _has_body(func):
                return f"@{caller} calls @{callee}, a declaration without a body"
    return None


def _element_width(type_: ir.Type) -> int | None:
    if not isinstance(type_, ir.ShapedType):
        return None
    element = type_.element_type
    for kind in (ir.IntegerType, ir.FloatType):
        if isinstance(element, kind):
            return element.width
    return None


def bitcasts_reifiable(module: ir.Operation) -> str | None:
    """Every ``stablehlo.bitcast_convert`` that changes the element width has a static result shape.

    stablehlo-legalize-to-linalg cannot compute (reify) the result shape of such a bitcast
    and aborts with ``LLVM ERROR: could not reify``.
    """
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> bool:
        if op.name != "stablehlo.bitcast_convert" or len(op.operands) != 1 or len(op.results) != 1:
            return False
        result_type = op.results[0].type
        source_width, result_width = _element_width(op.operands[0].type), _element_width(result_type)
        static = isinstance(result_type, ir.RankedTensorType) and result_type.has_static_shape
        if source_width is not None and result_width is not None and source_width != result_width \
                and not static:
            found.append(op)
            return True
        return False

    _walk(module, visit)
    if found:
        op = found[0]
        return (f"a stablehlo.bitcast_convert at {op.location} changes the element width "
                f"({op.operands[0].type} -> {op.results[0].type}) into a dynamic shape; refine its shape first")
    return None


def reduce_scatters_have_groups(module: ir.Operation) -> str | None:
    """Every ``stablehlo.reduce_scatter`` has non-empty replica groups.

    The C++ ``stablehlo-refine-shapes`` divides the scattered dimension by the group size and dies
    of SIGFPE when the groups are empty (``dense<0> : tensor<1x0xi64>``).
    """
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> bool:
        if op.name == "stablehlo.reduce_scatter" and "replica_groups" in op.attributes:
            groups = op.attributes["replica_groups"]
            shape = groups.type.shape if isinstance(groups, ir.DenseElementsAttr) else None
            if shape is not None and (len(shape) != 2 or 0 in shape):
                found.append(op)
                return True
        return False

    _walk(module, visit)
    if found:
        return f"the stablehlo.reduce_scatter at {found[0].location} has empty replica groups"
    return None


#: pass name -> the preconditions checked before it runs, in order.
PRECONDITIONS: dict[str, tuple[Check, ...]] = {
    "sdy-propagation-pipeline": (no_vhlo_ops, has_entry_function, no_recursive_calls, calls_have_bodies),
    "sdy-close-shardings": (calls_have_bodies,),
    "sdy-lift-inlined-meshes": (calls_have_bodies,),
    "stablehlo-legalize-to-linalg": (bitcasts_reifiable,),
    "stablehlo-refine-shapes": (reduce_scatters_have_groups,),
}


def needs_check(pass_names: Iterable[str]) -> bool:
    """Whether any of ``pass_names`` has preconditions."""
    return any(name in PRECONDITIONS for name in pass_names)


def check(pass_names: Iterable[str], module: ir.Operation) -> tuple[str, str] | None:
    """``(pass name, reason)`` of the first violated precondition of ``pass_names`` on ``module``, or None."""
    for name in dict.fromkeys(pass_names):
        for precondition in PRECONDITIONS.get(name, ()):
            reason = precondition(module)
            if reason is not None:
                return name, reason
    return None
