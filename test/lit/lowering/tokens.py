# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/tokens.py (create_token, after_all) and of compiler_controls' dce_sink,
# as JAX 0.10.2 lowers them.

from toolkit.core.avals import abstract_token
from toolkit.lax.compiler_controls import dce_sink
from toolkit.lax.tokens import after_all, create_token
from toolkit.testing import lowered_text, run, spec


@run
def create_token_and_after_all():
    # CHECK-LABEL: TEST: create_token_and_after_all
    # CHECK: func.func public @main() -> (!stablehlo.token
    # CHECK: %[[A:.*]] = stablehlo.create_token : !stablehlo.token
    # CHECK: %[[B:.*]] = stablehlo.create_token : !stablehlo.token
    # CHECK: %[[C:.*]] = stablehlo.after_all %[[A]], %[[B]] : !stablehlo.token
    # CHECK: return %[[C]] : !stablehlo.token
    print(lowered_text(lambda: after_all(create_token(), create_token())))


@run
def token_argument_and_result():
    # CHECK-LABEL: TEST: token_argument_and_result
    # CHECK: @main(%arg0: !stablehlo.token, %arg1: tensor<f32>) -> (!stablehlo.token {{.*}}, tensor<f32>
    # CHECK: %[[T:.*]] = stablehlo.after_all %arg0 : !stablehlo.token
    # CHECK: return %[[T]], %{{.*}} : !stablehlo.token, tensor<f32>
    print(lowered_text(lambda t, x: (after_all(t), x + 1), abstract_token, spec(())))


@run
def captured_concrete_token():
    # A concrete token closed over is a fresh token in the program (no data to embed as a constant).
    # CHECK-LABEL: TEST: captured_concrete_token
    # CHECK: @main(%arg0: tensor<f32>) -> (!stablehlo.token
    # CHECK: %[[T:.*]] = stablehlo.create_token : !stablehlo.token
    # CHECK: %[[A:.*]] = stablehlo.after_all %[[T]] : !stablehlo.token
    # CHECK: return %[[A]], %arg0 : !stablehlo.token, tensor<f32>
    token = create_token()
    print(lowered_text(lambda x: (after_all(token), x), spec(())))


@run
def after_all_of_nothing():
    # CHECK-LABEL: TEST: after_all_of_nothing
    # CHECK: stablehlo.after_all  : !stablehlo.token
    print(lowered_text(lambda: after_all()))


@run
def dce_sink_lowers_to_nothing():
    # CHECK-LABEL: TEST: dce_sink_lowers_to_nothing
    # CHECK: %[[M:.*]] = stablehlo.multiply %arg0
    # CHECK-NOT: dce_sink
    # CHECK: return
    print(lowered_text(lambda x: dce_sink(x * 2), spec((3,))))


@run
def dce_sink_prevent_mlir_dce():
    # CHECK-LABEL: TEST: dce_sink_prevent_mlir_dce
    # CHECK: stablehlo.custom_call @dce_sink(%arg0) {backend_config = "", has_side_effect = true, mhlo.backend_config = {}, operand_layouts = [dense<> : tensor<0xindex>], result_layouts = []} : (tensor<f32>) -> ()
    # CHECK: stablehlo.custom_call @dce_sink(%arg1) {backend_config = "", has_side_effect = true, mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = []} : (tensor<2x3xf32>) -> ()
    print(lowered_text(lambda x, y: dce_sink((x, y), prevent_mlir_dce=True), spec(()), spec((2, 3))))
