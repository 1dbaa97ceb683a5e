// toolkit-opt sdy-propagation-recursive-call.mlir --pass-pipeline='builtin.module(sdy-propagation-pipeline)'
// -> SIGSEGV (exit 139) in the C++ pass (a recursive func.call; MLIR allows it, the verifier accepts it)
func.func @main() -> tensor<i32> {
  %0 = stablehlo.constant dense<3> : tensor<i32>
  %1 = call @callee(%0) : (tensor<i32>) -> tensor<i32>
  return %1 : tensor<i32>
}
func.func @callee(%arg0: tensor<i32>) -> tensor<i32> {
  %0 = call @callee(%arg0) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
