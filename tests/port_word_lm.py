"""PyTorch's examples/word_language_model, ported: model.py's RNNModel and TransformerModel,
data.py's Dictionary and Corpus (of a few lines held here), main.py's batchify, get_batch,
repackage_hidden, hand-written SGD, evaluate and annealing, and generate.py's sampling.
For test_ported_scripts_three.py: returns (initial weights, losses)."""
import math

from port_helpers import _load, _state

# ---- (c) PyTorch's examples/word_language_model: model.py, data.py, main.py, generate.py --
TEXT = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met",
        "the mat was on the log", "a dog sat on a cat"] * 3


def _wlm_classes(torch, nn, F):
    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5,
                     tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ["LSTM", "GRU"]:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                try:
                    nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
                except KeyError as e:
                    raise ValueError("An invalid option for `--model` was supplied") from e
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity,
                                  dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                if nhid != ninp:
                    raise ValueError("When using the tied flag, nhid must be equal to emsize")
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() *
                                 (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        """Container module with an encoder, a Transformer and a decoder."""
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead,
                                                   dim_feedforward=nhid,
                                                   num_encoder_layers=nlayers,
                                                   dropout=dropout)
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)     # replaces nn.Transformer's decoder
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)
    return RNNModel, TransformerModel


def word_language_model(torch, nn, F, data_mod, init=None, model_type="LSTM", dropout=0.2,
                        tied=True, ckpt_dir=None):
    RNNModel, TransformerModel = _wlm_classes(torch, nn, F)

    class Dictionary(object):
        def __init__(self):
            self.word2idx, self.idx2word = {}, []

        def add_word(self, word):
            if word not in self.word2idx:
                self.idx2word.append(word)
                self.word2idx[word] = len(self.idx2word) - 1
            return self.word2idx[word]

        def __len__(self):
            return len(self.idx2word)

    class Corpus(object):
        def __init__(self, lines):             # the example reads train/valid/test.txt
            self.dictionary = Dictionary()
            self.train = self.tokenize(lines[:10])
            self.valid = self.tokenize(lines[10:])

        def tokenize(self, lines):
            for line in lines:
                for word in line.split() + ["<eos>"]:
                    self.dictionary.add_word(word)
            idss = []
            for line in lines:
                ids = [self.dictionary.word2idx[w] for w in line.split() + ["<eos>"]]
                idss.append(torch.tensor(ids).type(torch.int64))
            return torch.cat(idss)
    torch.manual_seed(1111)
    device = torch.device("cpu")
    corpus = Corpus(TEXT)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)
    batch_size, eval_batch_size, bptt, clip, lr = 4, 2, 5, 0.25, 5.0
    train_data = batchify(corpus.train, batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)
    ntokens = len(corpus.dictionary)
    if model_type == "Transformer":
        model = TransformerModel(ntokens, 16, 2, 32, 2, dropout).to(device)
    else:
        model = RNNModel(model_type, ntokens, 16, 16, 2, dropout, tied).to(device)
    _load(torch, model, init)
    state0 = _state(model)
    criterion = nn.NLLLoss()

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        if model_type != "Transformer":
            hidden = model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                if model_type == "Transformer":
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train(losses):
        model.train()
        total_loss = 0.
        if model_type != "Transformer":
            hidden = model.init_hidden(batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            if model_type == "Transformer":
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            losses.append(loss.item())
        cur_loss = total_loss / (batch + 1)
        assert "ppl" in "| lr {:02.2f} | loss {:5.2f} | ppl {:8.2f}".format(
            lr, cur_loss, math.exp(cur_loss))
    losses, best_val_loss = [], None
    for epoch in range(1, 4):
        train(losses)
        val_loss = evaluate(val_data)
        losses.append(val_loss)
        if not best_val_loss or val_loss < best_val_loss:
            if ckpt_dir:
                # the example's torch.save(model, f) pickles the module; minigrad writes
                # .safetensors, tensors alone (a module as its state dict): no pickle, so
                # the state dict is saved, and loaded into the model below
                with open(ckpt_dir + "/model.pt", "wb") as f:
                    torch.save(model.state_dict(), f)
            best_val_loss = val_loss
        else:
            lr /= 4.0                  # anneal when no improvement on the validation set
    if ckpt_dir:
        with open(ckpt_dir + "/model.pt", "rb") as f:
            model.load_state_dict(torch.load(f))       # the example: model = torch.load(f)
        if model_type in ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]:
            model.rnn.flatten_parameters()
    model.eval()                                       # generate.py
    input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)
    hidden = None if model_type == "Transformer" else model.init_hidden(1)
    words = []
    with torch.no_grad():
        for i in range(6):
            if model_type == "Transformer":
                output = model(input, False)
                word_weights = output[-1].squeeze().div(1.0).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                # mg.Tensor is the low-level constructor, which keeps its data's dtype
                # (int64 here; torch.Tensor makes float32): .long() makes both the same
                word_tensor = torch.Tensor([[word_idx]]).long().to(device)
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(1.0).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            words.append(corpus.dictionary.idx2word[word_idx])
    assert len(words) == 6
    return state0, losses
