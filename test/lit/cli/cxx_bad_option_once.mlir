// A C++ pass's bad option is reported once, on one line (jaxlib prints it at every parse attempt).
// RUN: not toolkit-opt %s --canonicalize='max-iterations=x' 2>&1 | filecheck %s
// RUN: not toolkit-opt %s -p 'builtin.module(func.func(cse{bogus=1}))' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CHECK: toolkit-opt: error: bad options for 'canonicalize{max-iterations=x}': for the --max-iterations option: 'x' value invalid for long argument{{$}}
// CHECK-NOT: max-iterations
// UNKNOWN: toolkit-opt: error: bad options for 'cse{bogus=1}': no such option bogus{{$}}
// UNKNOWN-NOT: bogus
func.func @f() {
  return
}
