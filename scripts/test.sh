#!/usr/bin/env bash
# Runs every test file under test/ (the library) and bench/ (the benches' own checks: their records,
# experiments and arithmetic; test/ never imports bench/) with node:test through tsx. Node 20 expands
# no globs and finds no .ts files itself, so the list is built here; an empty list is an error, never
# a silent pass.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find test bench -name '*.test.ts' | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no test files found under test/" >&2
  exit 1
fi
# Type-check everything and build dist/ side by side: the tests' CLI children run the fresh build
# (TRACE_RL_RUN_DIST, bin/trace-rl.js), the test files themselves the sources through tsx.
npx tsc --noEmit &
check=$!
npm run --silent build &
build=$!
wait "$check"
wait "$build"
export TRACE_RL_RUN_DIST=1
# The sources stay as the formatter writes them (npm run format fixes a failure here).
npx prettier --check --log-level warn 'src/**/*.ts' 'test/**/*.ts' 'bench/**/*.ts' 'lab/**/*.ts' 'examples/**/*.ts' bin/trace-rl.js
exec node --import tsx --test --test-concurrency=2 "${files[@]}"
