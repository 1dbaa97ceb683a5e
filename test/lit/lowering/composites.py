# RUN: %PYTHON %s | filecheck %s
# Golden lowering of lax.composite (toolkit/lax/composites.py), as JAX 0.10.2 emits it: stablehlo.composite
# calling a private function named after the composite, keyword arguments as composite_attributes.

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.testing import lowered_text, run, spec


@run
def tanh_and_scale():
    # CHECK-LABEL: TEST: tanh_and_scale
    # CHECK: %[[T:.*]] = stablehlo.composite "my.tanh" %arg0 {decomposition = @my.tanh} : (tensor<3xf32>) -> tensor<3xf32>
    # CHECK: stablehlo.composite "my.scale" %[[T]] {composite_attributes = {axis = 1 : i32, factor = 2.000000e+00 : f64}, decomposition = @my.scale, version = 2 : i32}
    # CHECK: func.func private @my.tanh(%arg0: tensor<3xf32>) -> tensor<3xf32>
    # CHECK-NEXT: stablehlo.tanh %arg0
    # CHECK: func.func private @my.scale
    tanh = lax.composite(lambda x: tnp.tanh(x), name="my.tanh")
    scale = lax.composite(lambda x, *, factor, axis: x * factor, name="my.scale", version=2)
    print(lowered_text(lambda x: scale(tanh(x), factor=2.0, axis=np.int32(1)), spec((3,))))


@run
def attribute_kinds():
    # JAX's attribute table: a tuple is an array attribute, a dict a dictionary, a dtype a type, a 0-d array dense.
    # CHECK-LABEL: TEST: attribute_kinds
    # CHECK: stablehlo.composite "my.attrs" %arg0 {composite_attributes = {dims = [{{\[}}[1], [0]], {{\[}}[], []]], dtype = bf16, scale = dense<2.000000e+00> : tensor<f32>, table = {k = 3 : i64}}, decomposition = @my.attrs}
    attrs = lax.composite(lambda x, **attributes: x, name="my.attrs")
    print(lowered_text(lambda x: attrs(x, dims=(((1,), (0,)), ((), ())), dtype=np.dtype(tnp.bfloat16),
                                       scale=np.array(2.0, np.float32), table={"k": 3}), spec((3,))))
