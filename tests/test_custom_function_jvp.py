"""Custom Functions for forward AD (a `jvp` staticmethod, ctx.save_for_forward) and
gradcheck's PyTorch keywords (check_forward_ad, check_backward_ad, ...): found porting the
forward-mode AD tutorial (port_forward_ad.py)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD


class _Exp(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.result = mg.exp(x)
        return ctx.result

    @staticmethod
    def jvp(ctx, gI):
        return gI * ctx.result


class _Sin(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return mg.sin(x)

    @staticmethod
    def jvp(ctx, gI):
        x, = ctx.saved_tensors
        return gI * mg.cos(x)


def test_a_function_with_only_jvp_gives_forward_ad_tangents():
    # was: NotImplementedError (forward AD rides on backward, which it lacked)
    x, v = mg.tensor([0.5, -1.0, 2.0]), mg.tensor([1.0, 2.0, 3.0])
    for fn, d in ((_Exp, np.exp), (_Sin, np.cos)):
        with fwAD.dual_level():
            y = fn.apply(fwAD.make_dual(x, v))
            t = fwAD.unpack_dual(y).tangent
        np.testing.assert_allclose(t.numpy(), d(x.numpy()) * v.numpy(), rtol=1e-6)


def test_gradcheck_checks_forward_ad_of_a_jvp_function():
    x = mg.randn(4, dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(_Sin.apply, (x,), check_forward_ad=True,
                                 check_backward_ad=False, check_undefined_grad=False,
                                 check_batched_grad=False)

    class _Wrong(_Sin):
        @staticmethod
        def jvp(ctx, gI):
            x, = ctx.saved_tensors
            return gI * 2 * mg.cos(x)

    with pytest.raises(mg.GradcheckError, match="forward AD tangent of input 0"):
        mg.autograd.gradcheck(_Wrong.apply, (x,), check_forward_ad=True,
                              check_backward_ad=False)


def test_gradcheck_forward_ad_of_ordinary_ops_and_gradgradcheck_grad_outputs():
    x = mg.randn(2, 3, dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(lambda t: (t * t).tanh(), (x,), check_forward_ad=True)
    v = mg.randn(2, 3, dtype=mg.float64)
    assert mg.autograd.gradgradcheck(lambda t: t ** 3, (x,), grad_outputs=(v,))
