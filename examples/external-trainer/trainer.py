"""An external trainer for trace-rl's rollout service, in the shape verl and TRL use.

Per step: read the batch the rollout service wrote (verl rows as JSON Lines), build padded tensors with
verl's names, recompute the log-probabilities of the sampled tokens with a PyTorch copy of the served
llama model (checking them against llama.cpp's), take one clipped policy-gradient (PPO) step, write the
new weights as GGUF and POST /weights to the rollout service, which reloads `trace-rl serve`.

    python3 trainer.py --events rollout.jsonl --model model-0.gguf --steps 3 --out work/
"""
import argparse
import json
import os
import sys
import time
import urllib.request

import numpy as np
import torch

from gguf import GGUF


# ---- 1. rows -> verl tensors -------------------------------------------------------------------
def verl_batch(rows, pad_id=0):
    """Prompts left-padded, responses right-padded (verl's layout); position ids from the attention mask."""
    P = max(len(r["prompt_ids"]) for r in rows)
    R = max(len(r["response_ids"]) for r in rows)
    B = len(rows)
    prompts = torch.full((B, P), pad_id, dtype=torch.long)
    responses = torch.full((B, R), pad_id, dtype=torch.long)
    response_mask = torch.zeros(B, R)
    attention_mask = torch.zeros(B, P + R, dtype=torch.long)
    advantages = torch.zeros(B, R)
    rollout_log_probs = torch.zeros(B, R)
    for b, r in enumerate(rows):
        p, n = len(r["prompt_ids"]), len(r["response_ids"])
        prompts[b, P - p :] = torch.tensor(r["prompt_ids"])
        responses[b, :n] = torch.tensor(r["response_ids"])
        # Train only on ids the model sampled (mask 1) in rows whose ids are exactly what the server saw.
        if r["token_exact"] and r["logprobs_known"]:
            response_mask[b, :n] = torch.tensor(r["response_mask"], dtype=torch.float)
        attention_mask[b, P - p : P + n] = 1
        advantages[b, :n] = torch.tensor(r["advantages"])
        rollout_log_probs[b, :n] = torch.tensor(r["response_logprobs"])
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    return {
        "prompts": prompts,
        "responses": responses,
        "input_ids": torch.cat([prompts, responses], 1),
        "response_mask": response_mask,
        "attention_mask": attention_mask,
        "position_ids": position_ids,
        "advantages": advantages,
        "rollout_log_probs": rollout_log_probs,
    }


def trl_batch(rows, pad_id=0):
    """The batch dict TRL's GRPOTrainer builds before its loss (from `--format trl` rows)."""
    P = max(len(r["prompt_ids"]) for r in rows)
    C = max(len(r["completion_ids"]) for r in rows)
    left = lambda xs, n, v: torch.tensor([[v] * (n - len(x)) + x for x in xs])
    right = lambda xs, n, v: torch.tensor([x + [v] * (n - len(x)) for x in xs])
    col = lambda k: [r[k] for r in rows]
    exact = [r["token_exact"] and r["logprobs_known"] for r in rows]
    return {
        "prompt_ids": left(col("prompt_ids"), P, pad_id),
        "prompt_mask": left([[1] * len(x) for x in col("prompt_ids")], P, 0),
        "completion_ids": right(col("completion_ids"), C, pad_id),
        "completion_mask": right(col("completion_mask"), C, 0),
        # Loss only on sampled tokens (tool_mask) of token-exact rows.
        "tool_mask": right([m if ok else [0] * len(m) for m, ok in zip(col("tool_mask"), exact)], C, 0).float(),
        "advantages": right(col("per_token_advantages"), C, 0.0),
        "old_per_token_logps": right(col("old_per_token_logps"), C, 0.0),
    }


def training_view(batch):
    """Model inputs and loss terms from either form (verl's names or TRL's)."""
    if "prompts" in batch:
        return batch
    attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
    return {
        "prompts": batch["prompt_ids"],
        "responses": batch["completion_ids"],
        "input_ids": torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1),
        "attention_mask": attention_mask,
        "position_ids": (attention_mask.cumsum(-1) - 1).clamp(min=0),
        "response_mask": batch["completion_mask"] * batch["tool_mask"],
        "advantages": batch["advantages"],
        "rollout_log_probs": batch["old_per_token_logps"],
    }


