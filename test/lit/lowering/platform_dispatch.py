# RUN: %PYTHON %s | filecheck %s
# Golden lowering of lax.platform_dependent (toolkit/lax/platform_dispatch.py): the platform index is a constant
# for a single-platform lowering and a stablehlo.case on @main's _platform_index argument for several.

import numpy as np

from toolkit import export, jit, lax
from toolkit.testing import lowered_text, run, spec


def f(x):
    return lax.platform_dependent(x, cpu=lambda v: v + 1.0, tpu=lambda v: v * 2.0)


@run
def one_platform():
    # CHECK-LABEL: TEST: one_platform
    # CHECK: %[[I:.*]] = stablehlo.constant dense<0> : tensor<i32>
    # CHECK: "stablehlo.case"
    # CHECK: stablehlo.add
    # CHECK: stablehlo.multiply
    print(lowered_text(f, spec((3,))))


@run
def two_platforms():
    # CHECK-LABEL: TEST: two_platforms
    # CHECK: func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}
    # CHECK: "stablehlo.case"(%arg0)
    # CHECK: "stablehlo.case"
    # CHECK: stablehlo.add
    # CHECK: stablehlo.multiply
    print(export.export(jit(f), platforms=["cpu", "tpu"])(np.zeros(3, np.float32)).mlir_module())
