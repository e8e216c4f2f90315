#!/usr/bin/env bash
# The published build (`npm run build`, also `npm ci`'s prepare): src/ → dist/ with tsc, plus the two
# files tsc does not emit: the math sandbox's plain-JavaScript entry (run by its own confined node) and
# the CLI's command table, written from the compiled commands, from which the CLI answers help and
# refused flags without loading any command's code (src/cli/command-table.ts).
# Extra arguments go to tsc: scripts/test.sh passes --noCheck, because it type-checks the whole
# project beside the tests anyway and the emitted JavaScript is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -p tsconfig.build.json "$@"
cp src/env/math/sandbox/pyodide-sandbox.mjs dist/env/math/sandbox/
node dist/cli/write-command-table.js dist/cli/command-table.json
