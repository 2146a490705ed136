"""PyTorch's "Spatial Transformer Networks Tutorial", ported: the localization network
(Conv2d, MaxPool2d, ReLU), fc_loc regressing the 2x3 affine matrix, its last layer
started at the identity (`weight.data.zero_()`, `bias.data.copy_(...)`), the sampling grid
(F.affine_grid) and the resampling (F.grid_sample), then the classifier with Dropout2d
and F.dropout, F.log_softmax and F.nll_loss; train and test as the tutorial's, and
visualize_stn's images to NumPy. The images are 28x28 random ones, MNIST's shape (MNIST
is a download); the label is the quadrant brightest. For test_ported_scripts_five.py:
returns (initial weights, losses)."""
import numpy as np

from port_helpers import _Replayed, _load, _state, _weights


def _images(n, seed):
    """n images (n, 1, 28, 28) in [0, 1) and their labels: which of 4 quadrants is
    brightest, after normalising as the tutorial's transform (MNIST's mean and std)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 1, 28, 28), dtype=np.float32) * (rng.random((n, 1, 28, 28)) < 0.2)
    quadrants = x.reshape(n, 2, 14, 2, 14).sum((2, 4)).reshape(n, 4)
    x = (x - 0.1307) / 0.3081
    return x.astype(np.float32), quadrants.argmax(1).astype(np.int64)


def stn(torch, nn, F, data_mod, init=None, dropout=0.5, n_train=256, n_test=128, epochs=2):
    optim = torch.optim
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device("cpu")        # (the tests compare on the CPU)
    state0 = {}
    # the datasets.MNIST loaders, in short
    train_ds = data_mod.TensorDataset(*map(torch.from_numpy, _images(n_train, 0)))
    test_ds = data_mod.TensorDataset(*map(torch.from_numpy, _images(n_test, 1)))
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=64, shuffle=True,
                                               num_workers=4)
    # PyTorch's generator shuffles otherwise: its run takes minigrad's order (port_helpers)
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=64, sampler=_Replayed(
        init, state0, "order", data_mod.RandomSampler(train_ds)), num_workers=4)
    test_loader = torch.utils.data.DataLoader(test_ds, batch_size=64, shuffle=False,
                                              num_workers=4)

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d(dropout)     # (the default p, 0.5, as the tutorial)
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)
            # the spatial transformer's localization network
            self.localization = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=7),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True),
                nn.Conv2d(8, 10, kernel_size=5),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True)
            )
            # the regressor of the 3 * 2 affine matrix
            self.fc_loc = nn.Sequential(
                nn.Linear(10 * 3 * 3, 32),
                nn.ReLU(True),
                nn.Linear(32, 3 * 2)
            )
            # started at the identity transformation
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            """The spatial transformer network's forward."""
            xs = self.localization(x)
            xs = xs.view(-1, 10 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size())
            x = F.grid_sample(x, grid)
            return x

        def forward(self, x):
            # the input transformed
            x = self.stn(x)
            # the usual forward
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, p=dropout, training=self.training)     # (p: as conv2_drop's)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)
    torch.manual_seed(0)
    model = Net().to(device)
    assert model.fc_loc[2].bias.tolist() == [1, 0, 0, 0, 1, 0]
    _load(torch, model, _weights(init))
    state0.update(_state(model))
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    out = []
    with torch.no_grad():               # (not the tutorial's: its start is the identity)
        data = next(iter(test_loader))[0]
        assert (model.stn(data) - data).abs().max().item() < 1e-4

    def train(epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            out.append(loss.item())
            if batch_idx % 500 == 0:
                print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))

    def test():
        """The test set's average loss and accuracy."""
        with torch.no_grad():
            model.eval()
            test_loss = 0
            correct = 0
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                # sum up batch loss
                test_loss += F.nll_loss(output, target, size_average=False).item()
                # the index of the largest log-probability
                pred = output.max(1, keepdim=True)[1]
                correct += pred.eq(target.view_as(pred)).sum().item()
            test_loss /= len(test_loader.dataset)
            print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n"
                  .format(test_loss, correct, len(test_loader.dataset),
                          100. * correct / len(test_loader.dataset)))
            out.extend([test_loss, correct])

    def convert_image_np(inp):
        """A Tensor image (C, H, W) to a NumPy one (H, W, C), un-normalised."""
        inp = inp.numpy().transpose((1, 2, 0))
        mean = np.array([0.485, 0.456, 0.406])
        std = np.array([0.229, 0.224, 0.225])
        inp = std * inp + mean
        inp = np.clip(inp, 0, 1)
        return inp

    def visualize_stn():
        """The first test batch and its transformed images (the tutorial plots them side
        by side, torchvision.utils.make_grid's grids)."""
        with torch.no_grad():
            data = next(iter(test_loader))[0].to(device)
            input_tensor = data.cpu()
            transformed_input_tensor = model.stn(data).cpu()
            in_grid = convert_image_np(input_tensor[0].expand(3, 28, 28))
            out_grid = convert_image_np(transformed_input_tensor[0].expand(3, 28, 28))
            return in_grid, out_grid
    for epoch in range(1, epochs + 1):             # (the tutorial's 20)
        train(epoch)
        test()
    in_grid, out_grid = visualize_stn()
    # the transform learned: near the identity, each image moved a little (not compared
    # with PyTorch's: a small difference of near-equal images, see test_stn_matches_torch)
    assert in_grid.shape == out_grid.shape == (28, 28, 3)
    assert 0 < np.abs(in_grid - out_grid).mean() < 0.5
    return state0, out
