"""PyTorch's "NLP From Scratch: Classifying Names with a Character-Level RNN", ported in
both its forms. The classic: unicodeToAscii, one-hot letterToTensor/lineToTensor, the RNN
Module written by hand (i2h and h2o on the input and hidden concatenated, LogSoftmax) with
initHidden, categoryFromOutput by topk, randomTrainingExample, NLLLoss and the manual SGD
`p.data.add_(p.grad.data, alpha=-learning_rate)`, evaluate, the normalised confusion
matrix and predict. The newer: a NamesDataset, random_split with a seeded Generator,
CharRNN on nn.RNN, batches of names whose losses are summed, clip_grad_norm_, SGD and its
confusion matrix. The names are made up here (the tutorial's data/names is a download).
For test_ported_scripts_five.py: returns (initial weights, losses)."""
import random as _random
import string
import unicodedata

import numpy as np

from port_helpers import _load, _state

_NAMES = {
    "English": ["Smith", "Brown", "Taylor", "Wilson", "Walker", "Wright", "Thompson", "White"],
    "French": ["Dubois", "Lefèvre", "Moreau", "Girard", "Bérenger", "Rousseau", "Fournier",
               "Lambert"],
    "Japanese": ["Tanaka", "Suzuki", "Watanabe", "Yamamoto", "Nakamura", "Kobayashi", "Kato",
                 "Yoshida"],
    "Polish": ["Nowak", "Kowalski", "Wiśniewski", "Wójcik", "Kowalczyk", "Kamiński",
               "Lewandowski", "Zieliński"],
}

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)


def unicodeToAscii(s):
    """A Unicode string to plain ASCII: 'Ślusàrski' -> 'Slusarski'."""
    return "".join(
        c for c in unicodedata.normalize("NFD", s)
        if unicodedata.category(c) != "Mn" and c in all_letters
    )


def _classic(torch, nn, init, state0, out, n_iters):
    random = _random.Random(0)          # the tutorial's `random`, seeded here
    category_lines = {}
    all_categories = []
    for category, lines in _NAMES.items():      # readLines of data/names/*.txt, in short
        all_categories.append(category)
        category_lines[category] = [unicodeToAscii(line) for line in lines]
    n_categories = len(all_categories)
    assert category_lines["Polish"][2] == "Wisniewski" and unicodeToAscii("Ślusàrski") == \
        "Slusarski"

    def letterToIndex(letter):
        return all_letters.find(letter)

    def letterToTensor(letter):
        tensor = torch.zeros(1, n_letters)
        tensor[0][letterToIndex(letter)] = 1
        return tensor

    def lineToTensor(line):
        """A line as <line_length x 1 x n_letters>, one-hot letters."""
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor
    assert letterToTensor("J")[0, 35].item() == 1 and lineToTensor("Jones").size() == (5, 1, 57)

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = torch.tanh(self.i2h(combined))
            output = self.h2o(hidden)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)
    n_hidden = 32                       # (the tutorial's 128)
    rnn = RNN(n_letters, n_hidden, n_categories)
    _load(torch, rnn, init, "classic.")
    state0.update(_state(rnn, "classic."))
    input = lineToTensor("Albert")
    hidden = torch.zeros(1, n_hidden)
    output, next_hidden = rnn(input[0], hidden)
    print(output)

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i
    out.append(categoryFromOutput(output)[1])

    def randomChoice(lst):
        return lst[random.randint(0, len(lst) - 1)]

    def randomTrainingExample():
        category = randomChoice(all_categories)
        line = randomChoice(category_lines[category])
        category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
        line_tensor = lineToTensor(line)
        return category, line, category_tensor, line_tensor
    criterion = nn.NLLLoss()
    learning_rate = 0.005               # too high may explode, too low may not learn

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        # each parameter's gradient, times the learning rate, added to its value
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()
    current_loss = 0
    all_losses = []
    plot_every = 50
    for iter in range(1, n_iters + 1):
        category, line, category_tensor, line_tensor = randomTrainingExample()
        output, loss = train(category_tensor, line_tensor)
        current_loss += loss
        out.append(loss)
        if iter % plot_every == 0:
            all_losses.append(current_loss / plot_every)
            current_loss = 0
    out += all_losses

    def evaluate(line_tensor):
        """The output of a line, as train's without the backprop."""
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        return output
    confusion = torch.zeros(n_categories, n_categories)
    n_confusion = 40                    # (the tutorial's 10000)
    for i in range(n_confusion):
        category, line, category_tensor, line_tensor = randomTrainingExample()
        output = evaluate(line_tensor)
        guess, guess_i = categoryFromOutput(output)
        category_i = all_categories.index(category)
        confusion[category_i][guess_i] += 1
    for i in range(n_categories):       # each row divided by its sum
        confusion[i] = confusion[i] / confusion[i].sum()
    out += confusion.flatten().tolist()

    def predict(input_line, n_predictions=3):
        with torch.no_grad():
            output = evaluate(lineToTensor(input_line))
            topv, topi = output.topk(n_predictions, 1, True)
            predictions = []
            for i in range(n_predictions):
                value = topv[0][i].item()
                category_index = topi[0][i].item()
                predictions.append([value, all_categories[category_index]])
        return predictions
    out += [v for v, _ in predict("Dovesky") + predict("Satoshi")]


