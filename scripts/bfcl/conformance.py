"""Record BFCL's official multi-turn semantics as conformance vectors for trace-rl's TypeScript port.

Usage (needs a checkout of ShishirPatil/gorilla and its mpmath dependency; no network):
  TZ=UTC python3 scripts/bfcl/conformance.py --gorilla /path/to/gorilla/berkeley-function-call-leaderboard \
      --data data/bfcl --out test/env/bfcl/fixtures/conformance.json
  then: gzip -9n test/env/bfcl/fixtures/conformance.json (the test reads the .gz). The repository
  commits the larger files of data/bfcl as .gz: run this on a copy expanded with gunzip -rk data/bfcl.

For every entry of the four multi-turn categories it runs the ground truth through the official
executor turn by turn and records each call's result string and a digest of every involved instance's
public state after each turn. It then builds perturbed attempts (a call dropped, an argument changed,
two turns swapped, a turn emptied) and records the official checker's verdict and the attempt's result
strings. Nothing here is imported by trace-rl; the JSON file is what the tests read.
"""
import argparse, ast, copy, hashlib, json, random, sys

ap = argparse.ArgumentParser()
ap.add_argument("--gorilla", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--probes", default=None, help="probes.json: hand-written call sequences for error paths")
args = ap.parse_args()
sys.path.insert(0, args.gorilla)

from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker  # noqa: E402

CATEGORIES = ["base", "miss_func", "miss_param", "long_context"]
LONG = 400  # results longer than this are stored as a digest


def digest(text):
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def short(text):
    return text if len(text) <= LONG else digest(text)


def normalise(value):
    # Sets have no stable iteration order across implementations: compare them sorted.
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def state_text(instances):
    parts = []
    for name in sorted(instances):
        inst = instances[name]
        attrs = {k: normalise(v) for k, v in vars(inst).items() if not k.startswith("_")}
        parts.append(f"{name}={attrs!r}")
    return "\n".join(parts)


counter = [0]


def fresh_name():
    counter[0] += 1
    return f"conf{counter[0]}"


def forget(prefix):
    for key in [k for k in vars(utils) if k.startswith(prefix + "_")]:
        del vars(utils)[key]


def run_turns(entry, turns, long_context):
    name = fresh_name()
    out = []
    for calls in turns:
        results, instances = utils.execute_multi_turn_func_call(
            calls, entry["initial_config"], entry["involved_classes"], name, entry["id"],
            long_context=long_context, is_evaL_run=False)
        text = state_text(instances)
        out.append({"results": [short(r) for r in results], "state": digest(text)})
    forget(name)
    return out


def check(entry, gt, turns, category):
    name = fresh_name()
    decoded = [[calls] if calls else [] for calls in turns]
    if len(turns) != len(gt):
        verdict = {"valid": False, "error_type": "multi_turn:force_terminated"}
    else:
        r = multi_turn_checker(decoded, gt, copy.deepcopy(entry), category, name)
        verdict = {"valid": r["valid"], "error_type": None if r["valid"] else r["error_type"]}
    forget(name + "_eval")
    forget(name + "_ground_truth_eval")
    return verdict


def change_argument(call, rng):
    tree = ast.parse(call, mode="eval").body
    slots = [kw for kw in tree.keywords] or None
    if not slots:
        return None
    kw = rng.choice(slots)
    v = kw.value
    if isinstance(v, ast.Constant) and isinstance(v.value, bool):
        kw.value = ast.Constant(not v.value)
    elif isinstance(v, ast.Constant) and isinstance(v.value, (int, float)):
        kw.value = ast.Constant(v.value + 1)
    elif isinstance(v, ast.Constant) and isinstance(v.value, str):
        kw.value = ast.Constant(v.value + "_x")
    elif isinstance(v, ast.List):
        v.elts = v.elts[:-1] if v.elts else [ast.Constant("x")]
    else:
        return None
    return ast.unparse(tree)


def perturbations(gt, rng):
    nonempty = [i for i, t in enumerate(gt) if t]
    out = []
    if nonempty:
        i = rng.choice(nonempty)
        turns = copy.deepcopy(gt)
        del turns[i][rng.randrange(len(turns[i]))]
        out.append(("drop", turns))
        turns = copy.deepcopy(gt)
        turns[i] = []
        out.append(("empty", turns))
        for _ in range(4):
            i = rng.choice(nonempty)
            j = rng.randrange(len(gt[i]))
            changed = change_argument(gt[i][j], rng)
            if changed and changed != gt[i][j]:
                turns = copy.deepcopy(gt)
                turns[i][j] = changed
                out.append(("arg", turns))
                break
        turns = copy.deepcopy(gt)
        turns[i] = turns[i] + [turns[i][-1]]
        out.append(("repeat", turns))
    if len(gt) >= 2:
        pairs = [(a, b) for a in range(len(gt)) for b in range(a + 1, len(gt)) if gt[a] != gt[b]]
        if pairs:
            a, b = rng.choice(pairs)
            turns = copy.deepcopy(gt)
            turns[a], turns[b] = turns[b], turns[a]
            out.append(("swap", turns))
        out.append(("truncated", copy.deepcopy(gt[:-1])))
    return out


fixture = {"source": "ShishirPatil/gorilla berkeley-function-call-leaderboard/bfcl_eval", "entries": []}
for category in CATEGORIES:
    entries = [json.loads(l) for l in open(f"{args.data}/BFCL_v4_multi_turn_{category}.json")]
    answers = {json.loads(l)["id"]: json.loads(l)["ground_truth"]
               for l in open(f"{args.data}/possible_answer/BFCL_v4_multi_turn_{category}.json")}
    long_context = "long_context" in category
    for index, entry in enumerate(entries):
        gt = answers[entry["id"]]
        rng = random.Random(f"{entry['id']}")
        record = {"id": entry["id"], "category": category, "ground_truth": run_turns(entry, gt, long_context),
                  "verdict": check(entry, gt, gt, category), "attempts": []}
        for kind, turns in perturbations(gt, rng):
            record["attempts"].append({"kind": kind, "turns": turns, "verdict": check(entry, gt, turns, category),
                                       "exec": [t["results"] for t in run_turns(entry, turns, long_context)]})
        fixture["entries"].append(record)
    print(category, "done", file=sys.stderr)

fixture["probes"] = []
if args.probes:
    for probe in json.load(open(args.probes))["probes"]:
        name = fresh_name()
        results, _ = utils.execute_multi_turn_func_call(
            probe["calls"], probe["config"], probe["classes"], name, f"probe_{probe['name']}",
            long_context=probe["long_context"], is_evaL_run=False)
        fixture["probes"].append({"name": probe["name"], "results": [short(r) for r in results]})
        forget(name)

with open(args.out, "w") as f:
    json.dump(fixture, f, ensure_ascii=False, separators=(",", ":"))
