"""Helpers shared by the export tests: a small portable artifact and hand-built Exported objects."""

from __future__ import annotations

import functools

import numpy as np
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.export import DisabledSafetyCheck, Effect, Exported

MODULE_TEXT = """
func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<2x4xi32>) -> (tensor<3xf32>, tensor<2x4xi32>) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
  return %0, %arg1 : tensor<3xf32>, tensor<2x4xi32>
}
"""


@functools.lru_cache(maxsize=None)
def artifact(text: str = MODULE_TEXT) -> bytes:
    target = stablehlo.get_version_from_compatibility_requirement(stablehlo.StablehloCompatibilityRequirement.WEEK_4)
    return stablehlo.serialize_portable_artifact_str(text, target)


def make_exported(**overrides) -> Exported:
    """An Exported of ``f(x, y) -> (x + x, y)`` with every field set; ``overrides`` replace fields."""
    in_avals = (ShapedArray((3,), np.float32), ShapedArray((2, 4), np.int32))
    out_avals = (ShapedArray((3,), np.float32), ShapedArray((2, 4), np.int32))
    fields = dict(
        fun_name="f",
        in_tree=pytrees.tree_structure(((1, 2), {})),
        in_avals=in_avals,
        out_tree=pytrees.tree_structure((1, 2)),
        out_avals=out_avals,
        in_shardings_hlo=(),
        out_shardings_hlo=(),
        nr_devices=1,
        platforms=("cpu",),
        ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=(),
        mlir_module_serialized=artifact(),
        calling_convention_version=10,
        module_kept_var_idx=(0, 1),
        uses_global_constants=False,
    )
    fields.update(overrides)
    return Exported(**fields)


def assert_same_fields(a: Exported, b: Exported) -> None:
    """Field-by-field equality with a message naming the first differing field."""
    for name in ("fun_name", "in_tree", "in_avals", "out_tree", "out_avals", "nr_devices", "platforms",
                 "ordered_effects", "unordered_effects", "disabled_safety_checks", "mlir_module_serialized",
                 "calling_convention_version", "module_kept_var_idx", "uses_global_constants", "_in_named_shardings",
                 "_out_named_shardings"):
        assert getattr(a, name) == getattr(b, name), f"{name}: {getattr(a, name)!r} != {getattr(b, name)!r}"
    # The HloShardings as used: an export leaves them None beside named shardings, a deserialized one derives them
    # (both as JAX's).
    for side in ("in", "out"):
        assert a._hlo_shardings(side) == b._hlo_shardings(side), f"{side}_shardings_hlo"
    # has_vjp() is not compared: a fresh toolkit export has a VJP (toolkit.ad), its round trip at
    # vjp_order=0 does not, exactly as in jax.export.
    assert a == b


__all__ = ["artifact", "make_exported", "assert_same_fields", "DisabledSafetyCheck", "Effect"]
