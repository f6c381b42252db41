#!/usr/bin/env bash
# Install bubblewrap, so the tests of `bracket.py exec` cover its sandbox (tests/test_sandbox.py).
# Idempotent: nothing is installed when bwrap is already on PATH.
# Usage: bash .ci/install-bubblewrap.sh   (as root, or with sudo available)
set -euo pipefail

if ! command -v bwrap >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends bubblewrap
fi
bwrap --version
