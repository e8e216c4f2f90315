#!/usr/bin/env bash
# Times each test file as `npm test` runs it (one node:test process a file, two at once) and prints the
# files by wall time, slowest first, with the CPU seconds each used (its children included) and the
# whole run's wall time: where the suite's minutes go (README promises about 10 on a quiet 2-core
# machine). A file whose CPU is far below its wall time waits (timers, servers, timeouts); one near it
# computes. Usage: bash scripts/time-tests.sh [OUT.tsv] [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/trace-rl-test-times.tsv}"
shift || true
: >"$out"
# As npm test runs them: the CLI children from a fresh dist/ (scripts/test.sh).
bash scripts/build.sh --noCheck
bash scripts/build-tests.sh
export TRACE_RL_RUN_DIST=1
start=$(date +%s.%N)
# FILE: a test's source (test/x.test.ts) or its compiled file (.test-build/test/x.test.js).
if [ "$#" -gt 0 ]; then printf '%s\n' "$@" | sed -E 's#^(test|bench)/(.*)\.ts$#.test-build/\1/\2.js#'; else find .test-build/test .test-build/bench -name '*.test.js' | sort; fi | xargs -P 2 -I{} bash -c '
  t=$(mktemp)
  if /usr/bin/time -o "$t" -f "%e\t%U\t%S" node --test "$1" >/dev/null 2>&1; then r=ok; else r=FAIL; fi
  IFS=$'"'"'\t'"'"' read -r wall user sys < <(tail -n 1 "$t")
  rm -f "$t"
  printf "%.1f\t%.1f\t%s\t%s\n" "$wall" "$(echo "$user + $sys" | bc)" "$r" "$1" >>"$2"
' _ {} "$out"
total=$(echo "$(date +%s.%N) - $start" | bc)
printf 'wall\tcpu\tresult\tfile\n'
sort -rn "$out"
awk -v t="$total" '{ w += $1; c += $2 } END { printf "files: %d, sum of file wall times: %.0f s, of CPU: %.0f s, wall (2 at once): %.0f s\n", NR, w, c, t }' "$out"
