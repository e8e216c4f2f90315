/**
 * Hand-worked cases for each API class, from the function docs in data/bfcl/func_doc and the
 * behaviour they describe; expected texts written out by hand (json.dumps spacing, Python reprs).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { loadLongContextData, SharedState } from '../../../src/env/bfcl/apis/shared.ts';
import type { BfclEntry } from '../../../src/env/bfcl/data.ts';
import { Session } from '../../../src/env/bfcl/executor.ts';
import { parseJson } from '../../../src/env/bfcl/py/literal.ts';
import type { PyDict } from '../../../src/env/bfcl/py/value.ts';

const longContextData = loadLongContextData(join(import.meta.dirname, '../../../data/bfcl'));

function session(classes: string[], config = '{}', category: BfclEntry['category'] = 'base'): Session {
  const entry: BfclEntry = {
    id: 't',
    category,
    question: [],
    involvedClasses: classes,
    missedFunction: new Map(),
    excludedFunction: [],
    groundTruth: [],
    initialConfig: parseJson(config) as PyDict,
  };
  return new Session(entry, { shared: new SharedState(longContextData), today: { year: 2026, month: 11, day: 30 } });
}

test('GorillaFileSystem: navigation, writes, moves', () => {
  const fs = session(
    ['GorillaFileSystem'],
    '{"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {"doc": {"type": "directory", "contents": {"r.txt": {"type": "file", "content": "b\\na"}}}}}}}}',
  );
  assert.deepEqual(
    fs.run([
      "cd(folder='doc')",
      'pwd()',
      "sort(file_name='r.txt')",
      "mkdir(dir_name='tmp')",
      "mv(source='r.txt', destination='tmp')",
      'ls()',
      "cd(folder='tmp')",
      "wc(file_name='r.txt', mode='l')",
      "cd(folder='a/b')",
    ]),
    [
      '{"current_working_directory": "doc"}',
      '{"current_working_directory": "/alex/doc"}',
      '{"sorted_content": "a\\nb"}',
      'None',
      `{"result": "'r.txt' moved to 'tmp/r.txt'"}`,
      '{"current_directory_content": ["tmp"]}',
      '{"current_working_directory": "tmp"}',
      '{"count": 2, "type": "lines"}',
      '{"error": "cd: a/b: Unsupported path. Only one folder level at a time is supported."}',
    ],
  );
});

test('MathAPI: float results, errors as dicts', () => {
  const m = session(['MathAPI']);
  assert.deepEqual(
    m.run([
      'mean(numbers=[1, 2, 4])',
      'divide(a=1, b=0)',
      'add(a=2, b=3)',
      'round_number(number=2.675, decimal_places=2)',
      'logarithm(value=100, base=10, precision=4)',
    ]),
    ['{"result": 2.3333333333333335}', '{"error": "Cannot divide by zero"}', '{"result": 5}', '{"result": 2.67}', "{'result': mpf('2.0')}"],
  );
});

test('MathAPI: precision is bounded (issue 31): logarithm and square_root answer within a second, as an error dict past the limit', () => {
  const m = session(['MathAPI']);
  for (const call of [
    'logarithm(value=10, base=3, precision=100000)',
    'logarithm(value=10, base=3, precision=20000)',
    'square_root(number=2, precision=10000000)',
  ]) {
    const t = performance.now();
    const [out] = m.run([call]);
    assert.ok(performance.now() - t < 1500, `${call}: ${performance.now() - t} ms`);
    assert.match(out!, /^\{"error": "precision \d+ is above the \d+ digits this simulator computes/, call);
  }
  // Within the limit the result is unchanged (the ground truths use 2–10 digits).
  assert.deepEqual(m.run(['logarithm(value=100, base=10, precision=4)', 'square_root(number=2, precision=10)']), [
    "{'result': mpf('2.0')}",
    "{'result': Decimal('1.414213562')}",
  ]);
});

test('MathAPI power: a float result out of range raises OverflowError as Python does, never Infinity', () => {
  const m = session(['MathAPI']);
  // Calls are literals only: 10**20 is written out, as a model writes it.
  const e20 = `1${'0'.repeat(20)}`;
  assert.deepEqual(
    m.run([
      `power(base=2.0, exponent=${e20})`,
      'power(base=10, exponent=400.0)',
      `power(base=1.5, exponent=1${'0'.repeat(400)})`,
      `power(base=0.5, exponent=${e20})`,
      `power(base=2, exponent=-${e20})`,
      'power(base=2.0, exponent=10)',
    ]),
    [
      "Error during execution: (34, 'Numerical result out of range')",
      "Error during execution: (34, 'Numerical result out of range')",
      'Error during execution: int too large to convert to float',
      '{"result": 0.0}',
      '{"result": 0.0}',
      '{"result": 1024.0}',
    ],
  );
  // Multiplication overflows to inf in Python (the official probe records it): unchanged.
  assert.deepEqual(m.run(['multiply(a=1e200, b=1e200)']), ['{"result": Infinity}']);
});

test("MathAPI arithmetic is sized before it is computed: past Python's 4300-digit int limit the answer is its error, at once", () => {
  const m = session(['MathAPI']);
  const limit = 'Error during execution: Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit';
  const big300 = '7'.repeat(300);
  const hexHuge = `0x${'f'.repeat(200_000)}`;
  const t = performance.now();
  assert.deepEqual(
    m.run([
      // 300 digits to the 100,000th: 30 million digits, 49 s before; 2,000 digits ran past 300 s.
      `power(base=${big300}, exponent=100000)`,
      `power(base=${'9'.repeat(2000)}, exponent=100000)`,
      `power(base=-${big300}, exponent=${'9'.repeat(30)})`,
      'power(base=2, exponent=100000000000)',
      // A hexadecimal literal has no digit limit in Python; its product still cannot be shown.
      `multiply(a=${hexHuge}, b=${hexHuge})`,
      `add(a=${hexHuge}, b=1)`,
      `sum_values(numbers=[${hexHuge}, 1])`,
    ]),
    [limit, limit, limit, limit, limit, limit, limit],
  );
  assert.ok(performance.now() - t < 3000, `${performance.now() - t} ms`);
  // At the limit exactly: 10**4299 has 4300 digits and is shown; 10**4300 has 4301 and is not.
  const [at, past] = m.run(['power(base=10, exponent=4299)', 'power(base=10, exponent=4300)']);
  assert.equal(at, `{"result": 1${'0'.repeat(4299)}}`);
  assert.equal(past, limit);
  assert.equal(m.run(['power(base=2, exponent=14284)'])[0], `{"result": ${(2n ** 14284n).toString()}}`);
  assert.equal(m.run(['power(base=2, exponent=14286)'])[0], limit);
  // Ordinary powers are unchanged: exact ints, negative exponents as floats, trivial bases.
  assert.deepEqual(
    m.run([
      'power(base=3, exponent=40)',
      'power(base=2, exponent=-2)',
      `power(base=1, exponent=${'9'.repeat(40)})`,
      `power(base=-1, exponent=${'9'.repeat(40)})`,
    ]),
    ['{"result": 12157665459056928801}', '{"result": 0.25}', '{"result": 1}', '{"result": -1}'],
  );
  // A decimal literal past the limit is refused when the call is read, as Python's compiler does.
  assert.match(m.run([`add(a=${'1'.repeat(4301)}, b=1)`])[0]!, /^Error during execution: .*Exceeds the limit \(4300 digits\).*value has 4301 digits/);
});

test('MathAPI mean of ints beyond a double: correctly rounded, or OverflowError past its range (never NaN)', () => {
  const m = session(['MathAPI']);
  const e400 = `1${'0'.repeat(400)}`;
  assert.deepEqual(m.run([`mean(numbers=[${e400}, ${e400}])`, `mean(numbers=[${'9'.repeat(20)}, 1])`, `divide(a=1, b=${e400})`]), [
    'Error during execution: integer division result too large for a float',
    '{"result": 5e+19}',
    '{"result": 0.0}',
  ]);
  assert.equal(m.run([`divide(a=${'3'.repeat(30)}, b=${'1'.repeat(30)})`])[0], '{"result": 3.0}');
});

test('MessageAPI: login, send (seeded ids), view', () => {
  const m = session(['MessageAPI'], '{"MessageAPI": {}}');
  assert.deepEqual(
    m.run([
      "send_message(receiver_id='USR002', message='x')",
      "message_login(user_id='USR001')",
      "send_message(receiver_id='USR002', message='hi')",
      'view_messages_sent()',
    ]),
    [
      '{"error": "No user is currently logged in."}',
      `{"login_status": true, "message": "User 'USR001' logged in successfully."}`,
      `{"sent_status": true, "message_id": {"new_id": 67410}, "message": "Message sent to 'USR002' successfully."}`,
      '{"messages": {"USR002": ["My name is Alice. I want to connect.", "hi"], "USR003": ["Could you upload the file?"], "USR004": ["Could you upload the file?"]}}',
    ],
  );
});

test('TwitterAPI: authentication gate, posting returns the tweet, lists print as Python', () => {
  const t = session(['TwitterAPI'], '{"TwitterAPI": {"username": "u", "password": "p"}}');
  assert.deepEqual(
    t.run([
      "post_tweet(content='x')",
      "authenticate_twitter(username='u', password='p')",
      "post_tweet(content='héllo', tags=['#a'])",
      "get_user_tweets(username='u')",
    ]),
    [
      '{"error": "User not authenticated. Please authenticate before posting."}',
      '{"authentication_status": true}',
      '{"id": 0, "username": "u", "content": "h\\u00e9llo", "tags": ["#a"], "mentions": []}',
      "[{'id': 0, 'username': 'u', 'content': 'héllo', 'tags': ['#a'], 'mentions': []}]",
    ],
  );
});

test('TicketAPI: create, resolve, filter by status', () => {
  const k = session(['TicketAPI'], '{"TicketAPI": {}}');
  assert.deepEqual(
    k.run([
      "ticket_login(username='me', password='pw')",
      "create_ticket(title='T', priority=3)",
      "resolve_ticket(ticket_id=1, resolution='ok')",
      "get_user_tickets(status='resolved')",
    ]),
    [
      '{"success": true}',
      '{"id": 1, "title": "T", "description": "", "status": "Open", "priority": 3, "created_by": "me"}',
      '{"status": "Ticket 1 has been resolved successfully."}',
      "[{'id': 1, 'title': 'T', 'description': '', 'status': 'Resolved', 'priority': 3, 'created_by': 'me', 'resolution': 'ok'}]",
    ],
  );
});

test('TradingBot: orders need a login; buying checks funds; deposits get seeded timestamps', () => {
  const b = session(['TradingBot'], '{"TradingBot": {}}');
  assert.deepEqual(
    b.run([
      "place_order(order_type='Buy', symbol='AAPL', price=227.16, amount=1)",
      "trading_login(username='a', password='b')",
      "place_order(order_type='Buy', symbol='AAPL', price=227.16, amount=100)",
      "place_order(order_type='Buy', symbol='AAPL', price=227.16, amount=2)",
      'fund_account(amount=5)',
    ]),
    [
      '{"error": "User not authenticated. Please log in to place an order."}',
      '{"status": "Logged in successfully"}',
      '{"error": "Insufficient funds: required $22716.00 but only $10000.00 available."}',
      '{"order_id": 12446, "order_type": "Buy", "status": "Pending", "price": 227.16, "amount": 2}',
      '{"status": "Account funded successfully", "new_balance": 10005.0}',
    ],
  );
});

test('TravelAPI: token, fares doubled on even digit sums, exchange rates', () => {
  const v = session(['TravelAPI'], '{"TravelAPI": {}}');
  assert.deepEqual(
    v.run([
      "get_flight_cost(travel_from='SFO', travel_to='LAX', travel_date='2024-11-15', travel_class='business')",
      "compute_exchange_rate(base_currency='RMB', target_currency='USD', value=10000.0)",
      "get_flight_cost(travel_from='LAX', travel_to='SFX', travel_date='2024-11-15', travel_class='first')",
    ]),
    ['{"travel_cost_list": [800.0]}', '{"exchanged_value": 1428.57}', 'Error during execution: No available route for the given airports.'],
  );
});

test('VehicleControlAPI: the engine starts only with doors locked and the brake fully pressed', () => {
  const c = session(['VehicleControlAPI'], '{"VehicleControlAPI": {"fuelLevel": 10.5}}');
  assert.deepEqual(
    c.run([
      "startEngine(ignitionMode='START')",
      "lockDoors(unlock=False, door=['driver', 'passenger', 'rear_left', 'rear_right'])",
      'pressBrakePedal(pedalPosition=1.0)',
      "startEngine(ignitionMode='START')",
      'fillFuelTank(fuelAmount=40)',
    ]),
    [
      '{"error": "All doors must be locked before starting the engine. Here are the unlocked doors: driver, passenger, rear_left, rear_right"}',
      '{"lockStatus": "locked", "remainingUnlockedDoors": 0}',
      '{"brakePedalStatus": "pressed", "brakePedalForce": 1000.0}',
      '{"engineState": "running", "fuelLevel": 10.5, "batteryVoltage": 12.6}',
      '{"error": "Cannot fill gas above the tank capacity."}',
    ],
  );
});
