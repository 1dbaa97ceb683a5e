"""Print how a (2, 4) mesh splits an 8x8 array under several PartitionSpecs.

Each cell of the picture lists the ids of the devices holding that element
(``0123`` = devices 0, 1, 2 and 3). Output is pasted into docs/sharding.md.

Run: TOOLKIT_NUM_CPU_DEVICES=8 python docs/sharding_pictures.py
"""

import os

os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")

import numpy as np  # noqa: E402

from toolkit.runtime.client import devices  # noqa: E402
from toolkit.shard import Mesh, NamedSharding, P  # noqa: E402


def picture(sharding, shape=(8, 8)) -> str:
    holders = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        holders[index] = []
    for device, index in sharding.devices_indices_map(shape).items():
        for cell in np.ndindex(*shape):
            if all(s.start is None or s.start <= c < s.stop for c, s in zip(cell, index)):
                holders[cell].append(device.id)
    width = max(len("".join(map(str, sorted(h)))) for h in holders.flat)
    rows = [" ".join("".join(map(str, sorted(holders[r, c]))).rjust(width) for c in range(shape[1]))
            for r in range(shape[0])]
    return "\n".join(rows)


def main() -> None:
    mesh = Mesh(np.array(devices()[:8]).reshape(2, 4), ("x", "y"))
    print("mesh device ids:\n" + "\n".join(" ".join(map(str, r)) for r in mesh.device_ids.tolist()))
    for spec in [P("x", "y"), P("y", "x"), P("x"), P(None, "y"), P(("x", "y")), P(None, ("y", "x")), P()]:
        s = NamedSharding(mesh, spec)
        print(f"\n### {spec}\nshard shape {s.shard_shape((8, 8))}, mhlo.sharding {s._to_xla_hlo_sharding(2)}\n")
        print(picture(s))


if __name__ == "__main__":
    main()
