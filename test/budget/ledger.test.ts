import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BudgetLedger, LedgerError, trajectories } from '../../src/budget/index.ts';

test('trajectory cap cannot be exceeded', () => {
  const l = new BudgetLedger({ trajectories: 3 });
  assert.equal(l.tryStartTrajectory('bare'), true);
  assert.equal(l.tryStartTrajectory('continuation'), true);
  assert.equal(l.tryStartTrajectory('bare'), true);
  assert.equal(l.tryStartTrajectory('bare'), false);
  assert.deepEqual(l.spend(), { bare: 2, continuation: 1, turns: 0, tokens: 0, toolCalls: 0 });
});

test('token reservations hold the maximum until settled', () => {
  const l = new BudgetLedger({ tokens: 100, turns: 10 });
  const a = l.tryReserveTurn(60)!;
  assert.equal(l.tryReserveTurn(60), null, 'second reservation would pass the token cap');
  a.settle(20);
  const b = l.tryReserveTurn(60)!;
  b.settle(60);
  assert.equal(l.tryReserveTurn(21), null);
  assert.deepEqual([l.spend().turns, l.spend().tokens], [2, 80]);
  assert.throws(() => b.settle(1), LedgerError);
});

test('settling more than reserved is refused', () => {
  const l = new BudgetLedger({ tokens: 100 });
  assert.throws(() => l.tryReserveTurn(10)!.settle(11), LedgerError);
});

test('property: any interleaving of requests never spends past the caps', () => {
  fc.assert(
    fc.property(
      fc.record({ traj: fc.nat(20), turns: fc.nat(40), tokens: fc.nat(400) }),
      fc.array(fc.tuple(fc.constantFrom('traj', 'turn'), fc.nat(50), fc.nat(50)), { maxLength: 200 }),
      (caps, ops) => {
        const l = new BudgetLedger({ trajectories: caps.traj, turns: caps.turns, tokens: caps.tokens });
        for (const [op, max, used] of ops) {
          if (op === 'traj') l.tryStartTrajectory(max % 2 ? 'bare' : 'continuation');
          else l.tryReserveTurn(max)?.settle(Math.min(used, max));
        }
        const s = l.spend();
        return trajectories(s) <= caps.traj && s.turns <= caps.turns && s.tokens <= caps.tokens;
      },
    ),
  );
});

test('reserveTurn waits for pending reservations that may leave room, and refuses only what cannot fit', async () => {
  const l = new BudgetLedger({ tokens: 100 });
  const a = (await l.reserveTurn(60))!;
  // 60 of 100 reserved: a second 60-token call would pass the cap now, but fits if `a` settles small.
  let b: Awaited<ReturnType<BudgetLedger['reserveTurn']>> | 'pending' = 'pending';
  const waiting = l.reserveTurn(60).then((r) => (b = r));
  await new Promise((r) => setImmediate(r));
  assert.equal(b, 'pending', 'the second call waits instead of being refused');
  a.settle(10);
  await waiting;
  assert.notEqual(b, null, 'granted once the first settled at 10 tokens');
  (b as unknown as { settle(n: number): void }).settle(50);
  // 60 spent, nothing pending: a 60-token call can never fit, and is refused at once.
  assert.equal(await l.reserveTurn(60), null);
  assert.notEqual(await l.reserveTurn(40), null);
});

test('a call waiting for the budget is released by its abort signal', async () => {
  const l = new BudgetLedger({ tokens: 100 });
  const held = (await l.reserveTurn(80))!;
  const ac = new AbortController();
  const waiting = l.reserveTurn(80, ac.signal);
  ac.abort();
  assert.equal(await waiting, null);
  held.release();
});
