// RUN: toolkit-opt %s --split-input-file --verify-diagnostics
// A missed expectation fails the run and says which:
// RUN: not toolkit-opt %s --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WHOLE

// expected-error @+2 {{'stablehlo.add' op requires the same shape for all operands and results}}
func.func @verifier_error(%a: tensor<4xi32>) -> tensor<5xi32> {
  %0 = "stablehlo.add"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

func.func @same_line(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.transpose %a, dims = [1] : (tensor<2xf32>) -> tensor<2xf32> // expected-error {{permutation}} expected-error {{failed to infer returned types}}
  return %0 : tensor<2xf32>
}

// -----

func.func @above(%a: tensor<2xf32>) {
  %0 = stablehlo.reshape %a : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error @above {{number of output elements (3) doesn't match expected number of elements (2)}}
  return
}

// -----

// expected-error @below {{custom op 'stablehlo.nonexistent' is unknown}}
%0 = stablehlo.nonexistent : tensor<f32>

// Without splitting, only the first error of the file is produced:
// WHOLE: error: expected error "permutation" was not produced
