"""Ported scripts, continued (see test_ported_scripts.py): an LSTM/GRU tagger on packed
sequences, a seq2seq nn.Transformer with the translation tutorial's masks and greedy
decoding, and a DCGAN step with the tutorial's weights_init."""
import math

import numpy as np
import pytest

import minigrad
from port_helpers import _compare, _host, _libs, _load, _state


# ---- (d) an LSTM/GRU sequence tagger on packed sequences --------------------------------
def tagger(torch, nn, F, data_mod, init=None, cell="LSTM"):
    class Tagger(nn.Module):
        def __init__(self, vocab, tags, emb=8, hidden=12, pad=0):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb, padding_idx=pad)
            self.rnn = getattr(nn, cell)(emb, hidden, num_layers=2, batch_first=True,
                                         bidirectional=True)
            self.hidden2tag = nn.Linear(2 * hidden, tags)

        def forward(self, padded, lengths):
            packed = nn.utils.rnn.pack_padded_sequence(self.embedding(padded), lengths.cpu(),
                                                       batch_first=True, enforce_sorted=False)
            packed_out, _ = self.rnn(packed)
            out, out_lens = nn.utils.rnn.pad_packed_sequence(packed_out, batch_first=True,
                                                             total_length=padded.size(1))
            return F.log_softmax(self.hidden2tag(out), dim=-1), out_lens
    torch.manual_seed(0)
    model = Tagger(20, 5)
    _load(torch, model, init)
    state0 = _state(model)
    rng, lens = np.random.default_rng(0), [5, 3, 7, 2]
    sents = [torch.tensor(rng.integers(1, 20, n).tolist(), dtype=torch.long) for n in lens]
    tags = [torch.tensor(rng.integers(0, 5, n).tolist(), dtype=torch.long) for n in lens]

    class Sentences(data_mod.Dataset):
        def __len__(self):
            return len(sents)

        def __getitem__(self, i):
            return sents[i], tags[i]

    def collate(batch):
        xs, ys = zip(*batch)
        return (nn.utils.rnn.pad_sequence(list(xs), batch_first=True, padding_value=0),
                nn.utils.rnn.pad_sequence(list(ys), batch_first=True, padding_value=-100),
                torch.tensor([len(x) for x in xs]))
    loader = data_mod.DataLoader(Sentences(), batch_size=4, collate_fn=collate)
    loss_function = nn.NLLLoss(ignore_index=-100)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for epoch in range(3):
        for x, y, lengths in loader:
            model.zero_grad()
            tag_scores, out_lens = model(x, lengths)
            assert out_lens.tolist() == lens
            loss = loss_function(tag_scores.view(-1, 5), y.view(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            losses.append(loss.item())
    with torch.no_grad():
        pred = model(x, lengths)[0].argmax(dim=-1)
        mask = y != -100
        losses.append((pred[mask] == y[mask]).float().mean().item())
    assert model.embedding.weight[0].abs().sum().item() == 0.0   # padding_idx never learns
    return state0, losses


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_tagger_trains(cell):
    losses = tagger(*_libs(minigrad), cell=cell)[1]
    assert np.isfinite(losses).all() and losses[2] < losses[0]


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_tagger_matches_torch(torch, cell):
    _compare(torch, tagger, cell=cell)


# ---- (e) seq2seq nn.Transformer, and a TransformerEncoder with a padding mask -----------
def seq2seq(torch, nn, F, data_mod, init=None):
    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0)])

    class Seq2Seq(nn.Module):
        def __init__(self, ntoken, d_model=16, nhead=2, d_hid=32, nlayers=2, dropout=0.0):
            super().__init__()
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            self.src_emb = nn.Embedding(ntoken, d_model)
            self.tgt_emb = nn.Embedding(ntoken, d_model)
            self.transformer = nn.Transformer(d_model=d_model, nhead=nhead,
                                              num_encoder_layers=nlayers,
                                              num_decoder_layers=nlayers,
                                              dim_feedforward=d_hid, dropout=dropout)
            self.generator = nn.Linear(d_model, ntoken)
            self.d_model = d_model
            self.src_emb.weight.data.uniform_(-0.1, 0.1)
            self.generator.bias.data.zero_()
            self.generator.weight.data.uniform_(-0.1, 0.1)

        def embed(self, emb, tokens):
            return self.pos_encoder(emb(tokens) * math.sqrt(self.d_model))

        def forward(self, src, tgt, tgt_mask, src_padding_mask, tgt_padding_mask):
            outs = self.transformer(self.embed(self.src_emb, src), self.embed(self.tgt_emb, tgt),
                                    src_mask=None, tgt_mask=tgt_mask, memory_mask=None,
                                    src_key_padding_mask=src_padding_mask,
                                    tgt_key_padding_mask=tgt_padding_mask,
                                    memory_key_padding_mask=src_padding_mask)
            return self.generator(outs)
    PAD, BOS = 0, 1

    def create_mask(src, tgt):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[0])
        return tgt_mask, (src == PAD).transpose(0, 1), (tgt == PAD).transpose(0, 1)
    torch.manual_seed(0)
    model = Seq2Seq(12)
    _load(torch, model, init)
    state0 = _state(model)
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(2, 12, (7, 4)), rng.integers(2, 12, (6, 4))
    src[5:, 1], src[6:, 3], tgt[0], tgt[4:, 2] = PAD, PAD, BOS, PAD
    src, tgt = torch.tensor(src.tolist()), torch.tensor(tgt.tolist())
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.95)
    losses = []
    model.train()
    for _ in range(3):
        tgt_input = tgt[:-1, :]
        logits = model(src, tgt_input, *create_mask(src, tgt_input))
        optimizer.zero_grad()
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[1:, :].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()                                      # the tutorial's greedy_decode
    with torch.no_grad():
        s = src[:, :1]
        memory = model.transformer.encoder(model.embed(model.src_emb, s))
        ys = torch.ones(1, 1).fill_(BOS).type(torch.long)
        for i in range(5):
            tgt_mask = nn.Transformer.generate_square_subsequent_mask(ys.size(0)).type(torch.bool)
            out = model.transformer.decoder(model.embed(model.tgt_emb, ys), memory, tgt_mask)
            _, next_word = torch.max(model.generator(out.transpose(0, 1)[:, -1]), dim=1)
            ys = torch.cat([ys, torch.ones(1, 1).type_as(s.data).fill_(next_word.item())],
                           dim=0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    h = encoder(torch.randn(3, 5, 16), src_key_padding_mask=pad)
    assert tuple(h.shape) == (3, 5, 16) and bool(torch.isfinite(h).all())
    return state0, losses + ys.view(-1).tolist()


def test_seq2seq_transformer_trains_and_decodes():
    losses = seq2seq(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and losses[2] < losses[0] and losses[3] == 1


def test_seq2seq_transformer_matches_torch(torch):
    _compare(torch, seq2seq)


# ---- (f) DCGAN --------------------------------------------------------------------------
def dcgan(torch, nn, F, data_mod, init=None):
    nz, ngf, ndf, nc = 8, 8, 8, 1

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    torch.manual_seed(999)
    device = torch.device("cpu")      # the tutorial's "cuda:0" where available: CPU here
    netG.to(device).apply(weights_init)
    netD.to(device).apply(weights_init)
    assert abs(netD[0].weight.std().item() - 0.02) < 0.01      # weights_init took
    _load(torch, netG, init, "G.")
    _load(torch, netD, init, "D.")
    state0 = {**_state(netG, "G."), **_state(netD, "D.")}
    criterion = nn.BCELoss()
    rng = np.random.default_rng(0)
    fixed_noise = torch.from_numpy(_host(rng, 4, nz, 1, 1))
    real_label, fake_label = 1., 0.
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    images = torch.from_numpy(rng.uniform(-1, 1, (8, nc, 16, 16)).astype(np.float32))
    dataloader = data_mod.DataLoader(data_mod.TensorDataset(images), batch_size=4)
    losses = []
    for epoch in range(2):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            real_cpu = data[0].to(device)
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
            errD_real = criterion(netD(real_cpu).view(-1), label)
            errD_real.backward()
            noise = torch.from_numpy(_host(np.random.default_rng(epoch * 7 + i), b_size, nz, 1, 1))
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optimizerD.step()
            netG.zero_grad()
            label.fill_(real_label)
            errG = criterion(netD(fake).view(-1), label)
            errG.backward()
            optimizerG.step()
            losses += [errD.item(), errG.item()]
    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    assert tuple(fake.shape) == (4, nc, 16, 16)
    return state0, losses


def test_dcgan_steps():
    losses = dcgan(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and len(losses) == 8


def test_dcgan_matches_torch(torch):
    _compare(torch, dcgan)
