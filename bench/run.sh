#!/bin/bash
# Benchmark of code-sandbox against the docker CLI alternatives; see README.md.
#   bench/run.sh [--calls N] [--out FILE] [--bin PATH] [--smoke]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v node >/dev/null || { echo "bench: node is required" >&2; exit 2; }
if [ ! -d "$HERE/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "bench: installing the MCP SDK client (npm ci)" >&2
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
cd "$HERE/.."
exec node "$HERE/bench.mjs" "$@"
