"""pytorch/examples' siamese_network, ported: one tower applied to both images of a pair,
the two embeddings joined by torch.cat((output1, output2), 1), then fc and a sigmoid;
APP_MATCHER's pairs (even index: two images of one class, target 1; odd: of two classes,
target 0) drawn with `random` from images grouped by class; nn.BCELoss, accuracy by
torch.where(output > 0.5, 1, 0); optim.Adadelta with StepLR. The tower is a small CNN
(Conv2d, BatchNorm2d, ReLU, MaxPool2d, AdaptiveAvgPool2d) in place of the example's
resnet18 (a torchvision model), its Linear layers initialised as the example's
(xavier_uniform_, bias 0.01); the images are made-up 16x16 uint8 ones, MNIST's dtype (MNIST
is a download), each class a blob at its own place. For test_ported_scripts_ten.py:
returns (initial weights, values)."""
import random as _random

import numpy as np

from port_helpers import _load, _state, _weights


def _images(n, seed, side=16):
    """n uint8 images (n, side, side) and their classes 0..9, each class n // 10 or more
    times (a pair of one class needs two): a bright 4x4 blob at the class's place on a
    noisy background."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 10)
    x = rng.integers(0, 60, (n, side, side))
    for i, c in enumerate(labels):
        r, col = 1 + 3 * (c // 4), 1 + 3 * (c % 4)
        x[i, r:r + 4, col:col + 4] += 150
    return x.astype(np.uint8), labels.astype(np.int64)


def siamese(torch, nn, F, data_mod, init=None, n_train=256, n_test=64, epochs=4):
    Dataset, DataLoader = data_mod.Dataset, data_mod.DataLoader
    optim = torch.optim
    StepLR = torch.optim.lr_scheduler.StepLR
    random = _random.Random(1)          # the example's `random`, seeded here

    class SiameseNetwork(nn.Module):
        """Siamese network for image similarity estimation: the tower embeds each image;
        the pair's embeddings, concatenated, go through fc and a sigmoid."""

        def __init__(self):
            super(SiameseNetwork, self).__init__()
            # the tower (the example's resnet18 without its last layer)
            self.resnet = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(8),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
                nn.Conv2d(8, 16, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(16),
                nn.ReLU(inplace=True),
                nn.AdaptiveAvgPool2d((2, 2)),
            )
            self.fc_in_features = 16 * 2 * 2
            # linear layers comparing the two images' features
            self.fc = nn.Sequential(
                nn.Linear(self.fc_in_features * 2, 32),
                nn.ReLU(inplace=True),
                nn.Linear(32, 1),
            )
            self.sigmoid = nn.Sigmoid()
            # initialize the weights
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)

        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                torch.nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.01)

        def forward_once(self, x):
            output = self.resnet(x)
            output = output.view(output.size()[0], -1)
            return output

        def forward(self, input1, input2):
            # both images through the same tower
            output1 = self.forward_once(input1)
            output2 = self.forward_once(input2)
            # the features concatenated
            output = torch.cat((output1, output2), 1)
            # through the linear layers, then a probability
            output = self.fc(output)
            output = self.sigmoid(output)
            return output

    class APP_MATCHER(Dataset):
        def __init__(self, images, targets):
            super(APP_MATCHER, self).__init__()
            # the example's datasets.MNIST(root, train=train): its data and targets
            self.dataset = type("MNIST", (), {})()
            self.dataset.data, self.dataset.targets = images, targets
            self.data = self.dataset.data.unsqueeze(1).clone()
            self.group_examples()

        def group_examples(self):
            """The examples' indices grouped by class, for drawing pairs."""
            np_arr = np.array(self.dataset.targets.clone())
            self.grouped_examples = {}
            for i in range(0, 10):
                self.grouped_examples[i] = np.where((np_arr == i))[0]

        def __len__(self):
            return self.data.shape[0]

        def __getitem__(self, index):
            """A pair: for an even index, two images of one class (target 1); for an odd
            one, two images of different classes (target 0)."""
            selected_class = random.randint(0, 9)
            random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)
            index_1 = self.grouped_examples[selected_class][random_index_1]
            # the first image; as float (the example's transform normalises it)
            image_1 = self.data[index_1].clone().float() / 255
            if index % 2 == 0:
                # a second image of the same class, another one
                random_index_2 = random.randint(
                    0, self.grouped_examples[selected_class].shape[0] - 1)
                while random_index_2 == random_index_1:
                    random_index_2 = random.randint(
                        0, self.grouped_examples[selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float() / 255
                target = torch.tensor(1, dtype=torch.float)
            else:
                # an image of another class
                other_selected_class = random.randint(0, 9)
                while other_selected_class == selected_class:
                    other_selected_class = random.randint(0, 9)
                random_index_2 = random.randint(
                    0, self.grouped_examples[other_selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[other_selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float() / 255
                target = torch.tensor(0, dtype=torch.float)
            return image_1, image_2, target
    out = []

    def train(model, device, train_loader, optimizer, epoch, log_interval=2):
        model.train()
        # we aren't using `TripletLoss` as the MNIST dataset is simple
        criterion = nn.BCELoss()
        for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
            images_1, images_2 = images_1.to(device), images_2.to(device)
            targets = targets.to(device)
            optimizer.zero_grad()
            outputs = model(images_1, images_2).squeeze()
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            out.append(loss.item())
            if batch_idx % log_interval == 0:
                print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch, batch_idx * len(images_1), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))

    def test(model, device, test_loader):
        model.eval()
        test_loss = 0
        correct = 0
        criterion = nn.BCELoss()
        with torch.no_grad():
            for (images_1, images_2, targets) in test_loader:
                images_1, images_2 = images_1.to(device), images_2.to(device)
                targets = targets.to(device)
                outputs = model(images_1, images_2).squeeze()
                test_loss += criterion(outputs, targets).sum().item()  # sum up batch loss
                pred = torch.where(outputs > 0.5, 1, 0)  # get the index of the max log-probability
                correct += pred.eq(targets.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
            test_loss, correct, len(test_loader.dataset),
            100. * correct / len(test_loader.dataset)))
        out.extend([test_loss, correct])
    device = torch.device("cpu")
    torch.manual_seed(1)
    train_kwargs = {"batch_size": 32}
    test_kwargs = {"batch_size": 32}
    # no shuffle, as the example's loaders: the pairs come from `random`, the same for both
    train_dataset = APP_MATCHER(*map(torch.from_numpy, _images(n_train, 0)))
    test_dataset = APP_MATCHER(*map(torch.from_numpy, _images(n_test, 1)))
    assert train_dataset.data.dtype == torch.uint8 and len(train_dataset) == n_train
    train_loader = DataLoader(train_dataset, **train_kwargs)
    test_loader = DataLoader(test_dataset, **test_kwargs)
    model = SiameseNetwork().to(device)
    assert abs(model.fc[0].bias - 0.01).max().item() < 1e-9     # fill_(0.01), in float32
    state0 = {}
    _load(torch, model, _weights(init))
    state0.update(_state(model))
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, epochs + 1):      # (the example's 14)
        train(model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
        out.append(scheduler.get_last_lr()[0])
    return state0, out
