#!/usr/bin/env bash
# Install Debian's chromium for the report's browser tests (tests/test_report.py).
# Idempotent: nothing is installed when /usr/bin/chromium is already there.
# Usage: bash .ci/install-chromium.sh   (as root, or with sudo available)
set -euo pipefail

BIN=/usr/bin/chromium
if [ ! -x "$BIN" ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends chromium
fi
"$BIN" --version
