"""
Records test/servers/vectors/atropos-api.json: requests sent to the Atropos trajectory API
(atroposlib/api/server.py and utils.py from a checkout of NousResearch/atropos, put beside this script
as atroposlib/api/) served in process, and its answers. Needs fastapi, httpx and pydantic; with pydantic 1
(Debian 12: python3-fastapi python3-httpx) map pydantic 2's field_validator first:
  sed -i "s/from pydantic import BaseModel, field_validator/from pydantic import BaseModel, validator as _v\\ndef field_validator(name, mode=None): return _v(name, pre=True, allow_reuse=True)/" atroposlib/api/server.py
Run: python3 record-atropos.py atropos-api.json
"""
import importlib, json, sys
sys.path.insert(0, '.')
from fastapi.testclient import TestClient
import atroposlib.api.server as server

def seq(tokens, prompt):
    return dict(tokens=tokens, masks=[-100] * prompt + tokens[prompt:])

def group(*seqs, env_id=None, scores=None, advantages=True, extra=None):
    g = {
        'tokens': [s['tokens'] for s in seqs],
        'masks': [s['masks'] for s in seqs],
        'scores': scores if scores is not None else [1.0] * len(seqs),
    }
    if advantages:
        g['advantages'] = [[0.0 if m == -100 else 0.5 for m in s['masks']] for s in seqs]
    if env_id is not None:
        g['env_id'] = env_id
    if extra:
        g.update(extra)
    return g

def run(name, note, steps):
    importlib.reload(server)
    client = TestClient(server.app, raise_server_exceptions=False)
    out = []
    for method, path, body, *rest in steps:
        why = rest[0] if rest else None
        r = client.request(method, path, json=body) if body is not None else client.request(method, path)
        try:
            rb = r.json()
            resp = {'status': r.status_code, 'body': rb}
        except Exception:
            resp = {'status': r.status_code, 'text': r.text}
        ex = {'request': {'method': method, 'path': path, **({'body': body} if body is not None else {})}, 'response': resp}
        if why: ex['note'] = why
        if path == '/register': ex['any'] = ['uuid']
        if resp['status'] == 422: ex['any'] = ['detail']
        out.append(ex)
    return {'name': name, 'note': note, 'exchanges': out}

reg = dict(wandb_group='g', wandb_project='p', batch_size=4, max_token_len=64, checkpoint_dir='ckpt', save_checkpoint_interval=0, starting_step=0, num_steps=3)
env = dict(max_token_length=64, desired_name='trace-rl', weight=1.0, group_size=1)
a = seq([1, 2, 3, 4], 2); b = seq([1, 2, 5], 2); c = seq([7, 8, 9, 10, 11], 3); d = seq([1, 9], 1)

flow = run('trainer first', 'the order a rollout handler must follow: the trainer registers and polls /batch once before an environment can register', [
    ('GET', '/', None),
    ('GET', '/status', None, 'before any registration'),
    ('GET', '/info', None),
    ('POST', '/register-env', env, 'no trainer yet'),
    ('POST', '/register', reg),
    ('GET', '/info', None),
    ('POST', '/register-env', env, 'trainer registered but has not asked for a batch yet'),
    ('GET', '/batch', None, 'the first /batch marks the trainer as started'),
    ('POST', '/register-env', env),
    ('POST', '/scored_data', group(a, env_id=0, extra={'inference_logprobs': [[1.0, 1.0, -0.5, -0.25]], 'group_overrides': {'tree_id': '0:q1'}})),
    ('POST', '/scored_data_list', [group(b, env_id=0), group(c, env_id=0, scores=[0.0])]),
    ('GET', '/status', None),
    ('GET', '/batch', None, '3 sequences queued, batch_size 4'),
    ('POST', '/scored_data', group(d)),
    ('GET', '/batch', None, 'exactly batch_size sequences, whole groups, queue order'),
    ('GET', '/status', None),
    ('POST', '/scored_data', group(a, b, env_id=0), 'env_id given and 2 sequences against a registered group_size of 1: held in a buffer'),
    ('POST', '/scored_data', group(c, d, env_id=0), 'no combination of buffered groups sums to 1: they stay buffered, never queued'),
    ('GET', '/status', None),
    ('POST', '/scored_data_list', [group(a, b, c, d), group(a, b)], 'no env_id: sizes 4 and 2 go straight to the queue'),
    ('GET', '/batch', None, 'groups are packed to the largest queued size: the size-4 group alone'),
    ('GET', '/status', None),
    ('POST', '/scored_data', group(c, d)),
    ('GET', '/batch', None, 'two size-2 groups make one pack of 4'),
    ('POST', '/scored_data_list', [group(a, b, c), group(d)], 'sizes 3 and 1'),
    ('GET', '/batch', None, 'no pack of equal-size groups sums to the largest size (3) and then to 4: nothing served'),
    ('GET', '/status', None, 'both groups stay queued'),
    ('POST', '/scored_data', {'tokens': [[1, 2]], 'masks': [[-100, 2]]}, 'scores missing'),
    ('POST', '/scored_data', {'tokens': [[1, 2]], 'masks': [[-100, 2]], 'scores': [1.0], 'messages': [[{'content': 'x'}]]}, 'a message without role'),
    ('POST', '/disconnect-env', {'env_id': 0}),
    ('GET', '/latest_example', None),
    ('GET', '/reset_data', None),
    ('GET', '/status', None, 'after reset'),
])

early = run('data before the trainer', 'scored data pushed before /register leaves the trainer\'s state uninitialised', [
    ('POST', '/scored_data', group(d)),
    ('POST', '/register', reg),
    ('GET', '/batch', None, 'the registration did not initialise the trainer state: /batch refuses'),
    ('GET', '/info', None),
])

json.dump({
    'recorded_from': 'NousResearch/atropos atroposlib/api/server.py and utils.py at commit 296a0bc55760e43b9c0743c052f8d6c2732606d1, served in-process by FastAPI 0.92 / pydantic 1.10 (Debian 12 packages; pydantic 2\'s field_validator mapped onto pydantic 1\'s validator(pre=True) for the one message check)',
    'fields_any': 'exchanges list the response fields whose values are not reproducible (a random uuid, a validation error\'s wording, which differs between pydantic versions) under "any": only their presence is checked',
    'scenarios': [flow, early],
}, open(sys.argv[1], 'w'), separators=(',', ':'))  # compact: the repository's size is bounded
print('ok')
