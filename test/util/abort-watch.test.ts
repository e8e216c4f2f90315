import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { unwatchAbort, watchAbort } from '../../src/util/abort-watch.ts';

test('watchers of a signal share its one listener; an abort tells each watcher still registered, once', () => {
  const ctl = new AbortController();
  const told: string[] = [];
  const watcher = (name: string) => ({ onSignalAbort: () => told.push(name) });
  const a = watcher('a');
  const b = watcher('b');
  const c = watcher('c');
  for (let i = 0; i < 1000; i++) {
    const w = watcher(`short-lived ${i}`);
    watchAbort(ctl.signal, w);
    unwatchAbort(ctl.signal, w);
  }
  watchAbort(ctl.signal, a);
  watchAbort(ctl.signal, b);
  watchAbort(ctl.signal, c);
  unwatchAbort(ctl.signal, b);
  assert.equal(getEventListeners(ctl.signal, 'abort').length, 1);
  ctl.abort();
  ctl.abort();
  assert.deepEqual(told, ['a', 'c']);
  assert.equal(getEventListeners(ctl.signal, 'abort').length, 0);
});

test('a watcher that unwatches another during the abort does not stop it being told (all registered at the abort are told)', () => {
  const ctl = new AbortController();
  const told: string[] = [];
  const second = { onSignalAbort: () => told.push('second') };
  watchAbort(ctl.signal, { onSignalAbort: () => (told.push('first'), unwatchAbort(ctl.signal, second)) });
  watchAbort(ctl.signal, second);
  ctl.abort();
  assert.deepEqual(told, ['first', 'second']);
});
