// --dump-pass-pipeline prints the pipeline, one pass a line, before running it.
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize{max-iterations=2}), toolkit-simplify)' --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s
// RUN: toolkit-opt %s --cse --symbol-dce --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=FLAGS

// CHECK: Pass Manager with 2 passes:
// CHECK-NEXT: {{^}}builtin.module(
// CHECK-NEXT: {{^}}  func.func(
// CHECK-NEXT: {{^}}    cse,
// CHECK-NEXT: {{^}}    canonicalize{max-iterations=2}
// CHECK-NEXT: {{^}}  ),
// CHECK-NEXT: {{^}}  toolkit-simplify
// CHECK-NEXT: {{^}})

// FLAGS: Pass Manager with 2 passes:
// FLAGS-NEXT: builtin.module(
// FLAGS-NEXT:   cse,
// FLAGS-NEXT:   symbol-dce
// FLAGS-NEXT: )

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
