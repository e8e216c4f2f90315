import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Semaphore } from '../../src/rollout/semaphore.ts';

test('urgent waiters are granted before normal ones, each queue first come first served', async () => {
  const s = new Semaphore(1);
  await s.acquire();
  const order: string[] = [];
  const wait = (name: string, priority: 'urgent' | 'normal') => s.acquire(undefined, priority).then(() => order.push(name));
  const all = [wait('n1', 'normal'), wait('n2', 'normal'), wait('u1', 'urgent'), wait('u2', 'urgent')];
  for (let i = 0; i < 4; i++) {
    s.release();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(all);
  assert.deepEqual(order, ['u1', 'u2', 'n1', 'n2']);
  assert.equal(s.inFlight, 1);
});

test('thousands of waiters on one signal add one listener to it, and an abort rejects them all and skips them', async () => {
  const s = new Semaphore(2);
  await s.acquire();
  await s.acquire();
  const controller = new AbortController();
  const other = s.acquire();
  const waiting = Array.from({ length: 20_000 }, () =>
    s.acquire(controller.signal).then(
      () => 'granted',
      () => 'rejected',
    ),
  );
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1, 'one listener for every waiter of the signal');
  controller.abort(new Error('stop'));
  const outcomes = await Promise.all(waiting);
  assert.ok(outcomes.every((o) => o === 'rejected'));
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  // The aborted waiters are skipped: the next permit goes to the waiter without a signal.
  s.release();
  await other;
  assert.equal(s.inFlight, 2);
  assert.equal(s.waiting, 0);
});

test('a granted waiter removes its signal’s listener with the last one, so a long-lived signal keeps none', async () => {
  const s = new Semaphore(1);
  const controller = new AbortController();
  await s.acquire(controller.signal);
  const next = s.acquire(controller.signal);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
  s.release();
  await next;
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  s.release();
  assert.equal(s.inFlight, 0);
  assert.throws(() => s.release(), /released more often/);
});
