"""Run an exported artifact on numpy arguments: what ``toolkit export run`` and ``toolkit-run BLOB`` do.

``run_exported(exp, arrays)`` takes one array per flat input (in ``in_avals``
order, dtypes exactly the declared ones — :func:`check_arguments` checks,
never converts), and returns the flat results as numpy arrays.

Single-device exports without ordered effects go through the plain route:
the module is specialized for the arguments' shapes
(:func:`toolkit.export.convert.plain_module`: platform index folded, shapes
bound and refined, shape assertions checked, wrapper inlined) and compiled
directly with jaxlib (``toolkit.runtime.standalone``). Other exports (ordered
effects, several devices) run through ``Exported.call``.

Example::

    outputs = run_exported(toolkit.export.deserialize(blob), [np.ones((4, 3), np.float32)])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import shape_poly, pytrees
from toolkit.core.avals import ShapedArray
from toolkit.export import convert as conversions
from toolkit.export.call import _arg_names, dim_var_values
from toolkit.export.exported import Exported
from toolkit.ir.serialization import write_module
from toolkit.runtime import standalone


def argument_names(exp: Exported) -> list[str]:
    """How messages name the flat inputs: ``args[0]``, ``args[1]['w']``, ``kwargs['x']``."""
    return _arg_names(exp.in_tree)


def declared_shape(aval: Any) -> list[int | None]:
    """The aval's shape with ``None`` for symbolic dimensions."""
    return [None if shape_poly.is_symbolic_dim(d) else int(d) for d in aval.shape]


def check_arguments(exp: Exported, arrays: Sequence[np.ndarray]) -> None:
    """``ValueError`` naming the argument unless every array has its declared dtype, rank and static sizes,
    and the symbolic sizes satisfy the export's dimension variables and constraints."""
    names = argument_names(exp)
    if len(arrays) != len(exp.in_avals):
        raise ValueError(f"the export takes {len(exp.in_avals)} argument(s) ({', '.join(names)}), "
                         f"got {len(arrays)}")
    for name, array, aval in zip(names, arrays, exp.in_avals):
        array = np.asarray(array)
        if array.dtype != np.dtype(aval.dtype):
            raise ValueError(f"{name} has dtype {array.dtype.name}, the export declares {aval.str_short()}")
        shape = declared_shape(aval)
        if array.ndim != len(shape) or any(w is not None and w != h for h, w in zip(array.shape, shape)):
            raise ValueError(f"{name} has shape {tuple(array.shape)}, the export declares {aval.str_short()}")
    if any(None in declared_shape(a) for a in exp.in_avals):
        dim_var_values(exp, [ShapedArray(np.shape(a), aval.dtype) for a, aval in zip(arrays, exp.in_avals)])


def run_exported(exp: Exported, arrays: Sequence[np.ndarray], *, platform: str | None = None) -> list[np.ndarray]:
    """The flat results of ``exp`` on ``arrays`` (see the module docstring)."""
    arrays = [np.asarray(a, order="C") for a in arrays]
    check_arguments(exp, arrays)
    if exp.calling_convention_version < conversions.FIRST_VERSION_WITH_EFFECTS:
        exp = conversions.convert_calling_convention(exp, conversions.FIRST_VERSION_WITH_EFFECTS)
    if exp.ordered_effects or exp.nr_devices != 1:
        args, kwargs = pytrees.tree_unflatten(exp.in_tree, list(arrays))
        outputs = exp.call(*args, **kwargs)
        return [np.asarray(o) for o in pytrees.tree_leaves(outputs)]

    module = conversions.plain_module(exp, [a.shape for a in arrays], platform=platform)
    executable = standalone.compile_module(write_module(module, "bytecode"))
    return standalone.execute(executable, [arrays[i] for i in exp.module_kept_var_idx])
