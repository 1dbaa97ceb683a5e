"""The calling convention of an exported module's ``@main`` (JAX's versions 9 and 10).

An exported module is called with, in order (JAX's convention):

1. the **platform index** — a ``tensor<i32>`` argument, present when the
   module was exported for more than one platform; its value is the position
   of the running platform in ``Exported.platforms``. It carries the
   attribute ``jax.global_constant = "_platform_index"``;
2. the **token arguments** — one ``!stablehlo.token`` per ordered effect;
3. the **array arguments** — one per index in ``Exported.module_kept_var_idx``
   (unused inputs were dropped).

It returns the token results (one per ordered effect), then one array per
flat output. Dimension variables are *not* arguments of ``@main``: when the
input shapes are symbolic (or there are ordered effects) the lowered function
is renamed to a private ``@_wrapped_jax_export_main`` taking ``[platform
index][dimension variables][tokens][arrays]`` (each dimension variable an
``i64``/``i32`` scalar marked ``jax.global_constant = "<name>"``) and a new
public ``@main`` computes the dimension variables from the array arguments'
shapes (``stablehlo.get_dimension_size``), checks the shape assertions and
calls it. The module also carries ``jax.uses_shape_polymorphism`` (true when
``@main`` needs shape refinement: symbolic shapes or a platform index),
``mhlo.num_partitions``/``mhlo.num_replicas``, ``jax.result_info`` on the
results and ``mhlo.sharding`` (or Shardy) annotations on sharded values.

Versions 9 and 10 produce **the same module** (checked against JAX 0.10.2):
version 9 (JAX 0.4.20, default from February 2024) introduced effects tokens
and the ``jax.global_constant`` marking; version 10 (default from JAX 0.6/
0.7, supported by ``tf.XlaCallModule`` since 20 May 2025) tells the consumer
to honour the exporter's choice of Shardy for sharding (``sdy`` dialect
annotations and meshes in the module) instead of assuming GSPMD. See
``docs/calling-conventions.md``.

Example::

    sig = main_signature(module)
    print(sig.describe())
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from toolkit.core import shape_poly
from toolkit.core.avals import ShapedArray
from toolkit.ir.context import shared_context
from toolkit.lowering import dims

#: Name the lowered function takes when a wrapper ``@main`` is added.
WRAPPED_MAIN_NAME = "_wrapped_jax_export_main"
#: ``jax.global_constant`` value marking the platform-index argument.
PLATFORM_INDEX_NAME = "_platform_index"
#: Default calling convention ``export`` writes (JAX 0.10.2's default).
DEFAULT_CALLING_CONVENTION_VERSION = 10

#: What each supported version means, for documentation and ``toolkit export inspect``.
CONVENTION_DESCRIPTIONS = {
    9: ("platform index, dimension variables (wrapped main), effect tokens; platform index and dimension "
        "variables marked jax.global_constant; shardings read as GSPMD (mhlo.sharding)"),
    10: ("same module as version 9; the consumer also honours the exporter's Shardy choice "
         "(sdy meshes/shardings in the module) instead of assuming GSPMD"),
}

#: Computes the values of ``dim_vars`` (``i64`` or ``i32`` scalar tensors, one per
#: name, in order) from the array arguments of the new ``@main``, emitting ops at
#: the current insertion point; may also emit shape assertions.
DimVarsHook = Callable[[Sequence[str], Sequence[ir.Value], Sequence[ShapedArray]], Sequence[ir.Value]]


def all_dim_vars(avals: Sequence[ShapedArray]) -> list[str]:
    """The dimension variables of ``avals``' symbolic shapes, sorted (JAX's order)."""
    names: set[str] = set()
    for aval in avals:
        for d in aval.shape:
            if shape_poly.is_symbolic_dim(d):
                names |= d.get_vars()
    return sorted(names)


def needs_wrapper(in_avals: Sequence[ShapedArray], nr_ordered_effects: int) -> bool:
    """Whether ``export`` wraps ``@main`` (symbolic input shapes or ordered effects), as JAX does."""
    return bool(all_dim_vars(in_avals)) or nr_ordered_effects > 0


class _PortableDimOps(dims.MlirDimOps):
    """Dimension arithmetic that JAX's C++ shape refinement can fold, as JAX's own wrapper emits it.

    jaxlib's ``refine_polymorphic_shapes`` does not fold ``stablehlo.xor``,
    which ``MlirDimOps.floordiv`` uses to compare signs; JAX compares
    ``stablehlo.sign`` values instead (``jnp.floor_divide``), so exported
    modules use that form: JAX must be able to call them.
    """

    def floordiv(self, x: ir.Value, y: ir.Value) -> ir.Value:
        quotient = stablehlo.DivOp(x, y).result
        signs_differ = stablehlo.CompareOp(
            stablehlo.SignOp(x).result, stablehlo.SignOp(y).result,
            stablehlo.ComparisonDirectionAttr.get("NE"), compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
        inexact = stablehlo.CompareOp(
            stablehlo.RemOp(x, y).result, dims.i64_constant(0), stablehlo.ComparisonDirectionAttr.get("NE"),
            compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
        adjust = stablehlo.AndOp(signs_differ, inexact).result
        return stablehlo.SelectOp(adjust, stablehlo.SubtractOp(quotient, dims.i64_constant(1)).result,
                                  quotient).result


def dim_vars_from_shapes(dim_vars: Sequence[str], array_args: Sequence[ir.Value],
                         avals: Sequence[ShapedArray], arg_names: Sequence[str] | None = None) -> list[ir.Value]:
    """Default :data:`DimVarsHook`: solve the dimension variables from the inputs' shapes, as JAX's wrapper does.

    Uses the one solver, ``toolkit.core.shape_poly.solve_dim_vars`` (variables come from
    dimensions linear in one unknown, ``b``, ``2*b + 1``, ``a + b`` once ``a`` is known), and
    emits each of its checks — exact divisions, ``b >= 1``, the dimensions not used to solve,
    the scope's constraints — as a ``shape_assertion``. Values are ``tensor<i64>``;
    :func:`wrap_main` converts to the type the wrapped function declares.
    """
    names = list(arg_names) if arg_names is not None else [f"args[{i}]" for i in range(len(avals))]
    solution = shape_poly.solve_dim_vars(avals, names)
    i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
    sizes = {name: stablehlo.convert(i64, stablehlo.get_dimension_size(array_args[arg], axis))
             for name, arg, axis in solution.dimensions}
    ops = _PortableDimOps()
    for check in solution.checks:
        predicate = stablehlo.CompareOp(
            shape_poly.evaluate_dim(check.left, sizes, ops), shape_poly.evaluate_dim(check.right, sizes, ops),
            stablehlo.ComparisonDirectionAttr.get("EQ" if check.comparison == "==" else "GE"),
            compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
        message, values = check.message_template(sizes, ops)
        dims.shape_assertion(predicate, message, values)
    dim_values = solution.evaluate(sizes, ops)
    return [dim_values[name] for name in dim_vars]


@dataclasses.dataclass(frozen=True)
class MainArgument:
    """One argument or result of an exported ``@main``.

    ``kind`` is ``"platform_index"``, ``"dim_var"``, ``"token"`` or ``"array"``;
    ``name`` is the ``jax.global_constant`` name or the ``jax.result_info``
    path; ``sharding`` the ``mhlo.sharding``/``sdy.sharding`` text or None.
    """

    kind: str
    type: str
    name: str | None = None
    sharding: str | None = None

    def __str__(self) -> str:
        extras = [f"{self.kind}"]
        if self.name:
            extras.append(repr(self.name))
        if self.sharding:
            extras.append(f"sharding={self.sharding}")
        return f"{self.type} ({', '.join(extras)})"


@dataclasses.dataclass(frozen=True)
class MainSignature:
    """What ``@main`` of an exported module takes and returns, classified by the calling convention."""

    arguments: tuple[MainArgument, ...]
    results: tuple[MainArgument, ...]
    wrapped: bool
    module_attributes: tuple[tuple[str, str], ...]

    @property
    def has_platform_index(self) -> bool:
        return any(a.kind == "platform_index" for a in self.arguments)

    @property
    def nr_token_arguments(self) -> int:
        return sum(a.kind == "token" for a in self.arguments)

    @property
    def nr_array_arguments(self) -> int:
        return sum(a.kind == "array" for a in self.arguments)

    def describe(self) -> str:
        """A multi-line, human-readable form (used by ``toolkit export inspect``)."""
        lines = ["@main("]
        lines += [f"    %arg{i}: {a}" for i, a in enumerate(self.arguments)]
        lines.append(") -> (")
        lines += [f"    {r}" for r in self.results]
        lines.append(")")
        if self.wrapped:
            lines.append(f"  (calls the private @{WRAPPED_MAIN_NAME})")
        return "\n".join(lines)


def _attr_text(attr: ir.Attribute) -> str:
    return attr.value if isinstance(attr, ir.StringAttr) else str(attr)


def _dict_attrs(attrs: ir.ArrayAttr | None, count: int) -> list[dict[str, ir.Attribute]]:
    if attrs is None:
        return [{} for _ in range(count)]
    return [{named.name: named.attr for named in ir.DictAttr(a)} for a in attrs]


def find_main(module: ir.Module, name: str = "main") -> func.FuncOp:
    """The ``func.func @name`` at the top of ``module`` (``ValueError`` if absent)."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise ValueError(f"the exported module has no function @{name}")


