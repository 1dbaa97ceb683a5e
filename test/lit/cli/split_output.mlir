// RUN: toolkit-opt %s --split-input-file | filecheck %s

// CHECK: func.func @first
// CHECK-NEXT: return
// CHECK: // -----
// CHECK: func.func @second
func.func @first() {
  return
}

// -----

func.func @second() {
  return
}
