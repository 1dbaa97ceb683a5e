"""StableHLO for ``toolkit.lax.fourier``: one ``stablehlo.fft`` (XLA CPU and TPU take multi-dimensional IRFFT whole)."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from toolkit.lax import fourier
from toolkit.lowering.registry import register_lowering


@register_lowering(fourier.fft_p)
def _fft(ctx, x, *, fft_type, fft_lengths):
    return stablehlo.FftOp(x, stablehlo.FftTypeAttr.get(fft_type.name), list(fft_lengths),
                           results=[ctx.out_type]).result
