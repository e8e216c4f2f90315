/** TradingBot: a stock account with orders, a watchlist and a transaction history (timestamps from a seeded Python RNG). */
import { DATETIME_MAX, DATETIME_MIN, formatDateTime, strptime } from '../py/datetime.ts';
import { formatFixed, pyRepr, pyStr } from '../py/format.ts';
import * as num from '../py/num.ts';
import { PyRandom } from '../py/random.ts';
import { dget, dhas, dict, type PyDict, PyError, type PyValue, pyEquals, truthy } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method, requireStr } from './api.ts';
import type { SharedState } from './shared.ts';

/** 2024-09-01 10:30 — BFCL's fixed "now" for the trading API. */
const CURRENT_TIME = Date.UTC(2024, 8, 1, 10, 30);

const STOCKS: [string, number, number, number, number, number][] = [
  ['AAPL', 227.16, 0.17, 2.552, 227.11, 227.09],
  ['GOOG', 2840.34, 0.24, 1.123, 2835.67, 2842.15],
  ['TSLA', 667.92, -0.12, 1.654, 671.15, 668.2],
  ['MSFT', 310.23, 0.09, 3.234, 309.88, 310.11],
  ['NVDA', 220.34, 0.34, 1.234, 220.45, 220.67],
  ['ALPH', 1320.45, -0.08, 1.567, 1321.12, 1325.78],
  ['OMEG', 457.23, 0.12, 2.345, 456.78, 458.12],
  ['QUAS', 725.89, -0.03, 1.789, 726.45, 728.0],
  ['NEPT', 88.34, 0.19, 0.654, 88.21, 88.67],
  ['SYNX', 345.67, 0.11, 2.112, 345.34, 346.12],
  ['ZETA', 22.09, -0.05, 0.789, 22.12, 22.34],
];

function defaultStocks(): PyDict {
  return new Map(
    STOCKS.map(([symbol, price, change, volume, ma5, ma20]) => [
      symbol,
      dict([
        ['price', price],
        ['percent_change', change],
        ['volume', volume],
        ['MA(5)', ma5],
        ['MA(20)', ma20],
      ]),
    ]),
  );
}

function defaultOrders(): PyDict {
  return new Map([
    [
      12345n,
      dict([
        ['id', 12345n],
        ['order_type', 'Buy'],
        ['symbol', 'AAPL'],
        ['price', 210.65],
        ['amount', 10n],
        ['status', 'Completed'],
      ]),
    ],
    [
      12446n,
      dict([
        ['id', 12446n],
        ['order_type', 'Sell'],
        ['symbol', 'GOOG'],
        ['price', 2840.56],
        ['amount', 5n],
        ['status', 'Pending'],
      ]),
    ],
  ]);
}

const SYMBOLS: Record<string, string> = {
  Apple: 'AAPL',
  Google: 'GOOG',
  Tesla: 'TSLA',
  Microsoft: 'MSFT',
  Nvidia: 'NVDA',
  'Zeta Corp': 'ZETA',
  'Alpha Tech': 'ALPH',
  'Omega Industries': 'OMEG',
  'Quasar Ltd.': 'QUAS',
  'Neptune Systems': 'NEPT',
  'Synex Solutions': 'SYNX',
  Amazon: 'AMZN',
  Gorilla: 'GORI',
};

/** str.format(symbol=...) for BFCL's order metadata templates. */
function formatSymbol(template: string, symbol: PyValue): string | { missing: string } {
  let missing: string | undefined;
  const out = template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, name: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    if (name === 'symbol') return pyStr(symbol);
    missing ??= name ?? '';
    return m;
  });
  return missing === undefined ? out : { missing };
}

export class TradingBot implements BfclApi {
  readonly className = 'TradingBot';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly orders: PyDict;
  private readonly accountInfo: PyDict;
  private authenticated: PyValue;
  private readonly marketStatus: PyValue;
  private orderCounter: PyValue;
  private readonly stocks: PyDict;
  private readonly watchList: PyValue[];
  private readonly transactionHistory: PyValue[];
  private readonly longContext: boolean;
  private readonly random: PyRandom;

