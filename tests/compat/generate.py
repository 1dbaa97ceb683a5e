"""Write the golden compatibility records of the reference programs: ``python tests/compat/generate.py``.

One record per program in ``tests/compat/records/<name>/``: ``exported.bin``
(the serialized export), ``module.mlir`` (its module text), ``inputs.npz``
and ``outputs.npz`` (flat arrays ``a0, a1, ...``), ``record.json``
(producer versions, date, avals, calling convention, artifact version).
No pickle: .npz read with ``allow_pickle=False``, JSON, raw bytes. Records are
regenerated on purpose only — ``test_compat_records.py`` reads them back as
a back-compatibility suite (the format and the module must stay readable and
give the same results with later toolkit/jaxlib versions).
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "records"
#: Small sizes keep the records (and the read-back test) small.
SIZES = {"mlp": dict(sizes=(8, 8, 4), batch=2), "transformer": dict(batch=1, seq=4, dim=8),
         "convnet": dict(batch=1, size=6), "newton": {}, "rnn": dict(steps=3, batch=2, hidden=4, features=3)}


def generate(names: list[str] | None = None) -> None:
    import toolkit
    from toolkit import export
    from toolkit.core import pytrees
    from toolkit.examples.reference_programs import PROGRAMS
    from toolkit.export import provenance
    from toolkit.export.convert import artifact_version

    for name in names or sorted(PROGRAMS):
        program = PROGRAMS[name]
        args = program.make_inputs(np.random.default_rng(0), **SIZES.get(name, {}))
        fun = toolkit.jit(program.build(toolkit))
        specs = pytrees.tree_map(lambda a: toolkit.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype), args)
        exp = export.export(fun)(*specs)
        flat_in = [np.asarray(a) for a in pytrees.tree_leaves(args)]
        flat_out = [np.asarray(o) for o in pytrees.tree_leaves(exp.call(*args))]
        out = RECORDS / name
        out.mkdir(parents=True, exist_ok=True)
        (out / "exported.bin").write_bytes(bytes(exp.serialize()))
        (out / "module.mlir").write_text(exp.mlir_module())
        np.savez(out / "inputs.npz", **{f"a{i}": a for i, a in enumerate(flat_in)})
        np.savez(out / "outputs.npz", **{f"a{i}": a for i, a in enumerate(flat_out)})
        record = {
            "program": name,
            "sizes": SIZES.get(name, {}),
            "date": datetime.date.today().isoformat(),
            "provenance": provenance.get(exp),
            "calling_convention_version": exp.calling_convention_version,
            "artifact_stablehlo": artifact_version(exp.mlir_module_serialized),
            "in_avals": [a.str_short() for a in exp.in_avals],
            "out_avals": [a.str_short() for a in exp.out_avals],
            "rtol": 1e-5, "atol": 1e-5,
        }
        (out / "record.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    generate(sys.argv[1:] or None)
