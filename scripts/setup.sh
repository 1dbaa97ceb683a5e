#!/usr/bin/env bash
# Create .venv (if needed) and install toolkit with its test and interop extras.
#
# The install is editable (pip install -e): source changes need no reinstall, only changes to pyproject.toml
# (dependencies, extras, entry points) do. So after a successful install this writes a stamp — a hash of
# pyproject.toml, the extras, this checkout's path and the Python version — and skips pip next time when the
# stamp matches and the installed toolkit is this checkout's. TOOLKIT_REINSTALL=1 forces the install.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS='.[test,interop]'
STAMP=.venv/toolkit-install.stamp
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
want="$(python - "$EXTRAS" <<'PY'
import hashlib, os, sys
digest = hashlib.sha256(open("pyproject.toml", "rb").read())
digest.update(f"\n{sys.argv[1]}\n{os.getcwd()}\n{sys.version}".encode())
print(digest.hexdigest())
PY
)"
installed_here() {
  # The installed toolkit is this checkout's (found without importing it: no jaxlib start-up) and its commands exist.
  python - <<'PY' >/dev/null 2>&1 && [ -x .venv/bin/toolkit-opt ]
import importlib.metadata, importlib.util, os, sys
importlib.metadata.version("toolkit")
spec = importlib.util.find_spec("toolkit")
sys.exit(0 if spec and spec.origin and os.path.realpath(spec.origin).startswith(os.path.realpath("toolkit") + os.sep) else 1)
PY
}
if [ "${TOOLKIT_REINSTALL:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && installed_here; then
  echo "setup.sh: toolkit is installed and pyproject.toml is unchanged; not reinstalling (TOOLKIT_REINSTALL=1 forces it)" >&2
  exit 0
fi
rm -f "$STAMP"
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
python -m pip install -q -e "$EXTRAS"
echo "$want" > "$STAMP"
