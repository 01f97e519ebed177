#!/usr/bin/env bash
# Sets up a fresh machine and starts the gateway on its embedded Redis at http://localhost:4000/graphql.
# Installs redis-server from the OS package manager when it is missing, then the npm dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

node -e 'const [maj, min] = process.versions.node.split(".").map(Number); if (maj < 20 || (maj === 20 && min < 11)) { console.error(`Node ${process.versions.node} is too old: the gateway needs Node 20.11 or newer`); process.exit(1); }'

if ! command -v redis-server >/dev/null 2>&1; then
  echo "quickstart: redis-server not found; installing it" >&2
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server
  elif command -v brew >/dev/null 2>&1; then
    brew install redis
  else
    echo "quickstart: install redis-server with your package manager, or set REDIS_URL to a running Redis" >&2
    exit 1
  fi
fi

echo "quickstart: installing npm dependencies" >&2
npm ci --no-audit --no-fund
exec npm start
