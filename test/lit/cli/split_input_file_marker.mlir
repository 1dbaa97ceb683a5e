// --split-input-file=MARKER splits at another marker (and joins the output with it).
// RUN: toolkit-opt %s --split-input-file='// ==== next' | filecheck %s
// RUN: toolkit-opt %s --split-input-file | filecheck %s --check-prefix=DEFAULT

// CHECK: func.func @first
// CHECK: // ==== next
// CHECK: func.func @second

// Without the marker the file is one module (its default marker is '// -----'):
// DEFAULT: func.func @first
// DEFAULT-NOT: // -----
// DEFAULT: func.func @second
func.func @first() {
  return
}

// ==== next

func.func @second() {
  return
}
