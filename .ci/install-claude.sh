#!/usr/bin/env bash
# Install pinned Claude Code CLI versions into <repo>/.tools/claude-code/<version>/.
# Idempotent: a version whose claude binary already runs is skipped.
# Usage: bash .ci/install-claude.sh [version ...]   (default: 2.1.197 2.1.332)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSIONS=("$@")
if [ ${#VERSIONS[@]} -eq 0 ]; then
  VERSIONS=(2.1.197 2.1.332)
fi

# .tools must never be committed (the pattern has no slash, so a link named .tools is ignored too).
GI="$ROOT/.gitignore"
if [ ! -f "$GI" ]; then
  printf '.tools\n' > "$GI"
elif ! grep -qxF '.tools' "$GI" && ! grep -qxF '.tools/' "$GI"; then
  # make sure the file ends with a newline before appending
  if [ -s "$GI" ] && [ "$(tail -c1 "$GI" | wc -l)" -eq 0 ]; then printf '\n' >> "$GI"; fi
  printf '.tools\n' >> "$GI"
fi

export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1

status=0
for v in "${VERSIONS[@]}"; do
  prefix="$ROOT/.tools/claude-code/$v"
  bin="$prefix/node_modules/.bin/claude"
  if [ -x "$bin" ] && timeout 60 "$bin" --version 2>/dev/null | grep -qF "$v"; then
    echo "claude $v already installed"
  else
    mkdir -p "$prefix"
    echo "installing @anthropic-ai/claude-code@$v into $prefix" >&2
    timeout 900 npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$v" >&2
    pkg="$prefix/node_modules/@anthropic-ai/claude-code"
    if [ -f "$pkg/install.cjs" ]; then
      (cd "$pkg" && timeout 600 node install.cjs) >&2 || (cd "$prefix" && timeout 600 node "$pkg/install.cjs") >&2 || {
        echo "install.cjs failed for $v" >&2; status=1; }
    fi
  fi
  if [ -x "$bin" ]; then
    echo "$bin"
    timeout 60 "$bin" --version || status=1
  else
    found="$(find "$prefix" -maxdepth 6 -name claude -type f -perm -u+x 2>/dev/null | head -n1 || true)"
    if [ -n "$found" ]; then echo "$found"; else echo "no claude binary for $v" >&2; status=1; fi
  fi
done
exit $status
