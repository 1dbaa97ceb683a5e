// A parse error names file, line and column like mlir-opt, and exits 1.
// RUN: not toolkit-opt %s 2>&1 | filecheck %s
// With --split-input-file, the other cases still print.
// RUN: not toolkit-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=SPLIT

// CHECK: parse_error.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: use of undeclared SSA value name
// SPLIT: func.func @good
func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}

// -----

func.func @good() {
  return
}
