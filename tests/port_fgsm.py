"""PyTorch's "Adversarial Example Generation" tutorial (FGSM), ported: a small LeNet-like
CNN (the tutorial loads a pretrained MNIST one: here random weights, briefly trained on
random 28x28 images whose label is the brightest quadrant), `data.requires_grad = True`,
the gradient's sign, `torch.clamp(image + epsilon*sign_data_grad, 0, 1)`, the denorm and
re-normalisation with `torch.tensor(mean).view(1, -1, 1, 1)`, accuracy per epsilon and the
adversarial examples to NumPy. For test_ported_scripts_nine.py: returns (initial weights,
values seen)."""
import numpy as np

from port_helpers import _load, _state, _weights


def _images(n, seed):
    """n images (n, 1, 28, 28) in [0, 1) and their labels (brightest of 4 quadrants)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 1, 28, 28), dtype=np.float32) * (rng.random((n, 1, 28, 28)) < 0.2)
    quadrants = x.reshape(n, 2, 14, 2, 14).sum((2, 4)).reshape(n, 4)
    return x.astype(np.float32), quadrants.argmax(1).astype(np.int64)


def fgsm(torch, nn, F, data_mod, init=None, n_test=40):
    epsilons = [0, .05, .1, .2, .3]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device("cpu")                    # (the tests compare on the CPU)
    mean, std = [0.1307], [0.3081]
    state0, seen = {}, []

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, 1)
            self.conv2 = nn.Conv2d(8, 16, 3, 1)
            self.fc1 = nn.Linear(16 * 5 * 5, 32)
            self.fc2 = nn.Linear(32, 4)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    model = Net().to(device)
    if init is None:
        state0.update(_state(model))
    _load(torch, model, _weights(init))
    # a short training in place of the pretrained weights (full batch, no shuffling)
    x, y = map(torch.from_numpy, _images(128, 0))
    x = (x - mean[0]) / std[0]
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(15):
        opt.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()
    seen.append(loss.item())
    model.eval()

    test_ds = data_mod.TensorDataset(*map(torch.from_numpy, _images(n_test, 1)))
    test_loader = data_mod.DataLoader(test_ds, batch_size=1, shuffle=False)

    def fgsm_attack(image, epsilon, data_grad):
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        perturbed_image = torch.clamp(perturbed_image, 0, 1)
        return perturbed_image

    def denorm(batch, mean=mean, std=std):
        if isinstance(mean, list):
            mean = torch.tensor(mean).to(device)
        if isinstance(std, list):
            std = torch.tensor(std).to(device)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)

    def normalize(batch):
        """transforms.Normalize((0.1307,), (0.3081,)) on a batch."""
        return (batch - torch.tensor(mean).view(1, -1, 1, 1)) / torch.tensor(std).view(1, -1, 1, 1)

    def test(model, device, test_loader, epsilon):
        correct = 0
        adv_examples = []
        for data, target in test_loader:
            data, target = normalize(data).to(device), target.to(device)
            data.requires_grad = True
            output = model(data)
            init_pred = output.max(1, keepdim=True)[1]
            if init_pred.item() != target.item():
                continue
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data.grad.data
            data_denorm = denorm(data)
            perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
            perturbed_data_normalized = normalize(perturbed_data)
            output = model(perturbed_data_normalized)
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
                if epsilon == 0 and len(adv_examples) < 5:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
            else:
                if len(adv_examples) < 5:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        final_acc = correct / float(len(test_loader))
        print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
        return final_acc, adv_examples

    accuracies, examples = [], []
    for eps in epsilons:
        acc, ex = test(model, device, test_loader, eps)
        accuracies.append(acc)
        examples.append(ex)
    seen += accuracies
    # (not the images' values: a gradient near 0 can take either sign under the other
    # library's rounding, moving a pixel by epsilon)
    for ex in examples:
        for orig, adv, img in ex:
            assert img.shape == (28, 28) and img.min() >= 0 and img.max() <= 1
            seen += [orig, adv]
    return state0, seen
