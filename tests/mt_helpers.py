"""Helpers for the minitransformer tests: copying weights into PyTorch's modules (the
independent reference), and gradient-checking a whole Module in float64."""
import numpy as np

import minigrad as mg


def t(x, torch):
    """A minigrad tensor as a float64 torch tensor (a copy)."""
    return torch.tensor(x.numpy())


def copy_linear(src, dst, torch):
    with torch.no_grad():
        dst.weight.copy_(t(src.weight, torch))
        if src.bias is not None:
            dst.bias.copy_(t(src.bias, torch))


def copy_mha(src, dst, torch):
    """Our q_proj/k_proj/v_proj/out_proj -> torch.nn.MultiheadAttention's packed
    in_proj_weight = cat(Wq, Wk, Wv), in_proj_bias, out_proj."""
    with torch.no_grad():
        dst.in_proj_weight.copy_(torch.cat([t(p.weight, torch) for p in
                                            (src.q_proj, src.k_proj, src.v_proj)]))
        dst.in_proj_bias.copy_(torch.cat([t(p.bias, torch) for p in
                                          (src.q_proj, src.k_proj, src.v_proj)]))
    copy_linear(src.out_proj, dst.out_proj, torch)


def mha_grads(src):
    """Our MHA's parameter gradients arranged like torch's (in_proj_weight, in_proj_bias,
    out_proj.weight, out_proj.bias)."""
    qkv = (src.q_proj, src.k_proj, src.v_proj)
    return [np.concatenate([p.weight.grad.numpy() for p in qkv]),
            np.concatenate([p.bias.grad.numpy() for p in qkv]),
            src.out_proj.weight.grad.numpy(), src.out_proj.bias.grad.numpy()]


def torch_mha_grads(dst):
    return [dst.in_proj_weight.grad.numpy(), dst.in_proj_bias.grad.numpy(),
            dst.out_proj.weight.grad.numpy(), dst.out_proj.bias.grad.numpy()]


def copy_encoder_layer(src, dst, torch):
    copy_mha(src.self_attn, dst.self_attn, torch)
    copy_linear(src.ffn.linear1, dst.linear1, torch)
    copy_linear(src.ffn.linear2, dst.linear2, torch)
    copy_linear(src.norm1, dst.norm1, torch)
    copy_linear(src.norm2, dst.norm2, torch)


def copy_decoder_layer(src, dst, torch):
    copy_encoder_layer(src, dst, torch)
    copy_mha(src.cross_attn, dst.multihead_attn, torch)
    copy_linear(src.norm3, dst.norm3, torch)


def encoder_layer_grads(src):
    return mha_grads(src.self_attn) + [
        m.grad.numpy() for m in (src.ffn.linear1.weight, src.ffn.linear1.bias,
                                 src.ffn.linear2.weight, src.ffn.linear2.bias,
                                 src.norm1.weight, src.norm1.bias,
                                 src.norm2.weight, src.norm2.bias)]


def torch_encoder_layer_grads(dst):
    return torch_mha_grads(dst.self_attn) + [
        p.grad.numpy() for p in (dst.linear1.weight, dst.linear1.bias, dst.linear2.weight,
                                 dst.linear2.bias, dst.norm1.weight, dst.norm1.bias,
                                 dst.norm2.weight, dst.norm2.bias)]


def decoder_layer_grads(src):
    return encoder_layer_grads(src) + mha_grads(src.cross_attn) + [
        src.norm3.weight.grad.numpy(), src.norm3.bias.grad.numpy()]


def torch_decoder_layer_grads(dst):
    return torch_encoder_layer_grads(dst) + torch_mha_grads(dst.multihead_attn) + [
        dst.norm3.weight.grad.numpy(), dst.norm3.bias.grad.numpy()]


def assert_all_close(ours, theirs, atol=1e-10, rtol=1e-8):
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=f"entry {i}")


def gradcheck_module(module, *inputs, **kwargs):
    """mg.gradcheck of module(*inputs) with respect to the float inputs that require grad
    AND every parameter: the module runs with its parameters swapped for gradcheck's
    float64 copies, so both the analytic and the numeric gradient see them."""
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
        finally:
            for (m, n), p in zip(slots, saved):
                m._parameters[n] = p
        return out
    assert mg.gradcheck(fn, list(inputs) + params)
