# RUN: %PYTHON %s | filecheck %s
# Golden lowering of every elementwise primitive in toolkit/lax/elementwise.py.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec

f32 = spec((2, 3), "float32")
i32 = spec((2, 3), "int32")
u8 = spec((2, 3), "uint8")
c64 = spec((2, 3), "complex64")
b = spec((2, 3), "bool")

UNARY_F32 = [
    ("neg", "stablehlo.negate"), ("sign", "stablehlo.sign"), ("floor", "stablehlo.floor"),
    ("ceil", "stablehlo.ceil"), ("exp", "stablehlo.exponential "), ("log", "stablehlo.log "),
    ("log1p", "stablehlo.log_plus_one"), ("expm1", "stablehlo.exponential_minus_one"),
    ("tanh", "stablehlo.tanh"), ("logistic", "stablehlo.logistic"), ("sin", "stablehlo.sine"),
    ("cos", "stablehlo.cosine"), ("tan", "stablehlo.tan"), ("sqrt", "stablehlo.sqrt"),
    ("rsqrt", "stablehlo.rsqrt"), ("cbrt", "stablehlo.cbrt"), ("abs", "stablehlo.abs"),
    ("is_finite", "stablehlo.is_finite"), ("asin", "chlo.asin"), ("acos", "chlo.acos"),
    ("atan", "chlo.atan"), ("sinh", "chlo.sinh"), ("cosh", "chlo.cosh"), ("asinh", "chlo.asinh"),
    ("acosh", "chlo.acosh"), ("atanh", "chlo.atanh"), ("erf", "chlo.erf"), ("erfc", "chlo.erfc"),
    ("erf_inv", "chlo.erf_inv"), ("lgamma", "chlo.lgamma"), ("digamma", "chlo.digamma"),
]


@run
def unary_float():
    # CHECK-LABEL: TEST: unary_float
    for name, op in UNARY_F32:
        text = lowered_text(getattr(lax, name), f32)
        assert op in text, (name, text)
        print(name, "->", op.strip())
    # CHECK: neg -> stablehlo.negate
    # CHECK: tanh -> stablehlo.tanh
    # CHECK: erf_inv -> chlo.erf_inv
    # CHECK: digamma -> chlo.digamma


@run
def exp2():
    # CHECK-LABEL: TEST: exp2
    # CHECK: stablehlo.constant dense<0.693147{{[0-9]*}}> : tensor<f32>
    # CHECK: stablehlo.multiply
    # CHECK: stablehlo.exponential
    print(lowered_text(lax.exp2, f32))


@run
def integer_unary():
    # CHECK-LABEL: TEST: integer_unary
    # CHECK: stablehlo.not %arg0 : tensor<2x3xi32>
    print(lowered_text(lax.bitwise_not, i32))
    # CHECK: stablehlo.popcnt %arg0 : tensor<2x3xui8>
    print(lowered_text(lax.population_count, u8))
    # CHECK: stablehlo.count_leading_zeros %arg0 : tensor<2x3xi32>
    print(lowered_text(lax.clz, i32))


@run
def complex_parts():
    # CHECK-LABEL: TEST: complex_parts
    # CHECK: stablehlo.abs %arg0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>
    print(lowered_text(lax.abs, c64))
    # CHECK: stablehlo.real %arg0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>
    print(lowered_text(lax.real, c64))
    # CHECK: stablehlo.imag %arg0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>
    print(lowered_text(lax.imag, c64))
    # CHECK: chlo.conj
    print(lowered_text(lax.conj, c64))
    # CHECK: stablehlo.complex %arg0, %arg1 : tensor<2x3xcomplex<f32>>
    print(lowered_text(lax.complex, f32, f32))


@run
def binary():
    # CHECK-LABEL: TEST: binary
    for name in ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter"]:
        print(name, lowered_text(getattr(lax, name), f32, f32).splitlines()[2].strip())
    # CHECK: add %0 = stablehlo.add %arg0, %arg1 : tensor<2x3xf32>
    # CHECK: sub %0 = stablehlo.subtract %arg0, %arg1
    # CHECK: mul %0 = stablehlo.multiply %arg0, %arg1
    # CHECK: div %0 = stablehlo.divide %arg0, %arg1
    # CHECK: rem %0 = stablehlo.remainder %arg0, %arg1
    # CHECK: pow %0 = stablehlo.power %arg0, %arg1
    # CHECK: max %0 = stablehlo.maximum %arg0, %arg1
    # CHECK: min %0 = stablehlo.minimum %arg0, %arg1
    # CHECK: atan2 %0 = stablehlo.atan2 %arg0, %arg1
    # CHECK: nextafter %0 = chlo.next_after %arg0, %arg1
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
                 "shift_right_logical"]:
        print(name, lowered_text(getattr(lax, name), i32, i32).splitlines()[2].strip())
    # CHECK: bitwise_and %0 = stablehlo.and %arg0, %arg1 : tensor<2x3xi32>
    # CHECK: bitwise_or %0 = stablehlo.or
    # CHECK: bitwise_xor %0 = stablehlo.xor
    # CHECK: shift_left %0 = stablehlo.shift_left
    # CHECK: shift_right_arithmetic %0 = stablehlo.shift_right_arithmetic
    # CHECK: shift_right_logical %0 = stablehlo.shift_right_logical


