/**
 * AgentGym sessions over HTTP: an environment id from POST /create is one session; reset, step and
 * close carry it, under the server's dialect (its session key and path prefix). Answers are bounded
 * (http-json.ts) and read by agentgym-protocol.ts. Where the server lists candidate actions on a route
 * of its own (`candidatesRoute`), that route is read after every reset and step that did not end the
 * episode, and its list goes into the reply's side channel as `candidates`.
 */
import {
  agentGymRoutes,
  ID_DIALECT,
  parseAgentGymCandidates,
  parseAgentGymCreate,
  parseAgentGymObservation,
  parseAgentGymReply,
  type AgentGymDialect,
  type AgentGymId,
  type HttpRequest,
} from './agentgym-protocol.ts';
import { parseForkOffer, type ForkOffer } from './fork.ts';
import { getJson, postJson } from './http-json.ts';
import { RemoteProtocolError, type RemoteReply } from './reply.ts';
import type { RemoteLimits, RemoteServer, RemoteSession } from './session.ts';

export interface AgentGymServerOptions extends RemoteLimits {
  /** Base URL, http(s)://host:port. */
  url: string;
  /** Session key and path prefix (default: `id`, none). */
  dialect?: AgentGymDialect;
  /** A GET route listing the candidate actions, e.g. `/available_actions`. */
  candidatesRoute?: string;
}

export class AgentGymServer implements RemoteServer {
  readonly protocol = 'agentgym' as const;
  readonly url: string;
  readonly where: string;
  readonly routes: ReturnType<typeof agentGymRoutes>;

  constructor(private readonly limits: AgentGymServerOptions) {
    this.url = limits.url.replace(/\/+$/, '');
    this.where = `agentgym server ${this.url}`;
    this.routes = agentGymRoutes(limits.dialect ?? ID_DIALECT);
  }

  get candidatesRoute(): string | undefined {
    return this.limits.candidatesRoute;
  }

  send(request: HttpRequest, signal?: AbortSignal): Promise<unknown> {
    const url = `${this.url}${request.path}`;
    return request.method === 'GET' ? getJson(url, this.limits, this.where, signal) : postJson(url, request.body ?? {}, this.limits, this.where, signal);
  }

  /** Any failure to read an offer means none: replay works with every server. */
  async forkOffer(signal?: AbortSignal): Promise<ForkOffer | undefined> {
    return parseForkOffer(await this.send(this.routes.forkOffer(), signal).catch(() => undefined));
  }

  async open(signal?: AbortSignal): Promise<RemoteSession> {
    const id = parseAgentGymCreate(await this.send(this.routes.create(), signal), this.where);
    return new AgentGymSession(this, id);
  }
}

class AgentGymSession implements RemoteSession {
  private readonly where: string;

  constructor(
    private readonly server: AgentGymServer,
    private readonly id: AgentGymId,
  ) {
    this.where = `${server.where} (environment ${id})`;
  }

  async reset(params: Record<string, unknown>, signal?: AbortSignal): Promise<RemoteReply> {
    const { routes } = this.server;
    let reply = parseAgentGymReply(await this.server.send(routes.reset(this.id, params), signal), this.where, 'reset');
    // A server that answers a reset with the id only: the observation is a route of its own.
    reply ??= { observation: parseAgentGymObservation(await this.server.send(routes.observation(this.id), signal), this.where), done: false, info: {} };
    return this.withCandidates(reply, signal);
  }

  async step(action: string, signal?: AbortSignal, keep = false): Promise<RemoteReply> {
    const reply = parseAgentGymReply(await this.server.send(this.server.routes.step(this.id, action, keep), signal), this.where, 'step');
    if (!reply) throw new RemoteProtocolError(`${this.where}: /step answered no observation`);
    return this.withCandidates(reply, signal);
  }

  /** The reply with the candidates route's list, where the server has one and the episode goes on. */
  private async withCandidates(reply: RemoteReply, signal?: AbortSignal): Promise<RemoteReply> {
    const route = this.server.candidatesRoute;
    if (route === undefined || reply.done) return reply;
    const listed = parseAgentGymCandidates(await this.server.send(this.server.routes.candidates(this.id, route), signal), `${this.where}: GET ${route}`);
    return { ...reply, info: { ...reply.info, candidates: listed } };
  }

  async fork(key: string, signal?: AbortSignal): Promise<RemoteReply> {
    const reply = parseAgentGymReply(await this.server.send(this.server.routes.fork(this.id, key), signal), this.where, 'step');
    if (!reply) throw new RemoteProtocolError(`${this.where}: /fork answered no observation`);
    return this.withCandidates(reply, signal);
  }

  async close(): Promise<void> {
    try {
      await this.server.send(this.server.routes.close(this.id));
    } catch {
      // Best effort: a server without a /close route (ALFWorld's, SQLGym's) answers 404 and keeps the
      // environment; one that is gone has nothing left to close.
    }
  }
}
