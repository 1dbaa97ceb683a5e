#!/usr/bin/env bash
# Install, lint (ruff, import-linter's layer contracts and mypy's type check, all configured in pyproject.toml), then
# run every test: lit (golden IR tests) and pytest (unit, corpus, interop, the docs' code blocks). A ruff error fails
# the run before any test starts; a layering or type error, before pytest starts.
#
# Both run on every core: lit in parallel by itself, pytest through pytest-xdist (one worker per core and one more:
# some tests wait on the processes they start or on timeouts, and the extra worker runs tests meanwhile; measured in
# docs/testing.md. TOOLKIT_TEST_WORKERS=N sets the count, 0 runs in this process). --dist loadgroup sends tests
# one by one to the free worker, except the files that share state across their tests (tests/xdist_groups.py groups
# them: one worker, in order). The ten slowest tests are printed at the end (docs/testing.md lists them).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
. .venv/bin/activate
# Every test process imports toolkit's ~400 modules: let the first one write their bytecode for the others (an
# environment with PYTHONDONTWRITEBYTECODE set otherwise recompiles them in each process; lit drops the variable).
unset PYTHONDONTWRITEBYTECODE
ruff check toolkit tests bench scripts || { echo "test.sh: ruff found errors (see above)" >&2; exit 1; }
# The layering contracts and mypy run beside lit (they take seconds; lit's first processes would otherwise wait for
# them); each one's output is shown whole after lit's, and an error in either fails the run before pytest starts.
lint_log="$(mktemp)"; mypy_log="$(mktemp)"
trap 'rm -f "$lint_log" "$mypy_log"' EXIT
lint-imports --no-cache --no-logo >"$lint_log" 2>&1 & lint_pid=$!
mypy toolkit >"$mypy_log" 2>&1 & mypy_pid=$!
status=0
lit -sv test/lit || status=1
wait "$lint_pid"; lint_status=$?
wait "$mypy_pid"; mypy_status=$?
cat "$lint_log" "$mypy_log"
[ "$lint_status" = 0 ] || { echo "test.sh: an import breaks the layering (pyproject.toml [tool.importlinter])" >&2; exit 1; }
[ "$mypy_status" = 0 ] || { echo "test.sh: mypy found type errors (see above; pyproject.toml [tool.mypy])" >&2; exit 1; }
# README.md and docs/: every code block runs (conftest.py; docs/doc-examples.md has the conventions).
python -m pytest -q -p no:cacheprovider -n "${TOOLKIT_TEST_WORKERS:-$(($(nproc) + 1))}" --dist loadgroup --durations=10 \
  tests README.md docs "$@" || status=1
exit $status
