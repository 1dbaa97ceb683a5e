# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/decompositions.py: the lapack_*_ffi custom calls JAX 0.10.2 emits on CPU, with
# JAX's api_version, mhlo.backend_config, num_batch_dims, column-major layouts and aliases, and NaNs where LAPACK's
# info reports a failure.

import numpy as np

from toolkit import numpy as tnp
from toolkit.lax import linalg
from toolkit.testing import lowered_text, run, spec


@run
def cholesky():
    # CHECK-LABEL: TEST: cholesky
    # CHECK: stablehlo.transpose %arg0, dims = [1, 0]
    # CHECK: %[[F:.*]]:2 = stablehlo.custom_call @lapack_spotrf_ffi(%{{.*}}) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    # CHECK: %[[OK:.*]] = stablehlo.compare EQ, %[[F]]#1, %{{.*}}, SIGNED
    # CHECK: stablehlo.constant dense<0x7FC00000> : tensor<f32>
    # CHECK: stablehlo.select %{{.*}}, %[[F]]#0, %{{.*}} : tensor<3x3xi1>, tensor<3x3xf32>
    print(lowered_text(lambda x: linalg.cholesky(x), spec((3, 3))))


@run
def batched_eigh():
    # CHECK-LABEL: TEST: batched_eigh
    # One batch dimension: batch-major layouts, the matrices column-major.
    # CHECK: stablehlo.custom_call @lapack_ssyevd_ffi(%{{.*}}) {backend_config = "", mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
    # CHECK-SAME: result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]
    # CHECK-SAME: (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>)
    print(lowered_text(lambda x: linalg.eigh(x), spec((2, 4, 4))))


@run
def svd_complex():
    # CHECK-LABEL: TEST: svd_complex
    # CHECK: stablehlo.custom_call @lapack_cgesdd_ffi(%arg0) {backend_config = "", mhlo.backend_config = {mode = 83 : ui8}
    # CHECK-SAME: (tensor<5x3xcomplex<f32>>) -> (tensor<5x3xcomplex<f32>>, tensor<3xf32>, tensor<5x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
    print(lowered_text(lambda x: linalg.svd(x, full_matrices=False), spec((5, 3), np.complex64)))


@run
def qr_is_geqrf_then_orgqr():
    # CHECK-LABEL: TEST: qr_is_geqrf_then_orgqr
    # CHECK: %[[R:.*]]:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}
    # CHECK: stablehlo.custom_call @lapack_sorgqr_ffi(%[[R]]#0, %[[R]]#1) {{.*}} output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]
    print(lowered_text(lambda x: linalg.qr(x, full_matrices=False), spec((4, 3))))


@run
def pivoted_qr_is_geqp3_then_orgqr():
    # CHECK-LABEL: TEST: pivoted_qr_is_geqp3_then_orgqr
    # geqp3 on the matrix and an all-zero jpvt (every column free), both aliased to their results; its 1-based
    # column indices made 0-based; orgqr on the reflectors as without pivoting. Batch-major layouts.
    # CHECK: %[[Z:.*]] = stablehlo.constant dense<0> : tensor<i32>
    # CHECK: %[[J:.*]] = stablehlo.broadcast_in_dim %[[Z]], dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    # CHECK: %[[R:.*]]:3 = stablehlo.custom_call @lapack_sgeqp3_ffi(%arg0, %[[J]]) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x4x3xf32>, tensor<2x3xi32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>)
    # CHECK: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<i32>
    # CHECK: %[[ONES:.*]] = stablehlo.broadcast_in_dim %[[ONE]], dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    # CHECK: %[[P:.*]] = stablehlo.subtract %[[R]]#1, %[[ONES]] : tensor<2x3xi32>
    # CHECK: %[[Q:.*]] = stablehlo.custom_call @lapack_sorgqr_ffi(%[[R]]#0, %[[R]]#2)
    # CHECK: stablehlo.slice %[[R]]#0 [0:2, 0:3, 0:3]
    # CHECK: return %[[Q]], %{{.*}}, %[[P]] : tensor<2x4x3xf32>, tensor<2x3x3xf32>, tensor<2x3xi32>
    print(lowered_text(lambda x: linalg.qr(x, pivoting=True, full_matrices=False), spec((2, 4, 3))))
    # A wide complex matrix: cgeqp3, then ungqr on the leading square block of the reflectors.
    # CHECK: %[[C:.*]]:3 = stablehlo.custom_call @lapack_cgeqp3_ffi(%arg0, %{{[0-9]+}})
    # CHECK-SAME: (tensor<3x5xcomplex<f32>>, tensor<5xi32>) -> (tensor<3x5xcomplex<f32>>, tensor<5xi32>, tensor<3xcomplex<f32>>)
    # CHECK: %[[S:.*]] = stablehlo.slice %[[C]]#0 [0:3, 0:3]
    # CHECK: stablehlo.custom_call @lapack_cungqr_ffi(%[[S]], %[[C]]#2)
    print(lowered_text(lambda x: linalg.qr(x, pivoting=True), spec((3, 5), np.complex64)))
    # No rows: no LAPACK call (JAX's identity q, zero r and an all-zero permutation).
    # CHECK-NOT: lapack
    # CHECK: %[[P0:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<i32>) -> tensor<3xi32>
    # CHECK: return %{{.*}}, %{{.*}}, %[[P0]] : tensor<0x0xf32>, tensor<0x3xf32>, tensor<3xi32>
    print(lowered_text(lambda x: linalg.qr(x, pivoting=True), spec((0, 3))))