def _newer(torch, nn, data_mod, init, state0, out, n_epoch):
    Dataset = data_mod.Dataset
    random = _random.Random(1)
    device = torch.device("cpu")
    torch.set_default_device(device)
    print(f"Using device = {torch.get_default_device()}")

    def letterToIndex(letter):
        if letter not in all_letters:   # an unknown character: the last, "_"
            return len(all_letters) - 1
        return all_letters.find(letter)

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor

    class NamesDataset(Dataset):
        def __init__(self, names):
            self.data = []
            self.data_tensors = []
            self.labels = []
            self.labels_tensors = []
            for label, lines in names.items():
                for name in lines:
                    self.data.append(name)
                    self.data_tensors.append(lineToTensor(unicodeToAscii(name)))
                    self.labels.append(label)
            # the tutorial's list(set(...)): sorted here, for one order in every process
            self.labels_uniq = sorted(set(self.labels))
            for idx in range(len(self.labels)):
                temp_tensor = torch.tensor([self.labels_uniq.index(self.labels[idx])],
                                           dtype=torch.long)
                self.labels_tensors.append(temp_tensor)

        def __len__(self):
            return len(self.data)

        def __getitem__(self, idx):
            data_item = self.data[idx]
            data_label = self.labels[idx]
            data_tensor = self.data_tensors[idx]
            label_tensor = self.labels_tensors[idx]
            return label_tensor, data_tensor, data_label, data_item
    alldata = NamesDataset(_NAMES)
    print(f"loaded {len(alldata)} items of data")
    print(f"example = {alldata[0]}")
    train_set, test_set = data_mod.random_split(
        alldata, [.75, .25], generator=torch.Generator(device=device).manual_seed(2024))
    # PyTorch's generator splits otherwise: its run takes minigrad's split
    key = "drawn:split"
    if init is None:
        state0[key] = np.array(train_set.indices + test_set.indices)
    else:
        split = init[key].tolist()
        train_set = data_mod.Subset(alldata, split[:len(train_set)])
        test_set = data_mod.Subset(alldata, split[len(train_set):])
    assert (len(train_set), len(test_set)) == (24, 8)

    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(CharRNN, self).__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            output = self.h2o(hidden[0])
            output = self.softmax(output)
            return output

    def label_from_output(output, output_labels):
        top_n, top_i = output.topk(1)
        label_i = top_i[0].item()
        return output_labels[label_i], label_i

    n_hidden = 32
    rnn = CharRNN(n_letters, n_hidden, len(alldata.labels_uniq))
    _load(torch, rnn, init, "char_rnn.")
    state0.update(_state(rnn, "char_rnn."))
    print(rnn)
    output = rnn(lineToTensor("Albert"))
    print(output)
    print(label_from_output(output, alldata.labels_uniq))

    def train(rnn, training_data, n_epoch=10, n_batch_size=64, report_every=50,
              learning_rate=0.2, criterion=nn.NLLLoss()):
        """Trains on the data's batches, each batch's losses summed."""
        current_loss = 0
        all_losses = []
        rnn.train()
        optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)
        for iter in range(1, n_epoch + 1):
            rnn.zero_grad()             # clear the gradients
            # batches of the data's indices, in a random order
            batches = list(range(len(training_data)))
            random.shuffle(batches)
            batches = np.array_split(batches, len(batches) // n_batch_size)
            for idx, batch in enumerate(batches):
                batch_loss = 0
                for i in batch:         # one name at a time
                    (label_tensor, text_tensor, label, text) = training_data[i]
                    output = rnn.forward(text_tensor)
                    loss = criterion(output, label_tensor)
                    batch_loss += loss
                # optimise
                batch_loss.backward()
                nn.utils.clip_grad_norm_(rnn.parameters(), 3)
                optimizer.step()
                optimizer.zero_grad()
                current_loss += batch_loss.item() / len(batch)
            all_losses.append(current_loss / len(batches))
            current_loss = 0
        return all_losses
    out += train(rnn, train_set, n_epoch=n_epoch, n_batch_size=6, report_every=5)

    def evaluate(rnn, testing_data, classes):
        confusion = torch.zeros(len(classes), len(classes))
        rnn.eval()                      # no dropout here; the habit
        with torch.no_grad():
            for i in range(len(testing_data)):
                (label_tensor, text_tensor, label, text) = testing_data[i]
                output = rnn(text_tensor)
                guess, guess_i = label_from_output(output, classes)
                label_i = classes.index(label)
                confusion[label_i][guess_i] += 1
        for i in range(len(classes)):   # each row by its sum
            denom = confusion[i].sum()
            if denom > 0:
                confusion[i] = confusion[i] / denom
        return confusion
    confusion = evaluate(rnn, test_set, classes=alldata.labels_uniq)
    out += confusion.cpu().numpy().flatten().tolist()       # (the tutorial plots it)


def char_rnn(torch, nn, F, data_mod, init=None, n_iters=300, n_epoch=4):
    torch.manual_seed(0)
    state0, out = {}, []
    _classic(torch, nn, init, state0, out, n_iters)
    try:
        _newer(torch, nn, data_mod, init, state0, out, n_epoch)
    finally:
        torch.set_default_device(None)          # (the tutorial's is process-wide)
    return state0, out
