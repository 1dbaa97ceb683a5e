"""Dot algorithms and the typing names of jax.lax's dot and accuracy arguments (JAX 0.10.2's definitions).

``DotAlgorithm`` / ``DotAlgorithmPreset`` passed as ``precision=`` to ``dot_general`` (and ``dot``,
``batch_matmul``...) lower as JAX lowers them: the operands converted to the algorithm's input
types, ``stablehlo.dot_general`` with ``precision = [DEFAULT, DEFAULT]`` and an ``algorithm``
attribute (none for ``DEFAULT``), accumulating in the algorithm's type, the result converted back
to the output dtype. On CPU only the presets XLA:CPU implements are accepted (JAX's check).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Union

import ml_dtypes
import numpy as np

if TYPE_CHECKING:  # for the PrecisionLike alias only: toolkit/lax/convolution.py imports this module
    from toolkit.lax.convolution import Precision

__all__ = ["AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "PrecisionLike",
           "RaggedDotDimensionNumbers", "Tolerance", "CPU_PRESETS", "algorithm_compute_types"]

_BF16 = np.dtype(ml_dtypes.bfloat16)
_F8 = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e3m4",
    "float8_e4m3", "float8_e8m0fnu") if hasattr(ml_dtypes, n))
_F8_OUTPUTS = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e4m3b11fnuz"))


class DotAlgorithm(NamedTuple):
    """An explicit dot algorithm: operand rounding types, accumulation type, decomposition counts (JAX's).

    The result dtype of the dot is unchanged; the operands are converted to
    ``lhs_precision_type``/``rhs_precision_type`` and the sum is accumulated in ``accumulation_type``.
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms known to some platform (``jax.lax.DotAlgorithmPreset``); names are ``LHS_RHS_ACCUM``."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[np.dtype, ...] | None:
        """Operand types the preset computes in (the first is what others are converted to); None: any."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16_"):
            return (np.dtype(np.float16),)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (_BF16, np.dtype(np.float32))
        if name == "F64_F64_F64":
            return (np.dtype(np.float64),)
        return (np.dtype(np.float32),)

    @property
    def supported_rhs_types(self) -> tuple[np.dtype, ...] | None:
        """As :attr:`supported_lhs_types`."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> np.dtype | None:
        """The accumulation type, or None when the output type decides."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        if name == "F16_F16_F16":
            return np.dtype(np.float16)
        if name == "BF16_BF16_BF16":
            return _BF16
        if name == "F64_F64_F64":
            return np.dtype(np.float64)
        return np.dtype(np.float32)

    def supported_output_types(self, lhs_dtype: Any, rhs_dtype: Any) -> tuple[np.dtype, ...] | None:
        """The types the dot may produce for these operand types (JAX's table)."""
        name = self.name
        if name in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return (np.dtype(np.float32), np.dtype(np.float16), _BF16) + _F8_OUTPUTS
        if name == "F16_F16_F32":
            both16 = np.dtype(lhs_dtype) == np.dtype(rhs_dtype) == np.float16
            return (np.dtype(np.float32), np.dtype(np.float16)) if both16 else (np.dtype(np.float32),)
        if name == "BF16_BF16_F32":
            both = np.dtype(lhs_dtype) == np.dtype(rhs_dtype) == _BF16
            return (np.dtype(np.float32), _BF16) if both else (np.dtype(np.float32),)
        acc = self.accumulation_type
        return None if acc is None else (acc,)


#: The presets XLA:CPU implements: JAX refuses the others when lowering for CPU.
CPU_PRESETS = frozenset({DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16, DotAlgorithmPreset.F32_F32_F32,
                         DotAlgorithmPreset.F64_F64_F64, DotAlgorithmPreset.BF16_BF16_F32,
                         DotAlgorithmPreset.BF16_BF16_F32_X3, DotAlgorithmPreset.BF16_BF16_F32_X6})


def algorithm_compute_types(algorithm: DotAlgorithm | DotAlgorithmPreset, lhs_dtype: Any, rhs_dtype: Any,
                            out_dtype: Any) -> tuple[np.dtype, np.dtype, np.dtype | None]:
    """The (lhs, rhs, accumulation) types ``algorithm`` computes in for these operand/output types (JAX's rule)."""
    if isinstance(algorithm, DotAlgorithm):
        return (np.dtype(algorithm.lhs_precision_type), np.dtype(algorithm.rhs_precision_type),
                np.dtype(algorithm.accumulation_type))

    def pick(dtype: Any, targets: Sequence[np.dtype] | None) -> np.dtype:
        if targets is None or np.dtype(dtype) in targets:
            return np.dtype(dtype)
        return targets[0]

    lhs, rhs = pick(lhs_dtype, algorithm.supported_lhs_types), pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, pick(out_dtype, algorithm.supported_output_types(lhs, rhs))


class Tolerance:
    """Tolerances for choosing a unary function's implementation (``jax.lax.Tolerance``): at most two of
    ``atol``/``rtol``/``ulps``, all non-negative and not all zero (else ``ValueError``)."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


class AccuracyMode(enum.Enum):
    """Accuracy modes of unary functions (``jax.lax.AccuracyMode``; the values are JAX's)."""

    HIGHEST = 1
    DEFAULT = 2


#: What ``precision=`` accepts (``jax.lax.PrecisionLike``).
PrecisionLike = Union[None, str, "Precision", tuple[str, str], tuple["Precision", "Precision"], DotAlgorithm,
                      DotAlgorithmPreset]

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` (``jax.lax.DotDimensionNumbers``).
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """Dimension numbers of a ragged dot (``jax.lax.RaggedDotDimensionNumbers``; what ``ragged_dot_general`` takes).

    The sequences are stored as tuples (hashable, as JAX's frozen dataclass).
    """

    dot_dimension_numbers: DotDimensionNumbers
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(tuple(int(d) for d in dims) for dims in pair) for pair in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(int(d) for d in lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(int(d) for d in rhs_group_dimensions))
