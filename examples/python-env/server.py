"""A small environment in Python, served over OpenEnv's protocol or AgentGym's: the locked house.

    python3 examples/python-env/server.py --protocol openenv --port 8000
    python3 examples/python-env/server.py --protocol agentgym --port 8001

Debian's packages only (python3-fastapi, python3-uvicorn, python3-websockets). The game: a house of
three rooms; each room has four doors and one of them (fixed by the task's seed) leads on. A locked
door leaves you where you are; six tries in all. Reward 1 for getting out, 0 otherwise. The same
task always hides the same doors, and a session's answers depend on nothing but its task and its
actions, so trace-rl can branch an episode by replaying its actions in a new session.

Each answer lists the four doors as candidate actions (`info` in AgentGym, `metadata` in OpenEnv:
trace-rl reads `candidates` there; OpenEnv's own Python library does not send `metadata` over the
wire, a server written against the protocol may). GET /sessions (this example's own route, in
neither protocol) tells how many sessions are open and how many were ever opened.

It is forkable (trace-rl's fork extension, docs/environments.md "Make your server forkable"): GET /fork
offers it, a step sent with "keep": true answers a "kept" key for a copy of the game, and a new
session starts from that copy (OpenEnv: a {"type": "fork", "data": {"key"}} message; AgentGym: POST
/fork {id, key}), so trace-rl branches an episode without replaying it. All it takes is the Kept class
and the lines marked "fork".
"""

import argparse
import copy
import json
import random
import re
import secrets
import time
from collections import OrderedDict

import uvicorn
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect

DOORS = ["north", "east", "south", "west"]
ROOMS = 3
MAX_TRIES = 6
MAX_ACTION_CHARS = 2000


class LockedHouse:
    """One episode: the doors that open are fixed by the task."""

    def __init__(self, task):
        if not isinstance(task, int) or isinstance(task, bool) or task < 0:
            raise ValueError(f"a task is a number >= 0, got {json.dumps(task)[:50]}")
        rng = random.Random(task)
        self.way = [rng.choice(DOORS) for _ in range(ROOMS)]
        self.room = 0
        self.tries = 0
        self.done = False
        self.text = f"You are in room 1 of {ROOMS} of a locked house. Each room has four doors ({', '.join(DOORS)}); one opens. Pick a door."

    def step(self, action):
        if self.done:
            raise ValueError("the episode has ended: reset first")
        if not isinstance(action, str) or len(action) > MAX_ACTION_CHARS:
            raise ValueError(f"an action is a text of at most {MAX_ACTION_CHARS} characters")
        named = re.findall(r"\b(" + "|".join(DOORS) + r")\b", action.lower())
        self.tries += 1
        reward = 0
        if not named:
            self.text = f"That is not a door. Doors: {', '.join(DOORS)}."
        elif named[-1] == self.way[self.room]:
            self.room += 1
            if self.room == ROOMS:
                self.text, reward, self.done = "The door opens onto the garden. You are out!", 1, True
            else:
                self.text = f"The {named[-1]} door opens. You are in room {self.room + 1} of {ROOMS}."
        else:
            self.text = f"The {named[-1]} door is locked. You are still in room {self.room + 1} of {ROOMS}."
        if not self.done and self.tries >= MAX_TRIES:
            self.text += " You are out of tries."
            self.done = True
        return self.text, reward, self.done

    def side(self):
        return {} if self.done else {"candidates": DOORS}


class Kept:
    """Copies of games kept for forks, bounded: at most `limit` (oldest dropped first), each for `ttl_s` seconds."""

    def __init__(self, limit=1024, ttl_s=600):
        self.limit, self.ttl_s, self.games = limit, ttl_s, OrderedDict()

    def offer(self):
        return {"version": 1, "max_kept": self.limit, "ttl_s": self.ttl_s}

    def keep(self, game):
        key = secrets.token_urlsafe(12)
        self.games[key] = (time.monotonic() + self.ttl_s, copy.deepcopy(game))
        while len(self.games) > self.limit:
            self.games.popitem(last=False)
        return key

    def fork(self, key):
        until, game = self.games.get(key, (0, None)) if isinstance(key, str) else (0, None)
        if game is None or until < time.monotonic():
            raise ValueError("no kept state under that key: replay instead")
        return copy.deepcopy(game)


class Sessions:
    """The sessions open now (id -> its episode, None before the first reset) and how many were opened."""

    def __init__(self, limit):
        self.limit, self.live, self.opened = limit, {}, 0

    def open(self):
        if len(self.live) >= self.limit:
            return None
        n, self.opened = self.opened, self.opened + 1
        self.live[n] = None
        return n

    def counts(self):
        return {"open": len(self.live), "opened": self.opened}