@run
def lu_pivots_become_a_permutation():
    # CHECK-LABEL: TEST: lu_pivots_become_a_permutation
    # LAPACK's 1-based pivots, info >= 0 is success, and a loop builds the permutation.
    # CHECK: %[[LU:.*]]:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%arg0)
    # CHECK: stablehlo.subtract %[[LU]]#1
    # CHECK: stablehlo.compare GE, %[[LU]]#2
    # CHECK: stablehlo.while
    print(lowered_text(lambda x: linalg.lu(x), spec((3, 3))))


@run
def triangular_solve_is_trsm():
    # CHECK-LABEL: TEST: triangular_solve_is_trsm
    # CHECK: stablehlo.custom_call @lapack_strsm_ffi(%arg0, %arg1) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}
    # CHECK-SAME: output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>]
    print(lowered_text(lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True),
                       spec((3, 3)), spec((3, 2))))


@run
def triangular_solve_of_half_floats_is_xlas():
    # CHECK-LABEL: TEST: triangular_solve_of_half_floats_is_xlas
    # LAPACK has no float16/bfloat16 kernels: XLA's own triangular solve, as JAX lowers them on CPU.
    # CHECK: "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf16>, tensor<3x2xf16>) -> tensor<3x2xf16>
    # CHECK-NOT: lapack
    print(lowered_text(lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True),
                       spec((3, 3), "float16"), spec((3, 2), "float16")))
    # CHECK: transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true}> : (tensor<3x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
    print(lowered_text(lambda a, b: linalg.triangular_solve(a, b, unit_diagonal=True),
                       spec((3, 3), "bfloat16"), spec((2, 3), "bfloat16")))


@run
def eig_of_a_real_matrix():
    # CHECK-LABEL: TEST: eig_of_a_real_matrix
    # Real input: separate real and imaginary eigenvalue parts, joined by stablehlo.complex.
    # CHECK: %[[E:.*]]:5 = stablehlo.custom_call @lapack_sgeev_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}
    # CHECK: stablehlo.complex %[[E]]#0, %[[E]]#1
    print(lowered_text(lambda x: tnp.linalg.eig(x), spec((3, 3))))


@run
def numpy_solve_is_getrf_and_two_trsm():
    # CHECK-LABEL: TEST: numpy_solve_is_getrf_and_two_trsm
    # CHECK: @lapack_sgetrf_ffi
    # CHECK: @lapack_strsm_ffi{{.*}}diag = 85 : ui8
    # CHECK: @lapack_strsm_ffi{{.*}}diag = 78 : ui8
    print(lowered_text(lambda a, b: tnp.linalg.solve(a, b), spec((3, 3)), spec((3,))))


@run
def tridiagonal_solve_perturbed_is_jaxlibs_kernel():
    # CHECK-LABEL: TEST: tridiagonal_solve_perturbed_is_jaxlibs_kernel
    # perturb_singular=True: jaxlib's own kernel (not lapack_sgtsv_ffi), which never fails: no info result, no NaN
    # select and no alias. The diagonals are batch-major, b's matrices column-major.
    # CHECK: %[[X:.*]] = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%arg0, %arg1, %arg2, %arg3) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    # CHECK-NOT: output_operand_aliases
    # CHECK-NOT: stablehlo.select
    # CHECK: return %[[X]] : tensor<2x4x3xf32>
    print(lowered_text(lambda dl, d, du, b: linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
                       spec((2, 4)), spec((2, 4)), spec((2, 4)), spec((2, 4, 3))))
    # CHECK: stablehlo.custom_call @lapack_sgtsv_ffi
    # CHECK: stablehlo.select
    print(lowered_text(lambda dl, d, du, b: linalg.tridiagonal_solve(dl, d, du, b),
                       spec((4,)), spec((4,)), spec((4,)), spec((4, 3))))