# ---- 2. the served model in PyTorch (llama.cpp's conventions) ------------------------------------
class Llama(torch.nn.Module):
    """llama as llama.cpp runs it: RMSNorm, RoPE on adjacent pairs, causal attention, SwiGLU; y = x·Wᵀ."""

    def __init__(self, gguf):
        super().__init__()
        m = gguf.metadata
        self.heads = m["llama.attention.head_count"]
        self.eps = m["llama.attention.layer_norm_rms_epsilon"]
        self.base = m["llama.rope.freq_base"]
        self.layers = m["llama.block_count"]
        self.w = torch.nn.ParameterDict({k.replace(".", "/"): torch.nn.Parameter(torch.tensor(v)) for k, v in gguf.tensors.items()})

    def p(self, name):
        return self.w[name.replace(".", "/")]

    def norm(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * weight

    def rope(self, x, pos):  # x: [B, T, H, D]; rotates pairs (x0, x1), (x2, x3), ...
        D = x.shape[-1]
        inv = self.base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
        ang = (pos[..., None].double() * inv).float()[:, :, None, :]  # [B, T, 1, D/2]
        cos, sin = ang.cos(), ang.sin()
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], -1).flatten(-2)

    def forward(self, input_ids, attention_mask, position_ids):
        B, T = input_ids.shape
        x = self.p("token_embd.weight")[input_ids]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        allowed = causal & attention_mask.bool()[:, None, :]
        allowed = allowed | torch.eye(T, dtype=torch.bool)  # padding rows attend to themselves (ignored)
        bias = torch.zeros(B, 1, T, T).masked_fill(~allowed[:, None], float("-inf"))
        for i in range(self.layers):
            L = lambda n: self.p(f"blk.{i}.{n}.weight")
            h = self.norm(x, L("attn_norm"))
            q, k, v = (h @ L(n).T for n in ("attn_q", "attn_k", "attn_v"))
            split = lambda t: t.view(B, T, self.heads, -1)
            q, k, v = self.rope(split(q), position_ids), self.rope(split(k), position_ids), split(v)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5 + bias
            o = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, -1)
            x = x + o @ L("attn_output").T
            h = self.norm(x, L("ffn_norm"))
            x = x + (torch.nn.functional.silu(h @ L("ffn_gate").T) * (h @ L("ffn_up").T)) @ L("ffn_down").T
        x = self.norm(x, self.p("output_norm.weight"))
        out = self.p("output.weight") if "output/weight" in self.w else self.p("token_embd.weight")
        return x @ out.T

    def tensors(self):
        return {k.replace("/", "."): v.detach().numpy() for k, v in self.w.items()}


def response_log_probs(model, batch):
    """log π(response token | everything before it), [B, R] (0 at padding).

    Row by row without its padding (what verl's `use_remove_padding` does with packed sequences): the
    same values as one padded forward, at a fraction of its cost when lengths differ (attention is
    quadratic in the padded length)."""
    P, R = batch["prompts"].shape[1], batch["responses"].shape[1]
    out = []
    for b in range(batch["input_ids"].shape[0]):
        keep = batch["attention_mask"][b].nonzero()[:, 0]
        start, end = keep[0].item(), keep[-1].item() + 1  # the prompt's first id, the response's last
        ids = batch["input_ids"][b : b + 1, start:end]
        logits = model(ids, batch["attention_mask"][b : b + 1, start:end], batch["position_ids"][b : b + 1, start:end])
        lp = torch.log_softmax(logits[0, P - 1 - start : -1].float(), -1)
        lp = lp.gather(-1, batch["responses"][b, : end - P, None])[..., 0]
        out.append(torch.nn.functional.pad(lp, (0, R - lp.shape[0])))
    return torch.stack(out)


# ---- 3. the clipped policy-gradient loss (PPO / GRPO token-mean) ---------------------------------
def policy_loss(log_probs, old_log_probs, advantages, mask, clip=0.2):
    ratio = torch.exp(log_probs - old_log_probs)
    per_token = -torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    return (per_token * mask).sum() / mask.sum().clamp(min=1)


