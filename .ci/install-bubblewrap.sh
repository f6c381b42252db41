#!/usr/bin/env bash
# Install bubblewrap, so the tests of `bracket.py exec` cover its sandbox (tests/test_sandbox.py),
# and socat, which Claude Code's own Bash sandbox needs beside it on Linux
# (tests/test_claude_run_code.py runs exec under that sandbox too).
# Idempotent: nothing is installed when bwrap and socat are already on PATH.
# Usage: bash .ci/install-bubblewrap.sh   (as root, or with sudo available)
set -euo pipefail

if ! command -v bwrap >/dev/null || ! command -v socat >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends bubblewrap socat
fi
bwrap --version