  constructor(ctx: ApiContext) {
    const c = ctx.config;
    const orders = configGet(c, 'orders', defaultOrders()) as PyDict;
    this.orders = new Map([...orders].map(([k, v]) => [typeof k === 'string' && /^\d+$/.test(k) ? BigInt(k) : k, v]));
    this.accountInfo = configGet(
      c,
      'account_info',
      dict([
        ['account_id', 12345n],
        ['balance', 10000.0],
        ['binding_card', 1974202140965533n],
      ]),
    ) as PyDict;
    this.authenticated = configGet(c, 'authenticated', false);
    this.marketStatus = configGet(c, 'market_status', 'Closed');
    this.orderCounter = configGet(c, 'order_counter', 12446n);
    this.stocks = configGet(c, 'stocks', defaultStocks()) as PyDict;
    this.watchList = configGet(c, 'watch_list', ['NVDA']) as PyValue[];
    this.transactionHistory = configGet(c, 'transaction_history', []) as PyValue[];
    this.longContext = ctx.longContext;
    this.random = new PyRandom(configGet(c, 'random_seed', 1053520n) as bigint);
    this.methods = new Map(Object.entries(this.table(ctx.shared)));
  }

  state(): [string, PyValue][] {
    return [
      ['orders', this.orders],
      ['account_info', this.accountInfo],
      ['authenticated', this.authenticated],
      ['market_status', this.marketStatus],
      ['order_counter', this.orderCounter],
      ['stocks', this.stocks],
      ['watch_list', this.watchList],
      ['transaction_history', this.transactionHistory],
      ['long_context', this.longContext],
    ];
  }

  /** A timestamp uniformly within a day after CURRENT_TIME (randint over the two epoch seconds). */
  private timestamp(): string {
    const offset = this.random.randint(0n, 86400n);
    return formatDateTime(CURRENT_TIME + Number(offset) * 1000);
  }

  private balanceChange(amount: PyValue, sign: 1 | -1, kind: string, status: string): PyValue {
    const current = this.accountInfo.get('balance');
    if (current === undefined) throw new PyError('KeyError', "'balance'");
    this.accountInfo.set('balance', sign > 0 ? num.add(current, amount) : num.sub(current, amount));
    this.transactionHistory.push(
      dict([
        ['type', kind],
        ['amount', amount],
        ['timestamp', this.timestamp()],
      ]),
    );
    return dict([
      ['status', status],
      ['new_balance', this.accountInfo.get('balance') as PyValue],
    ]);
  }

