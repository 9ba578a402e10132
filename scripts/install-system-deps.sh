#!/usr/bin/env bash
# System packages the tests start themselves: redis-server (shared rate-limit store),
# prometheus (scrapes /metrics in test/access-metrics), chromium (the dashboard's
# browser tests, driven by playwright-core: browser downloads fail here, Debian's build
# does not), and a Java runtime and Go for the Go client generated from the OpenAPI document
# (test/daemons/openapi-go-client.test.ts: openapi-generator runs on Java, the client builds with Go).
# Idempotent: when every binary is already on PATH nothing is downloaded, so CI can call it
# on every run.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v go >/dev/null 2>&1 || need+=(golang-go)

if [ "${#need[@]}" -eq 0 ]; then
  echo "install-system-deps: redis-server, prometheus, chromium, java and go already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 && SUDO="sudo" || { echo "install-system-deps: need root or sudo to install ${need[*]}" >&2; exit 1; }
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends: the daemons only; the tests start them with their own config.
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
echo "install-system-deps: installed ${need[*]}"
