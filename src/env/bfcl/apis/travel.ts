/** TravelAPI: a travel account with a token, credit cards, flight bookings and insurance (ids from a seeded Python RNG). */
import { strptime } from '../py/datetime.ts';
import { pyRepr, pyStr } from '../py/format.ts';
import * as num from '../py/num.ts';
import { PyRandom } from '../py/random.ts';
import { dict, type PyDict, PyError, type PyValue, pyEquals } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method, requireStr } from './api.ts';

/** Base economy fares between airports, in BFCL's order (the long-context variant lists them all). */
const ROUTES = `
SFO-LAX 200 SFO-JFK 500 SFO-ORD 400 SFO-BOS 450 SFO-RMS 300 SFO-SBK 350 SFO-MPC 370 SFO-SVP 320
SFO-SHD 330 SFO-SSV 340 SFO-OKD 360 SFO-WLB 310 SFO-CRH 380 SFO-ATV 390 SFO-PHV 420 SFO-GFD 430
SFO-CIA 700 LAX-SFO 100 LAX-JFK 600 LAX-ORD 500 LAX-BOS 550 LAX-RMS 310 LAX-SBK 320 LAX-MPC 330
LAX-SVP 340 LAX-SHD 350 LAX-SSV 360 LAX-OKD 370 LAX-WLB 380 LAX-CRH 390 LAX-ATV 400 LAX-PHV 410
LAX-GFD 420 LAX-HND 430 JFK-ORD 300 JFK-BOS 250 JFK-RMS 450 JFK-SBK 460 JFK-MPC 470 JFK-SVP 480
JFK-SHD 490 JFK-SSV 500 JFK-OKD 510 JFK-WLB 520 JFK-CRH 530 JFK-ATV 540 JFK-PHV 550 JFK-GFD 560
JFK-LAX 570 JFK-HND 800 JFK-PVG 950 JFK-PEK 1000 ORD-LAX 180 ORD-BOS 200 ORD-RMS 350 ORD-SBK 360
ORD-MPC 370 ORD-SVP 380 ORD-SHD 390 ORD-SSV 400 ORD-OKD 410 ORD-WLB 420 ORD-CRH 430 ORD-ATV 440
ORD-PHV 450 ORD-GFD 460 BOS-RMS 400 BOS-SBK 410 BOS-MPC 420 BOS-SVP 430 BOS-SHD 440 BOS-SSV 450
BOS-OKD 460 BOS-WLB 470 BOS-CRH 480 BOS-ATV 490 BOS-PHV 500 BOS-GFD 510 RMS-BOS 200 RMS-JFK 210
RMS-SBK 220 RMS-MPC 230 RMS-SVP 240 RMS-SHD 250 RMS-SSV 260 RMS-OKD 270 RMS-WLB 280 RMS-CRH 290
RMS-ATV 300 RMS-PHV 310 RMS-GFD 320 RMS-LAX 330 SBK-MPC 200 SBK-SVP 210 SBK-SHD 220 SBK-SSV 230
SBK-OKD 240 SBK-WLB 250 SBK-CRH 260 SBK-ATV 270 SBK-PHV 280 SBK-GFD 290 MPC-SVP 210 MPC-SHD 220
MPC-SSV 230 MPC-OKD 240 MPC-WLB 250 MPC-CRH 260 MPC-ATV 270 MPC-PHV 280 MPC-GFD 290 SVP-SHD 230
SVP-SSV 240 SVP-OKD 250 SVP-WLB 260 SVP-CRH 270 SVP-ATV 280 SVP-PHV 290 SVP-GFD 300 SHD-SSV 220
SHD-OKD 230 SHD-WLB 240 SHD-CRH 250 SHD-ATV 260 SHD-PHV 270 SHD-GFD 280 SSV-OKD 240 SSV-WLB 250
SSV-CRH 260 SSV-ATV 270 SSV-PHV 280 SSV-GFD 290 OKD-WLB 230 OKD-CRH 240 OKD-ATV 250 OKD-PHV 260
OKD-GFD 270 WLB-CRH 250 WLB-ATV 260 WLB-PHV 270 WLB-GFD 280 CRH-ATV 240 CRH-PHV 250 CRH-GFD 260
CRH-SFO 270 CRH-RMS 280 CRH-HKG 290 CRH-JFK 300 ATV-PHV 230 ATV-GFD 240 PHV-GFD 220 LHR-CDG 100
OKD-LAX 220`;
const FARES: [string, string, bigint][] = ROUTES.trim()
  .split(/\s+/)
  .reduce<[string, string, bigint][]>((out, word, i, words) => {
    if (i % 2 === 0) {
      const [from, to] = word.split('-') as [string, string];
      out.push([from, to, BigInt(words[i + 1] as string)]);
    }
    return out;
  }, []);

