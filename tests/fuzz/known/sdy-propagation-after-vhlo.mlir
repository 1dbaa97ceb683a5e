// toolkit-opt sdy-propagation-after-vhlo.mlir --pass-pipeline='builtin.module(stablehlo-legalize-to-vhlo, sdy-propagation-pipeline)'
// -> SIGABRT (exit 134): "LLVM ERROR: ... shardy/dialect/sdy/ir/utils.cc:1143] Check failed: funcOp Failed to lookup function: main"
func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
