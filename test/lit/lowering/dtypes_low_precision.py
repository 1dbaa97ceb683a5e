# RUN: %PYTHON %s | filecheck %s
# Golden lowering of every low-precision type JAX 0.10.2 lowers (toolkit/lowering/types.py): the float8s
# (the fnuz ones were a KeyError before), float4_e2m1fn and the sub-byte integers, in arguments, constants and ops.

import ml_dtypes
import numpy as np

from toolkit.core import dtypes
from toolkit.testing import lowered_text, run, spec


def double(x):
    return x * 2


@run
def low_precision_types():
    # CHECK-LABEL: TEST: low_precision_types
    for name in dtypes.LOW_PRECISION_FLOAT_NAMES + dtypes.LOW_PRECISION_INT_NAMES:
        text = lowered_text(double, spec((4,), name))
        line = next(line for line in text.splitlines() if "stablehlo.multiply" in line)
        print(name, "->", line.split(" : ")[-1].strip())
    # CHECK: float8_e3m4 -> tensor<4xf8E3M4>
    # CHECK: float8_e4m3 -> tensor<4xf8E4M3>
    # CHECK: float8_e4m3b11fnuz -> tensor<4xf8E4M3B11FNUZ>
    # CHECK: float8_e4m3fn -> tensor<4xf8E4M3FN>
    # CHECK: float8_e4m3fnuz -> tensor<4xf8E4M3FNUZ>
    # CHECK: float8_e5m2 -> tensor<4xf8E5M2>
    # CHECK: float8_e5m2fnuz -> tensor<4xf8E5M2FNUZ>
    # CHECK: float8_e8m0fnu -> tensor<4xf8E8M0FNU>
    # CHECK: float4_e2m1fn -> tensor<4xf4E2M1FN>
    # CHECK: int2 -> tensor<4xi2>
    # CHECK: int4 -> tensor<4xi4>
    # CHECK: uint2 -> tensor<4xui2>
    # CHECK: uint4 -> tensor<4xui4>


@run
def low_precision_constants():
    # CHECK-LABEL: TEST: low_precision_constants
    # A constant that is not a splat: its raw bytes are one element each, as ml_dtypes stores them.
    for name in ("int4", "float8_e4m3fnuz"):
        dtype = np.dtype(getattr(ml_dtypes, name))
        text = lowered_text(lambda x: x + np.array([0, 1, 2, 3], dtype), spec((4,), name))
        print(name, "->", next(line.strip() for line in text.splitlines() if "stablehlo.constant" in line))
    # CHECK: int4 -> %c = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xi4>
    # CHECK: float8_e4m3fnuz -> %cst = stablehlo.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf8E4M3FNUZ>
