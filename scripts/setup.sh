#!/usr/bin/env bash
# Sets the project up on this machine: Node 24 LTS (the registry's `node` package) when the machine's Node is older,
# the npm dependencies installed by npm running on it (npm checks every package's engines against the Node it runs
# on), then the build (`npm start` serves the compiled JavaScript). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

wanted=$(node -p 'require("./package.json").dependencies.node')
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt "${wanted%%.*}" ]; then
  if [ ! -x .tools/node_modules/.bin/node ] || [ "$(.tools/node_modules/.bin/node -v)" != "v$wanted" ]; then
    echo "setup: this machine has Node $(node -v); fetching Node $wanted from the npm registry" >&2
    npm install --prefix .tools --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node@$wanted"
  fi
  export PATH="$PWD/.tools/node_modules/.bin:$PATH"
fi

echo "setup: installing npm dependencies on Node $(node -v)" >&2
npm ci --no-audit --no-fund
echo "setup: building" >&2
npm run build --silent
