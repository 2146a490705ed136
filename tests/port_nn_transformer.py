"""PyTorch's "Language Translation with nn.Transformer and torchtext", ported without
torchtext: a made-up German-to-English pair of languages, tokenised by spaces, with
vocabularies holding the tutorial's four special symbols first. Seq2SeqTransformer (token
embeddings scaled by sqrt(emb_size), the sinusoidal PositionalEncoding as a registered
buffer, nn.Transformer in its default sequence-first layout, the generator), the
square subsequent mask and create_mask's padding masks, collate_fn with pad_sequence,
xavier_uniform_, CrossEntropyLoss ignoring PAD_IDX, Adam with the tutorial's betas and eps,
train_epoch/evaluate, greedy_decode through model.encode/decode and translate. For
test_ported_scripts_five.py: returns (initial weights, losses)."""
import math

from port_helpers import _load, _state

_DE = {"ein": "a", "eine": "a", "einen": "a", "der": "the", "die": "the", "den": "the",
       "hund": "dog", "katze": "cat", "mann": "man", "frau": "woman", "ball": "ball",
       "sieht": "sees", "hat": "has", "rot": "red"}


def _pairs():
    """(German, English) sentences, each English word the German word's image: a task the
    model learns in a few steps (Multi30k is a download). Lines end in a newline as the
    dataset's."""
    subjects = ["ein hund", "der mann", "eine frau", "die katze"]
    objects = ["einen ball", "den hund", "eine katze", "den mann"]
    pairs = []
    for i, s in enumerate(subjects):
        for j, o in enumerate(objects):
            de = f"{s} {'sieht' if (i + j) % 2 else 'hat'} {o}" + (" rot" if j == i else "")
            pairs.append((de + "\n", " ".join(_DE[w] for w in de.split()) + "\n"))
    return pairs


