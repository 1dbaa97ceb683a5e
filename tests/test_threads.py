"""jit from several threads: shared compiled functions, concurrent compilation, eager ops.

* 8 threads x 2,000 calls of one compiled ``toolkit.jit`` function, half on
  the fast path (toolkit Arrays) and half through the signature cache (numpy
  inputs), every result checked;
* 8 threads each jitting (tracing, lowering, compiling) distinct functions
  at the same time, plus eager ops, every result checked;
* 8 threads making the first call of one function together (the cache fill
  races), every result checked.
"""

from __future__ import annotations

import threading

import numpy as np

import toolkit
import toolkit.numpy as tnp

THREADS = 8


def _run_threads(target, n: int = THREADS) -> None:
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,), name=f"jit-{i}") for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread did not finish within 600 s"
    if errors:
        raise errors[0]


def test_one_compiled_function_from_8_threads_x_2000_calls():
    f = toolkit.jit(lambda x, y: x * 2.0 + y)
    base = np.arange(16, dtype=np.float32)
    f(base, base)  # compiled once, before the threads
    calls = 2000

    def work(i: int) -> None:
        x_np = np.full(16, float(i), np.float32)
        x_array, y = toolkit.device_put(x_np), toolkit.device_put(base)
        expected = 2.0 * x_np + base
        for k in range(calls):
            out = f(x_array, y) if (k + i) % 2 else f(x_np, base)
            got = np.asarray(out)
            if not np.array_equal(got, expected):
                raise AssertionError(f"thread {i}, call {k}: {got} != {expected}")

    _run_threads(work)


def test_8_threads_each_jitting_distinct_functions():
    def work(i: int) -> None:
        for j in range(3):
            scale, shift = float(i + 1), float(10 * j)
            n = 3 + i + j  # distinct shapes too: nothing can be shared by accident

            def fun(x, y, scale=scale, shift=shift):
                return tnp.sin(x) * scale + y @ y.T + shift

            f = toolkit.jit(fun)
            x = np.linspace(-1, 1, n * n, dtype=np.float32).reshape(n, n)
            y = np.full((n, 2), 0.5, np.float32)
            expected = np.sin(x) * scale + y @ y.T + shift
            for _ in range(3):
                np.testing.assert_allclose(np.asarray(f(x, y)), expected, rtol=1e-5, atol=1e-5,
                                           err_msg=f"thread {i} function {j}")
            # eager primitives (their own compile cache) from the same threads
            np.testing.assert_allclose(np.asarray(tnp.cos(x) + float(i)), np.cos(x) + i, rtol=1e-5, atol=1e-5)

    _run_threads(work)


def test_8_threads_first_call_of_one_function_together():
    f = toolkit.jit(lambda x: tnp.tanh(x) * 3.0 - 1.0)

    def work(i: int) -> None:
        x = np.full((5, 7), i / 8.0, np.float32)
        for _ in range(50):
            np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x) * 3.0 - 1.0, rtol=1e-5, atol=1e-6)

    _run_threads(work)