@run
def mul_out_dtype():
    # CHECK-LABEL: TEST: mul_out_dtype
    # jax.lax.mul's out_dtype, a parameter of mul as JAX's: each operand converted to it, then the multiply.
    # CHECK: %0 = stablehlo.convert %arg0 : (tensor<2x3xbf16>) -> tensor<2x3xf32>
    # CHECK: %1 = stablehlo.convert %arg1 : (tensor<2x3xbf16>) -> tensor<2x3xf32>
    # CHECK: %2 = stablehlo.multiply %0, %1 : tensor<2x3xf32>
    print(lowered_text(lambda x, y: lax.mul(x, y, out_dtype=np.float32), spec((2, 3), "bfloat16"),
                       spec((2, 3), "bfloat16")))
    # Written even when the operand has the type already; int8 * float32 -> int32.
    # CHECK: %0 = stablehlo.convert %arg0 : (tensor<2x3xi8>) -> tensor<2x3xi32>
    # CHECK: %1 = stablehlo.convert %arg1 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    # CHECK: %2 = stablehlo.multiply %0, %1 : tensor<2x3xi32>
    print(lowered_text(lambda x, y: lax.mul(x, y, out_dtype=np.int32), spec((2, 3), "int8"), f32))
    # CHECK: %0 = stablehlo.convert %arg0 : tensor<2x3xf32>
    # CHECK: stablehlo.multiply %0, %1 : tensor<2x3xf32>
    print(lowered_text(lambda x, y: lax.mul(x, y, out_dtype=np.float32), f32, f32))
    # bool: a multiply of i1 values (their logical and), as JAX lowers it.
    # CHECK: stablehlo.convert %arg0 : (tensor<2x3xi8>) -> tensor<2x3xi1>
    # CHECK: stablehlo.multiply %0, %1 : tensor<2x3xi1>
    print(lowered_text(lambda x, y: lax.mul(x, y, out_dtype=np.bool_), spec((2, 3), "int8"), f32))


@run
def comparisons():
    # CHECK-LABEL: TEST: comparisons
    # CHECK: stablehlo.compare  LT, %arg0, %arg1,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    print(lowered_text(lax.lt, f32, f32))
    # CHECK: stablehlo.compare  EQ, %arg0, %arg1,  SIGNED
    print(lowered_text(lax.eq, i32, i32))
    # CHECK: stablehlo.compare  GE, %arg0, %arg1,  UNSIGNED
    print(lowered_text(lax.ge, u8, u8))
    for name in ["ne", "le", "gt"]:
        print(name, "compare" in lowered_text(getattr(lax, name), f32, f32))
    # CHECK: ne True
    # CHECK: le True
    # CHECK: gt True


@run
def rounding():
    # CHECK-LABEL: TEST: rounding
    # CHECK: stablehlo.round_nearest_afz
    print(lowered_text(lambda x: lax.round(x, 0), f32))
    # CHECK: stablehlo.round_nearest_even
    print(lowered_text(lambda x: lax.round(x, 1), f32))


@run
def integer_pow():
    # CHECK-LABEL: TEST: integer_pow
    # x**5 = x * (x^2)^2: three multiplies.
    # CHECK: %0 = stablehlo.multiply %arg0, %arg0
    # CHECK: %1 = stablehlo.multiply %0, %0
    # CHECK: %2 = stablehlo.multiply %arg0, %1
    # CHECK-NOT: stablehlo.multiply
    # CHECK: return %2
    print(lowered_text(lambda x: lax.integer_pow(x, 5), f32))


@run
def select_and_clamp():
    # CHECK-LABEL: TEST: select_and_clamp
    # CHECK: stablehlo.select %arg0, %arg1, %arg2 : tensor<2x3xi1>, tensor<2x3xf32>
    print(lowered_text(lax.select, b, f32, f32))
    # Three cases with an int32 selector: a binary tree of selects.
    # CHECK: stablehlo.compare  LT
    # CHECK: stablehlo.select
    # CHECK: stablehlo.select
    print(lowered_text(lax.select_n, i32, f32, f32, f32))
    # CHECK: stablehlo.clamp %arg0, %arg1, %arg2 : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    print(lowered_text(lax.clamp, spec((), "float32"), f32, spec((), "float32")))


@run
def conversions():
    # CHECK-LABEL: TEST: conversions
    # CHECK: stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    print(lowered_text(lambda x: lax.convert_element_type(x, np.int32), f32))
    # Conversion to bool is `x != 0`, not truncation.
    # CHECK: stablehlo.compare  NE
    print(lowered_text(lambda x: lax.convert_element_type(x, np.bool_), f32))
    # CHECK: stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    print(lowered_text(lambda x: lax.bitcast_convert_type(x, np.int32), f32))
    # CHECK: stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3x2xui16>
    print(lowered_text(lambda x: lax.bitcast_convert_type(x, np.uint16), f32))


