#!/usr/bin/env bash
# The project's Python tools (scripts/python/requirements.txt, pinned) in one virtual environment
# inside the project (.venv/, git-ignored), never system-wide. Idempotent: a venv installed from
# the same requirements (its stamp holds their sha256) is reused, so every test run can call it.
# One install at a time: the fuzzers, the loader tests and the client test may start together.
# Prints the venv's bin directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv
REQUIREMENTS=scripts/python/requirements.txt
exec 9>.venv.lock
flock 9
want=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
  echo "$PWD/$VENV/bin"
  exit 0
fi
command -v python3 >/dev/null || { echo "scripts/python/venv.sh: python3 is required" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2
echo "$want" > "$VENV/.requirements.sha256"
echo "$PWD/$VENV/bin"