# ---- 4. the loop with the rollout service --------------------------------------------------------
def events(path, timeout, pid=None):
    """Follows the rollout service's JSON-lines stdout (and stops if its process `pid` is gone)."""
    deadline, seen = time.time() + timeout, 0
    while time.time() < deadline:
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        for line in lines[seen:]:
            seen += 1
            if line.startswith("{"):
                yield json.loads(line)
        if pid is not None and len(lines) == seen and not os.path.exists(f"/proc/{pid}"):
            raise RuntimeError(f"the rollout service (pid {pid}) exited; see its stderr next to {path}")
        time.sleep(0.1)
    raise TimeoutError(f"no events from the rollout service in {timeout} s ({path})")


def post(url, body, token):
    headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=120) as res:
        return json.loads(res.read())


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--events", required=True, help="the rollout service's stdout (JSON lines)")
    a.add_argument("--model", required=True, help="the GGUF the server started with")
    a.add_argument("--steps", type=int, required=True, help="updates to make (the service runs steps + 1 batches)")
    a.add_argument("--out", required=True, help="folder for new weights")
    a.add_argument("--lr", type=float, default=3e-3)
    a.add_argument("--timeout", type=float, default=900)
    a.add_argument("--rollout-pid", type=int, help="stop if this process (the rollout service) exits")
    a.add_argument("--token-file", required=True, help="the rollout service's control token (its --control-token-file)")
    args = a.parse_args()
    torch.manual_seed(0)
    token = open(args.token_file).readline().strip()
    gguf = GGUF(args.model)
    model = Llama(gguf)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rows_total, max_gap, reloaded, done = 0, 0.0, 0, 0
    files = {}
    for e in events(args.events, args.timeout, args.rollout_pid):
        if e["event"] == "batch":
            files[e["step"]] = e["file"]
        # Batch k < steps: train once the service waits for its weights; batch `steps`: only check it.
        if e["event"] == "waiting":
            step, url = e["step"], e["url"]
        elif e["event"] == "batch" and e["step"] == args.steps:
            step, url = e["step"], None
        else:
            continue
        rows = [json.loads(l) for l in open(files[step]) if l.strip()]
        batch = training_view(trl_batch(rows) if "completion_ids" in rows[0] else verl_batch(rows))
        mask = batch["response_mask"]
        # One forward serves both: its values are the old log-probs, its graph the gradient step's.
        with torch.set_grad_enabled(url is not None):
            log_probs = response_log_probs(model, batch)
        old = log_probs.detach()
        # The served model sampled these ids: PyTorch and llama.cpp must agree on their probabilities.
        gap = ((old - batch["rollout_log_probs"]).abs() * mask).max().item() if mask.sum() > 0 else 0.0
        max_gap = max(max_gap, gap)
        rows_total += len(rows)
        info = {"step": step, "rows": len(rows), "trained_tokens": int(mask.sum()), "logprob_gap": gap}
        if url is not None:
            batch["old_log_probs"] = old
            loss = policy_loss(log_probs, old, batch["advantages"], mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                after = policy_loss(response_log_probs(model, batch), old, batch["advantages"], mask)
            # At ratio 1 the clipped loss is minus the mean advantage over trained tokens.
            n = max(mask.sum().item(), 1)
            info.update(loss=loss.item(), loss_at_ratio_1=-(batch["advantages"] * mask).sum().item() / n, loss_after=after.item(), mean_abs_advantage=(batch["advantages"].abs() * mask).sum().item() / n)
            path = os.path.join(os.path.abspath(args.out), f"model-{step + 1}.gguf")
            gguf.write(path, model.tensors())
            reloaded += 1 if post(url, {"step": step, "model": path}, token).get("reloaded") else 0
            done += 1
        print(json.dumps(info), file=sys.stderr, flush=True)
        if step >= args.steps:
            break
    print(json.dumps({"steps": done, "rows": rows_total, "max_logprob_gap": max_gap, "weights_reloaded": reloaded}), flush=True)


if __name__ == "__main__":
    main()
