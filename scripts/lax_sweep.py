"""Where toolkit.lax's primitives crash or differ from jax.lax's, per dtype: a sweep that survives crashes.

Every elementwise ``lax`` function below on arrays of every dtype (unary ones on each; binary ones on two arrays
of one dtype, as lax requires, and ``pow`` with an integer exponent of each width), the reductions, cumulative
ops and sorts on each, ``convert_element_type`` and ``bitcast_convert_type`` between every pair, and the ops with
kernels of their own (``dot_general``, convolution, FFT, the LAPACK-backed ``lax.linalg``, sorts of several
operands, padding, windows) on each dtype, eagerly in toolkit and in JAX. It prints one line per difference:
an error on one side only, the dtype, the shape, the values beyond 2e-6 relative, or a **crash** (the process
died: XLA given a program it cannot take, as ``rem`` of complex numbers once was).

The cases run in a worker process that announces each case before it starts; when the worker dies, the case it
was running is reported as a crash and a new worker goes on from the next one, so one crash hides nothing.

    python scripts/lax_sweep.py [x64] [--only NAME,...]     # ~2-4 minutes; needs jax (the interop extra)

Errors on both sides are agreement (their messages are not compared). toolkit refusing what JAX computes, or the
reverse, is printed as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any, Callable, Iterator

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16", "float32",
          "complex64"]
X64_DTYPES = ["int64", "uint64", "float64", "complex128"]

UNARY = """abs acos acosh asin asinh atan atanh bessel_i0e bessel_i1e bitwise_not cbrt ceil clz conj cos cosh digamma
erf erf_inv erfc exp exp2 expm1 floor imag is_finite lgamma log log1p logistic neg population_count real reciprocal
round rsqrt sign sin sinh sqrt square tan tanh""".split()
BINARY = """add atan2 bitwise_and bitwise_or bitwise_xor complex div eq ge gt igamma igammac le lt max min mul mulhi
ne nextafter polygamma pow rem shift_left shift_right_arithmetic shift_right_logical sub zeta""".split()

def _square(x: Any) -> Any:
    """A 4x4 matrix of ``x``'s dtype, well conditioned where the dtype allows (a linear-algebra operand)."""
    import numpy as np
    flat = np.resize(x.ravel(), 16).reshape(4, 4)
    if x.dtype.kind in "iub":
        return flat
    finite = np.where(np.isfinite(flat.astype(np.complex128)), flat, 0).astype(x.dtype)
    eye = np.eye(4).astype(x.dtype)
    return (finite * np.asarray(0.1, x.dtype) + eye * np.asarray(4, x.dtype)).astype(x.dtype)


def _structured() -> dict[str, Callable[[Any, Any, Any], Any]]:
    """name -> f(lax, x, np): ops whose operands are built from ``x`` (XLA's kernels and LAPACK's custom calls
    are where an unexpected dtype can crash a process)."""
    return {
        "dot_general": lambda lax, x, np: lax.dot_general(x, x, (((1,), (1,)), ((), ()))),
        "dot_general_batched": lambda lax, x, np: lax.dot_general(x[None], x[None], (((2,), (2,)), ((0,), (0,)))),
        "conv_general_dilated": lambda lax, x, np: lax.conv_general_dilated(
            x.reshape(1, 2, 5), x[:, :3].reshape(1, 2, 3), (1,), "VALID"),
        "fft": lambda lax, x, np: lax.fft(x, "FFT", (5,)),
        "rfft": lambda lax, x, np: lax.fft(x, "RFFT", (5,)),
        "clamp": lambda lax, x, np: lax.clamp(x.flat[1], x, x.flat[4]),
        "select_n": lambda lax, x, np: lax.select_n(np.arange(10).reshape(2, 5) % 2 == 0, x, np.roll(x, 3)),
        "sort_two_operands": lambda lax, x, np: lax.sort((x, np.roll(x, 3)), num_keys=2),
        "sort_key_val": lambda lax, x, np: lax.sort_key_val(x, np.roll(x, 3)),
        "pad": lambda lax, x, np: lax.pad(x, x.flat[2], [(1, 1, 1), (0, 2, 0)]),
        "dynamic_update_slice": lambda lax, x, np: lax.dynamic_update_slice(x, x[:, :2], (np.int32(0), np.int32(2))),
        "reduce_window_max": lambda lax, x, np: lax.reduce_window(x, x.flat[6], lax.max, (1, 2), (1, 1)),
        "reduce_precision": lambda lax, x, np: lax.reduce_precision(x, 5, 10),
        "cholesky": lambda lax, x, np: lax.linalg.cholesky(_square(x)),
        "qr": lambda lax, x, np: lax.linalg.qr(_square(x)),
        "eigh": lambda lax, x, np: lax.linalg.eigh(_square(x)),
        "svd": lambda lax, x, np: lax.linalg.svd(_square(x)),
        "lu": lambda lax, x, np: lax.linalg.lu(_square(x)),
        "triangular_solve": lambda lax, x, np: lax.linalg.triangular_solve(_square(x), _square(x), left_side=True,
                                                                           lower=True),
        "eig": lambda lax, x, np: lax.linalg.eig(_square(x), compute_left_eigenvectors=False,
                                                 compute_right_eigenvectors=False),
        "schur": lambda lax, x, np: lax.linalg.schur(_square(x), compute_schur_vectors=False),
        "hessenberg": lambda lax, x, np: lax.linalg.hessenberg(_square(x))[0],
        "tridiagonal": lambda lax, x, np: lax.linalg.tridiagonal(_square(x))[1:3],
    }


