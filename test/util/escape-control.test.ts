/**
 * Foreign text printed in a one-line message cannot drive the terminal: each attack the issue found
 * (a window title, a forged line, a cursor report typed into the shell) comes out as visible escapes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeControl } from '../../src/util/escape-control.ts';
import { jsonNestingPast } from '../../src/util/json-depth.ts';

test('control characters of foreign text are escaped, plain text (Unicode included) is kept', () => {
  assert.equal(escapeControl('\u001b]0;owned\u0007'), '\\x1b]0;owned\\x07', 'a window title');
  assert.equal(escapeControl('ok\r\u001b[2Kforged'), 'ok\\r\\x1b[2Kforged', 'an erased, forged line');
  assert.equal(escapeControl('\u001b[6n'), '\\x1b[6n', 'a cursor report typed into the shell');
  assert.equal(escapeControl('a\nb\tc\u007f\u009b'), 'a\\nb\\tc\\x7f\\x9b', 'newline, tab, DEL and the one-byte CSI');
  assert.equal(escapeControl('evil\u202egnp.exe'), 'evil\\u202egnp.exe', 'a bidi override');
  assert.equal(escapeControl('Größe 3 — “ok” ✓'), 'Größe 3 — “ok” ✓');
});

test('JSON nesting is measured outside strings and stops at the bound', () => {
  assert.equal(jsonNestingPast('{"a": [1, {"b": "[[[[["}]}', 3), undefined, 'brackets in strings do not count');
  assert.equal(jsonNestingPast('{"a": "\\"[[[[", "b": [[1]]}', 3), undefined, 'an escaped quote does not end the string');
  assert.deepEqual(jsonNestingPast('[[[[1]]]]', 3), { at: 3 });
  assert.ok(jsonNestingPast('['.repeat(100_000), 64), 'an answer nested 100,000 deep');
});

test('every one-line failure quotes a server’s text escaped: a policy server’s, a Tinker engine’s, an environment’s, a step’s causes', async () => {
  const { serverFailure } = await import('../../src/cli/server-failure.ts');
  const { failureLine } = await import('../../src/cli/failures.ts');
  const { PolicyCallError } = await import('../../src/policy/errors.ts');
  const { RemoteServerError } = await import('../../src/env/remote/reply.ts');
  const hostile = 'boom\u001b]0;owned\u0007\r\u001b[2Kforged\u001b[6n';
  const escaped = 'boom\\x1b]0;owned\\x07\\r\\x1b[2Kforged\\x1b[6n';
  for (const e of [
    new PolicyCallError('server_error', `http://127.0.0.1:8000/v1/chat/completions answered HTTP 500: ${hostile}`),
    new PolicyCallError('server_error', `http://127.0.0.1:8080/api/v1/asample answered HTTP 500: ${hostile}`),
    new RemoteServerError(`agentgym server http://127.0.0.1:8001: the server refused: ${hostile}`),
  ]) {
    const line = serverFailure(e)!.message;
    assert.ok(line.includes(escaped), line);
    assert.doesNotMatch(line, /[\u0000-\u001f]/);
  }
  const line = failureLine({ command: 'trace-rl eval', failed: 1, total: 2, unit: 'questions', causes: `first: ${hostile}`, kept: 'kept', whenAll: '' });
  assert.ok(line.includes(escaped), line);
});
