"""Dump the constants BFCL's long-context variants add to the API state (file padding, extra stocks,
booking records, ...) from the official `long_context.py` into data/bfcl/long_context.json.

Usage: python3 scripts/bfcl/long-context-data.py --gorilla /path/to/berkeley-function-call-leaderboard \
           --out data/bfcl/long_context.json
Plain JSON, keys in the module's order; floats keep their decimal point (json.dumps writes repr), which
trace-rl's reader uses to tell Python floats from ints. The one non-JSON value (an Ellipsis that ends
WATCH_LIST_EXTENSION) is written as {"__python__": "Ellipsis"}.
"""
import argparse, json, sys

ap = argparse.ArgumentParser()
ap.add_argument("--gorilla", required=True)
ap.add_argument("--out", required=True)
args = ap.parse_args()
sys.path.insert(0, args.gorilla)
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context as L  # noqa: E402

names = sorted(k for k in dir(L) if k.isupper())
with open(args.out, "w") as f:
    def special(value):
        if value is Ellipsis:
            return {"__python__": "Ellipsis"}
        raise TypeError(f"unexpected {type(value).__name__} in long_context.py")

    json.dump({k: getattr(L, k) for k in names}, f, ensure_ascii=False, indent=1, default=special)
    f.write("\n")
