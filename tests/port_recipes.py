"""PyTorch's recipes on models' state, ported: "What is a state_dict", "Saving and loading
a general checkpoint", "Saving and loading multiple models in one file", "Warmstarting
model using parameters from a different model", "Zeroing out gradients", "Changing default
device", "Reasoning about shapes", "Extracting features with forward hooks", and
parameters_to_vector / vector_to_parameters. For test_ported_scripts_eight.py: returns
(initial weights and draws, values seen)."""
import os
import tempfile

from port_helpers import _Draws, _load, _state, _weights


def recipes(torch, nn, F, data_mod, init=None):
    state0, seen = {}, []
    draw = _Draws(torch, init, state0, "x")

    class TheModelClass(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.view(-1, 16 * 5 * 5)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    def fresh(key):
        m = TheModelClass()
        if init is None:
            state0.update(_state(m, key + "."))
        _load(torch, m, _weights(init), key + ".")
        return m

    # -- what is a state_dict
    model = fresh("model")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    print("Model's state_dict:")
    for param_tensor in model.state_dict():
        print(param_tensor, "\t", model.state_dict()[param_tensor].size())
        seen += list(model.state_dict()[param_tensor].size())
    print("Optimizer's state_dict:")
    for var_name in optimizer.state_dict():
        print(var_name, "\t", optimizer.state_dict()[var_name])
    group = optimizer.state_dict()["param_groups"][0]
    seen += [group["lr"], group["momentum"], group["weight_decay"]] + group["params"]
    assert optimizer.state_dict()["state"] == {}

    # -- train a little, then save a general checkpoint
    inputs = draw(lambda: torch.randn(4, 3, 32, 32))
    labels = torch.tensor([1, 0, 3, 9])
    criterion = nn.CrossEntropyLoss()
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        seen.append(loss.item())
    folder = tempfile.mkdtemp()
    PATH = os.path.join(folder, "model.pt")
    # minigrad writes .safetensors under the name given: the 0-d loss round-trips as a tensor
    torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(), "loss": loss.detach()}, PATH)
    model2 = TheModelClass()
    optimizer2 = torch.optim.SGD(model2.parameters(), lr=0.5)
    checkpoint = torch.load(PATH)
    model2.load_state_dict(checkpoint["model_state_dict"])
    optimizer2.load_state_dict(checkpoint["optimizer_state_dict"])
    assert checkpoint["epoch"] == 2 and checkpoint["loss"].dim() == 0
    assert checkpoint["loss"].item() == loss.item()
    assert optimizer2.param_groups[0]["lr"] == 0.001        # the saved hyper-parameters
    model2.train()
    for m, opt in ((model, optimizer), (model2, optimizer2)):    # the same next step
        opt.zero_grad()
        step = criterion(m(inputs), labels)
        step.backward()
        opt.step()
        seen.append(step.item())
    assert seen[-1] == seen[-2]
    model2.eval()
    assert not model2.training and not model2.fc1.training

    # -- several models in one file
    netA, netB = fresh("A"), fresh("B")
    optimizerA = torch.optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
    optimizerB = torch.optim.Adam(netB.parameters(), lr=0.01)
    criterion(netB(inputs), labels).backward()
    optimizerB.step()
    torch.save({"modelA_state_dict": netA.state_dict(), "modelB_state_dict": netB.state_dict(),
                "optimizerA_state_dict": optimizerA.state_dict(),
                "optimizerB_state_dict": optimizerB.state_dict()}, PATH)
    modelA, modelB = TheModelClass(), TheModelClass()
    optimA = torch.optim.SGD(modelA.parameters(), lr=0.1)
    optimB = torch.optim.Adam(modelB.parameters())
    checkpoint = torch.load(PATH)
    modelA.load_state_dict(checkpoint["modelA_state_dict"])
    modelB.load_state_dict(checkpoint["modelB_state_dict"])
    optimA.load_state_dict(checkpoint["optimizerA_state_dict"])
    optimB.load_state_dict(checkpoint["optimizerB_state_dict"])
    modelA.eval()
    modelB.train()
    assert sorted(optimB.state_dict()["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    seen += [optimA.param_groups[0]["lr"], optimB.param_groups[0]["lr"],
             modelB(inputs).sum().item(), modelA(inputs).sum().item()]

    # -- warmstarting from a different model: strict=False, the keys reported
    class NetB(nn.Module):                 # conv layers shared; its own head
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.head = nn.Linear(16 * 5 * 5, 2)

    torch.save(netA.state_dict(), PATH)
    warm = NetB()
    result = warm.load_state_dict(torch.load(PATH), strict=False)
    missing, unexpected = result
    print(result)
    assert result.missing_keys == missing == ["head.weight", "head.bias"]
    # sorted: minigrad's flat .safetensors file loads its keys sorted, torch.load in order
    assert sorted(unexpected) == sorted(f"fc{i}.{w}" for i in (1, 2, 3)
                                        for w in ("weight", "bias"))
    assert torch.equal(warm.conv2.weight, netA.conv2.weight)
    seen += [len(missing), len(unexpected), warm.conv1.bias.sum().item()]

    # -- zeroing out gradients
    for i in range(2):
        optimizer.zero_grad()
        assert model.conv1.weight.grad is None              # set_to_none by default
        criterion(model(inputs), labels).backward()
        seen.append(model.fc3.bias.grad.abs().sum().item())
        optimizer.step()
    model.zero_grad(set_to_none=False)
    assert model.fc3.bias.grad is not None and model.fc3.bias.grad.abs().sum().item() == 0
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())

    # -- changing the default device
    try:
        torch.set_default_device("cpu")
        assert str(torch.get_default_device()) == "cpu"
        assert str(torch.ones(2).device) == "cpu"
        with torch.device("cpu"):
            mod = nn.Linear(3, 2)
            assert str(mod.weight.device) == "cpu" and str(torch.zeros(1).device) == "cpu"
    finally:
        torch.set_default_device(None)
    assert str(torch.get_default_device()) == "cpu"

    # -- reasoning about shapes: a hook prints each layer's output shape
    shapes = []

    def fw_hook(module, input, output):
        print(f"Shape of output to {module} is {output.shape}.")
        shapes.append(list(output.shape))

    probe = TheModelClass()
    handles = [m.register_forward_hook(fw_hook) for m in probe.children()]
    try:        # minigrad has no meta device (backend.py says why): a one-sample cpu input
        inp = torch.randn(1, 3, 32, 32, device="meta")
        probe.to("meta")
    except ValueError:
        inp = torch.zeros(1, 3, 32, 32)
    with torch.no_grad():
        out = probe(inp)
    assert list(out.shape) == [1, 10]
    for h in handles:
        h.remove()
    seen += sum(shapes, [])
    assert len(probe.conv1._forward_hooks) == 0

    # -- extracting features with forward hooks
    activation = {}

    def get_activation(name):
        def hook(model, input, output):
            activation[name] = output.detach()
        return hook

    h1 = model.fc2.register_forward_hook(get_activation("fc2"))
    h2 = model.conv2.register_forward_hook(get_activation("conv2"))
    output = model(inputs)
    h1.remove()
    h2.remove()
    model(inputs[:1])                                        # no longer recorded
    assert activation["fc2"].shape == (4, 84) and not activation["fc2"].requires_grad
    seen += [activation["fc2"].sum().item(), activation["conv2"].abs().sum().item(),
             output.sum().item()]

    # -- parameters_to_vector and back
    vec = torch.nn.utils.parameters_to_vector(model.parameters())
    seen += [vec.numel(), vec.sum().item()]
    torch.nn.utils.vector_to_parameters(vec * 2, model.parameters())
    assert torch.allclose(model.fc3.bias, 2 * vec[-10:])
    seen.append(torch.nn.utils.parameters_to_vector(model.parameters()).sum().item())
    return state0, seen