def main_signature(module: ir.Module) -> MainSignature:
    """Classify ``@main``'s arguments and results per the calling convention."""
    main = find_main(module)
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    arg_attrs = _dict_attrs(main.attributes["arg_attrs"] if "arg_attrs" in main.attributes else None,
                            len(ftype.inputs))
    res_attrs = _dict_attrs(main.attributes["res_attrs"] if "res_attrs" in main.attributes else None,
                            len(ftype.results))

    def classify(typ: ir.Type, attrs: dict[str, ir.Attribute], result_name: str | None) -> MainArgument:
        sharding = attrs.get("mhlo.sharding") or attrs.get("sdy.sharding")
        sharding_text = None if sharding is None else _attr_text(sharding)
        if "stablehlo.token" in str(typ) or str(typ) == "!stablehlo.token":
            return MainArgument("token", str(typ))
        constant = attrs.get("jax.global_constant")
        if constant is not None:
            constant_name = _attr_text(constant)
            kind = "platform_index" if constant_name == PLATFORM_INDEX_NAME else "dim_var"
            return MainArgument(kind, str(typ), constant_name)
        name = _attr_text(attrs[result_name]) if result_name and result_name in attrs else None
        return MainArgument("array", str(typ), name, sharding_text)

    arguments = tuple(classify(t, a, None) for t, a in zip(ftype.inputs, arg_attrs))
    results = tuple(classify(t, a, "jax.result_info") for t, a in zip(ftype.results, res_attrs))
    wrapped = any(op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value ==
                  WRAPPED_MAIN_NAME for op in module.body.operations)
    attributes = module.operation.attributes
    module_attributes = tuple(sorted((name, str(attributes[name])) for name in attributes if name != "sym_name"))
    return MainSignature(arguments, results, wrapped, module_attributes)


