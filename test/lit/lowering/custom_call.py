# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/custom_call.py: `stablehlo.custom_call`.

import numpy as np

from toolkit import ShapeDtypeStruct, lax
from toolkit.testing import lowered_text, run, spec


@run
def custom_call_opaque():
    # CHECK-LABEL: TEST: custom_call_opaque
    # CHECK: stablehlo.custom_call @my_target(%arg0, %arg0) {api_version = 2 : i32, backend_config = "cfg", has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xi32>
    print(lowered_text(lambda x: lax.custom_call("my_target", ShapeDtypeStruct((3,), np.int32), x, x,
                                                 has_side_effect=True, backend_config="cfg"), spec((2,))))


@run
def custom_call_typed_ffi():
    # CHECK-LABEL: TEST: custom_call_typed_ffi
    # CHECK: %[[R:.*]]:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {api_version = 4 : i32, backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    print(lowered_text(lambda a: lax.custom_call(
        "lapack_spotrf_ffi", [ShapeDtypeStruct((3, 3), np.float32), ShapeDtypeStruct((), np.int32)], a,
        api_version=4, backend_config={"uplo": np.uint8(ord("L"))}, operand_layouts=[(0, 1)],
        result_layouts=[(0, 1), ()]), spec((3, 3))))