#: Reductions and scans over axis 0 of a 2-d operand, and sorts along its last axis.
AXIS = """argmax argmin cumlogsumexp cummax cummin cumprod cumsum reduce_and reduce_max reduce_min reduce_or
reduce_prod reduce_sum reduce_xor sort top_k""".split()


def _values(dtype_name: str) -> Any:
    """A 2x5 operand of ``dtype_name`` holding zeros, extremes and (for inexact types) infinities and NaN."""
    import ml_dtypes
    import numpy as np
    dtype = np.dtype(getattr(ml_dtypes, dtype_name, None) or dtype_name)
    if dtype.kind == "b":
        flat = [True, False, True, True, False, False, True, False, True, False]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = [0, 1, 2, 3, 7, info.max, info.min, 5, 1, 0] if dtype.kind == "i" else \
            [0, 1, 2, 3, 7, info.max, 128, 5, 1, 0]
        if dtype.kind == "i":
            flat[7] = -5
    elif dtype.kind == "f":
        flat = [0.0, -0.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-3, 7.0]
    else:
        flat = [0, 1 + 1j, -1j, 2.5, np.inf, np.nan, -3 + 0j, 0.5j, 7, 1j]
    return np.array(flat).astype(dtype).reshape(2, 5)


def cases(dtypes: list[str]) -> list[dict[str, Any]]:
    """Every case of the sweep, as JSON-able dicts: ``{"op", "kind", "dtypes"}``."""
    out: list[dict[str, Any]] = []
    for name in UNARY:
        out += [{"op": name, "kind": "unary", "dtypes": [d]} for d in dtypes]
    for name in BINARY:
        out += [{"op": name, "kind": "binary", "dtypes": [d]} for d in dtypes]
    for name in AXIS:
        out += [{"op": name, "kind": "axis", "dtypes": [d]} for d in dtypes]
    for name in _structured():
        out += [{"op": name, "kind": "structured", "dtypes": [d]} for d in dtypes]
    # lax.pow also takes an integer exponent of any width with a floating or complex base.
    out += [{"op": "pow", "kind": "binary", "dtypes": [a, b]} for a in dtypes for b in dtypes
            if a != b and not a.startswith(("int", "uint", "bool")) and b.startswith(("int", "uint"))]
    for kind in ("convert_element_type", "bitcast_convert_type"):
        out += [{"op": kind, "kind": "convert", "dtypes": [a, b]} for a in dtypes for b in dtypes]
    return out


def _call(lax: Any, case: dict[str, Any]) -> Any:
    import ml_dtypes
    import numpy as np
    x = _values(case["dtypes"][0])
    kind = case["kind"]
    if kind == "structured":
        return _structured()[case["op"]](lax, x, np)
    fn = getattr(lax, case["op"])
    if kind == "unary":
        return fn(x)
    if kind == "binary":
        y = np.roll(x, 3) if len(case["dtypes"]) == 1 else _values(case["dtypes"][1])
        return fn(x, y)
    if kind == "convert":
        target = np.dtype(getattr(ml_dtypes, case["dtypes"][1], None) or case["dtypes"][1])
        return fn(x, target)
    name = case["op"]
    if name in ("argmax", "argmin"):
        return fn(x, 0, np.int32)
    if name.startswith("reduce_"):
        return fn(x, (0,))
    if name == "sort":
        return fn(x)
    if name == "top_k":
        return fn(x, 2)
    return fn(x, axis=0)


def outcome(lax: Any, case: dict[str, Any]) -> Any:
    """``("ok", [(dtype, shape, values)...])`` or ``("error", "TypeName")``: one library's result of a case."""
    import numpy as np
    try:
        result = _call(lax, case)
        while isinstance(result, (tuple, list)) and any(isinstance(p, (tuple, list)) for p in result):
            result = [q for p in result for q in (p if isinstance(p, (tuple, list)) else (p,))]
        parts = result if isinstance(result, (tuple, list)) else (result,)
        return "ok", [(str(np.asarray(p).dtype), np.asarray(p).shape, np.asarray(p)) for p in parts]
    except Exception as error:  # noqa: BLE001 - the sweep compares failures by kind
        return "error", type(error).__name__


