# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/fourier.py: one stablehlo.fft per transform, as JAX lowers lax.fft.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def complex_fft():
    # CHECK-LABEL: TEST: complex_fft
    # CHECK: stablehlo.fft %arg0, type = FFT, length = [8] : (tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>
    print(lowered_text(lambda x: lax.fft(x, "fft", (8,)), spec((3, 8), np.complex64)))


@run
def real_to_complex_2d():
    # CHECK-LABEL: TEST: real_to_complex_2d
    # The last transformed dimension keeps n // 2 + 1 frequencies.
    # CHECK: stablehlo.fft %arg0, type = RFFT, length = [4, 6] : (tensor<2x4x6xf32>) -> tensor<2x4x4xcomplex<f32>>
    print(lowered_text(lambda x: lax.fft(x, lax.FftType.RFFT, (4, 6)), spec((2, 4, 6))))


@run
def inverse_real():
    # CHECK-LABEL: TEST: inverse_real
    # CHECK: stablehlo.fft %arg0, type = IRFFT, length = [6] : (tensor<4xcomplex<f32>>) -> tensor<6xf32>
    print(lowered_text(lambda x: lax.fft(x, "irfft", (6,)), spec((4,), np.complex64)))


@run
def integer_operand_converted():
    # CHECK-LABEL: TEST: integer_operand_converted
    # A non-complex operand of a complex transform is converted first.
    # CHECK: stablehlo.convert %arg0 : (tensor<4xi32>) -> tensor<4xcomplex<f32>>
    # CHECK: stablehlo.fft {{.*}} type = IFFT
    print(lowered_text(lambda x: lax.fft(x, "ifft", (4,)), spec((4,), "int32")))
