"""PyTorch's torch.func tutorials, ported on tiny models: "Per-sample-gradients" (a CNN's
per-sample gradients by a loop of backward passes, then by vmap(grad(compute_loss)) over
functional_call), "Model ensembling" (stack_module_state, a 'meta' copy as the base model,
vmap over models with and without a shared minibatch), "Jacobians, Hessians, hvp, vhp, and
more" (vjp under vmap, jacrev/jacfwd with argnums, hessian three ways, batch Jacobians and
Hessians, hvp by jvp(grad(f)) and by vjp(grad(f)), autograd.functional's hvp/vhp) and
"Neural Tangent Kernels" (Jacobian contraction by einsum, and the vmap+vjp/jvp variant).
For test_ported_scripts_seven.py: returns (initial weights and draws, numbers)."""
import copy
from functools import partial

from port_helpers import _Draws, _load, _state


def _close(torch, a, b, atol=1e-5, rtol=1e-5):
    return float(torch.allclose(a, b, atol=atol, rtol=rtol))


def per_sample_grads(torch, nn, F, draw, init, state0, out):
    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(128, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    device = "cpu"
    batch_size = 6
    data = draw(lambda: torch.randn(batch_size, 1, 12, 12, device=device))
    targets = draw(lambda: torch.randint(10, (batch_size,), device=device))
    model = SimpleCNN().to(device=device)
    _load(torch, model, init, "cnn.")
    state0.update(_state(model, "cnn."))
    predictions = model(data)
    loss = loss_fn(predictions, targets)
    loss.backward()
    out.append(loss.item())

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)     # a batch of one
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)
    out.append(list(per_sample_grads[1].shape) == [batch_size, 4])

    from importlib import import_module
    func = import_module(torch.__name__ + ".func")
    functional_call, vmap, grad = func.functional_call, func.vmap, func.grad
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads,
                                                   ft_per_sample_grads.values()):
        out.append(_close(torch, per_sample_grad, ft_per_sample_grad, 3e-3))
        out.append(ft_per_sample_grad.norm().item())
    # the batch's gradient is the mean of the per-sample ones
    out.append(_close(torch, model.fc2.bias.grad, ft_per_sample_grads["fc2.bias"].mean(0)))


def ensembling(torch, nn, F, draw, init, state0, out):
    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(36, 16)
            self.fc2 = nn.Linear(16, 16)
            self.fc3 = nn.Linear(16, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    device = "cpu"
    num_models = 4
    data = draw(lambda: torch.randn(10, 8, 1, 6, 6, device=device))
    targets = draw(lambda: torch.randint(10, (80,), device=device))
    models = [SimpleMLP().to(device) for _ in range(num_models)]
    for i, m in enumerate(models):
        _load(torch, m, init, f"mlp{i}.")
        state0.update(_state(m, f"mlp{i}."))
    # option 1: a different minibatch for each model
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [model(minibatch)
                                       for model, minibatch in zip(models, minibatches)]
    # option 2: the same minibatch
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    from importlib import import_module
    func = import_module(torch.__name__ + ".func")
    stack_module_state, functional_call, vmap = func.stack_module_state, \
        func.functional_call, func.vmap
    params, buffers = stack_module_state(models)
    # a "stateless" copy of the model: its parameters live on the meta device
    base_model = copy.deepcopy(models[0])
    if torch.__name__ == "torch":
        base_model = base_model.to("meta")
    # minigrad has no meta device (tensors with no data; it says so): the copy stays on
    # the CPU, its weights unused, as functional_call puts params in their place

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    out.append([p.size(0) for p in params.values()] == [num_models] * 6)
    minibatches = data[:num_models]
    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
    out.append(_close(torch, predictions1_vmap, torch.stack(predictions_diff_minibatch_loop),
                      1e-3))
    predictions1_vmap = vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, minibatches)
    out.append(_close(torch, predictions1_vmap, torch.stack(predictions_diff_minibatch_loop),
                      1e-3))
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    out.append(_close(torch, predictions2_vmap, torch.stack(predictions2), 1e-3))
    out.extend(predictions2_vmap[:, 0, 0].tolist())
    out.append(F.cross_entropy(predictions1_vmap.flatten(0, 1), targets[:32]).item())


