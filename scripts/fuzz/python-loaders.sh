#!/usr/bin/env bash
# The data loaders the export tests read files with (pyarrow, Hugging Face `datasets`), in the
# project's virtual environment (.venv/, git-ignored; the fuzzers' python-venv.sh shares it),
# never system-wide. Pinned; idempotent: a venv that already has both pins is reused, so each
# test run can call it. Prints the venv's bin directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYARROW_VERSION=26.0.1
DATASETS_VERSION=5.2.0
# One install at a time: the fuzzers and the loader tests share the venv and may start together.
exec 9>.venv.lock
flock 9
VENV=.venv
has() { "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('$1') == '$2' else 1)" 2>/dev/null; }
if [ -x "$VENV/bin/python" ] && has pyarrow "$PYARROW_VERSION" && has datasets "$DATASETS_VERSION"; then
  echo "$PWD/$VENV/bin"
  exit 0
fi
command -v python3 >/dev/null || { echo "python-loaders: python3 is required" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "pyarrow==$PYARROW_VERSION" "datasets==$DATASETS_VERSION" >&2
echo "$PWD/$VENV/bin"
