#!/usr/bin/env bash
# Compiles the project's TypeScript (src, test, bench, examples, lab, scripts) to .test-build/ with the
# same layout (tsconfig.tests.json) and puts every other file of the checkout beside it, so a compiled
# test finds its fixtures, data and the docs where its source would: top-level entries are linked, and
# so are the compiled folders' own files (the TypeScript too: some tests run or read a source beside them),
# except JavaScript modules, which are copied (Node runs a linked module from its real path, where its
# relative imports would miss the compiled files).
# No type check here (--noCheck): npm test type-checks the whole project beside the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.test-build
rm -rf "$out"
npx tsc -p tsconfig.tests.json --noCheck
git ls-files -z --cached --others --exclude-standard | node -e '
  const fs = require("node:fs");
  const path = require("node:path");
  const out = process.argv[1];
  const compiled = new Set(["src", "test", "bench", "examples", "lab", "scripts"]);
  for (const entry of fs.readdirSync(".")) {
    if (!compiled.has(entry) && entry !== out) fs.symlinkSync(path.join("..", entry), path.join(out, entry));
  }
  const files = fs.readFileSync(0, "utf8").split("\0").filter((f) => compiled.has(f.split("/")[0]));
  for (const f of files) {
    const to = path.join(out, f);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    if (/\.(mjs|cjs|js)$/.test(f)) fs.copyFileSync(f, to);
    else fs.symlinkSync(path.relative(path.dirname(to), f), to);
  }
' "$out"
