#!/usr/bin/env bash
# Runs every test file under test/ (the library) and bench/ (the benches' own checks: their records,
# experiments and arithmetic; test/ never imports bench/) with node:test, compiled to JavaScript
# (scripts/build-tests.sh: each file's process loads plain modules, not TypeScript through a loader).
# Node 20 expands no globs, so the list is built here; an empty list is an error, never a silent pass.
# One file through tsx, as in development: node --import tsx --test test/…/x.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests' CLI children run a fresh dist/ (TRACE_RL_RUN_DIST, bin/trace-rl.js), the test files the
# compiled tests; both builds at once, without their own type check (--noCheck, ~8 CPU-s each): the whole
# project is type-checked below.
bash scripts/build.sh --noCheck &
build=$!
bash scripts/build-tests.sh
wait "$build"
mapfile -t files < <(find .test-build/test .test-build/bench -name '*.test.js' | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no test files found under .test-build/ (scripts/build-tests.sh compiles test/ and bench/)" >&2
  exit 1
fi
export TRACE_RL_RUN_DIST=1
# The type check runs beside the tests, in the gaps their waits leave on the two cores, instead of ~20 s
# before them; its output is printed after the tests', and a type error fails the run. (The formatter's
# check, 28 CPU-s, is CI's own step: .ci/run runs `npm run format:check` after the tests.)
checks=$(mktemp -d)
trap 'rm -rf "$checks"' EXIT
(npx tsc --noEmit >"$checks/tsc" 2>&1; echo $? >"$checks/tsc.rc") &
status=0
node --test --test-concurrency=2 "${files[@]}" || status=$?
wait
if [ "$(cat "$checks/tsc.rc")" != 0 ]; then
  echo "# the type check failed:" >&2
  cat "$checks/tsc" >&2
  status=1
fi
exit "$status"
