# minimal_server.py: python3 minimal_server.py PORT (AgentGym's routes and OpenEnv's /ws, on one port)
import itertools, random, sys
import uvicorn
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect

app, envs, ids = FastAPI(), {}, itertools.count()
START, CHOICES = "Guess my number from 1 to 8.", {"candidates": [str(n) for n in range(1, 9)]}

def new_env(task):  # the task (a seed) picks the number; four tries
    return {"secret": random.Random(task).randint(1, 8), "tries": 0}

def step(env, guess):
    env["tries"] += 1
    right = guess.strip() == str(env["secret"])
    hint = "Right!" if right else "Higher." if guess.strip().isdigit() and int(guess) < env["secret"] else "Lower."
    return {"observation": hint, "reward": int(right), "done": right or env["tries"] == 4}

@app.post("/{route}")  # AgentGym: /create, /reset {id, data_idx}, /step {id, action}, /close {id}
async def agentgym(route: str, request: Request):
    body = {} if route == "create" else await request.json()
    if route == "create":
        envs[n := next(ids)] = None
        return {"id": n}
    if route == "reset":
        envs[body["id"]] = new_env(body["data_idx"])
        return {"observation": START, "reward": 0, "done": False, "info": CHOICES}
    if route == "step":
        return {**step(envs[body["id"]], body["action"]), "info": CHOICES}
    return envs.pop(body["id"], False) is not False  # close

@app.websocket("/ws")  # OpenEnv: {"type": "reset", "data": {"seed"}}, {"type": "step", "data": {"message"}}, {"type": "close"}
async def openenv(ws: WebSocket):
    await ws.accept()
    try:
        while (msg := await ws.receive_json())["type"] != "close":
            if msg["type"] == "reset":
                env, out = new_env(msg["data"].get("seed", 0)), {"observation": START, "reward": 0, "done": False}
            else:
                out = step(env, msg["data"]["message"])
            await ws.send_json({"type": "observation", "data": {**out, "observation": {"text": out["observation"]}, "metadata": CHOICES}})
        await ws.close()
    except WebSocketDisconnect:
        pass

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
