"""Random short programs, run in minigrad and in PyTorch (float64) and compared in value,
gradient and gradient of gradient: the compositions and the engine's bookkeeping that
per-op tests do not reach (broadcast sums, views and copies, a tensor used many times,
ties, an in-place write under no_grad and the version checks it triggers). Seeded: a
failure names its seed, and run(seed, lib) replays it."""
import contextlib
import random

import numpy as np
import pytest
import minigrad as mg
import minigrad.functional as MF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def ops(M, F, c):
    """(R, C) x (R, C) -> (R, C), each in both libraries' spelling; c: the program's
    constants (index arrays, a (C, C) weight)."""
    t = (lambda a: torch.tensor(a)) if M is torch else (lambda a: mg.tensor(a))
    return [
        lambda x, y: x * y, lambda x, y: x / (y * y + 1), lambda x, y: M.maximum(x, y[:1]),
        lambda x, y: M.where(x > y, x, y.tanh()), lambda x, y: x.clamp(-0.5, 0.5) + y.abs(),
        lambda x, y: F.softmax(x, 1) * y.relu(), lambda x, y: F.log_softmax(x, 0) + y,
        lambda x, y: F.layer_norm(x, x.shape[1:]) * y, lambda x, y: F.gelu(x) - y.sigmoid(),
        lambda x, y: x.std(1, keepdim=True, correction=0) * y,    # equal rows: σ = 0
        lambda x, y: x.amax(0, keepdim=True) + y,
        lambda x, y: x.max(1, keepdim=True)[0] * y, lambda x, y: x.cumsum(1) * y.exp(),
        lambda x, y: x @ c["w"] + y, lambda x, y: x[t(c["rows"])] * y,   # repeated rows
        lambda x, y: x.gather(1, t(c["cols"])) + y, lambda x, y: x.mT.flip(0).mT * y,
        lambda x, y: x.repeat(2, 1)[1::2], lambda x, y: y.repeat_interleave(2, 0)[::2],
        lambda x, y: x.unsqueeze(0).expand(2, -1, -1).sum(0) * y,
        lambda x, y: M.cat([x, y]).reshape(2, *x.shape)[1] * x,
        lambda x, y: x.reshape(-1).reshape(x.shape) + y.detach() * y,
    ]


N_OPS = len(ops(mg, MF, {}))


def program(seed):
    r = random.Random(seed)
    R, C = r.choice([1, 2, 3]), r.choice([1, 2, 3])
    ties = r.random() < 0.5                    # values on a grid: ties, zeros, equal rows
    value = (lambda: r.choice([-1.1, -0.3, 0.0, 0.3, 0.7])) if ties else (lambda: r.gauss(0, 1))
    leaves = [np.array([[value() for _ in range(C)] for _ in range(R)]) for _ in range(2)]
    c = {"w": np.array([[r.gauss(0, 1) for _ in range(C)] for _ in range(C)]),
         "rows": [r.randrange(R) for _ in range(R)],
         "cols": [[r.randrange(C) for _ in range(C)] for _ in range(R)]}
    steps = [(r.randrange(N_OPS), r.randrange(2 + k), r.randrange(2 + k)) for k in range(4)]
    write = (r.randrange(6), r.choice(["mul_", "setitem"])) if r.random() < 0.5 else None
    return leaves, c, steps, write


def run(seed, lib, clone=False):
    """The program's tensors, and the gradients (first, then second order) of a weighted sum
    of them, or the error the backward raised. clone: PyTorch saves copies (so no version
    check fails, and its gradient is that of the values the forward saw)."""
    M, F = (torch, TF) if lib == "torch" else (mg, MF)
    leaves, c, steps, write = program(seed)
    saving = torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t) \
        if clone else contextlib.nullcontext()
    xs = [M.tensor(a, requires_grad=True) for a in leaves]
    c = dict(c, w=M.tensor(c["w"]))
    with saving:
        pool = list(xs)
        for op, i, j in steps:
            pool.append(ops(M, F, c)[op](pool[i], pool[j]))
        if write:
            with M.no_grad():
                k, how = write
                pool[k].mul_(2.0) if how == "mul_" else pool[k].__setitem__(0, 0.25)
    w = np.random.default_rng(seed).standard_normal((len(pool),) + leaves[0].shape)
    loss = sum((p * M.tensor(wk)).sum() for p, wk in zip(pool, w))
    grad = torch.autograd.grad if lib == "torch" else mg.grad
    try:
        gs = grad(loss, xs, create_graph=True)
        s = sum((g * g * g).sum() for g in gs)
        gg = grad(s, xs, allow_unused=True) if s.requires_grad else (None, None)
    except RuntimeError as e:
        if "in-place" not in str(e) and "inplace" not in str(e):
            raise
        return [p.detach().numpy() for p in pool], e
    return [p.detach().numpy() for p in pool], [array(g) for g in gs + tuple(gg)]


def array(g):           # (PyTorch may answer a known zero gradient with a storage-less tensor)
    zero = g is None or getattr(g, "_is_zerotensor", lambda: False)()
    return 0.0 if zero else np.array(g.tolist())


@pytest.mark.parametrize("block", range(8))
def test_random_programs_agree_with_torch(block):
    for seed in range(block * 30, block * 30 + 30):
        mine, theirs = run(seed, "minigrad"), run(seed, "torch")
        for a, b in zip(mine[0], theirs[0]):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"seed {seed}")
        if isinstance(mine[1], Exception):      # minigrad refuses only what PyTorch refuses
            assert isinstance(theirs[1], Exception), f"seed {seed}: {mine[1]}"
            continue
        if isinstance(theirs[1], Exception):    # PyTorch saved a value minigrad did not
            theirs = run(seed, "torch", clone=True)     # read: the forward's values then
        for a, b in zip(mine[1], theirs[1]):
            b = np.where(np.isnan(b) & ~np.isnan(a), a, b)   # 0/0 where PyTorch takes NaN
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=f"seed {seed}")
