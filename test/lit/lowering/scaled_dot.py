# RUN: %PYTHON %s | filecheck %s
# Golden lowering of lax.scaled_dot (toolkit/lax/scaled_dot.py), as JAX 0.10.2 emits it: an "xla.scaled_dot"
# composite whose decomposition repeats each scale over its block, multiplies in bf16 and contracts.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def block_scaled():
    # CHECK-LABEL: TEST: block_scaled
    # CHECK: stablehlo.composite "xla.scaled_dot" %arg0, %arg1, %arg2, %arg3 {composite_attributes = {dimension_numbers = [{{\[}}[1], [0]], {{\[}}[], []]], preferred_element_type = bf16}, decomposition = @xla.scaled_dot} : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xbf16>
    # CHECK: func.func private @xla.scaled_dot
    # CHECK-NEXT: stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    # CHECK-NEXT: stablehlo.broadcast_in_dim {{.*}} : (tensor<4x2x1xf32>) -> tensor<4x2x4xf32>
    # CHECK-NEXT: stablehlo.reshape {{.*}} : (tensor<4x2x4xf32>) -> tensor<4x8xf32>
    # CHECK: stablehlo.multiply {{.*}} : tensor<4x8xbf16>
    # CHECK: stablehlo.dot_general {{.*}} contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
    print(lowered_text(lambda a, b, sa, sb: lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb),
                       spec((4, 8)), spec((8, 3)), spec((4, 2)), spec((2, 3))))


@run
def dummy_scales():
    # A missing scale is ones in float8_e8m0fnu, size 1 along the contracting dimension.
    # CHECK-LABEL: TEST: dummy_scales
    # CHECK: stablehlo.convert {{.*}} : (tensor<4x1xbf16>) -> tensor<4x1xf8E8M0FNU>
    # CHECK: stablehlo.convert {{.*}} : (tensor<1x3xbf16>) -> tensor<1x3xf8E8M0FNU>
    # CHECK: stablehlo.composite "xla.scaled_dot" {{.*}}preferred_element_type = f32{{.*}} -> tensor<4x3xf32>
    print(lowered_text(lambda a, b: lax.scaled_dot(a, b, preferred_element_type=np.float32), spec((4, 8)),
                       spec((8, 3))))
