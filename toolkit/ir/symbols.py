"""Symbol-table lookups and function cloning.

Example::

    main = lookup_function(module, "main")
    copy = clone_function(main, "main_copy")
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func


def _module_body(module: ir.Module | ir.Operation | ir.OpView) -> ir.Block:
    if isinstance(module, ir.Module):
        return module.body
    return module.operation.regions[0].blocks[0]


def symbol_name(op: ir.Operation | ir.OpView) -> str | None:
    """The ``sym_name`` of ``op``, or None if it defines no symbol."""
    attributes = op.operation.attributes
    return ir.StringAttr(attributes["sym_name"]).value if "sym_name" in attributes else None


def lookup_symbol(module: ir.Module | ir.Operation | ir.OpView, name: str) -> ir.Operation | None:
    """The top-level op of ``module`` defining symbol ``name``, or None."""
    for op in _module_body(module).operations:
        if symbol_name(op) == name:
            return op.operation
    return None


def functions(module: ir.Module | ir.Operation | ir.OpView) -> list[ir.Operation]:
    """The ``func.func`` ops at the top level of ``module``, in order."""
    return [op.operation for op in _module_body(module).operations if op.operation.name == "func.func"]


def lookup_function(module: ir.Module | ir.Operation | ir.OpView, name: str) -> func.FuncOp:
    """The ``func.func`` named ``name``; raises KeyError listing the known functions."""
    op = lookup_symbol(module, name)
    if op is None or op.name != "func.func":
        known = ", ".join(symbol_name(f) or "?" for f in functions(module))
        raise KeyError(f"no function @{name} in module (functions: {known or 'none'})")
    return op.opview


def unique_symbol_name(module: ir.Module | ir.Operation | ir.OpView, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... whichever no symbol uses yet."""
    taken = {symbol_name(op) for op in _module_body(module).operations}
    if base not in taken:
        return base
    suffix = 1
    while f"{base}_{suffix}" in taken:
        suffix += 1
    return f"{base}_{suffix}"


def clone_function(function: ir.Operation | ir.OpView, new_name: str | None = None, *,
                   private: bool = True) -> func.FuncOp:
    """Copy ``function`` right after itself under a fresh name; return the copy.

    ``new_name`` defaults to ``<name>_clone`` (made unique). The copy is
    private unless ``private=False``.
    """
    operation = function.operation
    parent = operation.parent
    if parent is None:
        raise ValueError("clone_function needs a function inside a module")
    name = unique_symbol_name(parent, new_name or f"{symbol_name(operation)}_clone")
    copy = operation.clone(ir.InsertionPoint.after(operation) if hasattr(ir.InsertionPoint, "after")
                           else ir.InsertionPoint(parent.regions[0].blocks[0]))
    with operation.context:
        copy.attributes["sym_name"] = ir.StringAttr.get(name)
        if private:
            copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
        elif "sym_visibility" in copy.attributes:
            del copy.attributes["sym_visibility"]
    return copy.opview
