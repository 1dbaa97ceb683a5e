"""The standing fuzz run (``bash scripts/fuzz.sh``): many inputs, counts printed, findings saved.

Areas, each with its own count (``TOOLKIT_FUZZ_EXAMPLES`` or ``--examples``
sets the toolkit-opt and export counts, default 10,000 each):

* ``opt-text`` / ``opt-bytecode`` -- mutated and truncated MLIR text (lit
  chunks) and binary modules (MLIR bytecode, VHLO) through ``toolkit-opt``,
  many per worker process (:mod:`fuzz_worker`), with several command lines;
* ``opt-process`` -- a sample of the same through the installed
  ``toolkit-opt`` as real processes;
* ``export-deserialize`` -- structure-aware mutations of serialized exports
  (:mod:`fuzz_flatbuf`) through ``toolkit.export.deserialize``, in this
  process (pure Python); a benign result must re-serialize to an equal object;
* ``export-inspect`` -- a sample of the same blobs through ``toolkit export inspect`` (and ``mlir``);
* ``pipelines`` -- random pass pipelines over the lit inputs.

Outcomes: ``output`` (success), ``clean-error`` (one error message, exit
status 1), ``unclean`` (an escaped exception, a traceback, a vague or wrong
kind of error), ``crash`` (a signal), ``hang`` (over ``--timeout`` seconds).
The exit status is 1 if any case is unclean, crashed or hung; one reproducer
per distinct failure goes to ``--findings`` (default ``/tmp/toolkit-fuzz-findings``)
with ``README.md`` saying how to run it.

    python tests/fuzz/standing.py --examples 10000 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..")))
os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import fuzz_corpus  # noqa: E402
import fuzz_flatbuf  # noqa: E402
import fuzz_mutate  # noqa: E402
import fuzz_pipelines  # noqa: E402
import fuzz_worker  # noqa: E402

OUTCOMES = ("output", "clean-error", "unclean", "crash", "hang")


def signature(outcome: str, text: str) -> str:
    """A short key for a failure, so that one reproducer is kept per distinct problem."""
    for pattern in (r"LLVM ERROR[^\n]*", r"Check failed[^\n]*", r"Fatal Python error: \w+[^\n]*",
                    r"double free[^\n]*", r"\n(\w+(?:Error|Exception)\b[^\n]*)", r"Timeout \(",
                    r"File \"[^\"]*toolkit/[^\"]*\", line \d+ in \w+"):
        match = re.search(pattern, text)
        if match:
            key = match.group(match.lastindex or 0)
            return outcome + ": " + re.sub(r"\d+", "N", key)[:160]
    return outcome + ": " + re.sub(r"\d+", "N", text.strip().splitlines()[-1] if text.strip() else "")[:160]


class Findings:
    def __init__(self, folder: str):
        self.folder = folder
        self.seen: collections.Counter = collections.Counter()
        self.lines: list[str] = []

    def add(self, area: str, outcome: str, detail: str, data: bytes, suffix: str, how: str) -> None:
        key = signature(outcome, detail)
        self.seen[key] += 1
        if self.seen[key] > 1:
            return
        os.makedirs(self.folder, exist_ok=True)
        name = f"{area}-{len(self.lines) + 1:03d}{suffix}"
        with open(os.path.join(self.folder, name), "wb") as f:
            f.write(data)
        with open(os.path.join(self.folder, name + ".txt"), "w") as f:
            f.write(f"{how}\n\n{detail}\n")
        self.lines.append(f"* `{name}` -- {key} -- {how}")
        with open(os.path.join(self.folder, "README.md"), "w") as f:
            f.write("# Fuzz findings (one reproducer per distinct failure; details in NAME.txt)\n\n")
            f.write("\n".join(self.lines) + "\n")


class Table:
    def __init__(self) -> None:
        self.counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.seconds: collections.Counter = collections.Counter()

    def add(self, area: str, outcome: str, seconds: float = 0.0) -> None:
        self.counts[area][outcome] += 1
        self.seconds[area] += seconds

    def bad(self) -> int:
        return sum(c[o] for c in self.counts.values() for o in ("unclean", "crash", "hang"))

    def render(self) -> str:
        header = f"{'area':<20}{'inputs':>8}{'outputs':>9}{'clean errors':>14}{'unclean':>9}{'crashes':>9}{'hangs':>7}"
        lines = [header, "-" * len(header)]
        total: collections.Counter = collections.Counter()
        for area, c in self.counts.items():
            n = sum(c.values())
            total.update(c)
            lines.append(f"{area:<20}{n:>8}{c['output']:>9}{c['clean-error']:>14}{c['unclean']:>9}"
                         f"{c['crash']:>9}{c['hang']:>7}")
        lines.append("-" * len(header))
        lines.append(f"{'total':<20}{sum(total.values()):>8}{total['output']:>9}{total['clean-error']:>14}"
                     f"{total['unclean']:>9}{total['crash']:>9}{total['hang']:>7}")
        return "\n".join(lines)


def _progress(area: str, i: int, n: int, table: Table, start: float) -> None:
    if i and i % 500 == 0:
        c = table.counts[area]
        print(f"  {area}: {i}/{n} ({time.time() - start:.0f} s) bad so far: "
              f"{c['unclean'] + c['crash'] + c['hang']}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Areas
# --------------------------------------------------------------------------


def run_opt(n: int, rng: random.Random, worker: fuzz_worker.Worker, table: Table, findings: Findings,
            binary_share: float = 0.3) -> None:
    texts = fuzz_corpus.text_inputs()
    others = tuple(t for _, t in texts)
    tokens = fuzz_corpus.tokens()
    binaries = fuzz_corpus.bytecode_inputs()
    start = time.time()
    for i in range(n):
        if binaries and rng.random() < binary_share:
            area = "opt-bytecode"
            name, data = rng.choice(binaries)
            mutated = fuzz_mutate.mutate_bytes(data, rng)
            argv, filename, suffix = rng.choice(fuzz_mutate.BINARY_ARGVS), "input.mlirbc", ".mlirbc"
        else:
            area = "opt-text"
            name, text = rng.choice(texts)
            mutated = fuzz_mutate.mutate_text(text, rng, tokens, others).encode("utf-8", "surrogatepass")
            argv, filename, suffix = rng.choice(fuzz_mutate.TEXT_ARGVS), "input.mlir", ".mlir"
        result = worker.opt(mutated, argv, filename=filename)
        table.add(area, result.outcome, result.seconds)
        if result.bad:
            findings.add(area, result.outcome, result.detail or result.stderr, mutated, suffix,
                         f"toolkit-opt {' '.join(a.replace('{input}', 'FILE') for a in argv)}  (seed: {name})")
        _progress(area, i, n, table, start)


def run_opt_processes(n: int, rng: random.Random, table: Table, findings: Findings) -> None:
    texts = fuzz_corpus.text_inputs()
    binaries = fuzz_corpus.bytecode_inputs()
    for i in range(n):
        if binaries and i % 3 == 2:
            name, data = rng.choice(binaries)
            mutated, argv, suffix = fuzz_mutate.mutate_bytes(data, rng), rng.choice(fuzz_mutate.BINARY_ARGVS), ".mlirbc"
        else:
            name, text = rng.choice(texts)
            mutated = fuzz_mutate.mutate_text(text, rng).encode("utf-8", "surrogatepass")
            argv, suffix = rng.choice(fuzz_mutate.TEXT_ARGVS), ".mlir"
        result = fuzz_worker.run_real_opt(mutated, argv, filename="input" + suffix)
        table.add("opt-process", result.outcome, result.seconds)
        if result.bad:
            findings.add("opt-process", result.outcome, result.detail + "\n" + result.stderr, mutated, suffix,
                         f"toolkit-opt {' '.join(a.replace('{input}', 'FILE') for a in argv)}  (seed: {name})")


def run_export(n: int, n_inspect: int, rng: random.Random, worker: fuzz_worker.Worker, table: Table,
               findings: Findings) -> None:
    schema = fuzz_flatbuf.Schema.load()
    seeds = [(name, fuzz_flatbuf.decode(schema, blob)) for name, blob in fuzz_corpus.export_blobs()]
    every = max(1, n // max(1, n_inspect)) if n_inspect else 0
    start = time.time()
    for i in range(n):
        name, tree = rng.choice(seeds)
        blob, log = fuzz_flatbuf.mutate_export(schema, tree, rng)
        t0 = time.perf_counter()
        outcome, detail = fuzz_flatbuf.check_deserialize(blob)
        table.add("export-deserialize", outcome, time.perf_counter() - t0)
        how = f"toolkit.export.deserialize(open(FILE, 'rb').read())  (seed: {name}; edits: {'; '.join(log)})"
        if outcome in ("unclean", "crash", "hang"):
            findings.add("export", outcome, detail, blob, ".bin", how)
        if every and i % every == 0:
            action = "mlir" if (i // every) % 3 == 2 else "inspect"
            result = worker.inspect(blob, action)
            table.add("export-inspect", result.outcome, result.seconds)
            if result.bad:
                findings.add("inspect", result.outcome, result.detail or result.stderr, blob, ".bin",
                             f"toolkit export {action} FILE  (seed: {name}; edits: {'; '.join(log)})")
        _progress("export-deserialize", i, n, table, start)


def run_pipelines(n: int, rng: random.Random, worker: fuzz_worker.Worker, table: Table, findings: Findings) -> None:
    texts = fuzz_corpus.parsing_text_inputs()
    start = time.time()
    for i in range(n):
        name, text = rng.choice(texts)
        pipeline = fuzz_pipelines.random_pipeline(rng)
        answer = worker.pipeline(text, pipeline)
        problem = fuzz_pipelines.check_pipeline_answer(pipeline, answer)
        status = answer["status"]
        outcome = ("crash" if status == "crash" else "hang" if status == "hang" else "unclean" if problem
                   else "output" if status in ("ok", "skip") else "clean-error")
        table.add("pipelines", outcome, answer.get("seconds", 0.0))
        if problem:
            findings.add("pipeline", outcome, problem, text.encode(), ".mlir",
                         f"toolkit-opt FILE --pass-pipeline='{pipeline}'  (seed: {name})")
        _progress("pipelines", i, n, table, start)


def main(argv: list[str] | None = None) -> int:
    default = int(os.environ.get("TOOLKIT_FUZZ_EXAMPLES", "10000"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=default,
                        help="toolkit-opt inputs and export mutations each (default TOOLKIT_FUZZ_EXAMPLES or 10000)")
    parser.add_argument("--pipelines", type=int, default=None, help="random pipelines (default examples / 10)")
    parser.add_argument("--processes", type=int, default=None,
                        help="real toolkit-opt processes (default examples / 200)")
    parser.add_argument("--inspect", type=int, default=None,
                        help="export blobs also through `toolkit export inspect` (default examples / 10)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--findings", default="/tmp/toolkit-fuzz-findings")
    parser.add_argument("--only", choices=["opt", "export", "pipelines"], action="append",
                        help="run only these areas (repeatable)")
    args = parser.parse_args(argv)
    areas = set(args.only or ["opt", "export", "pipelines"])
    n = args.examples
    n_pipelines = n // 10 if args.pipelines is None else args.pipelines
    n_processes = max(1, n // 200) if args.processes is None else args.processes
    n_inspect = n // 10 if args.inspect is None else args.inspect

    print(f"standing fuzz run: seed {args.seed}, {n} toolkit-opt inputs, {n} export mutations "
          f"({n_inspect} also inspected), {n_pipelines} pipelines, {n_processes} real toolkit-opt processes; "
          f"findings in {args.findings}", flush=True)
    rng = random.Random(args.seed)
    table, findings = Table(), Findings(args.findings)
    worker = fuzz_worker.Worker(timeout=args.timeout)
    start = time.time()
    try:
        if "export" in areas:
            run_export(n, n_inspect, rng, worker, table, findings)
        if "opt" in areas:
            run_opt(n, rng, worker, table, findings)
            run_opt_processes(n_processes, rng, table, findings)
        if "pipelines" in areas:
            run_pipelines(n_pipelines, rng, worker, table, findings)
    finally:
        worker.close()
    print(table.render())
    print(f"{time.time() - start:.0f} s; seed {args.seed}")
    if findings.lines:
        print(f"{len(findings.seen)} distinct problem(s), {sum(findings.seen.values())} case(s); reproducers in "
              f"{args.findings}:")
        for key, count in findings.seen.most_common():
            print(f"  {count:>5}  {key}")
    return 1 if table.bad() else 0


if __name__ == "__main__":
    sys.exit(main())
