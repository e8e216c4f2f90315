"""Records request/response vectors of OpenEnv environments for test/env/remote/conformance.test.ts.

Not run by CI (it needs a checkout of meta-pytorch/OpenEnv, which CI cannot fetch). Run by hand:

    python3 scripts/remote-env-vectors/record_openenv.py OPENENV_CHECKOUT OPENENV_COMMIT OUT_DIR

with a Python that has pydantic 2 and numpy (OpenEnv's types need pydantic 2; Debian 12 has 1.10).

Why not the real server process: OpenEnv's HTTP server (src/openenv/core/env_server/http_server.py)
needs FastAPI >= 0.100 (pydantic 2) and fastmcp, neither of which this machine has. So this script
loads OpenEnv's own message models (types.py), serialization (serialization.py), interface
(interfaces.py) and the real environment classes (envs/grid_world_env, envs/maze_env) from the
checkout, without the package __init__ files that import the server, and answers each recorded
client message the way the server's /ws loop does: parse JSON, validate the envelope with the
message model of its type, reset with the keyword arguments the environment's reset accepts, step
with the action validated by the environment's action model, answer `model_dump_json()` of the
response model. The HTTP answers (/schema, /metadata, /health) are built from the same models as
the server builds them. The transport (FastAPI, the WebSocket) is the part that did not run.
"""

import importlib
import inspect
import json
import os
import sys
import types


def load_openenv(checkout):
    """OpenEnv's env_server modules, without the package __init__ files that import FastAPI."""
    for name, rel in [
        ("openenv", "src/openenv"),
        ("openenv.core", "src/openenv/core"),
        ("openenv.core.env_server", "src/openenv/core/env_server"),
        ("envs", "envs"),
        ("envs.grid_world_env", "envs/grid_world_env"),
        ("envs.grid_world_env.server", "envs/grid_world_env/server"),
        ("envs.maze_env", "envs/maze_env"),
        ("envs.maze_env.server", "envs/maze_env/server"),
    ]:
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(checkout, rel)]
        sys.modules[name] = module
    server_types = importlib.import_module("openenv.core.env_server.types")
    interfaces = importlib.import_module("openenv.core.env_server.interfaces")
    serialization = importlib.import_module("openenv.core.env_server.serialization")
    exceptions = importlib.import_module("openenv.core.env_server.exceptions")
    # What `from openenv.core.env_server import Environment` gives the environments.
    sys.modules["openenv.core.env_server"].Environment = interfaces.Environment
    return server_types, interfaces, serialization, exceptions


class Session:
    """One /ws session: an environment instance and the server's answer to each client message."""

    def __init__(self, oe, env, action_cls):
        self.t, self.interfaces, self.ser, _ = oe
        self.env = env
        self.action_cls = action_cls

    def answer(self, text):
        from pydantic import ValidationError

        t = self.t
        try:
            message = json.loads(text)
        except json.JSONDecodeError as e:
            return t.WSErrorResponse(data={"message": f"Invalid JSON: {e}", "code": t.WSErrorCode.INVALID_JSON})
        kind = message.get("type", "")
        try:
            if kind == "reset":
                msg = t.WSResetMessage(**message)
                params = inspect.signature(self.env.reset).parameters
                takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
                kwargs = {k: v for k, v in msg.data.items() if k in params or takes_any}
                return t.WSObservationResponse(data=self.ser.serialize_observation(self.env.reset(**kwargs)))
            if kind == "step":
                msg = t.WSStepMessage(**message)
                action = self.ser.deserialize_action(msg.data, self.action_cls)
                return t.WSObservationResponse(data=self.ser.serialize_observation(self.env.step(action)))
            if kind == "state":
                t.WSStateMessage(**message)
                return t.WSStateResponse(data=self.env.state.model_dump())
            if kind == "close":
                t.WSCloseMessage(**message)
                return None  # the server ends the session and sends nothing
            return t.WSErrorResponse(data={"message": f"Unknown message type: {kind}", "code": t.WSErrorCode.UNKNOWN_TYPE})
        except ValidationError as e:
            return t.WSErrorResponse(data={"message": "Invalid message", "code": t.WSErrorCode.VALIDATION_ERROR, "errors": e.errors()})
        except Exception as e:  # noqa: BLE001 - the server answers any failure as EXECUTION_ERROR
            return t.WSErrorResponse(data={"message": str(e), "code": t.WSErrorCode.EXECUTION_ERROR})


