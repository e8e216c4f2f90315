"""Records request/response vectors of AgentGym's TextCraft server for test/env/remote/conformance.test.ts.

Not run by CI (it needs a checkout of WooooDyy/AgentGym, which CI cannot fetch). Run by hand with
Debian's Python and packages (python3-fastapi, python3-uvicorn, python3-numpy):

    /usr/bin/python3 scripts/remote-env-vectors/record_agentgym.py AGENTGYM_CHECKOUT AGENTGYM_COMMIT OUT_DIR

It starts the real server (agentenv-textcraft, `uvicorn agentenv_textcraft:app`) on a free port and
sends what AgentGym's own client sends (agentenv/agentenv/envs/textcraft.py: /create with
minecraft_dir, commands and goal; /reset {data_idx, id}; /step {action, id}; /close {id}). The one
thing not from the checkout: gymnasium, which Debian does not package; TextCraftEnv uses only its
Env base class, so standins/gymnasium provides that and nothing else.

The server's task for a data index is built from a Python set of recipe strings, whose order follows
PYTHONHASHSEED: the recording fixes it (PYTHONHASHSEED=0), and one more server with another hash seed
answers the same reset, to show what a client sees when the server restarts between a prefix and its
replay.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(checkout, hash_seed):
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(HERE, "standins"), "."]), "PYTHONHASHSEED": str(hash_seed)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "agentenv_textcraft:app", "--host", "127.0.0.1", "--port", str(port)],
        cwd=os.path.join(checkout, "agentenv-textcraft"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/", timeout=1).read()
            return proc, base
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the TextCraft server did not start")


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    request = {"method": method, "path": path, **({} if body is None else {"body": body})}
    return {"request": request, "response": {"status": status, "body": json.loads(text)}}


def episode(base, data_idx, actions):
    """One environment as AgentGym's client drives it: create, reset, steps, observation, close."""
    created = call(base, "POST", "/create", {"minecraft_dir": "agentenv_textcraft/", "commands": None, "goal": None})
    env_id = created["response"]["body"]["id"]
    out = [created, call(base, "POST", "/reset", {"data_idx": data_idx, "id": env_id})]
    out += [call(base, "POST", "/step", {"action": a, "id": env_id}) for a in actions]
    out.append(call(base, "GET", f"/observation?id={env_id}"))
    out.append(call(base, "POST", "/close", {"id": env_id}))
    return env_id, out


def main():
    checkout, commit, out_dir = sys.argv[1:4]
    proc, base = start_server(checkout, 0)
    try:
        # Task 2's goal is glass pane: take the glass, craft the pane (reward 1, done).
        actions = ["inventory", "get 6 glass", "craft 1 glass pane using 1 glass", "craft 16 glass pane using 6 glass"]
        env_id, first = episode(base, 2, actions)
        _, replay = episode(base, 2, actions[:2])
        errors = [
            call(base, "POST", "/step", {"action": "inventory", "id": env_id}),  # closed environment
            call(base, "POST", "/close", {"id": env_id}),  # closed twice
            call(base, "POST", "/step", {"id": env_id}),  # no action: FastAPI's validation error
        ]
    finally:
        proc.terminate()
        proc.wait()
    proc, other = start_server(checkout, 1)
    try:
        _, restarted = episode(other, 2, [])
    finally:
        proc.terminate()
        proc.wait()
    vectors = {
        "source": {
            "repository": "WooooDyy/AgentGym",
            "commit": commit,
            "server": "agentenv-textcraft (uvicorn agentenv_textcraft:app), Debian 12's FastAPI 0.92 / pydantic 1.10, gymnasium's Env base class stood in",
            "how": "the real server process, driven as AgentGym's client drives it (scripts/remote-env-vectors/record_agentgym.py), PYTHONHASHSEED=0",
        },
        "episode": first,
        "replay": replay,
        "errors": errors,
        "restartedServer": {"PYTHONHASHSEED": 1, "exchanges": restarted},
    }
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "textcraft.json")
    with open(path, "w") as f:
        json.dump(vectors, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
