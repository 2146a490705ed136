"""What the optimiser tests share: starting values and a run of gradients whose sizes rise
and fall (so that a running max or sum, Adamax's, AMSGrad's, Adagrad's, sees both), and
stepping an optimiser through them."""
import numpy as np

import minigrad as mg

SCALES = [3.0, 0.2, 1.0, 0.05, 2.0, 0.1, 0.5, 4.0, 0.3, 1.0]


def init_and_grads(shapes, steps, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) * SCALES[k % len(SCALES)] for s in shapes]
             for k in range(steps)]
    return init, grads


def run_steps(opt, ps, grads):
    for step in grads:
        for p, g in zip(ps, step):
            p.grad = mg.tensor(g, dtype=p.dtype, device=p.device)
        opt.step()