def agentgym_app(sessions, kept):
    app = FastAPI()
    if kept.limit > 0:
        app.get("/fork")(kept.offer)  # fork

    def env_of(body):
        n = body.get("id")
        if n not in sessions.live:
            raise ValueError(f"The id {n} is not valid.")
        return n

    async def answer(request, act):
        try:
            body = await request.json()
            return act(body if isinstance(body, dict) else {})
        except Exception as e:  # AgentGym's servers answer their failures as HTTP 200 {"error"}
            return {"error": str(e)}

    @app.post("/create")
    async def create():
        n = sessions.open()
        return {"error": f"at capacity: {sessions.limit} environments open"} if n is None else {"id": n}

    @app.post("/reset")
    async def reset(request: Request):
        def act(body):
            n = env_of(body)
            game = sessions.live[n] = LockedHouse(body.get("data_idx", 0))
            return {"id": n, "observation": game.text, "reward": 0, "done": False, "info": game.side()}

        return await answer(request, act)

    @app.post("/step")
    async def step(request: Request):
        def act(body):
            game = sessions.live[env_of(body)]
            if game is None:
                raise ValueError("step before reset: reset the environment with a task first")
            text, reward, done = game.step(body.get("action"))
            out = {"observation": text, "reward": reward, "done": done, "info": game.side()}
            if body.get("keep") is True and not done:  # fork
                out["kept"] = kept.keep(game)
            return out

        return await answer(request, act)

    @app.post("/fork")  # fork
    async def fork(request: Request):
        def act(body):
            n = env_of(body)
            game = sessions.live[n] = kept.fork(body.get("key"))
            return {"id": n, "observation": game.text, "reward": 0, "done": False, "info": game.side()}

        return await answer(request, act)

    @app.get("/observation")
    async def observation(id: int):
        game = sessions.live.get(id)
        return {"error": f"The id {id} is not valid."} if id not in sessions.live else game.text if game else ""

    @app.post("/close")
    async def close(request: Request):
        body = await request.json()
        return sessions.live.pop(body.get("id") if isinstance(body, dict) else None, False) is not False

    return app


def openenv_app(sessions, kept):
    app = FastAPI()
    if kept.limit > 0:
        app.get("/fork")(kept.offer)  # fork

    @app.get("/health")
    async def health():
        return {"status": "healthy"}

    @app.get("/schema")
    async def schema():
        return {
            "action": {"type": "object", "properties": {"message": {"type": "string"}, "metadata": {"type": "object"}}, "required": ["message"]},
            "observation": {"type": "object", "properties": {"text": {"type": "string"}}},
            "state": {"type": "object", "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"}}},
        }

    @app.get("/metadata")
    async def metadata():
        return {"name": "LockedHouse", "description": "Find the doors out of a locked house of three rooms.", "readme_content": None,
                "version": "1.0.0", "author": None, "documentation_url": None}

    @app.websocket("/ws")
    async def ws(socket: WebSocket):
        await socket.accept()
        n = sessions.open()
        if n is None:
            await socket.send_json({"type": "error", "data": {"message": f"Server at capacity: {sessions.limit}/{sessions.limit} sessions active.",
                                                             "code": "CAPACITY_REACHED", "active_sessions": sessions.limit, "max_sessions": sessions.limit}})
            await socket.close()
            return
        game, episode = None, None
        try:
            while True:
                try:
                    message = json.loads(await socket.receive_text())
                except json.JSONDecodeError as e:
                    await socket.send_json({"type": "error", "data": {"message": f"Invalid JSON: {e}", "code": "INVALID_JSON"}})
                    continue
                kind = message.get("type") if isinstance(message, dict) else None
                data = message.get("data") if isinstance(message, dict) else None
                data = data if isinstance(data, dict) else {}
                try:
                    if kind == "close":
                        break
                    if kind == "reset":
                        game, episode = LockedHouse(data.get("seed", 0)), data.get("episode_id")
                        reply = (game.text, 0.0, False)
                    elif kind == "fork":  # fork
                        game = kept.fork(data.get("key"))
                        reply = (game.text, 0.0, False)
                    elif kind == "step":
                        if game is None:
                            raise ValueError("step before reset")
                        reply = game.step(data.get("message"))
                    elif kind == "state":
                        await socket.send_json({"type": "state", "data": {"episode_id": episode, "step_count": game.tries if game else 0}})
                        continue
                    else:
                        await socket.send_json({"type": "error", "data": {"message": f"Unknown message type: {kind}", "code": "UNKNOWN_TYPE"}})
                        continue
                except ValueError as e:
                    await socket.send_json({"type": "error", "data": {"message": str(e), "code": "EXECUTION_ERROR"}})
                    continue
                text, reward, done = reply
                out = {"observation": {"text": text}, "reward": reward, "done": done, "metadata": game.side()}
                if kind == "step" and message.get("keep") is True and not done:  # fork
                    out["kept"] = kept.keep(game)
                await socket.send_json({"type": "observation", "data": out})
        except WebSocketDisconnect:
            pass
        finally:
            sessions.live.pop(n, None)
        await socket.close()

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=["openenv", "agentgym"], required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-sessions", type=int, default=16, help="sessions open at once; one more is refused (OpenEnv's max_concurrent_envs)")
    parser.add_argument("--fork-keep", type=int, default=1024, help="most game states kept for forks (0: do not offer fork)")
    args = parser.parse_args()
    sessions = Sessions(args.max_sessions)
    kept = Kept(args.fork_keep)
    app = (openenv_app if args.protocol == "openenv" else agentgym_app)(sessions, kept)

    @app.get("/sessions")
    async def counts():
        return sessions.counts()

    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", ws_max_size=1 << 20)


if __name__ == "__main__":
    main()
