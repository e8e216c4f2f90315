/** TicketAPI: a queue of support tickets owned by the logged-in user. */
import { pyStr } from '../py/format.ts';
import { add, compare } from '../py/num.ts';
import { dict, type PyDict, PyError, type PyValue, pyEquals, truthy, typeName } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method, requireStr } from './api.ts';

const EDITABLE = ['title', 'description', 'status', 'priority'];

export class TicketAPI implements BfclApi {
  readonly className = 'TicketAPI';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly ticketQueue: PyValue[];
  private ticketCounter: PyValue;
  private currentUser: PyValue;

  constructor(ctx: ApiContext) {
    this.ticketQueue = configGet(ctx.config, 'ticket_queue', []) as PyValue[];
    this.ticketCounter = configGet(ctx.config, 'ticket_counter', 1n);
    this.currentUser = configGet(ctx.config, 'current_user', null);
    this.methods = new Map(Object.entries(this.table()));
  }

  state(): [string, PyValue][] {
    return [
      ['ticket_queue', this.ticketQueue],
      ['ticket_counter', this.ticketCounter],
      ['current_user', this.currentUser],
    ];
  }

  private find(id: PyValue): PyDict | undefined {
    return this.ticketQueue.find((t) => pyEquals((t as PyDict).get('id') as PyValue, id)) as PyDict | undefined;
  }

  private table(): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    const notFound = (id: PyValue) => err(`Ticket with ID ${pyStr(id)} not found.`);
    return {
      create_ticket: method(
        ['title', { name: 'description', fallback: () => '' }, { name: 'priority', fallback: () => 1n }],
        ({ title, description, priority }) => {
          if (!truthy(this.currentUser)) return err('User not authenticated. Please log in to create a ticket.');
          if (compare(priority!, 1n, '<') || compare(priority!, 5n, '>')) return err('Invalid priority. Priority must be between 1 and 5.');
          const ticket = dict([
            ['id', this.ticketCounter],
            ['title', title!],
            ['description', description!],
            ['status', 'Open'],
            ['priority', priority!],
            ['created_by', this.currentUser],
          ]);
          this.ticketQueue.push(ticket);
          this.ticketCounter = add(this.ticketCounter, 1n);
          return ticket;
        },
      ),
      get_ticket: method(['ticket_id'], ({ ticket_id }) => this.find(ticket_id!) ?? notFound(ticket_id!)),
      close_ticket: method(['ticket_id'], ({ ticket_id }) => {
        const t = this.find(ticket_id!);
        if (!t) return notFound(ticket_id!);
        if (t.get('status') === 'Closed') return err(`Ticket with ID ${pyStr(ticket_id!)} is already closed.`);
        t.set('status', 'Closed');
        return dict([['status', `Ticket ${pyStr(ticket_id!)} has been closed successfully.`]]);
      }),
      resolve_ticket: method(['ticket_id', 'resolution'], ({ ticket_id, resolution }) => {
        const t = this.find(ticket_id!);
        if (!t) return notFound(ticket_id!);
        if (t.get('status') === 'Resolved') return err(`Ticket with ID ${pyStr(ticket_id!)} is already resolved.`);
        t.set('status', 'Resolved');
        t.set('resolution', resolution!);
        return dict([['status', `Ticket ${pyStr(ticket_id!)} has been resolved successfully.`]]);
      }),
      edit_ticket: method(['ticket_id', 'updates'], ({ ticket_id, updates }) => {
        const t = this.find(ticket_id!);
        if (!t) return notFound(ticket_id!);
        if (!(updates instanceof Map)) throw new PyError('AttributeError', `'${typeName(updates!)}' object has no attribute 'keys'`);
        // BFCL joins a Python set here, whose order varies between runs; we keep the updates' order.
        const invalid = [...updates.keys()].filter((k) => !EDITABLE.includes(k as string));
        if (invalid.length > 0) return err(`Invalid fields for update: ${invalid.map(pyStr).join(', ')}`);
        for (const [k, v] of updates) if (v !== null) t.set(k, v);
        return dict([['status', `Ticket ${pyStr(ticket_id!)} has been updated successfully.`]]);
      }),
      ticket_login: method(['username', 'password'], ({ username, password }) => {
        if (truthy(username!) && truthy(password!)) {
          this.currentUser = username!;
          return dict([['success', true]]);
        }
        return dict([['success', false]]);
      }),
      ticket_get_login_status: method([], () => dict([['login_status', truthy(this.currentUser)]])),
      logout: method([], () => {
        if (!truthy(this.currentUser)) return dict([['success', false]]);
        this.currentUser = null;
        return dict([['success', true]]);
      }),
      get_user_tickets: method(['status?'], ({ status }) => {
        if (!truthy(this.currentUser)) return [dict([['error', 'User not authenticated. Please log in to view tickets.']])];
        let mine = this.ticketQueue.filter((t) => pyEquals((t as PyDict).get('created_by') as PyValue, this.currentUser));
        if (truthy(status!)) {
          const wanted = requireStr(status!, 'lower').toLowerCase();
          mine = mine.filter((t) => requireStr((t as PyDict).get('status') as PyValue, 'lower').toLowerCase() === wanted);
        }
        return mine;
      }),
    };
  }
}
