// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mesh="x=2,y=4" in-specs="[z]"})' 2>&1 | filecheck %s --check-prefix=AXIS
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mesh="x=2,y=4" in-specs="[x,None,y]"})' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mesh="x=2,y=4" in-specs="[x,x]"})' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mesh="x=2,y=4" in-specs="[x];[x];[y]"})' 2>&1 | filecheck %s --check-prefix=COUNT

// AXIS: annotate_errors.mlir:0:0: error: {{.*}}Resource axis: z of P('z',) is not found in mesh: ('x', 'y').
// RANK: error: {{.*}}has 3 entries but is applied to an array of rank 2; dimensions [2] do not exist
// TWICE: error: {{.*}}DuplicateSpecError: {{.*}}but P('x', 'x') has duplicate entries for `x`
// COUNT: error: {{.*}}in_shardings has 3 entries but @main has 2 arguments
func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
