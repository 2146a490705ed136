"""The Annotated Transformer's pieces, ported: clones, the hand-written LayerNorm,
SublayerConnection, attention and MultiHeadedAttention, the embeddings and positional
encoding, LabelSmoothing, the rate() schedule, Batch, run_epoch and greedy_decode, trained
a few steps on the copy task. For test_ported_scripts_three.py: returns (initial weights,
losses and decoded tokens)."""
import copy
import math

from port_helpers import _drawn, _load, _state, _weights

# ---- (b) the Annotated Transformer: its pieces, trained on the copy task ----------------
def _annotated_classes(torch, nn, F):
    class EncoderDecoder(nn.Module):
        def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
            super(EncoderDecoder, self).__init__()
            self.encoder, self.decoder = encoder, decoder
            self.src_embed, self.tgt_embed, self.generator = src_embed, tgt_embed, generator

        def forward(self, src, tgt, src_mask, tgt_mask):
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)

        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super(Generator, self).__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return F.log_softmax(self.proj(x), dim=-1)

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super(LayerNorm, self).__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class Encoder(nn.Module):
        def __init__(self, layer, N):
            super(Encoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    class SublayerConnection(nn.Module):
        def __init__(self, size, dropout):
            super(SublayerConnection, self).__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super(EncoderLayer, self).__init__()
            self.self_attn, self.feed_forward = self_attn, feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class Decoder(nn.Module):
        def __init__(self, layer, N):
            super(Decoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, memory, src_mask, tgt_mask):
            for layer in self.layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.norm(x)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super(DecoderLayer, self).__init__()
            self.size, self.self_attn, self.src_attn = size, self_attn, src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    def attention(query, key, value, mask=None, dropout=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super(MultiHeadedAttention, self).__init__()
            assert d_model % h == 0
            self.d_k, self.h = d_model // h, h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.attn = None
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)               # the same mask for every head
            nbatches = query.size(0)
            query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                                 for lin, x in zip(self.linears, (query, key, value))]
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
            del query
            del key
            del value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super(PositionwiseFeedForward, self).__init__()
            self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super(Embeddings, self).__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model

        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model, dropout)   # (the original: its default 0.1;
        #                                                   given, so a comparison turns it off)
        ff = PositionwiseFeedForward(d_model, d_ff, dropout)
        position = PositionalEncoding(d_model, dropout)
        model = EncoderDecoder(
            Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
            Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
            nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
            nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
            Generator(d_model, tgt_vocab))
        for p in model.parameters():                   # Glorot / fan_avg, as the paper's code
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        return model
    return make_model


