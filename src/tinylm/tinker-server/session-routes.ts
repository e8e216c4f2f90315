/**
 * The session routes of the current SDK wire that `serve --tinker` answers beyond create_session and
 * the heartbeat: `POST /api/v1/sessions/{id}/finish`, with which a client says its run is over and how
 * (success, errored, interrupted). Sessions here hold nothing (models and futures are not tied to one),
 * so a finish is checked and acknowledged, and answered with the session's status as the SDK's types
 * describe a client-finished session (`ClientSessionFinished`: type, reason, detail).
 */
import type { Hono } from 'hono';
import { readJson } from '../../http/index.ts';
import { finishSessionSchema } from '../../policy/tinker/wire.ts';

export function addSessionRoutes(app: Hono): void {
  app.post('/api/v1/sessions/:id/finish', async (c) => {
    const body = await readJson(c, finishSessionSchema);
    return c.json({ session_id: c.req.param('id'), status: { type: 'client_finished', reason: body.reason, detail: body.detail ?? null } });
  });
}
