"""Helpers for the minitransformer tests: copying weights into PyTorch's modules (the
independent reference) by parameter name, and gradient-checking a whole Module in float64."""
import numpy as np

import minigrad as mg


def t(x, torch):
    """A minigrad tensor as a float64 torch tensor (a copy)."""
    return torch.tensor(x.numpy())


def copy_by_name(src, dst, torch):
    """Our module's weights into PyTorch's module through the state dict, strictly by name:
    that the names all match is half of what the tests using this check."""
    dst.load_state_dict({k: t(v, torch) for k, v in src.state_dict().items()}, strict=True)


def grads_by_name(ours, theirs):
    """(our parameters' gradients, PyTorch's), paired by parameter name."""
    mine, ref = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(mine) == list(ref)
    return ([mine[k].grad.numpy() for k in mine],
            [ref[k].grad.detach().numpy() for k in mine])


def assert_all_close(ours, theirs, atol=1e-10, rtol=1e-8):
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=f"entry {i}")


def gradcheck_module(module, *inputs, output=None, **kwargs):
    """mg.gradcheck of module(*inputs) (or of output(module(*inputs))) with respect to the
    float inputs that require grad AND every parameter: the module runs with its parameters
    swapped for gradcheck's float64 copies, so both the analytic and the numeric gradient
    see them."""
    module.double().eval()
    slots = [(m, n) for m in module.modules() for n, p in m._parameters.items()
             if p is not None]
    params = [m._parameters[n] for m, n in slots]
    n_in = len(inputs)

    def fn(*args):
        xs, ps = args[:n_in], args[n_in:]
        saved = [m._parameters[n] for m, n in slots]
        for (m, n), p in zip(slots, ps):
            m._parameters[n] = p
        try:
            out = module(*xs, **kwargs)
            out = out if output is None else output(out)
        finally:
            for (m, n), p in zip(slots, saved):
                m._parameters[n] = p
        return out
    assert mg.gradcheck(fn, list(inputs) + params)