def annotated(torch, nn, F, data_mod, init=None, dropout=0.1):
    make_model = _annotated_classes(torch, nn, F)
    LambdaLR = torch.optim.lr_scheduler.LambdaLR

    def subsequent_mask(size):
        attn_shape = (1, size, size)
        subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return subsequent_mask == 0
    assert subsequent_mask(3)[0].tolist() == [[True, False, False], [True, True, False],
                                              [True, True, True]]

    class Batch:
        """Holds a batch of data with its masks during training."""
        def __init__(self, src, tgt=None, pad=2):
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt, self.tgt_y = tgt[:, :-1], tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()

        @staticmethod
        def make_std_mask(tgt, pad):
            tgt_mask = (tgt != pad).unsqueeze(-2)
            return tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)

    class TrainState:
        step, accum_step, samples, tokens = 0, 0, 0, 0

    def run_epoch(data_iter, model, loss_compute, optimizer, scheduler, mode="train",
                  accum_iter=1, train_state=TrainState(), log=None):
        total_tokens, total_loss, tokens, n_accum = 0, 0, 0, 0
        for i, batch in enumerate(data_iter):
            out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
            loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
            if mode == "train" or mode == "train+log":
                loss_node.backward()
                train_state.step += 1
                train_state.samples += batch.src.shape[0]
                train_state.tokens += batch.ntokens
                if i % accum_iter == 0:
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                    n_accum += 1
                    train_state.accum_step += 1
                scheduler.step()
            total_loss += loss
            total_tokens += batch.ntokens
            tokens += batch.ntokens
            if mode == "train":                # the tutorial prints every 40 steps: kept
                lr = optimizer.param_groups[0]["lr"]
                log.append((("Epoch Step: %6d | Accumulation Step: %3d | Loss: %6.2f | "
                             "Tokens / Sec: %7.1f | Learning Rate: %6.1e")
                            % (i, n_accum, loss / batch.ntokens, tokens / 1.0, lr),
                            loss_node.item()))
                tokens = 0
            del loss
            del loss_node
        return total_loss / total_tokens, train_state

    def rate(step, model_size, factor, warmup):
        if step == 0:                                  # LambdaLR calls it with 0 first
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super(LabelSmoothing, self).__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx, self.confidence = padding_idx, 1.0 - smoothing
            self.smoothing, self.size, self.true_dist = smoothing, size, None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    def data_gen(V, batch_size, nbatches, epoch):
        for i in range(nbatches):
            data = _drawn(torch, init, state0, f"data{epoch}.{i}",
                          lambda: torch.randint(1, V, size=(batch_size, 10)))
            data[:, 0] = 1
            src = data.requires_grad_(False).clone().detach()
            tgt = data.requires_grad_(False).clone().detach()
            yield Batch(src, tgt, 0)

    class SimpleLossCompute:
        def __init__(self, generator, criterion):
            self.generator, self.criterion = generator, criterion

        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = self.criterion(x.contiguous().view(-1, x.size(-1)),
                                   y.contiguous().view(-1)) / norm
            return sloss.data * norm, sloss

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for i in range(max_len - 1):
            out = model.decode(memory, src_mask, ys,
                               subsequent_mask(ys.size(1)).type_as(src.data))
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        return ys

    class DummyOptimizer(torch.optim.Optimizer):
        def __init__(self):
            self.param_groups = [{"lr": 0}]

        def step(self):
            None

        def zero_grad(self, set_to_none=False):
            None

    class DummyScheduler:
        def step(self):
            None
    opts = [[512, 1, 4000], [512, 1, 8000], [256, 1, 4000]]   # the schedule example
    dummy_model = torch.nn.Linear(1, 1)
    learning_rates = []
    for idx, example in enumerate(opts):
        optimizer = torch.optim.Adam(dummy_model.parameters(), lr=1, betas=(0.9, 0.98),
                                     eps=1e-9)
        lr_scheduler = LambdaLR(optimizer=optimizer,
                                lr_lambda=lambda step: rate(step, *example))
        tmp = []
        for step in range(50):                         # (20000 there)
            tmp.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            lr_scheduler.step()
        learning_rates.append(tmp)
    learning_rates = torch.tensor(learning_rates)
    schedule = learning_rates[:, ::7].reshape(-1).tolist()
    crit = LabelSmoothing(5, 0, 0.4)                 # the label smoothing example
    predict = torch.FloatTensor([[1e-9, 0.2, 0.7, 0.1, 1e-9]] * 5)  # (0s there: -inf logs)
    crit(x=predict.log(), target=torch.LongTensor([2, 1, 0, 3, 3]))  # row 2 is padding
    smoothed = crit.true_dist.sum(1).tolist() + crit.true_dist[:, 2].tolist()
    V = 11
    criterion = LabelSmoothing(size=V, padding_idx=0, smoothing=0.1)
    torch.manual_seed(0)
    model = make_model(V, V, N=2, d_model=32, d_ff=64, h=4, dropout=dropout)
    _load(torch, model, _weights(init))
    state0 = _state(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    lr_scheduler = LambdaLR(optimizer=optimizer, lr_lambda=lambda step: rate(
        step, model_size=model.src_embed[0].d_model, factor=1.0, warmup=4))
    losses, log = [], []
    for epoch in range(2):
        model.train()
        run_epoch(data_gen(V, 8, 4, epoch), model, SimpleLossCompute(model.generator,
                  criterion), optimizer, lr_scheduler, mode="train", log=log)
        losses += [value for line, value in log[-4:]]
        model.eval()
        loss, _ = run_epoch(data_gen(V, 8, 1, f"eval{epoch}"), model,
                            SimpleLossCompute(model.generator, criterion), DummyOptimizer(),
                            DummyScheduler(), mode="eval")
        losses.append(loss.item())
    assert criterion.true_dist.shape == (8 * 9, V) and len(log) == 8
    model.eval()
    src = torch.LongTensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]])
    max_len = src.shape[1]
    src_mask = torch.ones(1, 1, max_len)
    out = greedy_decode(model, src, src_mask, max_len=max_len, start_symbol=0)
    assert out.dtype == torch.long and tuple(out.shape) == (1, 10)
    return state0, losses + smoothed + schedule + out.view(-1).tolist()
