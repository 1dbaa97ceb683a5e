"""Eager results JAX's bit for bit at XLA's default flags, the configuration users run.

The suite compiles with fast flags (level 0, the classic emitters: the root conftest.py), under which one fused
program and separate operations round alike; the differences between them show at XLA's defaults. So the
eager-granularity fixes (a function compiled as one program where JAX compiles it as one, and not where JAX runs
its operations one by one) are checked here in a process started with ``XLA_FLAGS`` empty, toolkit and JAX side
by side in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

SCRIPT = r"""
import json
import numpy as np
import jax, jax.numpy as jnp
import toolkit, toolkit.numpy as tnp

rng = np.random.default_rng(1)
x = (rng.standard_normal((6, 33)) * 3).astype(np.float32)
p = np.linspace(0.005, 0.995, 300, dtype=np.float32)
chain = [rng.standard_normal(s).astype(np.float32) for s in [(21, 26), (26, 34), (34, 12)]]
cases = {
    "gelu": lambda L, N: L.nn.gelu(N.asarray(x)),
    "var": lambda L, N: N.var(N.asarray(x), axis=0),
    "std": lambda L, N: N.std(N.asarray(x), axis=1),
    "ndtri": lambda L, N: L.scipy.special.ndtri(N.asarray(p)),
    "dawsn": lambda L, N: L.scipy.special.dawsn(N.asarray(x)),
    "expi": lambda L, N: L.scipy.special.expi(N.asarray(abs(x) + 0.01)),  # (x < 0 goes through exp1: below)
    "sici": lambda L, N: L.scipy.special.sici(N.asarray(p * 9))[0],
    "spence": lambda L, N: L.scipy.special.spence(N.asarray(abs(x) + 0.01)),  # piecewise: one program in JAX
    "expn": lambda L, N: L.scipy.special.expn(3.0, N.asarray(abs(x) + 0.01)),  # vectorize(jit(...)) in JAX
    "einsum": lambda L, N: N.einsum("ij,jk,kl->il", *[N.asarray(c) for c in chain]),
    "attention": lambda L, N: L.nn.dot_product_attention(*[N.asarray(x[:, :33].reshape(1, 6, 3, 11))] * 3),
}
differ = {}
for name, case in cases.items():
    ours, theirs = np.asarray(case(toolkit, tnp)), np.asarray(case(jax, jnp))
    if ours.dtype != theirs.dtype or not np.array_equal(ours, theirs):
        differ[name] = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
print(json.dumps(differ))
"""


def test_eager_results_are_jaxs_at_xla_default_flags():
    env = dict(os.environ, XLA_FLAGS="", TOOLKIT_NUM_CPU_DEVICES="1")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2]) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}
