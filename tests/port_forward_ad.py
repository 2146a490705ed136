"""PyTorch's "Forward-mode Automatic Differentiation" tutorial, ported: dual tensors under
fwAD.dual_level (make_dual, unpack_dual, a tangent that is or is not the one given), a
module's parameters replaced by dual ones (the `delattr`/`setattr` pattern) and the same
by functional_call, a custom Function with a `jvp` staticmethod (the tutorial's, keeping
its result on ctx, and one saving it by ctx.save_for_forward) checked by gradcheck's
forward-AD check, and torch.func.jvp of a function and of a module by functional_call.
For test_ported_scripts_seven.py: returns (initial weights and draws, numbers)."""
from importlib import import_module

from port_helpers import _Draws, _load, _state


def forward_ad(torch, nn, F, data_mod, init=None):
    state0, out = {}, []
    draw = _Draws(torch, init, state0, "x")
    fwAD = import_module(torch.__name__ + ".autograd.forward_ad")
    func = import_module(torch.__name__ + ".func")

    primal = draw(lambda: torch.randn(10, 10))
    tangent = draw(lambda: torch.randn(10, 10))

    def fn(x, y):
        return x ** 2 + y ** 2

    # all forward AD happens inside a dual_level context
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        # the tangent comes back as it was given, when its layout allows
        out.append(fwAD.unpack_dual(dual_input).tangent is tangent)
        dual_input_alt = fwAD.make_dual(primal, tangent.T)
        out.append(torch.equal(fwAD.unpack_dual(dual_input_alt).tangent, tangent.T))
        # a tensor that is not dual: its tangent is zero
        plain_tensor = draw(lambda: torch.randn(10, 10))
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
    out.append(fwAD.unpack_dual(dual_output).tangent is None)     # the level has exited
    out.append(torch.allclose(jvp, 2 * primal * tangent))
    out.append(jvp.sum().item())

    # modules: replace the parameters by dual tensors
    model = nn.Linear(5, 5)
    _load(torch, model, init, "lin.")
    state0.update(_state(model, "lin."))
    input = draw(lambda: torch.randn(16, 5))
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: draw(lambda p=p: torch.rand_like(p)) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out_ = model(input)
        jvp = fwAD.unpack_dual(out_).tangent
    out.append(torch.allclose(jvp, input @ tangents["weight"].T + tangents["bias"], atol=1e-6))
    out.extend(jvp[0].tolist())

    # the same by functional_call, on a fresh module
    functional_call = func.functional_call
    model = nn.Linear(5, 5)
    dual_params = {}
    with fwAD.dual_level():
        for name, p in params.items():
            # the dict's keys as named_parameters gives them
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        out_ = functional_call(model, dual_params, input)
        jvp2 = fwAD.unpack_dual(out_).tangent
    out.append(torch.allclose(jvp, jvp2))

    # a custom Function: its jvp says how tangents go through it
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            # the tensors jvp needs, on ctx (save_for_forward: below)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            # free it: this ctx is not used again
            del ctx.result
            return gO

    fn = Fn.apply
    primal = draw(lambda: torch.randn(10, 10, dtype=torch.double)).requires_grad_()
    tangent = draw(lambda: torch.randn(10, 10, dtype=torch.double))
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    out.append(torch.allclose(jvp, tangent * primal.exp()))
    out.append(jvp.sum().item())
    # gradcheck checks the jvp against finite differences (Fn has no backward)
    out.append(torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                        check_backward_ad=False, check_undefined_grad=False,
                                        check_batched_grad=False))

    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return torch.sin(x)

        @staticmethod
        def jvp(ctx, gI):
            x, = ctx.saved_tensors
            return gI * torch.cos(x)

    with fwAD.dual_level():
        y = Sin.apply(fwAD.make_dual(primal, tangent))
        out.append(torch.allclose(fwAD.unpack_dual(y).tangent, tangent * primal.cos()))

    # the functional API: torch.func.jvp
    primal0 = draw(lambda: torch.randn(10, 10))
    tangent0 = draw(lambda: torch.randn(10, 10))
    primal1 = draw(lambda: torch.randn(10, 10))
    tangent1 = draw(lambda: torch.randn(10, 10))
    primal_out, tangent_out = func.jvp(fn_ := (lambda x, y: x ** 2 + y ** 2),
                                       (primal0, primal1), (tangent0, tangent1))
    out.append(torch.allclose(primal_out, fn_(primal0, primal1)))
    out.append(torch.allclose(tangent_out, 2 * primal0 * tangent0 + 2 * primal1 * tangent1))
    # and of a module, through functional_call
    model = nn.Linear(5, 5)
    _load(torch, model, init, "lin2.")
    state0.update(_state(model, "lin2."))
    input = draw(lambda: torch.randn(16, 5))
    tangents = {name: draw(lambda p=p: torch.rand_like(p))
                for name, p in model.named_parameters()}
    params = {k: v.detach() for k, v in model.named_parameters()}

    def func_(params, input):
        return functional_call(model, params, input)

    _, jvp_out = func.jvp(lambda params: func_(params, input), (params,), (tangents,))
    out.append(torch.allclose(jvp_out, input @ tangents["weight"].T + tangents["bias"],
                              atol=1e-6))
    out.append(jvp_out.sum().item())
    return state0, [float(v) for v in out]
