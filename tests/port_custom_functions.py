"""PyTorch's custom autograd Function tutorials, ported: "Double Backward with Custom
Functions" (a backward written with differentiable ops, saving inputs, outputs, and
intermediate results returned as extra outputs; gradcheck and gradgradcheck in float64),
"Fusing Convolution and Batch Norm using Custom Function" (a fused conv+BN Function with a
hand-written backward by nn.grad.conv2d_input/conv2d_weight, gradchecked, trained beside the
unfused pair) and "Extending torch.func with autograd.Function" (forward without ctx plus
setup_context, generate_vmap_rule, a vmap staticmethod; under grad, vmap and jacrev).
For test_ported_scripts_seven.py: returns (initial weights and draws, numbers)."""
from importlib import import_module

from port_helpers import _Draws, _load, _state


def double_backward(torch, draw, out):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            # the input, saved: backward reads it
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            # differentiable ops: a double backward goes through them
            return grad_out * 2 * x

    x = draw(lambda: torch.rand(3, 3, dtype=torch.double)).requires_grad_()
    out.append(torch.autograd.gradcheck(Square.apply, x))
    out.append(torch.autograd.gradgradcheck(Square.apply, x))

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            # the output, saved
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return result * grad_out

    out.append(torch.autograd.gradcheck(Exp.apply, x))
    out.append(torch.autograd.gradgradcheck(Exp.apply, x))
    y = Exp.apply(x)
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    out.append(torch.allclose(gg, x.exp()))

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            # the intermediates returned too: a double backward needs their graph
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            # the gradients that reach the intermediates from outside
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def my_sinh(x):
        return Sinh.apply(x)[0]

    out.append(torch.autograd.gradcheck(my_sinh, x))
    out.append(torch.autograd.gradgradcheck(my_sinh, x))
    out.append(torch.allclose(my_sinh(x), torch.sinh(x)))
    out.append(my_sinh(x).sum().item())


def unsqueeze_all(t):
    # a (C,) statistic broadcast against (N, C, H, W)
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    # the gradient of (X - mean) / (std + eps) with std unbiased, by hand
    tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    tmp *= -1
    d_denom = tmp / (sqrt_var + eps) ** 2
    d_var = d_denom / (2 * sqrt_var)
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    grad_input += d_mean_dx
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)
    return grad_input


def fused_conv_bn(torch, nn, F, draw, init, state0, out):
    def convolution_backward(grad_out, X, weight):
        grad_X = torch.nn.grad.conv2d_input(X.shape, weight, grad_out)
        grad_weight = torch.nn.grad.conv2d_weight(X, weight.shape, grad_out)
        return grad_X, grad_weight

    class FusedConvBN2DFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, conv_weight, eps=1e-3):
            assert X.ndim == 4
            # the conv's output is not saved (the memory the fusion spares): recomputed
            ctx.save_for_backward(X, conv_weight)
            X = F.conv2d(X, conv_weight)
            sum = X.sum(dim=(0, 2, 3))
            var = X.var(dim=(0, 2, 3))
            N = X.numel() / X.size(1)
            sqrt_var = torch.sqrt(var)
            ctx.eps = eps
            ctx.sum = sum
            ctx.N = N
            ctx.sqrt_var = sqrt_var
            mean = sum / N
            denom = sqrt_var + eps
            out = X - unsqueeze_all(mean)
            out /= unsqueeze_all(denom)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            X, conv_weight, = ctx.saved_tensors
            X_conv_out = F.conv2d(X, conv_weight)
            grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var,
                                           ctx.N, ctx.eps)
            grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
            return grad_X, grad_input, None

    weight = draw(lambda: torch.rand(2, 3, 3, 3, dtype=torch.double)).requires_grad_()
    X = draw(lambda: torch.rand(2, 3, 4, 4, dtype=torch.double)).requires_grad_()
    out.append(torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight)))

    class FusedConvBN(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1,
                     eps=1e-3, device=None, dtype=None):
            super().__init__()
            factory_kwargs = {"device": device, "dtype": dtype}
            weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
            self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
            self.eps = eps
            self.reset_parameters()

        def forward(self, X):
            return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

        def reset_parameters(self):
            nn.init.kaiming_uniform_(self.conv_weight, a=5 ** 0.5)

    fused = FusedConvBN(1, 4, 3)
    unfused = nn.Sequential(nn.Conv2d(1, 4, 3, bias=False),
                            nn.BatchNorm2d(4, affine=False, eps=1e-3))
    _load(torch, fused, init, "fused.")
    state0.update(_state(fused, "fused."))
    with torch.no_grad():
        unfused[0].weight.copy_(fused.conv_weight)
    data = draw(lambda: torch.randn(8, 1, 6, 6))
    target = draw(lambda: torch.randn(8, 4, 4, 4))
    for model in (fused, unfused):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = F.mse_loss(model(data), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(loss.item())
    # the fused std is unbiased, BatchNorm's biased: close, not equal
    out.append(abs(out[-1] - out[-4]) < 0.05)
    out.append(torch.allclose(fused.conv_weight, unfused[0].weight, atol=0.05))


def func_functions(torch, draw, out):
    func = import_module(torch.__name__ + ".func")

    class MyCube(torch.autograd.Function):
        # forward without ctx; setup_context saves what backward needs
        @staticmethod
        def forward(x):
            result = x ** 3
            dx = 3 * x ** 2
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            # dx is an output too: its gradient flows back, 6x of it
            result = grad_output * dx + grad_dx * 6 * x
            return result

        # vmap may batch it by running forward on batched tensors
        generate_vmap_rule = True

    def my_cube(x):
        result, _ = MyCube.apply(x)
        return result

    x = draw(lambda: torch.randn(5))
    out.append(torch.allclose(func.vmap(func.grad(my_cube))(x), 3 * x ** 2))
    out.append(torch.allclose(func.vmap(func.grad(func.grad(my_cube)))(x), 6 * x))
    out.append(torch.allclose(func.jacrev(my_cube)(x), torch.diag(3 * x ** 2)))

    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 2 * x

        @staticmethod
        def vmap(info, in_dims, x):
            # the batched rule: squaring is elementwise, the batch dim stays where it is
            x_bdim, = in_dims
            return MySquare.apply(x), x_bdim

    xb = draw(lambda: torch.randn(3, 4))
    sq = func.vmap(MySquare.apply)(xb)
    out.append(torch.allclose(sq, xb ** 2))
    jac = func.vmap(func.jacrev(MySquare.apply))(xb)
    out.append(torch.allclose(jac, torch.diag_embed(2 * xb)))
    out.append(jac.sum().item())


def custom_functions(torch, nn, F, data_mod, init=None):
    state0, out = {}, []
    draw = _Draws(torch, init, state0, "x")
    double_backward(torch, draw, out)
    fused_conv_bn(torch, nn, F, draw, init, state0, out)
    func_functions(torch, draw, out)
    return state0, [float(v) for v in out]
