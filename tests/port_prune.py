"""PyTorch's "Pruning" tutorial, ported: LeNet, random and L1 unstructured pruning, Ln
structured pruning, iterative pruning, prune.remove, pruning several parameters, global
pruning with its sparsity prints, and a custom BasePruningMethod. For
test_ported_scripts_eight.py: returns (initial weights and masks drawn, values seen)."""
import importlib

from port_helpers import _drawn, _load, _state, _weights


def pruning(torch, nn, F, data_mod, init=None):
    prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    state0, seen = {}, []

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 3)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    def fresh(key):
        m = LeNet()
        if init is None:
            state0.update(_state(m, key + "."))
        _load(torch, m, _weights(init), key + ".")
        return m

    model = fresh("lenet")
    module = model.conv1
    print(list(module.named_parameters()), list(module.named_buffers()))
    # random pruning: torch's generator draws other masks, so minigrad's is replayed
    prune.random_unstructured(module, name="weight", amount=0.3)
    mask = _drawn(torch, init, state0, "mask", lambda: module.weight_mask)
    module.weight_mask.copy_(mask)
    module.weight = module.weight_orig * module.weight_mask      # what the hook computes
    assert [n for n, _ in module.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in module.named_buffers()] == ["weight_mask"]
    assert int((module.weight_mask == 0).sum()) == 16           # round(0.3 * 54)
    print(module.weight, module._forward_pre_hooks)
    assert len(module._forward_pre_hooks) == 1
    prune.l1_unstructured(module, name="bias", amount=3)
    print(module.bias)
    seen += module.bias_mask.tolist() + [int((module.bias == 0).sum())]
    # iterative: the new mask combines with the one there
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    print(module.weight)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":                        # the hook itself, as torch
            break
    print(list(hook))
    assert [type(h).__name__ for h in hook] == ["RandomUnstructured", "LnStructured"]
    seen += module.weight_mask.sum((1, 2, 3)).tolist()
    print(model.state_dict().keys())
    x = torch.ones(1, 1, 28, 28)
    seen.append(model(x).sum().item())
    prune.remove(module, "weight")
    assert [n for n, _ in module.named_parameters()] == ["bias_orig", "weight"]
    assert [n for n, _ in module.named_buffers()] == ["bias_mask"]
    assert all(h._tensor_name == "bias" for h in module._forward_pre_hooks.values())
    seen.append(model(x).sum().item())

    # several parameters in a model
    new_model = fresh("several")
    for name, mod in new_model.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            prune.l1_unstructured(mod, name="weight", amount=0.2)
        elif isinstance(mod, torch.nn.Linear):
            prune.l1_unstructured(mod, name="weight", amount=0.4)
    assert list(dict(new_model.named_buffers()).keys()) == [
        f"{m}.weight_mask" for m in ("conv1", "conv2", "fc1", "fc2", "fc3")]
    seen.append(new_model(x).sum().item())

    # global pruning
    model = fresh("global")
    parameters_to_prune = ((model.conv1, "weight"), (model.conv2, "weight"),
                           (model.fc1, "weight"), (model.fc2, "weight"), (model.fc3, "weight"))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured,
                              amount=0.2)
    for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
        w = getattr(model, name).weight
        sparsity = 100. * float(torch.sum(w == 0)) / float(w.nelement())
        print(f"Sparsity in {name}.weight: {sparsity:.2f}%")
        seen.append(sparsity)
    total = 100. * float(sum(torch.sum(m.weight == 0) for m, _ in parameters_to_prune)) / \
        float(sum(m.weight.nelement() for m, _ in parameters_to_prune))
    print(f"Global sparsity: {total:.2f}%")
    seen.append(total)

    # a custom pruning method: every other entry
    class FooBarPruningMethod(prune.BasePruningMethod):
        """Prune every other entry in a tensor."""
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module

    model = fresh("foobar")
    foobar_unstructured(model.fc3, name="bias")
    print(model.fc3.bias_mask)
    seen += model.fc3.bias_mask.tolist() + [model(x).sum().item()]
    return state0, seen
