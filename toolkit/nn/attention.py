"""``toolkit.nn.dot_product_attention``: JAX's scaled dot-product attention, its ``"xla"`` implementation.

The computation is JAX 0.10.2's ``_dot_product_attention_xla`` step for step (logits in at least float32, masks
by a large negative number, softmax in float32, grouped-query heads), so values agree with JAX's; the heads of a
group are a batch dimension of the einsums here instead of a ``vmap``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit.lax.autodiff import stop_gradient
from toolkit.nn.functions import logsumexp, softmax


def _ensure_4d(t: Any) -> Any:
    t = tnp.asarray(t)
    return tnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t: Any, shape: list[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def _large_negative(dtype: Any) -> Any:
    # As JAX: -0.7 * the dtype's max, capped to float32's range (softmax runs in float32).
    dtype_max = min(float(tnp.finfo(dtype).max), float(np.finfo(np.float32).max))
    return tnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _grouped(t: Any, k: int, g: int) -> Any:
    """A (B, N|1, T, S) bias or mask as (B, K|1, G|1, T, S), the layout of the grouped logits."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    return tnp.reshape(t, (tb, 1, 1, tt, ts)) if tn == 1 else tnp.reshape(t, (tb, k, g, tt, ts))


def _apply_masks(logits: Any, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any,
                 local_window_size: tuple[int, int] | None) -> Any:
    if mask is None and not is_causal and q_seqlen is None and kv_seqlen is None and local_window_size is None:
        return logits
    combined = tnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = tnp.logical_and(combined, mask)
    t, s = logits.shape[-2], logits.shape[-1]
    if is_causal:
        combined = tnp.logical_and(combined, tnp.tril(tnp.ones((t, s), dtype=bool)))
    if local_window_size is not None:
        left, right = local_window_size
        q_pos, k_pos = tnp.arange(t)[:, None], tnp.arange(s)[None, :]
        combined = tnp.logical_and(combined, tnp.logical_and(q_pos >= k_pos - right, q_pos <= k_pos + left))
    if q_seqlen is not None or kv_seqlen is not None:
        pad: Any = True
        if q_seqlen is not None:
            pad = tnp.arange(t)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            pad = tnp.logical_and(pad, tnp.arange(s)[None, None, :] < kv_seqlen[:, None, None])
        combined = tnp.logical_and(combined, pad[:, None, None, :, :])
    return tnp.where(combined, logits, _large_negative(logits.dtype))


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None, local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None, return_residual: bool = False) -> Any:
    """Scaled dot-product attention, ``softmax(Q Kᵀ · scale + bias, masked) V`` per head (``jax.nn``'s).

    ``query`` is ``(B, T, N, H)`` (or without leading dimensions), ``key``/``value`` ``(B, S, K, H)`` with ``N`` a
    multiple of ``K`` (grouped-query attention); ``bias``/``mask`` broadcast to ``(B, N, T, S)`` (``mask`` is
    bool, True keeps); ``scale`` defaults to ``1/sqrt(H)``; ``is_causal``, ``query_seq_lengths``/
    ``key_value_seq_lengths`` (int32 ``(B,)``) and ``local_window_size`` (``(left, right)`` or one int) mask
    more. Returns the ``(B, T, N, H)`` output, and with ``return_residual=True`` also the softmax's
    log-sum-exp ``(B, T, N)``. Only ``implementation=None`` or ``"xla"`` (``"cudnn"`` needs a GPU).
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError("dot_product_attention(implementation='cudnn') is not supported by toolkit "
                                      "(GPU only in JAX); use implementation='xla' or None")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = tnp.asarray(query).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    q_seqlen = tnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_seqlen = tnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, kh, h = k.shape
    _check(v, [b, s, kh, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_seqlen, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_seqlen, [b], np.dtype("int32"), "key_value_seq_lengths")
    if q.shape[-2] % kh != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got "
                         f"{q.shape[-2]} vs {kh}")
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale

    _, t, n, _ = q.shape
    g = n // kh
    qg = tnp.reshape(q, (b, t, kh, g, h))
    logits_dtype = tnp.promote_types(q.dtype, np.float32)
    logits = tnp.einsum("BTKGH,BSKH->BKGTS", qg, k, preferred_element_type=logits_dtype)
    logits = logits * tnp.array(scale_val, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, kh, g)).astype(logits.dtype)
    padded = _apply_masks(logits, _grouped(mask, kh, g), is_causal, q_seqlen, kv_seqlen, local_window_size)
    padded = padded.astype(np.float32)  # softmax always in float32, as JAX
    probs = softmax(padded, axis=-1).astype(k.dtype)
    encoded = tnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_seqlen is not None:
        keep = tnp.arange(t)[None, :] < q_seqlen[:, None]
        encoded = encoded * keep[:, :, None, None, None].astype(encoded.dtype)
    encoded = tnp.reshape(encoded, output_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(padded, axis=-1).astype(k.dtype)  # (B, K, G, T)
    lse = tnp.transpose(lse, (0, 3, 1, 2))  # -> (B, T, K, G)
    return encoded, stop_gradient(tnp.reshape(lse, output_shape[:-1]))
