// toolkit-opt sdy-propagation-call-to-declaration.mlir --pass-pipeline='builtin.module(sdy-propagation-pipeline)'
// -> SIGSEGV (exit 139) in the C++ pass before toolkit/passes/preconditions.py: @main calls a declaration
func.func private @ext(%a: tensor<2xf32>) -> tensor<2xf32>
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { %0 = func.call @ext(%a) : (tensor<2xf32>) -> tensor<2xf32> 
 return %0 : tensor<2xf32> }