const EXCHANGE: [string, string, PyValue][] = [
  ['USD', 'RMB', 7n],
  ['USD', 'EUR', 0.8],
  ['USD', 'JPY', 110n],
  ['USD', 'GBP', 0.7],
  ['USD', 'CAD', 1.3],
  ['USD', 'AUD', 1.4],
  ['USD', 'INR', 70n],
  ['USD', 'RUB', 60n],
  ['USD', 'BRL', 3.8],
  ['USD', 'MXN', 20n],
];

const AIRPORTS = 'RMS SBK MPC SVP SHD CDG LHR SSV OKD WLB PEK HND HKG CIA CRH ATV PHV GFD SFO LAX JFK ORD BOS'.split(' ');

const NEAREST_AIRPORT: Record<string, string> = {
  Rivermist: 'RMS',
  Stonebrook: 'SBK',
  Maplecrest: 'MPC',
  Silverpine: 'SVP',
  Shadowridge: 'SHD',
  London: 'LHR',
  Paris: 'CDG',
  'Sunset Valley': 'SSV',
  Oakendale: 'OKD',
  Willowbend: 'WLB',
  'Crescent Hollow': 'CRH',
  Autumnville: 'ATV',
  Pinehaven: 'PHV',
  Greenfield: 'GFD',
  'San Francisco': 'SFO',
  'Los Angeles': 'LAX',
  'New York': 'JFK',
  Chicago: 'ORD',
  Boston: 'BOS',
  Beijing: 'PEK',
  'Hong Kong': 'HKG',
  Rome: 'CIA',
  Tokyo: 'HND',
};

const CLASS_FACTOR: Record<string, bigint> = { economy: 1n, business: 2n, first: 5n };

export class TravelAPI implements BfclApi {
  readonly className = 'TravelAPI';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly random: PyRandom;
  private readonly creditCards: PyDict;
  private readonly bookings: PyDict;
  private accessToken: PyValue;
  private tokenType: PyValue;
  private tokenExpiresIn: PyValue;
  private tokenScope: PyValue;
  private firstName: PyValue;
  private lastName: PyValue;
  private budgetLimit: PyValue;
  private readonly longContext: boolean;
  private flightCostLookup: Map<string, PyValue> = new Map();
  private readonly today: ApiContext['today'];

  constructor(ctx: ApiContext) {
    const c = ctx.config;
    this.random = new PyRandom(configGet(c, 'random_seed', 141053n) as bigint);
    this.creditCards = configGet(c, 'credit_card_list', new Map()) as PyDict;
    this.bookings = configGet(c, 'booking_record', new Map()) as PyDict;
    this.accessToken = configGet(c, 'access_token', null);
    this.tokenType = configGet(c, 'token_type', null);
    this.tokenExpiresIn = configGet(c, 'token_expires_in', null);
    this.tokenScope = configGet(c, 'token_scope', null);
    this.firstName = configGet(c, 'user_first_name', null);
    this.lastName = configGet(c, 'user_last_name', null);
    this.budgetLimit = configGet(c, 'budget_limit', null);
    this.longContext = ctx.longContext;
    this.today = ctx.today;
    if (ctx.longContext) {
      // The extension records are added by reference, as BFCL does (see SharedState).
      for (const [id, card] of ctx.shared.constant('CREDIT_CARD_EXTENSION') as PyDict) if (!this.creditCards.has(id)) this.creditCards.set(id, card);
      for (const [id, rec] of ctx.shared.constant('BOOKING_RECORD_EXTENSION') as PyDict) if (!this.bookings.has(id)) this.bookings.set(id, rec);
    }
    this.methods = new Map(Object.entries(this.table()));
  }

  state(): [string, PyValue][] {
    return [
      ['credit_card_list', this.creditCards],
      ['booking_record', this.bookings],
      ['access_token', this.accessToken],
      ['token_type', this.tokenType],
      ['token_expires_in', this.tokenExpiresIn],
      ['token_scope', this.tokenScope],
      ['user_first_name', this.firstName],
      ['user_last_name', this.lastName],
      ['budget_limit', this.budgetLimit],
      ['long_context', this.longContext],
    ];
  }

  private expired = (): boolean => pyEquals(this.tokenExpiresIn, 0n);

