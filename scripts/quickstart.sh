#!/usr/bin/env bash
# Sets up a fresh machine and starts the gateway on its embedded Redis at http://localhost:4000/graphql.
# Installs redis-server from the OS package manager when it is missing, then Node 24 and the npm dependencies and
# builds (scripts/setup.sh), then starts the compiled gateway.
set -euo pipefail
cd "$(dirname "$0")/.."

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

bash scripts/setup.sh
exec npm start
