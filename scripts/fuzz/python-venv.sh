#!/usr/bin/env bash
# The fuzzers' Python tools (schemathesis) in a virtual environment inside the project
# (.venv/, git-ignored), never system-wide. Idempotent: an existing venv with the pinned
# version is reused, so every test run can call it. Prints the venv's bin directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
SCHEMATHESIS_VERSION=4.32.5
# One install at a time: the fuzzers and the loader tests share the venv and may start together.
exec 9>.venv.lock
flock 9
VENV=.venv
if [ -x "$VENV/bin/schemathesis" ] && "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "$PWD/$VENV/bin"
  exit 0
fi
command -v python3 >/dev/null || { echo "python-venv: python3 is required" >&2; exit 1; }
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
echo "$PWD/$VENV/bin"