def difference(ours: Any, theirs: Any) -> str | None:
    """What differs between toolkit's and JAX's outcome of one case, or None."""
    import numpy as np
    if ours[0] != theirs[0]:
        return f"toolkit raised {ours[1]}, JAX computes" if ours[0] == "error" else f"JAX raises {theirs[1]}, toolkit computes"
    if ours[0] == "error":
        return None
    if len(ours[1]) != len(theirs[1]):
        return f"{len(ours[1])} outputs vs {len(theirs[1])}"
    for (d1, s1, a1), (d2, s2, a2) in zip(ours[1], theirs[1]):
        if d1 != d2:
            return f"dtype {d1} vs {d2}"
        if s1 != s2:
            return f"shape {s1} vs {s2}"
        if a1.dtype.kind not in "iub":  # floating (bfloat16's kind is "V") or complex: to 2e-6, NaNs equal
            wide = np.complex128 if a1.dtype.kind == "c" else np.float64
            if not np.allclose(a1.astype(wide), a2.astype(wide), rtol=2e-6, atol=0, equal_nan=True):
                return f"values {a1.ravel().tolist()} vs {a2.ravel().tolist()}"
        elif not np.array_equal(a1, a2):
            return f"values {a1.ravel().tolist()} vs {a2.ravel().tolist()}"
    return None


def worker(x64: bool) -> None:
    """Read cases (one JSON per line) from stdin; print ``START i`` before and a JSON verdict after each."""
    import warnings
    warnings.filterwarnings("ignore")
    import jax
    if x64:
        jax.config.update("jax_enable_x64", True)
    import toolkit
    if x64:
        toolkit.config.update("jax_enable_x64", True)
    for line in sys.stdin:
        index, case = json.loads(line)
        print(f"START {index}", flush=True)
        verdict = difference(outcome(toolkit.lax, case), outcome(jax.lax, case))
        print(json.dumps([index, verdict]), flush=True)


def run(case_list: list[dict[str, Any]], x64: bool, *, command: list[str] | None = None,
        timeout: float = 120.0) -> Iterator[tuple[dict[str, Any], str]]:
    """Each case that differs, with what differs (``CRASH ...`` for a case its worker died on).

    ``command`` starts a worker (default: this script with ``--worker``); one that dies is replaced and
    the sweep goes on from the case after the one it died on. ``timeout`` bounds one case.
    """
    import queue
    import threading
    command = command or [sys.executable, os.path.abspath(__file__), "--worker"] + (["x64"] if x64 else [])
    start = 0
    while start < len(case_list):
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        assert process.stdin is not None and process.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()

        # The queue is bound now: a killed worker's reader may still be draining its pipe when the next worker
        # starts, and must not put its lines (or its end) into the next worker's queue.
        def read(stream: Any = process.stdout, into: queue.Queue[str | None] = lines) -> None:
            for out_line in stream:
                into.put(out_line)
            into.put(None)
        threading.Thread(target=read, daemon=True).start()
        try:
            for i in range(start, len(case_list)):
                process.stdin.write(json.dumps([i, case_list[i]]) + "\n")
            process.stdin.close()
        except BrokenPipeError:
            pass
        running: int | None = None
        try:
            while True:
                try:
                    line = lines.get(timeout=timeout)
                except queue.Empty:
                    process.kill()
                    yield case_list[running if running is not None else start], f"HANG (no answer in {timeout:.0f} s)"
                    start = (running if running is not None else start) + 1
                    break
                if line is None:  # the worker is gone
                    status = process.wait()
                    if running is not None:
                        yield case_list[running], f"CRASH (the process died: exit status {status})"
                        start = running + 1
                    else:
                        start = len(case_list) if status == 0 else start + 1
                    break
                if line.startswith("START "):
                    running = int(line.split()[1])
                    continue
                if not line.startswith("["):
                    continue  # jaxlib's own output
                index, verdict = json.loads(line)
                running = None
                if verdict is not None:
                    yield case_list[index], verdict
                if index == len(case_list) - 1:
                    process.wait()
                    start = len(case_list)
                    break
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def describe(case: dict[str, Any]) -> str:
    return f"{case['op']}({' -> '.join(case['dtypes'])})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("x64", nargs="?", choices=["x64"], help="with jax_enable_x64 (adds the 64-bit dtypes)")
    parser.add_argument("--only", help="comma-separated op names")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    x64 = args.x64 == "x64"
    if args.worker:
        worker(x64)
        return 0
    case_list = cases(DTYPES + (X64_DTYPES if x64 else []))
    if args.only:
        wanted = set(args.only.split(","))
        case_list = [c for c in case_list if c["op"] in wanted]
    found = 0
    for case, verdict in run(case_list, x64):
        found += 1
        print(f"{describe(case)}: {verdict}", flush=True)
    print(f"{len(case_list)} cases, {found} differences", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