def jacobians(torch, nn, F, draw, init, state0, out):
    from importlib import import_module
    func = import_module(torch.__name__ + ".func")
    vmap, vjp, jvp, grad = func.vmap, func.vjp, func.jvp, func.grad
    jacrev, jacfwd, hessian = func.jacrev, func.jacfwd, func.hessian

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 6
    weight = draw(lambda: torch.randn(D, D))
    bias = draw(lambda: torch.randn(D))
    x = draw(lambda: torch.randn(D))

    def compute_jac(xp):
        jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)
    jacobian = compute_jac(xp)
    out.append(list(jacobian.shape) == [D, D])
    out.extend(jacobian[0].tolist())
    _, vjp_fn = vjp(partial(predict, weight, bias), x)
    ft_jacobian, = vmap(vjp_fn)(unit_vectors)
    out.append(_close(torch, ft_jacobian, jacobian))
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    out.append(_close(torch, ft_jacobian, jacobian))
    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    out.append(list(ft_jac_weight.shape) == [D, D, D])
    # the bias's Jacobian is diag(1 - y^2), as x's is that times weight
    out.append(_close(torch, ft_jac_bias @ weight, jacobian))
    jacfwd_jac = jacfwd(predict, argnums=2)(weight, bias, x)
    out.append(_close(torch, jacfwd_jac, jacobian))
    # Hessians: the API, forward-over-forward, reverse-over-reverse
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    out.append(list(hess_api.shape) == [D, D, D])
    out.append(_close(torch, hess_api, hess_fwdfwd) * _close(torch, hess_api, hess_revrev))
    out.extend(hess_api[0, 0].tolist())
    # batch Jacobian and Hessian
    batch_size, Din, Dout = 5, 3, 4
    weight = draw(lambda: torch.randn(Dout, Din))
    bias = draw(lambda: torch.randn(Dout))
    x = draw(lambda: torch.randn(batch_size, Din))
    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x) \
        .movedim(1, 0)
    out.append(_close(torch, batch_jacobian0, batch_jacobian1))
    compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
    batch_hess = compute_batch_hessian(weight, bias, x)
    out.append(list(batch_hess.shape) == [batch_size, Dout, Din, Din])
    out.append(batch_hess.sum().item())

    # Hessian-vector products
    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    x = draw(lambda: torch.randn(8))
    tangent = draw(lambda: torch.randn(8))
    result = hvp(f, (x,), (tangent,))
    out.append(_close(torch, result, -x.sin() * tangent))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    out.append(_close(torch, result, result_hvp_revrev[0]))
    out.extend(result.tolist())
    # torch.autograd.functional's: hvp and vhp (the Hessian is symmetric: the same)
    value, hv = torch.autograd.functional.hvp(f, x, tangent)
    _, vh = torch.autograd.functional.vhp(f, x, tangent)
    out.append(value.item())
    out.append(_close(torch, hv, result) * _close(torch, vh, result))


def ntk(torch, nn, F, draw, init, state0, out):
    from importlib import import_module
    func = import_module(torch.__name__ + ".func")
    functional_call, vmap, vjp, jvp, jacrev = func.functional_call, func.vmap, func.vjp, \
        func.jvp, func.jacrev

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, (3, 3))
            self.conv2 = nn.Conv2d(4, 4, (3, 3))
            self.conv3 = nn.Conv2d(4, 4, (3, 3))
            self.fc = nn.Linear(16, 3)

        def forward(self, x):
            x = self.conv1(x)
            x = x.relu()
            x = self.conv2(x)
            x = x.relu()
            x = self.conv3(x)
            x = x.flatten(1)
            x = self.fc(x)
            return x

    device = "cpu"
    x_train = draw(lambda: torch.randn(4, 3, 8, 8, device=device))
    x_test = draw(lambda: torch.randn(3, 3, 8, 8, device=device))
    net = CNN().to(device)
    _load(torch, net, init, "ntk.")
    state0.update(_state(net, "ntk."))
    # detached: the parameters as plain tensors, for functional_call
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
        jac1 = vmap(jacrev(fnet_single, argnums=0), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]
        jac2 = vmap(jacrev(fnet_single, argnums=0), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]
        einsum_expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM",
                       "diagonal": "Naf,Maf->NMa"}[compute]
        result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
        result = result.sum(0)
        return result

    result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
    out.append(list(result.shape) == [4, 3, 3, 3])
    out.extend(result[0, 0].flatten().tolist())
    trace = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, "trace")
    out.append(_close(torch, trace, torch.einsum("NMKK->NM", result), 1e-4))

    def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func(params, x1)

            def func_x2(params):
                return func(params, x2)

            output, vjp_fn = vjp(func_x1, params)

            def get_ntk_slice(vec):
                # vec^T J(x1): the vjp; then J(x2) (vec^T J(x1))^T: the jvp
                vjps = vjp_fn(vec)
                _, jvps = jvp(func_x2, (params,), vjps)
                return jvps

            # one vec per output: the identity's rows
            basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device) \
                .view(output.numel(), -1)
            return vmap(get_ntk_slice)(basis)

        result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        if compute == "full":
            return result
        if compute == "trace":
            return torch.einsum("NMKK->NM", result)
        if compute == "diagonal":
            return torch.einsum("NMKK->NMK", result)

    result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test)
    out.append(_close(torch, result, result_from_ntk_vps, 1e-4))
    diagonal = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, "diagonal")
    out.append(_close(torch, diagonal, torch.diagonal(result, dim1=2, dim2=3), 1e-4))


def func_tutorials(torch, nn, F, data_mod, init=None, parts=("psg", "ens", "jac", "ntk")):
    """The four tutorials' cells in order, their numbers and checks (1.0: allclose)."""
    state0, out = {}, []
    draw = _Draws(torch, init, state0, "x")
    torch.manual_seed(0)
    programs = {"psg": per_sample_grads, "ens": ensembling, "jac": jacobians, "ntk": ntk}
    for name in parts:
        programs[name](torch, nn, F, draw, init, state0, out)
    return state0, [float(v) for v in out]