@run
def sign_of_unsigned():
    # CHECK-LABEL: TEST: sign_of_unsigned
    # stablehlo.sign takes no unsigned integers: x != 0, converted (JAX's).
    # CHECK: %[[NZ:.*]] = stablehlo.compare  NE, %arg0, %{{.*}},  UNSIGNED
    # CHECK: stablehlo.convert %[[NZ]] : (tensor<2x3xi1>) -> tensor<2x3xui8>
    # CHECK-NOT: stablehlo.sign
    print(lowered_text(lax.sign, u8))


@run
def complex_extrema():
    # CHECK-LABEL: TEST: complex_extrema
    # By real part, then imaginary part, as JAX lowers them.
    # CHECK: %[[RX:.*]] = stablehlo.real %arg0
    # CHECK: %[[RY:.*]] = stablehlo.real %arg1
    # CHECK: %[[IX:.*]] = stablehlo.imag %arg0
    # CHECK: %[[IY:.*]] = stablehlo.imag %arg1
    # CHECK: %[[EQ:.*]] = stablehlo.compare  EQ, %[[RX]], %[[RY]],  FLOAT
    # CHECK: %[[BYI:.*]] = stablehlo.compare  GT, %[[IX]], %[[IY]],  FLOAT
    # CHECK: %[[BYR:.*]] = stablehlo.compare  GT, %[[RX]], %[[RY]],  FLOAT
    # CHECK: %[[PICK:.*]] = stablehlo.select %[[EQ]], %[[BYI]], %[[BYR]]
    # CHECK: stablehlo.select %[[PICK]], %arg0, %arg1 : tensor<2x3xi1>, tensor<2x3xcomplex<f32>>
    # CHECK-NOT: stablehlo.maximum
    print(lowered_text(lax.max, c64, c64))
    # CHECK: stablehlo.compare  LT
    # CHECK-NOT: stablehlo.minimum
    print(lowered_text(lax.min, c64, c64))


@run
def pow_of_an_integer_exponent():
    # CHECK-LABEL: TEST: pow_of_an_integer_exponent
    # An integer exponent (any width) is converted to the base's type, as JAX lowers lax.pow.
    # CHECK: %[[Y:.*]] = stablehlo.convert %arg1 : (tensor<2x3xi32>) -> tensor<2x3xf32>
    # CHECK: stablehlo.power %arg0, %[[Y]] : tensor<2x3xf32>
    print(lowered_text(lax.pow, f32, i32))
    # CHECK: stablehlo.convert %arg1 : (tensor<2x3xui8>) -> tensor<2x3xcomplex<f32>>
    print(lowered_text(lax.pow, c64, spec((2, 3), "uint8")))


@run
def square():
    # CHECK-LABEL: TEST: square
    # jax.lax.square's lowering: chlo.square for floats and complex numbers, a multiply for integers.
    # CHECK: chlo.square %arg0 : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
    print(lowered_text(lax.square, c64))
    # CHECK: chlo.square %arg0 : tensor<2x3xf32> -> tensor<2x3xf32>
    print(lowered_text(lax.square, f32))
    # CHECK: stablehlo.multiply %arg0, %arg0 : tensor<2x3xi32>
    print(lowered_text(lax.square, i32))


@run
def conj_of_a_real():
    # CHECK-LABEL: TEST: conj_of_a_real
    # A float32 operand becomes complex64 with a zero imaginary part (JAX's lowering of lax.conj).
    # CHECK: %[[ZERO:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    # CHECK: stablehlo.complex %arg0, %[[ZERO]] : tensor<2x3xcomplex<f32>>
    print(lowered_text(lax.conj, f32))
    # CHECK: chlo.conj %arg0
    print(lowered_text(lax.conj, c64))


@run
def complex_sine_and_cosine():
    # CHECK-LABEL: TEST: complex_sine_and_cosine
    # From the real parts, sinh and cosh through expm1 (JAX's formula): a tiny imaginary part survives.
    # CHECK: %[[A:.*]] = stablehlo.real %arg0
    # CHECK: %[[B:.*]] = stablehlo.imag %arg0
    # CHECK: stablehlo.sine %[[A]] : tensor<2x3xf32>
    # CHECK: stablehlo.cosine %[[A]] : tensor<2x3xf32>
    # CHECK: stablehlo.exponential_minus_one %[[B]]
    # CHECK: %[[ZERO:.*]] = stablehlo.compare  EQ, %[[A]]
    # CHECK: stablehlo.select %[[ZERO]], %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xcomplex<f32>>
    # CHECK-NOT: stablehlo.sine %arg0
    print(lowered_text(lax.sin, c64))
    # CHECK: stablehlo.negate
    # CHECK-NOT: stablehlo.cosine %arg0
    print(lowered_text(lax.cos, c64))
