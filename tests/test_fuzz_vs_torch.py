"""Random short programs, run in minigrad and in PyTorch (float64) and compared in value,
gradient and gradient of gradient: the compositions and the engine's bookkeeping that
per-op tests do not reach (broadcast sums, views and copies, a tensor used many times,
ties, an in-place write under no_grad and the version checks it triggers, in-place writes
in grad mode that autograd records). Seeded: a failure names its seed, and
run(seed, lib) (or run(seed, lib, recorded=True)) replays it."""
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


def writes(M, c):
    """In-place writes of h (R, C) in grad mode, recorded by autograd, by v (R, C): another
    tensor of the program (that requires grad) or a constant; some take h itself."""
    t = (lambda a: torch.tensor(a)) if M is torch else (lambda a: mg.tensor(a))
    return [
        lambda h, v: h.relu_(), lambda h, v: h.exp_(), lambda h, v: h.mul_(v),
        lambda h, v: h.add_(v[:1], alpha=-2), lambda h, v: h.div_(v * v + 1),
        lambda h, v: h.clamp_(-0.5, 0.5),
        lambda h, v: h.masked_fill_(v > 0, 0.25), lambda h, v: h.fill_(v[0, 0]),
        lambda h, v: h.masked_fill_(t(c["mask"]), v.sum()), lambda h, v: h.zero_(),
        lambda h, v: h.__setitem__(0, v[-1:]),          # int (a leading 1), slice, array, mask
        lambda h, v: h.__setitem__((slice(None), slice(1, None)), v[:, :1]),
        lambda h, v: h.__setitem__(t(c["rows"]), v), lambda h, v: h.copy_(v[:, :1]),
        lambda h, v: h.__setitem__(t(c["mask"]), v.sum() * v.sum()),
        lambda h, v: h.index_add_(0, t(c["rows"]), v, alpha=2),
        lambda h, v: h.scatter_add_(1, t(c["cols"]), v), _iadd,
        lambda h, v: h.mul_(h), lambda h, v: h.add_(h, alpha=-0.5), lambda h, v: h.copy_(h),
        # through views of h (held by the program): into h's memory, as PyTorch's
        lambda h, v: h[:, :1].mul_(v[:, :1]), lambda h, v: h.T[0].copy_(v[:, 0] * 2),
        lambda h, v: h.reshape(-1)[-1:].add_(v.sum()), _iadd_column,
        lambda h, v: h[-1].__setitem__(slice(0, 1), v[0, :1].exp()),
        lambda h, v: h.unsqueeze(0).mul_(v), lambda h, v: h.diagonal().relu_(),
    ]


def _iadd(h, v):
    x = h
    x += v              # x is held elsewhere too (h, the program's list): written in place


def _iadd_column(h, v):
    h[:, 0] += v[:, -1]


N_WRITES = len(writes(mg, {}))
N_PLAIN = N_WRITES - 7  # the writes of h itself: a view of a buffer (which requires no
                        # grad) is refused (ops/inplace_views.py), PyTorch writes it


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


def recorded_writes(seed, c):
    """For each step of program(seed): what it makes (its op's result; its tanh, which
    saves its output; or a plain buffer mg.zeros instead) and the recorded writes of that
    which follow, before anything uses it: (write, the index of v). c gains constants."""
    r = random.Random(-1 - seed)
    R, C = len(c["rows"]), len(c["w"])
    c["mask"] = [[r.random() < 0.5 for _ in range(C)] for _ in range(R)]
    made = [r.choice(["op", "op", "op", "tanh", "buffer"]) for _ in range(4)]
    return [(m, [(r.randrange(N_PLAIN if m == "buffer" else N_WRITES), r.randrange(2 + k))
                 for _ in range(r.choice([0, 1, 1, 2, 3]))]) for k, m in enumerate(made)]


def run(seed, lib, clone=False, recorded=False):
    """The program's tensors, and the gradients (first, then second order) of a weighted sum
    of them, or the error the backward raised. clone: PyTorch saves copies (so no version
    check fails, and its gradient is that of the values the forward saw). recorded: with
    in-place writes in grad mode (recorded_writes), not the one under no_grad."""
    M, F = (torch, TF) if lib == "torch" else (mg, MF)
    leaves, c, steps, write = program(seed)
    saving = torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t) \
        if clone else contextlib.nullcontext()
    xs = [M.tensor(a, requires_grad=True) for a in leaves]
    after = recorded_writes(seed, c) if recorded else [("op", [])] * len(steps)
    c = dict(c, w=M.tensor(c["w"]))
    with saving:
        pool = list(xs)
        for (op, i, j), (made, changes) in zip(steps, after):
            pool.append(M.zeros(leaves[0].shape, dtype=M.float64) if made == "buffer" else
                        ops(M, F, c)[op](pool[i], pool[j]))
            if made == "tanh":
                pool[-1] = pool[-1].tanh()
            for k, v in changes:
                writes(M, c)[k](pool[-1], pool[v])
        if write and not recorded:
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


@pytest.mark.parametrize("recorded, block", [(False, b) for b in range(8)] +
                         [(True, b) for b in range(3)])
def test_random_programs_agree_with_torch(recorded, block):
    for seed in range(block * 30, block * 30 + 30):
        mine, theirs = (run(seed, lib, recorded=recorded) for lib in ("minigrad", "torch"))
        for a, b in zip(mine[0], theirs[0]):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"seed {seed}")
        if isinstance(mine[1], Exception):      # minigrad refuses only what PyTorch refuses
            # (and nothing after recorded writes: each kept the old values)
            assert isinstance(theirs[1], Exception) and not recorded, f"seed {seed}: {mine[1]}"
            continue
        if isinstance(theirs[1], Exception):    # PyTorch saved a value minigrad did not
            # read: its gradient at the values the forward saw
            theirs = run(seed, "torch", clone=True, recorded=recorded)
        for a, b in zip(mine[1], theirs[1]):
            b = np.where(np.isnan(b) & ~np.isnan(a), a, b)   # 0/0 where PyTorch takes NaN
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=f"seed {seed}")
