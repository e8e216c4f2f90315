/** MessageAPI: users, a login, and an inbox of {receiver_id: message} entries; message ids from a seeded Python RNG. */
import { PyRandom } from '../py/random.ts';
import { pyStr } from '../py/format.ts';
import { add } from '../py/num.ts';
import { dict, type PyDict, PyError, PySet, type PyValue, pyEquals, truthy, typeName } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method, requireStr, strContains } from './api.ts';

const DEFAULT_USERS: [string, string][] = [
  ['Alice', 'USR001'],
  ['Bob', 'USR002'],
  ['Catherine', 'USR003'],
  ['Daniel', 'USR004'],
];
const DEFAULT_INBOX: [string, string][] = [
  ['USR002', 'My name is Alice. I want to connect.'],
  ['USR003', 'Could you upload the file?'],
  ['USR004', 'Could you upload the file?'],
];

/** The first (receiver, message) pair of an inbox entry; Python indexes `list(d.items())[0]`. */
function firstItem(entry: PyValue): [PyValue, PyValue] {
  if (!(entry instanceof Map)) throw new PyError('AttributeError', `'${typeName(entry)}' object has no attribute 'items'`);
  const first = [...entry][0];
  if (!first) throw new PyError('IndexError', 'list index out of range');
  return first;
}

export class MessageAPI implements BfclApi {
  readonly className = 'MessageAPI';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly random: PyRandom;
  private generatedIds: PyValue;
  private userCount: PyValue;
  private readonly userMap: PyDict;
  private readonly inbox: PyValue[];
  private messageCount: PyValue;
  private currentUser: PyValue;

  constructor(ctx: ApiContext) {
    const c = ctx.config;
    this.random = new PyRandom(configGet(c, 'random_seed', 200191n) as bigint);
    this.generatedIds = configGet(c, 'generated_ids', new PySet());
    this.userCount = configGet(c, 'user_count', 4n);
    this.userMap = configGet(c, 'user_map', new Map(DEFAULT_USERS)) as PyDict;
    this.inbox = configGet(
      c,
      'inbox',
      DEFAULT_INBOX.map(([k, v]) => new Map([[k, v]])),
    ) as PyValue[];
    this.messageCount = configGet(c, 'message_count', 3n);
    this.currentUser = configGet(c, 'current_user', null);
    this.methods = new Map(Object.entries(this.table()));
  }

  state(): [string, PyValue][] {
    return [
      ['generated_ids', this.generatedIds],
      ['user_count', this.userCount],
      ['user_map', this.userMap],
      ['inbox', this.inbox],
      ['message_count', this.messageCount],
      ['current_user', this.currentUser],
    ];
  }

  private generateId(): PyValue {
    const ids = this.generatedIds;
    const has = (n: bigint) => (ids instanceof PySet ? ids.has(n) : Array.isArray(ids) ? ids.some((x) => pyEquals(x, n)) : false);
    let id = this.random.randint(10000n, 99999n);
    while (has(id)) id = this.random.randint(10000n, 99999n);
    if (!(ids instanceof PySet)) throw new PyError('AttributeError', `'${typeName(ids)}' object has no attribute 'add'`);
    ids.add(id);
    return dict([['new_id', id]]);
  }

  private table(): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    const notLoggedIn = () => err('No user is currently logged in.');
    const userIds = () => [...this.userMap.values()];
    return {
      list_users: method([], () => dict([['user_list', [...this.userMap.keys()]]])),
      get_user_id: method(['user'], ({ user }) => {
        if (!this.userMap.has(user!)) return err(`User '${pyStr(user!)}' not found in the workspace.`);
        return dict([['user_id', this.userMap.get(user!) as PyValue]]);
      }),
      message_login: method(['user_id'], ({ user_id }) => {
        if (!userIds().some((id) => pyEquals(id, user_id!))) {
          return dict([
            ['login_status', false],
            ['message', `User ID '${pyStr(user_id!)}' not found.`],
          ]);
        }
        this.currentUser = user_id!;
        return dict([
          ['login_status', true],
          ['message', `User '${pyStr(user_id!)}' logged in successfully.`],
        ]);
      }),
      message_get_login_status: method([], () => dict([['login_status', truthy(this.currentUser)]])),
      send_message: method(['receiver_id', 'message'], ({ receiver_id, message }) => {
        if (!truthy(this.currentUser)) return notLoggedIn();
        if (!userIds().some((id) => pyEquals(id, receiver_id!))) return err(`Receiver ID '${pyStr(receiver_id!)}' not found.`);
        const messageId = this.generateId();
        this.inbox.push(new Map([[receiver_id!, message!]]));
        this.messageCount = add(this.messageCount, 1n);
        return dict([
          ['sent_status', true],
          ['message_id', messageId],
          ['message', `Message sent to '${pyStr(receiver_id!)}' successfully.`],
        ]);
      }),
      delete_message: method(['receiver_id'], ({ receiver_id }) => {
        if (!truthy(this.currentUser)) return notLoggedIn();
        for (const entry of [...this.inbox].reverse()) {
          const [receiver] = firstItem(entry);
          if (pyEquals(receiver, receiver_id!)) {
            // list.remove drops the first entry equal to this one, which may be an earlier duplicate.
            this.inbox.splice(
              this.inbox.findIndex((x) => pyEquals(x, entry)),
              1,
            );
            return dict([
              ['deleted_status', true],
              ['receiver_id', receiver],
              ['message', `Receiver ${pyStr(receiver_id!)}'s latest message deleted successfully.`],
            ]);
          }
        }
        return err(`Receiver ID ${pyStr(receiver_id!)} not found.`);
      }),
      view_messages_sent: method([], () => {
        if (!truthy(this.currentUser)) return notLoggedIn();
        const sent: PyDict = new Map();
        for (const entry of this.inbox) {
          const [receiver, content] = firstItem(entry);
          const list = sent.get(receiver);
          if (Array.isArray(list)) list.push(content);
          else sent.set(receiver, [content]);
        }
        return dict([['messages', sent]]);
      }),
      add_contact: method(['user_name'], ({ user_name }) => {
        if (this.userMap.has(user_name!)) return err(`User name '${pyStr(user_name!)}' already exists.`);
        this.userCount = add(this.userCount, 1n);
        const userId = `USR${pyStr(this.userCount).padStart(3, '0')}`;
        if (userIds().includes(userId)) return err(`User ID '${userId}' already exists.`);
        this.userMap.set(user_name!, userId);
        return dict([
          ['added_status', true],
          ['user_id', userId],
          ['message', `Contact '${pyStr(user_name!)}' added successfully.`],
        ]);
      }),
      search_messages: method(['keyword'], ({ keyword }) => {
        if (!truthy(this.currentUser)) return notLoggedIn();
        const needle = requireStr(keyword!, 'lower').toLowerCase();
        const results: PyValue[] = [];
        for (const entry of this.inbox) {
          const [receiver, content] = firstItem(entry);
          if (strContains(requireStr(content, 'lower').toLowerCase(), needle)) {
            results.push(
              dict([
                ['receiver_id', receiver],
                ['message', content],
              ]),
            );
          }
        }
        return dict([['results', results]]);
      }),
      get_message_stats: method([], () => {
        if (!truthy(this.currentUser)) return notLoggedIn();
        const contacts = new PySet();
        for (const entry of this.inbox) contacts.add(firstItem(entry)[0]);
        return dict([
          [
            'stats',
            dict([
              ['received_count', BigInt(this.inbox.length)],
              ['total_contacts', BigInt(contacts.items.size)],
            ]),
          ],
        ]);
      }),
    };
  }
}
