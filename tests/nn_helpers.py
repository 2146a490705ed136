"""Helpers for the layer tests: copy weights between a minigrad and a torch module by name,
compare outputs and gradients, and gradcheck a module's input *and* parameter gradients."""
import numpy as np

import minigrad as mg
from minigrad import nn

TOL = {"float64": 1e-9, "float32": 1e-4}


def flat(out):
    """The tensors of a (possibly nested tuple) output, in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def copy_weights(torch_module, mg_module):
    """Load torch's parameters into the minigrad module by name (strict: names must match)."""
    mg_module.load_state_dict({k: v.detach().cpu().numpy()
                               for k, v in torch_module.state_dict().items()})


def compare_with_torch(mg_module, torch_module, inputs, dtype="float64", call=None,
                       grad_inputs=True):
    """Run both modules on the same inputs (NumPy arrays; float ones get gradients), with
    the same random weighting of every output; assert equal outputs, input gradients and
    parameter gradients (by name)."""
    import torch
    tol = TOL[dtype]
    tdtype = getattr(torch, dtype)
    torch_module.to(tdtype)
    mg_module.to(dtype=dtype)
    copy_weights(torch_module, mg_module)

    def wrap_mg(a):
        if a.dtype.kind == "f":
            return mg.tensor(a.astype(dtype), requires_grad=grad_inputs)
        return mg.tensor(a)

    def wrap_torch(a):
        if a.dtype.kind == "f":
            return torch.tensor(a.astype(dtype), requires_grad=grad_inputs)
        return torch.tensor(a)
    m_in, t_in = [wrap_mg(a) for a in inputs], [wrap_torch(a) for a in inputs]
    call = call or (lambda mod, *xs: mod(*xs))
    m_out, t_out = flat(call(mg_module, *m_in)), flat(call(torch_module, *t_in))
    assert len(m_out) == len(t_out)
    rng = np.random.default_rng(7)
    m_loss, t_loss = 0, 0
    for mo, to in zip(m_out, t_out):
        assert mo.shape == tuple(to.shape), (mo.shape, tuple(to.shape))
        assert str(mo.dtype) == dtype
        np.testing.assert_allclose(mo.numpy(), to.detach().numpy(), rtol=tol, atol=tol)
        w = rng.standard_normal(mo.shape).astype(dtype)
        m_loss = m_loss + (mo * mg.tensor(w)).sum()
        t_loss = t_loss + (to * torch.tensor(w)).sum()
    m_loss.backward()
    t_loss.backward()
    for mi, ti in zip(m_in, t_in):
        if ti.grad is not None:
            np.testing.assert_allclose(mi.grad.numpy(), ti.grad.numpy(), rtol=tol, atol=tol)
    t_params = dict(torch_module.named_parameters())
    m_params = dict(mg_module.named_parameters())
    assert list(m_params) == list(t_params)
    for name, tp in t_params.items():
        mp = m_params[name]
        if tp.grad is None:
            assert mp.grad is None or not mp.grad.numpy().any(), name
            continue
        np.testing.assert_allclose(mp.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"gradient of {name}")


def gradcheck_module(module, *inputs, **kwargs):
    """mg.gradcheck of module(*inputs) with respect to the float inputs and every
    parameter, in float64 (no torch needed)."""
    module.double()
    names = [n for n, _ in module.named_parameters()]
    params = [p for _, p in module.named_parameters()]
    xs = [x.double() if x.dtype.kind == "f" else x for x in inputs]
    for x in xs:
        if x.dtype.kind == "f":
            x.requires_grad_(True)
    k = len(xs)

    def fn(*args):
        out = nn.utils.functional_call(module, dict(zip(names, args[k:])), tuple(args[:k]))
        return flat(out)
    assert mg.gradcheck(fn, xs + params, **kwargs)