  private flightCost(from: PyValue, to: PyValue, date: PyValue, travelClass: PyValue): PyValue {
    const fare = FARES.find(([a, b]) => a === from && b === to);
    if (!fare) throw new PyError('ValueError', 'No available route for the given airports.');
    const factor = typeof travelClass === 'string' && Object.hasOwn(CLASS_FACTOR, travelClass) ? CLASS_FACTOR[travelClass] : undefined;
    if (factor === undefined) throw new PyError('ValueError', 'Invalid travel class. Options are: economy, business, first.');
    const digitSum = [...requireStr(date, '__iter__')].filter((c) => /[0-9]/.test(c)).reduce((s, c) => s + Number(c), 0);
    const multiplier = digitSum % 2 === 0 ? 2n : 1n;
    const key = (a: string, b: string) => `${a}|${b}|${pyStr(travelClass)}|${pyStr(date)}`;
    let costs: PyValue[];
    if (this.longContext) {
      this.flightCostLookup = new Map();
      costs = FARES.map(([a, b, base]) => {
        const cost = Number(base * factor * multiplier);
        this.flightCostLookup.set(key(a, b), cost);
        return cost;
      });
    } else {
      const cost = Number(fare[2] * factor * multiplier);
      costs = [cost];
      this.flightCostLookup = new Map([[key(pyStr(from), pyStr(to)), cost]]);
    }
    return dict([['travel_cost_list', costs]]);
  }