  private table(shared: SharedState): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    const needLogin = (what: string) => err(`User not authenticated. Please log in to ${what}.`);
    const longList = (name: string) => shared.constant(name) as PyValue[];
    return {
      get_current_time: method([], () => dict([['current_time', '10:30 AM']])),
      get_symbol_by_name: method(['name'], ({ name }) =>
        dict([['symbol', typeof name === 'string' && Object.hasOwn(SYMBOLS, name) ? (SYMBOLS[name] as string) : 'Stock not found']]),
      ),
      get_stock_info: method(['symbol'], ({ symbol }) => {
        if (!this.stocks.has(symbol!)) return err(`Stock with symbol '${pyStr(symbol!)}' not found.`);
        const stock = this.stocks.get(symbol!) as PyDict;
        if (!this.longContext) return stock;
        const copy = new Map(stock);
        copy.set('MA(5)', longList('MA_5_EXTENSION'));
        copy.set('MA(20)', longList('MA_20_EXTENSION'));
        return copy;
      }),
      get_order_details: method(['order_id'], ({ order_id }) => {
        if (!dhas(this.orders, order_id!)) {
          return err(`Order with ID ${pyStr(order_id!)} not found.Here is the list of orders_id: ${pyRepr([...this.orders.keys()])}`);
        }
        const order = dget(this.orders, order_id!) as PyDict;
        if (!this.longContext) return order;
        const copy = new Map(order);
        const metadata: PyDict = new Map();
        for (const [key, template] of shared.constant('ORDER_DETAIL_EXTENSION') as PyDict) {
          const text = formatSymbol(template as string, copy.get('symbol') as PyValue);
          if (typeof text !== 'string') return err(`KeyError during formatting: '${text.missing}'`);
          metadata.set(key, text);
        }
        copy.set('metadata', metadata);
        return copy;
      }),
      cancel_order: method(['order_id'], ({ order_id }) => {
        if (!dhas(this.orders, order_id!)) return err(`Order with ID ${pyStr(order_id!)} not found.`);
        const order = dget(this.orders, order_id!) as PyDict;
        if (order.get('status') === 'Completed') return err(`Can't cancel order ${pyStr(order_id!)}. Order is already completed.`);
        order.set('status', 'Cancelled');
        return dict([
          ['order_id', order_id!],
          ['status', 'Cancelled'],
        ]);
      }),
      place_order: method(['order_type', 'symbol', 'price', 'amount'], ({ order_type, symbol, price, amount }) => {
        if (!truthy(this.authenticated)) return needLogin('place an order');
        if (!this.stocks.has(symbol!)) return err(`Invalid stock symbol: ${pyStr(symbol!)}`);
        if (num.compare(price!, 0n, '<=') || num.compare(amount!, 0n, '<=')) return err('Price and amount must be positive values.');
        if (requireStr(order_type!, 'lower').toLowerCase() === 'buy') {
          const total = num.mul(num.toPyFloat(price!), num.toPyInt(amount!));
          const balance = this.accountInfo.has('balance') ? (this.accountInfo.get('balance') as PyValue) : 0n;
          if (num.compare(total, balance, '>')) {
            return err(`Insufficient funds: required $${formatFixed(total as number, 2)} but only $${formatFixed(num.toPyFloat(balance), 2)} available.`);
          }
        }
        const p = num.toPyFloat(price!);
        const id = this.orderCounter;
        this.orders.set(
          id,
          dict([
            ['id', id],
            ['order_type', order_type!],
            ['symbol', symbol!],
            ['price', p],
            ['amount', amount!],
            ['status', 'Open'],
          ]),
        );
        this.orderCounter = num.add(this.orderCounter, 1n);
        return dict([
          ['order_id', id],
          ['order_type', order_type!],
          ['status', 'Pending'],
          ['price', p],
          ['amount', amount!],
        ]);
      }),
      withdraw_funds: method(['amount'], ({ amount }) => {
        if (!truthy(this.authenticated)) return needLogin('make a transaction');
        if (this.marketStatus !== 'Open') return err('Market is closed. Transactions are not allowed.');
        if (num.compare(amount!, 0n, '<=')) return err('Transaction amount must be positive.');
        const balance = this.accountInfo.get('balance');
        if (balance === undefined) throw new PyError('KeyError', "'balance'");
        if (num.compare(amount!, balance, '>')) return err('Insufficient funds for withdrawal.');
        return this.balanceChange(amount!, -1, 'withdrawal', 'Withdrawal successful');
      }),
      get_account_info: method([], () => (truthy(this.authenticated) ? this.accountInfo : needLogin('view account information'))),
      trading_login: method(['username', 'password'], () => {
        if (truthy(this.authenticated)) return dict([['status', 'Already logged in']]);
        this.authenticated = true;
        return dict([['status', 'Logged in successfully']]);
      }),
      trading_get_login_status: method([], () => dict([['status', truthy(this.authenticated)]])),
      trading_logout: method([], () => {
        if (!truthy(this.authenticated)) return dict([['status', 'No user is currently logged in']]);
        this.authenticated = false;
        return dict([['status', 'Logged out successfully']]);
      }),
      fund_account: method(['amount'], ({ amount }) => {
        if (!truthy(this.authenticated)) return needLogin('fund the account');
        if (num.compare(amount!, 0n, '<=')) return err('Funding amount must be positive.');
        return this.balanceChange(amount!, 1, 'deposit', 'Account funded successfully');
      }),
      remove_stock_from_watchlist: method(['symbol'], ({ symbol }) => {
        if (!truthy(this.authenticated)) return needLogin('modify the watchlist');
        const i = this.watchList.findIndex((x) => pyEquals(x, symbol!));
        if (i < 0) return err(`Stock ${pyStr(symbol!)} not found in watchlist.`);
        this.watchList.splice(i, 1);
        return dict([['status', `Stock ${pyStr(symbol!)} removed from watchlist successfully.`]]);
      }),
      get_watchlist: method([], () => {
        if (!truthy(this.authenticated)) return ['Error: User not authenticated. Please log in to view the watchlist.'];
        if (this.longContext) return [...this.watchList, ...longList('WATCH_LIST_EXTENSION')];
        return dict([['watchlist', this.watchList]]);
      }),
      get_order_history: method([], () => {
        if (!truthy(this.authenticated)) return [needLogin('view order history')];
        return dict([['history', [...this.orders.keys()]]]);
      }),
      get_transaction_history: method(['start_date?', 'end_date?'], ({ start_date, end_date }) => {
        if (!truthy(this.authenticated)) return [needLogin('view transaction history')];
        const start = truthy(start_date!) ? strptime(start_date!, '%Y-%m-%d') : DATETIME_MIN;
        const end = truthy(end_date!) ? strptime(end_date!, '%Y-%m-%d') : DATETIME_MAX;
        const filtered = this.transactionHistory.filter((t) => {
          const at = strptime((t as PyDict).get('timestamp') as PyValue, '%Y-%m-%d %H:%M:%S');
          return start <= at && at <= end;
        });
        if (this.longContext) filtered.push(...longList('TRANSACTION_HISTORY_EXTENSION'));
        return dict([['transaction_history', filtered]]);
      }),
      get_available_stocks: method(['sector'], ({ sector }) => {
        const sectors = new Map<PyValue, PyValue[]>([
          ['Technology', ['AAPL', 'GOOG', 'MSFT', 'NVDA']],
          ['Automobile', ['TSLA', 'F', 'GM']],
        ]);
        if (this.longContext) {
          sectors.get('Technology')!.push(...longList('TECHNOLOGY_EXTENSION'));
          sectors.get('Automobile')!.push(...longList('AUTOMOBILE_EXTENSION'));
        }
        return dict([['stock_list', sectors.get(sector!) ?? []]]);
      }),
      filter_stocks_by_price: method(['stocks', 'min_price', 'max_price'], ({ stocks, min_price, max_price }) => {
        const priceOf = (symbol: PyValue): PyValue => {
          const s = this.stocks.get(symbol);
          return s instanceof Map && s.has('price') ? (s.get('price') as PyValue) : 0n;
        };
        const list = Array.isArray(stocks) ? stocks : [];
        return dict([['filtered_stocks', list.filter((s) => num.compare(priceOf(s), min_price!, '>=') && num.compare(priceOf(s), max_price!, '<='))]]);
      }),
      add_to_watchlist: method(['stock'], ({ stock }) => {
        if (!this.watchList.some((x) => pyEquals(x, stock!)) && this.stocks.has(stock!)) this.watchList.push(stock!);
        return dict([['watchlist', this.watchList]]);
      }),
      notify_price_change: method(['stocks', 'threshold'], ({ stocks, threshold }) => {
        const list = Array.isArray(stocks) ? stocks : [];
        const changed = list.filter(
          (s) => this.stocks.has(s) && num.compare(num.abs((this.stocks.get(s) as PyDict).get('percent_change') as PyValue), threshold!, '>='),
        );
        if (changed.length > 0) return dict([['notification', `Stocks ${changed.map(pyStr).join(', ')} have significant price changes.`]]);
        return dict([['notification', 'No significant price changes in the selected stocks.']]);
      }),
    };
  }
}
