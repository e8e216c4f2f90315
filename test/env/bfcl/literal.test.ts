/** The call parser builds values only: hostile strings are rejected and nothing they name runs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiteralSyntaxError, parseCall, parseJson, parsePythonLiteral } from '../../../src/env/bfcl/py/literal.ts';
import { jsonDumps, pyRepr } from '../../../src/env/bfcl/py/format.ts';
import { PyTuple } from '../../../src/env/bfcl/py/value.ts';
import { Session } from '../../../src/env/bfcl/executor.ts';
import { SharedState } from '../../../src/env/bfcl/apis/shared.ts';

test('keyword and positional arguments, nested quotes, escapes, containers, numbers, constants', () => {
  const c = parseCall(`mv(source='it\\'s "a".txt', destination="b\\n\\t\\\\c")`);
  assert.deepEqual(c, {
    name: 'mv',
    args: [],
    kwargs: [
      ['source', `it's "a".txt`],
      ['destination', 'b\n\t\\c'],
    ],
  });
  const d = parseCall(`f([1, -2.5, 3e2, 0x1f, 1_000], {'k': (None, True, False)}, t=(1,), e=(), u='\\u00e9\\x41', r=r'\\d+', s='''x'y''', z='a' 'b')`);
  assert.deepEqual(d.args[0], [1n, -2.5, 300, 31n, 1000n]);
  const dict = d.args[1] as Map<string, unknown>;
  assert.deepEqual((dict.get('k') as PyTuple).items, [null, true, false]);
  assert.deepEqual(Object.fromEntries(d.kwargs.filter(([k]) => k !== 't' && k !== 'e')), { u: 'éA', r: '\\d+', s: "x'y", z: 'ab' });
  assert.equal(pyRepr(d.kwargs[0]![1]), '(1,)');
  assert.equal(pyRepr(d.kwargs[1]![1]), '()');
  assert.equal(pyRepr(parsePythonLiteral("[1, 2.0, 'a', None, {'b': [True]}]")), "[1, 2.0, 'a', None, {'b': [True]}]");
});

test('ints stay ints and floats stay floats, from Python syntax and from JSON', () => {
  assert.equal(typeof parsePythonLiteral('3'), 'bigint');
  assert.equal(typeof parsePythonLiteral('3.0'), 'number');
  assert.equal(
    jsonDumps(parseJson('{"a": 1, "b": 1.0, "c": [1e2, -0.5], "d": null, "e": "\\u00e9"}')),
    '{"a": 1, "b": 1.0, "c": [100.0, -0.5], "d": null, "e": "\\u00e9"}',
  );
  assert.equal(typeof parsePythonLiteral('12345678901234567890123'), 'bigint');
});

const HOSTILE = [
  "__import__('os').system('touch /tmp/pwned')",
  "cd(folder=__import__('os').system('touch /tmp/pwned'))",
  "cd(folder=open('/etc/passwd').read())",
  "cd(folder=exec('x=1'))",
  'cd(folder=[x for x in ()])',
  'cd(folder=lambda: 1)',
  "cd(folder='a' + 'b')",
  "cd(folder=f'{1}')",
  "cd(folder=b'x')",
  "cd(folder='a'); import os",
  "cd(folder='a')\ncd(folder='b')",
  "os.system('ls')",
  'cd.__globals__',
  'cd(folder=().__class__.__bases__[0])',
  "cd(folder='unterminated)",
  "cd(folder='a',, x=1)",
  "cd(**{'folder': 'a'})",
  "cd(*['a'])",
  'cd(folder=1 if True else 2)',
  'cd(folder=' + '['.repeat(500) + ']'.repeat(500) + ')',
  'cd(folder={1, 2})',
  'cd(folder=1j)',
];

test('hostile strings are syntax errors, never evaluated', () => {
  for (const text of HOSTILE) assert.throws(() => parseCall(text), LiteralSyntaxError, text);
});

test('through the executor, hostile strings become execution errors and change nothing', () => {
  const entry = {
    id: 'hostile',
    category: 'base' as const,
    question: [],
    involvedClasses: ['GorillaFileSystem'],
    missedFunction: new Map(),
    excludedFunction: [],
    groundTruth: [],
    initialConfig: parseJson('{"GorillaFileSystem": {"root": {"r": {"type": "directory", "contents": {}}}}}') as Map<never, never>,
  };
  const session = new Session(entry, { shared: new SharedState(new Map()), today: { year: 2026, month: 1, day: 1 } });
  for (const r of session.run(HOSTILE)) assert.match(r, /^Error during execution: /);
  assert.deepEqual(session.run(['ls()', 'kill(pid=1)', 'eval(x=1)', '_load_scenario(scenario={})']), [
    '{"current_directory_content": []}',
    'Error during execution: Function call kill is not allowed.',
    "Error during execution: name 'eval' is not defined",
    "Error during execution: name '_load_scenario' is not defined",
  ]);
});