  private table(): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    const tokenError = (): PyValue | undefined => (this.expired() ? err('Token expired') : undefined);
    return {
      authenticate_travel: method(
        ['client_id', 'client_secret', 'refresh_token', 'grant_type', 'user_first_name', 'user_last_name'],
        ({ grant_type, user_first_name, user_last_name }) => {
          this.tokenExpiresIn = 2n;
          this.accessToken = this.random.randint(100000n, 999999n).toString();
          this.tokenType = 'Bearer';
          this.tokenScope = grant_type!;
          this.firstName = user_first_name!;
          this.lastName = user_last_name!;
          return dict([
            ['expires_in', 2n],
            ['access_token', this.accessToken],
            ['token_type', 'Bearer'],
            ['scope', grant_type!],
          ]);
        },
      ),
      travel_get_login_status: method([], () => dict([['status', !(this.tokenExpiresIn === null || this.expired())]])),
      get_budget_fiscal_year: method(['lastModifiedAfter?', 'includeRemoved?'], () => dict([['budget_fiscal_year', '2018']])),
      register_credit_card: method(
        ['access_token', 'card_number', 'expiration_date', 'cardholder_name', 'card_verification_number'],
        ({ access_token, card_number, expiration_date, cardholder_name, card_verification_number }) => {
          if (this.tokenExpiresIn === null) return err('Token not initialized');
          if (this.expired()) return err('Token expired');
          if (!pyEquals(access_token!, this.accessToken)) return err('Invalid access token');
          if (this.creditCards.has(card_number!)) return err('Card already registered');
          const cardId = this.random.randint(100000000000n, 999999999999n).toString();
          this.creditCards.set(
            cardId,
            dict([
              ['card_number', card_number!],
              ['expiration_date', expiration_date!],
              ['cardholder_name', cardholder_name!],
              ['card_verification_number', card_verification_number!],
              ['balance', this.random.randint(10000n, 99999n)],
            ]),
          );
          return dict([['card_id', cardId]]);
        },
      ),
      get_flight_cost: method(['travel_from', 'travel_to', 'travel_date', 'travel_class'], ({ travel_from, travel_to, travel_date, travel_class }) =>
        this.flightCost(travel_from!, travel_to!, travel_date!, travel_class!),
      ),
      get_credit_card_balance: method(['access_token', 'card_id'], ({ access_token, card_id }) => {
        const t = tokenError();
        if (t) return t;
        if (!pyEquals(access_token!, this.accessToken)) return err('Invalid access token');
        if (!this.creditCards.has(card_id!)) return err(`Card not registered. Here are a list of card_id's: ${pyRepr([...this.creditCards.keys()])}`);
        return dict([['card_balance', this.cardField(card_id!, 'balance')]]);
      }),
      book_flight: method(
        ['access_token', 'card_id', 'travel_date', 'travel_from', 'travel_to', 'travel_class'],
        ({ access_token, card_id, travel_date, travel_from, travel_to, travel_class }) => {
          const fail = (text: string) =>
            dict([
              ['booking_status', false],
              ['error', text],
            ]);
          if (this.expired()) return fail('Token expired');
          if (!pyEquals(access_token!, this.accessToken)) return fail('Invalid access token');
          if (!this.creditCards.has(card_id!)) return fail('Card not registered');
          const card = this.creditCards.get(card_id!) as PyDict;
          if (!card.has('balance')) return fail('Balance not found');
          if (!AIRPORTS.includes(travel_from as string)) return fail(`Invalid departure airport code: ${pyStr(travel_from!)}`);
          if (!AIRPORTS.includes(travel_to as string)) return fail(`Invalid destination airport code: ${pyStr(travel_to!)}`);
          try {
            strptime(travel_date!, '%Y-%m-%d');
          } catch (e) {
            if (e instanceof PyError && e.pyType === 'ValueError') return fail('Invalid date format. Use YYYY-MM-DD.');
            throw e;
          }
          if (!['economy', 'business', 'first'].includes(travel_class as string)) {
            return fail("Invalid travel class. Must be one of {'economy', 'business', 'first'}");
          }
          let cost: PyValue;
          try {
            this.flightCost(travel_from!, travel_to!, travel_date!, travel_class!);
            const entry = this.flightCostLookup.get(`${pyStr(travel_from!)}|${pyStr(travel_to!)}|${pyStr(travel_class!)}|${pyStr(travel_date!)}`);
            if (entry === undefined) return fail('No available route for the given parameters');
            cost = entry;
          } catch (e) {
            if (e instanceof PyError && e.pyType === 'ValueError') return fail(e.message);
            throw e;
          }
          if (num.compare(card.get('balance') as PyValue, cost, '<')) return fail('Insufficient funds');
          if (this.budgetLimit !== null && num.compare(card.get('balance') as PyValue, this.budgetLimit, '<')) {
            return fail('Balance is less than budget limit');
          }
          card.set('balance', num.sub(card.get('balance') as PyValue, cost));
          const bookingId = this.random.randint(1000000n, 9999999n).toString();
          const transactionId = this.random.randint(10000000n, 99999999n).toString();
          this.bookings.set(
            bookingId,
            dict([
              ['card_id', card_id!],
              ['travel_date', travel_date!],
              ['travel_from', travel_from!],
              ['travel_to', travel_to!],
              ['travel_class', travel_class!],
              ['travel_cost', cost],
              ['transaction_id', transactionId],
            ]),
          );
          return dict([
            ['booking_id', bookingId],
            ['transaction_id', transactionId],
            ['booking_status', true],
            ['booking_history', this.longContext ? this.bookings : new Map()],
          ]);
        },
      ),
      retrieve_invoice: method(['access_token', 'booking_id?', 'insurance_id?'], ({ access_token, booking_id }) => {
        const t = tokenError();
        if (t) return t;
        if (!pyEquals(access_token!, this.accessToken)) return err('Invalid access token');
        if (!this.bookings.has(booking_id!)) return err('Booking not found');
        const b = this.bookings.get(booking_id!) as PyDict;
        const field = (k: string): PyValue => {
          if (!b.has(k)) throw new PyError('KeyError', `'${k}'`);
          return b.get(k) as PyValue;
        };
        return dict([
          [
            'invoice',
            dict([
              ['booking_id', booking_id!],
              ['travel_date', field('travel_date')],
              ['travel_from', field('travel_from')],
              ['travel_to', field('travel_to')],
              ['travel_class', field('travel_class')],
              ['travel_cost', field('travel_cost')],
              ['transaction_id', field('transaction_id')],
            ]),
          ],
        ]);
      }),
      get_booking_history: method(['access_token'], ({ access_token }) => {
        const t = tokenError();
        if (t) return t;
        if (!pyEquals(access_token!, this.accessToken)) return err('Invalid access token');
        return dict([['booking_history', this.bookings]]);
      }),
      list_all_airports: method([], () => [...AIRPORTS]),
      cancel_booking: method(['access_token', 'booking_id'], ({ access_token, booking_id }) => {
        const fail = (text: string) =>
          dict([
            ['cancel_status', false],
            ['error', text],
          ]);
        if (this.expired()) return fail('Token expired');
        if (!pyEquals(access_token!, this.accessToken)) return fail('Invalid access token');
        if (!this.bookings.has(booking_id!)) return fail('Booking not found');
        const b = this.bookings.get(booking_id!) as PyDict;
        const cardId = b.get('card_id') as PyValue;
        const card = this.creditCards.get(cardId);
        if (!(card instanceof Map)) throw new PyError('KeyError', pyRepr(cardId));
        card.set('balance', num.add(card.get('balance') as PyValue, b.get('travel_cost') as PyValue));
        this.bookings.delete(booking_id!);
        return dict([['cancel_status', true]]);
      }),
      compute_exchange_rate: method(['base_currency', 'target_currency', 'value'], ({ base_currency, target_currency, value }) => {
        for (const [a, b, rate] of EXCHANGE) {
          if (base_currency === a && target_currency === b) return dict([['exchanged_value', num.toPyFloat(num.mul(value!, rate))]]);
          if (base_currency === b && target_currency === a) return dict([['exchanged_value', num.round(num.truediv(value!, rate), 2n)]]);
        }
        throw new PyError('ValueError', 'No available exchange rate for the given currencies.');
      }),
      verify_traveler_information: method(
        ['first_name', 'last_name', 'date_of_birth', 'passport_number'],
        ({ first_name, last_name, date_of_birth, passport_number }) => {
          const fail = (text: string) =>
            dict([
              ['verification_status', false],
              ['verification_failure', text],
            ]);
          if (!pyEquals(this.firstName, first_name!) || !pyEquals(this.lastName, last_name!)) {
            return fail(
              `Cannot book flight information for another user.Expected ${pyStr(this.firstName)} ${pyStr(this.lastName)}, got ${pyStr(first_name!)} ${pyStr(last_name!)}`,
            );
          }
          let age: number;
          try {
            const birth = new Date(strptime(date_of_birth!, '%Y-%m-%d'));
            const { year, month, day } = this.today;
            const before = month < birth.getUTCMonth() + 1 || (month === birth.getUTCMonth() + 1 && day < birth.getUTCDate());
            age = year - birth.getUTCFullYear() - (before ? 1 : 0);
          } catch (e) {
            if (e instanceof PyError && e.pyType === 'ValueError') return fail('Invalid date of birth format. Please use YYYY-MM-DD.');
            throw e;
          }
          if (age < 18) return fail('Traveler must be at least 18 years old.');
          if (!requireStr(passport_number!, 'startswith').startsWith('US')) return fail('Passport must be issued by the United States.');
          return dict([['verification_status', true]]);
        },
      ),
      set_budget_limit: method(['access_token', 'budget_limit'], ({ access_token, budget_limit }) => {
        const t = tokenError();
        if (t) return t;
        if (!pyEquals(access_token!, this.accessToken)) return err('Invalid access token');
        this.budgetLimit = num.toPyFloat(budget_limit!);
        return dict([['budget_limit', this.budgetLimit]]);
      }),
      get_nearest_airport_by_city: method(['location'], ({ location }) =>
        dict([
          ['nearest_airport', typeof location === 'string' && Object.hasOwn(NEAREST_AIRPORT, location) ? (NEAREST_AIRPORT[location] as string) : 'Unknown'],
        ]),
      ),
      purchase_insurance: method(
        ['access_token', 'insurance_type', 'booking_id', 'insurance_cost', 'card_id'],
        ({ access_token, booking_id, insurance_cost, card_id }) => {
          const fail = (text: string) =>
            dict([
              ['insurance_status', false],
              ['error', text],
            ]);
          if (this.expired()) return fail('Token expired');
          if (!pyEquals(access_token!, this.accessToken)) return fail('Invalid access token');
          if (this.budgetLimit !== null && num.compare(this.budgetLimit, insurance_cost!, '<')) return fail('Exceeded budget limit');
          if (!this.bookings.has(booking_id!)) return fail('Booking not found');
          if (!this.creditCards.has(card_id!)) return fail('Credit card not registered');
          const card = this.creditCards.get(card_id!) as PyDict;
          card.set('balance', num.sub(this.cardField(card_id!, 'balance'), insurance_cost!));
          return dict([
            ['insurance_id', this.random.randint(100000000n, 999999999n).toString()],
            ['insurance_status', true],
          ]);
        },
      ),
      contact_customer_support: method(['booking_id', 'message'], ({ booking_id }) => {
        if (!this.bookings.has(booking_id!)) return err('Booking not found');
        return dict([
          ['customer_support_message', 'Thank you for contacting customer support. Your message has been received and we will get back to you shortly.'],
        ]);
      }),
      get_all_credit_cards: method([], () => dict([['credit_card_list', this.creditCards]])),
    };
  }

  private cardField(cardId: PyValue, field: string): PyValue {
    const card = this.creditCards.get(cardId) as PyDict;
    if (!card.has(field)) throw new PyError('KeyError', `'${field}'`);
    return card.get(field) as PyValue;
  }
}