def set_module_attributes(module: ir.Module, *, uses_shape_polymorphism: bool) -> None:
    """Write the module attributes JAX readers look for (``jax.uses_shape_polymorphism``)."""
    with module.context:
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(uses_shape_polymorphism)


def wrap_main(module: ir.Module, in_avals: Sequence[ShapedArray], *, module_kept_var_idx: Sequence[int],
              has_platform_index: bool, dim_vars: Sequence[str] = (),
              compute_dim_vars: DimVarsHook | None = None) -> None:
    """Wrap ``@main`` in place so that it no longer takes dimension-variable arguments.

    ``module``'s ``@main`` must take ``[platform index][dim_vars...][tokens...][arrays...]``
    and return ``[tokens...][arrays...]``. Afterwards the original is the
    private ``@_wrapped_jax_export_main`` and a new public ``@main`` taking
    ``[platform index][tokens...][arrays...]`` computes the dimension
    variables with ``compute_dim_vars`` (default
    :func:`dim_vars_from_shapes`) and calls it.
    """
    compute_dim_vars = compute_dim_vars or dim_vars_from_shapes
    if dim_vars and len(module_kept_var_idx) != len(in_avals):
        raise NotImplementedError("dropping unused arguments of a shape-polymorphic export is not supported "
                                  "(JAX keeps all of them too)")
    with module.context, ir.Location.unknown():
        orig = find_main(module)
        orig.attributes["sym_name"] = ir.StringAttr.get(WRAPPED_MAIN_NAME)
        orig.attributes["sym_visibility"] = ir.StringAttr.get("private")
        ftype = ir.FunctionType(ir.TypeAttr(orig.attributes["function_type"]).value)
        in_types, out_types = list(ftype.inputs), list(ftype.results)
        nr_platform = 1 if has_platform_index else 0
        nr_dims = len(dim_vars)
        token_idxs = [i for i, t in enumerate(in_types) if "stablehlo.token" in str(t)]
        nr_tokens = len(token_idxs)
        if token_idxs and token_idxs != list(range(nr_platform + nr_dims, nr_platform + nr_dims + nr_tokens)):
            raise ValueError(f"token arguments of @main must follow the platform index and dimension variables, "
                             f"found at {token_idxs}")
        new_arg_idxs = list(range(nr_platform)) + list(range(nr_platform + nr_dims, len(in_types)))
        arg_attrs = _dict_attrs(orig.attributes["arg_attrs"] if "arg_attrs" in orig.attributes else None,
                                len(in_types))
        res_attrs = orig.attributes["res_attrs"] if "res_attrs" in orig.attributes else None
        new_main = func.FuncOp("main", ir.FunctionType.get([in_types[i] for i in new_arg_idxs], out_types),
                               ip=ir.InsertionPoint.at_block_begin(module.body))
        new_main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        new_main.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(arg_attrs[i]) for i in new_arg_idxs])
        if res_attrs is not None:
            new_main.result_attrs = res_attrs
        block = new_main.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            array_args = args[nr_platform + nr_tokens:]
            dim_values = list(compute_dim_vars(list(dim_vars), array_args,
                                               [in_avals[i] for i in module_kept_var_idx])) if dim_vars else []
            call_args = list(args[:nr_platform])
            for value, want in zip(dim_values, in_types[nr_platform:nr_platform + nr_dims]):
                call_args.append(value if value.type == want else stablehlo.convert(want, value))
            call_args += args[nr_platform:nr_platform + nr_tokens]
            # A convert as the only use of each array argument keeps later shape refinement from
            # retyping values the module returns or aliases (what JAX does too).
            for value, want in zip(array_args, in_types[nr_platform + nr_dims + nr_tokens:]):
                call_args.append(value if value.type == want else stablehlo.convert(want, value))
            call = func.CallOp(out_types, ir.FlatSymbolRefAttr.get(WRAPPED_MAIN_NAME), call_args)
            func.ReturnOp(list(call.results))


def main_signature_of_exported(exported: object) -> MainSignature:
    """:func:`main_signature` of an ``Exported``'s embedded module."""
    blob = getattr(exported, "mlir_module_serialized")
    with shared_context() as context:
        try:
            module = stablehlo.deserialize_portable_artifact(context, blob)
        except Exception as exc:  # the bindings raise MLIRError/RuntimeError
            raise ValueError(f"Cannot read the exported module: {exc}") from None
        return main_signature(module)
