"""The pass lab: bring any program in, run a pipeline on it, and know what the pipeline did.

* ``loading`` — :func:`load_module`: MLIR text, bytecode, VHLO, a path, an
  ``ir.Module``, an ``Exported`` or a JAX ``Lowered``/``Exported`` (by duck
  typing) in, a :class:`toolkit.stages.Lowered` out;
* ``zoo`` — real programs (JAX with Flax/Equinox/Optax, and toolkit-written),
  exported into the repository, with inputs made from a seed;
* ``measurement`` — per program: op counts, XLA's cost, compile and run time and
  numerics before and after a pipeline (``toolkit lab``);
* ``reduction`` — delta debugging of a module a pipeline fails on
  (``toolkit-reduce``); ``check_lines`` — FileCheck lines generated from a
  pass's output (``toolkit-update-checks``).

See ``docs/pass-lab.md`` and ``docs/filecheck.md``.
"""