def exchange(session, message):
    text = message if isinstance(message, str) else json.dumps(message)
    reply = session.answer(text)
    return {"send": text, "receive": None if reply is None else json.loads(reply.model_dump_json())}


def http_vectors(oe, env_cls, action_cls, observation_cls):
    t = oe[0]
    env = env_cls()
    metadata = env.get_metadata()
    env.close()
    schema = t.SchemaResponse(action=action_cls.model_json_schema(), observation=observation_cls.model_json_schema(), state=t.State.model_json_schema())
    return [
        {"request": {"method": "GET", "path": "/health"}, "response": {"status": 200, "body": json.loads(t.HealthResponse().model_dump_json())}},
        {"request": {"method": "GET", "path": "/schema"}, "response": {"status": 200, "body": json.loads(schema.model_dump_json())}},
        {"request": {"method": "GET", "path": "/metadata"}, "response": {"status": 200, "body": json.loads(metadata.model_dump_json())}},
    ]


def capacity_frame(oe, max_sessions):
    t, _, _, exceptions = oe
    e = exceptions.SessionCapacityError(active_sessions=max_sessions, max_sessions=max_sessions)
    frame = t.WSErrorResponse(
        data={"message": str(e), "code": t.WSErrorCode.CAPACITY_REACHED, "active_sessions": e.active_sessions, "max_sessions": e.max_sessions}
    )
    return json.loads(frame.model_dump_json())


def main():
    checkout, commit, out_dir = sys.argv[1:4]
    oe = load_openenv(checkout)
    source = {"repository": "meta-pytorch/OpenEnv", "commit": commit}
    how = (
        "answers built by OpenEnv's own message models and serialization over the real environment class "
        "(scripts/remote-env-vectors/record_openenv.py); the FastAPI/WebSocket transport could not run here"
    )

    grid = importlib.import_module("envs.grid_world_env.server.grid_world_environment")
    grid_models = importlib.import_module("envs.grid_world_env.models")
    s = Session(oe, grid.GridWorldEnvironment(), grid_models.GridWorldAction)
    # The episode ids are fresh uuid4s on every reset: the state answers are recorded as they came.
    grid_session = [
        exchange(s, {"type": "reset", "data": {"seed": 3}}),
        exchange(s, {"type": "step", "data": {"action": "DOWN"}}),
        exchange(s, {"type": "step", "data": {"action": "RIGHT"}}),
        exchange(s, {"type": "state"}),
        exchange(s, {"type": "step", "data": {"action": "SIDEWAYS"}}),
        exchange(s, {"type": "step", "data": {"text": "DOWN"}}),
        exchange(s, "not json"),
        exchange(s, {"type": "jump"}),
    ]
    for move in ["DOWN", "DOWN", "DOWN", "RIGHT", "RIGHT"]:
        grid_session.append(exchange(s, {"type": "step", "data": {"action": move}}))
    grid_session.append(exchange(s, {"type": "step", "data": {"action": "RIGHT"}}))
    grid_session.append(exchange(s, {"type": "close"}))
    write(out_dir, "grid_world.json", {
        "source": {**source, "server": "envs/grid_world_env (GridWorldEnvironment, max_concurrent_envs 1)", "how": how},
        "http": http_vectors(oe, grid.GridWorldEnvironment, grid_models.GridWorldAction, grid_models.GridWorldObservation),
        "session": grid_session,
        "capacity": capacity_frame(oe, 1),
    })

    maze = importlib.import_module("envs.maze_env.server.maze_env_environment")
    maze_models = importlib.import_module("envs.maze_env.models")
    runs = []
    for _ in range(2):  # the same task twice, in two sessions: what a replay sees
        s = Session(oe, maze.MazeEnvironment(), maze_models.MazeAction)
        run = [exchange(s, {"type": "reset", "data": {"seed": 7}})]
        for a in [2, 1, 3]:
            run.append(exchange(s, {"type": "step", "data": {"action": a}}))
        run.append(exchange(s, {"type": "close"}))
        runs.append(run)
    write(out_dir, "maze.json", {
        "source": {**source, "server": "envs/maze_env (MazeEnvironment, SUPPORTS_CONCURRENT_SESSIONS)", "how": how},
        "http": http_vectors(oe, maze.MazeEnvironment, maze_models.MazeAction, maze_models.MazeObservation),
        "session": runs[0],
        "replay": runs[1],
    })


def write(out_dir, name, value):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name), "w") as f:
        json.dump(value, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {os.path.join(out_dir, name)}")


if __name__ == "__main__":
    main()
