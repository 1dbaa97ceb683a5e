"""Arguments a jitted program does not read, placed elsewhere: as JAX, they neither place nor commit (pruned first)."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit


def test_an_ignored_argument_neither_places_nor_commits_as_in_jax(jx):
    # JAX's lower_sharding_computation prunes the arguments the program does not read before it places the
    # computation: one committed elsewhere neither conflicts with the others nor commits the results. toolkit
    # placed the computation on it (or refused the call); fresh and remembered calls now agree with JAX.
    for lib, devices in ((toolkit, toolkit.devices()), (jx, jx.devices())):
        f = lib.jit(lambda a, b: a * 2)
        on_1 = lib.device_put(np.ones(4, np.float32), devices[1])
        on_0 = lib.device_put(np.ones(4, np.float32), devices[0])
        for _ in range(3):  # the first call, then the remembered one
            assert f(on_1, on_0).devices() == {devices[1]}, lib.__name__  # placed by the argument it reads
            out = f(np.ones(4, np.float32), on_1)  # only the unused argument is committed: the default device
            assert out.devices() == {devices[0]} and not out.committed, lib.__name__
            np.testing.assert_array_equal(np.asarray(out), np.full(4, 2, np.float32))
        pinned = lib.jit(lambda a, b: a * 2, in_shardings=(None, lib.sharding.SingleDeviceSharding(devices[1])))
        assert pinned(np.ones(4, np.float32), np.ones(4, np.float32)).devices() == {devices[0]}, lib.__name__
        kept = lib.jit(lambda a, b: a * 2, keep_unused=True)  # kept, it places the computation and conflicts
        with pytest.raises(ValueError, match="ncompatible devices"):
            kept(on_1, on_0)
