/**
 * AgentGym sessions over HTTP: an environment id from POST /create is one session; reset, step and
 * close carry it. Answers are bounded (http-json.ts) and read by agentgym-protocol.ts.
 */
import { agentGymRequests, parseAgentGymCreate, parseAgentGymObservation, parseAgentGymReply, type AgentGymId, type HttpRequest } from './agentgym-protocol.ts';
import { parseForkOffer, type ForkOffer } from './fork.ts';
import { getJson, postJson } from './http-json.ts';
import { RemoteProtocolError, type RemoteReply } from './reply.ts';
import type { RemoteLimits, RemoteServer, RemoteSession } from './session.ts';

export interface AgentGymServerOptions extends RemoteLimits {
  /** Base URL, http(s)://host:port. */
  url: string;
}

export class AgentGymServer implements RemoteServer {
  readonly protocol = 'agentgym' as const;
  readonly url: string;
  readonly where: string;

  constructor(private readonly limits: AgentGymServerOptions) {
    this.url = limits.url.replace(/\/+$/, '');
    this.where = `agentgym server ${this.url}`;
  }

  send(request: HttpRequest, signal?: AbortSignal): Promise<unknown> {
    const url = `${this.url}${request.path}`;
    return request.method === 'GET' ? getJson(url, this.limits, this.where, signal) : postJson(url, request.body ?? {}, this.limits, this.where, signal);
  }

  /** Any failure to read an offer means none: replay works with every server. */
  async forkOffer(signal?: AbortSignal): Promise<ForkOffer | undefined> {
    return parseForkOffer(await this.send(agentGymRequests.forkOffer(), signal).catch(() => undefined));
  }

  async open(signal?: AbortSignal): Promise<RemoteSession> {
    const id = parseAgentGymCreate(await this.send(agentGymRequests.create(), signal), this.where);
    return new AgentGymSession(this, id);
  }
}

class AgentGymSession implements RemoteSession {
  constructor(
    private readonly server: AgentGymServer,
    private readonly id: AgentGymId,
  ) {}

  async reset(params: Record<string, unknown>, signal?: AbortSignal): Promise<RemoteReply> {
    const where = `${this.server.where} (environment ${this.id})`;
    const reply = parseAgentGymReply(await this.server.send(agentGymRequests.reset(this.id, params), signal), where, 'reset');
    if (reply) return reply;
    // A server that answers a reset with the id only: the observation is a route of its own.
    const text = parseAgentGymObservation(await this.server.send(agentGymRequests.observation(this.id), signal), where);
    return { observation: text, done: false, info: {} };
  }

  async step(action: string, signal?: AbortSignal, keep = false): Promise<RemoteReply> {
    const where = `${this.server.where} (environment ${this.id})`;
    const reply = parseAgentGymReply(await this.server.send(agentGymRequests.step(this.id, action, keep), signal), where, 'step');
    if (!reply) throw new RemoteProtocolError(`${where}: /step answered no observation`);
    return reply;
  }

  async fork(key: string, signal?: AbortSignal): Promise<RemoteReply> {
    const where = `${this.server.where} (environment ${this.id})`;
    const reply = parseAgentGymReply(await this.server.send(agentGymRequests.fork(this.id, key), signal), where, 'step');
    if (!reply) throw new RemoteProtocolError(`${where}: /fork answered no observation`);
    return reply;
  }

  async close(): Promise<void> {
    try {
      await this.server.send(agentGymRequests.close(this.id));
    } catch {
      // Best effort: a server without a /close route (ALFWorld's) answers 404 and keeps the environment;
      // one that is gone has nothing left to close.
    }
  }
}
