"""The official Tinker SDK's RL loop against a Tinker engine (here `trace-rl serve --tinker`).

    python3 scripts/tinker-sdk-rl.py BASE_URL OUT.json      (TINKER_API_KEY in the environment)

Run by scripts/tinker-sdk-run.sh, which sets up the SDK and records the wire. As the SDK's own RL
loop does: a LoRA training client, a sampling client on the base model, then per step: sample a group
per prompt, rewards and group-centred advantages, `forward_backward` (importance_sampling on even
steps, ppo on odd ones) and `optim_step` twice on the step's datums (two epochs: the second epoch's
loss is lower when the update learned), then `save_weights_for_sampler` and a sampling client on the
saved path, so the next step samples the new weights. Writes every step's losses and mean reward to OUT.json.

The reward is the share of sampled tokens below REWARD_BELOW (any token property the tiny model can
learn to prefer will do).
"""

import json
import sys

import tinker
from tinker import types

REWARD_BELOW = 60
PROMPTS = [[2, 7, 11], [3, 5, 13]]
GROUP = 4
MAX_TOKENS = 8
STEPS = 3
# The CPU server's Adam uses eps 1e-8 and no weight decay; the SDK's default eps is 1e-12.
ADAM = types.AdamParams(learning_rate=0.01, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.0, grad_clip_norm=0.0)


def main(url: str, out: str) -> None:
    service = tinker.ServiceClient(base_url=url)
    base = service.get_server_capabilities().supported_models[0].model_name
    trainer = service.create_lora_training_client(base_model=base, rank=8)
    sampler = service.create_sampling_client(base_model=base)
    steps = []
    for step in range(STEPS):
        loss_fn = "importance_sampling" if step % 2 == 0 else "ppo"
        params = [types.SamplingParams(max_tokens=MAX_TOKENS, temperature=1.0, seed=1000 * step + i) for i in range(len(PROMPTS))]
        futures = [sampler.sample(types.ModelInput.from_ints(p), num_samples=GROUP, sampling_params=sp) for p, sp in zip(PROMPTS, params)]
        data, rewards = [], []
        for prompt, future in zip(PROMPTS, futures):
            result = future.result()
            group = [sum(1 for t in s.tokens if t < REWARD_BELOW) / len(s.tokens) for s in result.sequences]
            mean = sum(group) / len(group)
            rewards += group
            for seq, reward in zip(result.sequences, group):
                tokens = prompt + list(seq.tokens)
                skip = len(prompt) - 1
                data.append(
                    types.Datum(
                        model_input=types.ModelInput.from_ints(tokens[:-1]),
                        loss_fn_inputs={
                            "target_tokens": tokens[1:],
                            "logprobs": [0.0] * skip + list(seq.logprobs),
                            "advantages": [0.0] * skip + [reward - mean] * len(seq.tokens),
                        },
                    )
                )
        losses = []
        for _epoch in range(2):
            config = {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2} if loss_fn == "ppo" else None
            output = trainer.forward_backward(data, loss_fn, loss_fn_config=config).result()
            trainer.optim_step(ADAM).result()
            losses.append(output.metrics["loss:sum"])
        path = trainer.save_weights_for_sampler(name=f"step-{step}").result().path
        sampler = service.create_sampling_client(model_path=path)
        steps.append({"loss_fn": loss_fn, "losses": losses, "reward_mean": sum(rewards) / len(rewards), "datums": len(data)})
        print(f"step {step}: {loss_fn} loss {losses[0]:.5f} -> {losses[1]:.5f}, reward {steps[-1]['reward_mean']:.3f}", flush=True)
    with open(out, "w") as f:
        json.dump({"sdk_version": tinker.__version__, "steps": steps}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