def nn_transformer(torch, nn, F, data_mod, init=None, dropout=0.1):
    Tensor = torch.Tensor
    Transformer = nn.Transformer
    DataLoader = data_mod.DataLoader
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    SRC_LANGUAGE, TGT_LANGUAGE = "de", "en"

    class Multi30k(data_mod.IterableDataset):
        """The dataset's (German, English) lines, one split, as torchtext's iterable."""

        def __init__(self, split, language_pair):
            assert language_pair == (SRC_LANGUAGE, TGT_LANGUAGE)
            self.pairs = [p for i, p in enumerate(_pairs()) if (i % 4 == 1) == (split == "valid")]

        def __iter__(self):
            return iter(self.pairs)
    # special symbols and their indices, first in each vocabulary
    UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3
    special_symbols = ["<unk>", "<pad>", "<bos>", "<eos>"]
    token_transform = {SRC_LANGUAGE: str.split, TGT_LANGUAGE: str.split}
    vocab_transform = {}
    for ln, index in ((SRC_LANGUAGE, 0), (TGT_LANGUAGE, 1)):
        words = sorted({w for pair in _pairs() for w in token_transform[ln](pair[index])})
        itos = special_symbols + words
        vocab_transform[ln] = {"stoi": {w: i for i, w in enumerate(itos)}, "itos": itos}
    DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    DEVICE = torch.device("cpu")        # (the tests compare on the CPU)

    class PositionalEncoding(nn.Module):
        """Adds the positional encoding to the token embedding."""

        def __init__(self, emb_size: int, dropout: float, maxlen: int = 5000):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("pos_embedding", pos_embedding)

        def forward(self, token_embedding: Tensor):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class TokenEmbedding(nn.Module):
        """Token indices to embeddings, scaled by sqrt(emb_size)."""

        def __init__(self, vocab_size: int, emb_size):
            super(TokenEmbedding, self).__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size)
            self.emb_size = emb_size

        def forward(self, tokens: Tensor):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self, num_encoder_layers: int, num_decoder_layers: int, emb_size: int,
                     nhead: int, src_vocab_size: int, tgt_vocab_size: int,
                     dim_feedforward: int = 512, dropout: float = 0.1):
            super(Seq2SeqTransformer, self).__init__()
            self.transformer = Transformer(d_model=emb_size,
                                           nhead=nhead,
                                           num_encoder_layers=num_encoder_layers,
                                           num_decoder_layers=num_decoder_layers,
                                           dim_feedforward=dim_feedforward,
                                           dropout=dropout)
            self.generator = nn.Linear(emb_size, tgt_vocab_size)
            self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
            self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
            self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

        def forward(self, src: Tensor, trg: Tensor, src_mask: Tensor, tgt_mask: Tensor,
                    src_padding_mask: Tensor, tgt_padding_mask: Tensor,
                    memory_key_padding_mask: Tensor):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask,
                                    memory_key_padding_mask)
            return self.generator(outs)

        def encode(self, src: Tensor, src_mask: Tensor):
            return self.transformer.encoder(self.positional_encoding(
                self.src_tok_emb(src)), src_mask)

        def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor):
            return self.transformer.decoder(self.positional_encoding(
                self.tgt_tok_emb(tgt)), memory, tgt_mask)

    def generate_square_subsequent_mask(sz):
        mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(
            mask == 1, float(0.0))
        return mask

    def create_mask(src, tgt):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        src_mask = torch.zeros((src_seq_len, src_seq_len), device=DEVICE).type(torch.bool)
        src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask
    torch.manual_seed(0)
    SRC_VOCAB_SIZE = len(vocab_transform[SRC_LANGUAGE]["itos"])
    TGT_VOCAB_SIZE = len(vocab_transform[TGT_LANGUAGE]["itos"])
    EMB_SIZE = 32                       # (the tutorial's 512, 8 heads, FFN 512, 3 + 3 layers)
    NHEAD = 4
    FFN_HID_DIM = 64
    BATCH_SIZE = 4
    NUM_ENCODER_LAYERS = 2
    NUM_DECODER_LAYERS = 2
    transformer = Seq2SeqTransformer(NUM_ENCODER_LAYERS, NUM_DECODER_LAYERS, EMB_SIZE,
                                     NHEAD, SRC_VOCAB_SIZE, TGT_VOCAB_SIZE, FFN_HID_DIM,
                                     dropout=dropout)
    for p in transformer.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    transformer = transformer.to(DEVICE)
    _load(torch, transformer, init)
    state0 = _state(transformer)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.001, betas=(0.9, 0.98),
                                 eps=1e-9)      # (the tutorial's lr=0.0001: few steps here)

    def sequential_transforms(*transforms):
        """Applies the transforms one after another."""
        def func(txt_input):
            for transform in transforms:
                txt_input = transform(txt_input)
            return txt_input
        return func

    def tensor_transform(token_ids):
        """BOS, the ids, EOS."""
        return torch.cat((torch.tensor([BOS_IDX]),
                          torch.tensor(token_ids),
                          torch.tensor([EOS_IDX])))

    def vocab(ln):
        stoi = vocab_transform[ln]["stoi"]
        return lambda tokens: [stoi.get(t, UNK_IDX) for t in tokens]
    text_transform = {}
    for ln in [SRC_LANGUAGE, TGT_LANGUAGE]:
        text_transform[ln] = sequential_transforms(token_transform[ln],   # tokenisation
                                                   vocab(ln),             # numericalisation
                                                   tensor_transform)      # BOS, EOS, tensor

    def collate_fn(batch):
        """Raw strings to the batch's tensors, padded."""
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(text_transform[SRC_LANGUAGE](src_sample.rstrip("\n")))
            tgt_batch.append(text_transform[TGT_LANGUAGE](tgt_sample.rstrip("\n")))
        src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
        tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
        return src_batch, tgt_batch

    def train_epoch(model, optimizer):
        model.train()
        losses = 0
        train_iter = Multi30k(split="train", language_pair=(SRC_LANGUAGE, TGT_LANGUAGE))
        train_dataloader = DataLoader(train_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)
        for src, tgt in train_dataloader:
            src = src.to(DEVICE)
            tgt = tgt.to(DEVICE)
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                           tgt_padding_mask, src_padding_mask)
            optimizer.zero_grad()
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optimizer.step()
            losses += loss.item()
        return losses / len(list(train_dataloader))

    def evaluate(model):
        model.eval()
        losses = 0
        val_iter = Multi30k(split="valid", language_pair=(SRC_LANGUAGE, TGT_LANGUAGE))
        val_dataloader = DataLoader(val_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)
        for src, tgt in val_dataloader:
            src = src.to(DEVICE)
            tgt = tgt.to(DEVICE)
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                           tgt_padding_mask, src_padding_mask)
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            losses += loss.item()
        return losses / len(list(val_dataloader))
    NUM_EPOCHS = 10                     # (the tutorial's 18)
    out = []
    for epoch in range(1, NUM_EPOCHS + 1):
        train_loss = train_epoch(transformer, optimizer)
        val_loss = evaluate(transformer)
        out += [train_loss, val_loss]

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        """The output sequence, the most likely symbol at each step."""
        src = src.to(DEVICE)
        src_mask = src_mask.to(DEVICE)
        memory = model.encode(src, src_mask)
        ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
        for i in range(max_len - 1):
            memory = memory.to(DEVICE)
            tgt_mask = (generate_square_subsequent_mask(ys.size(0))
                        .type(torch.bool)).to(DEVICE)
            out = model.decode(ys, memory, tgt_mask)
            out = out.transpose(0, 1)
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.item()
            ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == EOS_IDX:
                break
        return ys

    def translate(model: torch.nn.Module, src_sentence: str):
        model.eval()
        src = text_transform[SRC_LANGUAGE](src_sentence).view(-1, 1)
        num_tokens = src.shape[0]
        src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
        tgt_tokens = greedy_decode(
            model, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX).flatten()
        itos = vocab_transform[TGT_LANGUAGE]["itos"]       # lookup_tokens, in short
        return " ".join([itos[i] for i in list(tgt_tokens.cpu().numpy())]).replace(
            "<bos>", "").replace("<eos>", "")
    sentence = translate(transformer, "ein hund sieht den mann")
    print(sentence)
    words = sentence.split()
    assert isinstance(sentence, str) and len(words) <= 10
    itos = vocab_transform[TGT_LANGUAGE]["itos"]
    return state0, out + [len(words)] + [itos.index(w) for w in words]
