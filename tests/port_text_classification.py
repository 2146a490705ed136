"""PyTorch's "Text classification with the torchtext library", ported without torchtext:
a made-up labelled corpus (four topics, AG_NEWS's labels 1..4) in list datasets, a
basic_english-like tokenizer and a vocab dict with "<unk>", collate_batch's labels, the
texts concatenated (torch.cat) and their offsets (cumsum), TextClassificationModel
(nn.EmbeddingBag's mean bags then Linear, init_weights by uniform_ and zero_), SGD with
StepLR(optimizer, 1.0, gamma=0.1) stepped when validation accuracy drops,
clip_grad_norm_, random_split into train and valid, evaluate, and predict under no_grad.
For test_ported_scripts_ten.py: returns (initial weights, values)."""
import random as _random
import re

import numpy as np

from port_helpers import _Replayed, _load, _state, _weights

_TOPICS = {1: "world nation president election war minister treaty border",
           2: "sports team match goal coach season player league",
           3: "business market stock profit bank trade company shares",
           4: "science computer software research space robot chip network"}
_FILLER = "the a of in on for with today new report says"


def _corpus(n, seed):
    """n (label, text) pairs: a few words of the label's topic among filler words."""
    rng = _random.Random(seed)
    rows = []
    for _ in range(n):
        label = rng.randint(1, 4)
        words = rng.sample(_TOPICS[label].split(), 3) + rng.sample(_FILLER.split(), 4)
        rng.shuffle(words)
        rows.append((label, " ".join(words).capitalize() + "."))
    return rows


def _tokenizer(line):
    """basic_english's, in short: lower case, punctuation split off, whitespace split."""
    return re.sub(r"([.,!?])", r" \1 ", line.lower()).split()


class _Vocab(dict):
    """build_vocab_from_iterator's vocab as a dict: token -> index, "<unk>" the default;
    called on a list of tokens, their indices."""

    def __call__(self, tokens):
        return [self.get(t, self["<unk>"]) for t in tokens]


def text_classification(torch, nn, F, data_mod, init=None, epochs=4, n_train=240,
                        n_test=80):
    DataLoader, random_split = data_mod.DataLoader, data_mod.random_split
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device("cpu")        # (the tests compare on the CPU)
    state0, out = {}, []
    train_iter, test_iter = _corpus(n_train, 0), _corpus(n_test, 1)
    tokenizer = _tokenizer

    def yield_tokens(data_iter):
        for _, text in data_iter:
            yield tokenizer(text)
    vocab = _Vocab({"<unk>": 0})
    for tokens in yield_tokens(train_iter):
        for token in tokens:
            vocab.setdefault(token, len(vocab))
    assert vocab(["here", "is", "the", "market"])[0] == 0
    text_pipeline = lambda x: vocab(tokenizer(x))     # noqa: E731 (the tutorial's lambdas)
    label_pipeline = lambda x: int(x) - 1             # noqa: E731
    assert label_pipeline("10") == 9

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(label_pipeline(_label))
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list.to(device), text_list.to(device), offsets.to(device)

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)
    num_class = len(set([label for (label, text) in train_iter]))
    vocab_size = len(vocab)
    emsize = 16                         # (the tutorial's 64)
    torch.manual_seed(0)
    model = TextClassificationModel(vocab_size, emsize, num_class).to(device)
    assert model.fc.bias.abs().sum().item() == 0
    assert model.embedding.weight.abs().max().item() <= 0.5
    _load(torch, model, _weights(init))
    state0.update(_state(model))

    def train(dataloader, epoch):
        model.train()
        total_acc, total_count = 0, 0
        log_interval = 2
        for idx, (label, text, offsets) in enumerate(dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            out.extend([loss.item(), norm.item()])
            if idx % log_interval == 0 and idx > 0:
                print("| epoch {:3d} | {:5d}/{:5d} batches | accuracy {:8.3f}".format(
                    epoch, idx, len(dataloader), total_acc / total_count))
                total_acc, total_count = 0, 0

    def evaluate(dataloader):
        model.eval()
        total_acc, total_count = 0, 0
        with torch.no_grad():
            for idx, (label, text, offsets) in enumerate(dataloader):
                predicted_label = model(text, offsets)
                loss = criterion(predicted_label, label)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
                out.append(loss.item())
        return total_acc / total_count
    # hyperparameters
    EPOCHS = epochs                     # (the tutorial's 10)
    LR = 5                              # learning rate
    BATCH_SIZE = 32                     # (the tutorial's 64)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    total_accu = None
    train_dataset = list(train_iter)    # to_map_style_dataset's, for a list
    test_dataset = list(test_iter)
    num_train = int(len(train_dataset) * 0.95)
    split_train_, split_valid_ = random_split(
        train_dataset, [num_train, len(train_dataset) - num_train])
    # PyTorch's generator splits otherwise: its run takes minigrad's split
    if init is None:
        state0["drawn:split"] = np.array(split_train_.indices + split_valid_.indices)
    else:
        split = init["drawn:split"].tolist()
        split_train_ = data_mod.Subset(train_dataset, split[:num_train])
        split_valid_ = data_mod.Subset(train_dataset, split[num_train:])
    assert sorted(split_train_.indices + split_valid_.indices) == list(range(n_train))
    train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True,
                                  collate_fn=collate_batch)
    # and its shuffles, minigrad's (port_helpers)
    train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, collate_fn=collate_batch,
                                  sampler=_Replayed(init, state0, "order",
                                                    data_mod.RandomSampler(split_train_)))
    valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=False,
                                  collate_fn=collate_batch)
    test_dataloader = DataLoader(test_dataset, batch_size=BATCH_SIZE, shuffle=False,
                                 collate_fn=collate_batch)
    for epoch in range(1, EPOCHS + 1):
        train(train_dataloader, epoch)
        accu_val = evaluate(valid_dataloader)
        if total_accu is not None and total_accu > accu_val:
            scheduler.step()
        else:
            total_accu = accu_val
        print("-" * 59)
        print("| end of epoch {:3d} | valid accuracy {:8.3f} ".format(epoch, accu_val))
        print("-" * 59)
        out.extend([accu_val, scheduler.get_last_lr()[0]])
    print("Checking the results of test dataset.")
    accu_test = evaluate(test_dataloader)
    print("test accuracy {:8.3f}".format(accu_test))
    out.append(accu_test)
    ag_news_label = {1: "World", 2: "Sports", 3: "Business", 4: "Sci/Tec"}

    def predict(text, text_pipeline):
        with torch.no_grad():
            text = torch.tensor(text_pipeline(text))
            output = model(text, torch.tensor([0]))
            return output.argmax(1).item() + 1
    ex_text_str = "The coach said the team will win the league match this season."
    model = model.to("cpu")
    label = predict(ex_text_str, text_pipeline)
    print("This is a %s news" % ag_news_label[label])
    out.append(label)
    return state0, out
