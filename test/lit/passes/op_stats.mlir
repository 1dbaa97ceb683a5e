// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-op-stats{format=json})' -o /dev/null 2>&1 | filecheck %s --check-prefix=JSON
// RUN: toolkit-opt %s --toolkit-op-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=TABLE
// The IR itself is unchanged:
// RUN: toolkit-opt %s --toolkit-op-stats 2>/dev/null | filecheck %s --check-prefix=IR

// JSON:      "ops": {
// JSON-NEXT:   "func.func": 2,
// JSON-NEXT:   "func.return": 2,
// JSON-NEXT:   "stablehlo.add": 3,
// JSON-NEXT:   "stablehlo.constant": 1
// JSON:      "dialects": {
// JSON-NEXT:   "func": 4,
// JSON-NEXT:   "stablehlo": 4
// JSON:      "total": 8

// TABLE: Operation
// TABLE: stablehlo.add{{ +}}3
// TABLE: Dialect
// TABLE: stablehlo{{ +}}4
// TABLE: Total{{ +}}8

// IR: func.func @f
// IR-COUNT-3: stablehlo.add
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %c : tensor<4xf32>
  %1 = stablehlo.add %0, %c : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
