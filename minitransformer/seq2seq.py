"""RNN sequence-to-sequence models (article 2.2.3.1 前Transformer时代的注意力机制): a GRU
encoder-decoder without attention (Cho et al. / Sutskever et al., 2014: the whole source is
squeezed into ONE fixed context vector), and with Bahdanau attention (2015: a fresh context
vector c_t for every output step).

    encoder:  h_1 .. h_S = BiGRU(Embedding(x))           (padding-aware)
    decoder:  c_t = h_final (fixed)          without attention
              c_t = Σ_j α_tj h_j              with attention, α_t = softmax(vᵀ tanh(W s + U h))
              s_t = GRU([y_(t-1); c_t], s_(t-1)),   logits_t = Linear([s_t; c_t; y_(t-1)])
"""
import minigrad as mg
from minigrad import backend, nn

from minitransformer.bahdanau import AdditiveAttention
from minitransformer.inference import inference, never_pad
from minitransformer.masks import key_padding
from minitransformer.tokens import as_token_tensor


class Seq2SeqEncoder(nn.Module):
    """Article 2.2.3.1, the encoder: embedding + GRU, optionally bidirectional. Padding-aware
    (right-padded batches): at a pad position the state is carried over unchanged, so the
    final state of each direction is the state after that sequence's real tokens only.

    forward(src (B, S) ids) -> (outputs (B, S, output_size) with zeros at padding,
    final (B, output_size) = [last forward state; last backward state], keep (B, S) bool)."""

    def __init__(self, vocab_size, emb_dim, hidden_size, bidirectional=True, pad_id=0,
                 dropout=0.0):
        super().__init__()
        self.pad_id, self.hidden_size, self.bidirectional = pad_id, hidden_size, bidirectional
        self.output_size = hidden_size * (2 if bidirectional else 1)
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.forward_cell = nn.GRUCell(emb_dim, hidden_size)
        self.backward_cell = nn.GRUCell(emb_dim, hidden_size) if bidirectional else None

    def _run(self, cell, xs, keeps, order):
        B = xs[0].shape[0]
        h = mg.zeros(B, self.hidden_size, dtype=xs[0].dtype, device=xs[0].device)
        outs = [None] * len(xs)
        for t in order:
            h = mg.where(keeps[t], cell(xs[t], h), h)     # padding: keep the old state
            outs[t] = h
        return mg.stack(outs, 1), h

    def forward(self, src):
        src = as_token_tensor(src, self.embedding.weight.device, "Seq2SeqEncoder")
        if src.ndim != 2 or src.shape[1] == 0:
            raise ValueError(f"Seq2SeqEncoder: src must be token ids (batch, source length) "
                             f"with length >= 1, got shape {src.shape}")
        B, S = src.shape
        keep = key_padding(src, self.pad_id)
        xs = mg.unbind(self.dropout(self.embedding(src)), 1)   # S of (B, E)
        keeps = [k.reshape(B, 1) for k in mg.unbind(keep, 1)]
        out, final = self._run(self.forward_cell, xs, keeps, range(S))
        if self.bidirectional:
            out_b, final_b = self._run(self.backward_cell, xs, keeps, reversed(range(S)))
            out, final = mg.cat([out, out_b], -1), mg.cat([final, final_b], -1)
        zero_pads = keep.reshape(B, S, 1).to(dtype=out.dtype)
        return out * zero_pads, final, keep


class Seq2SeqDecoder(nn.Module):
    """Article 2.2.3.1, the decoder, with (`attention=True`, Bahdanau) or without
    (`attention=False`) attention. Without it, the context is the encoder's final state,
    the same vector at every step; with it, a new context is computed at every step from
    the decoder's previous state s_(t-1) and all encoder outputs.

    The initial state is s_0 = tanh(bridge(encoder final)). Training uses teacher forcing
    (`forward`: the true previous token is fed at every step); inference feeds back the
    model's own prediction (`Seq2Seq.greedy_decode`)."""

    def __init__(self, vocab_size, emb_dim, hidden_size, enc_size, attention=True,
                 attn_dim=None, pad_id=0, dropout=0.0):
        super().__init__()
        self.enc_size = enc_size
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.bridge = nn.Linear(enc_size, hidden_size)
        self.attention = (AdditiveAttention(hidden_size, enc_size, attn_dim or hidden_size)
                          if attention else None)
        self.cell = nn.GRUCell(emb_dim + enc_size, hidden_size)
        self.out = nn.Linear(hidden_size + enc_size + emb_dim, vocab_size)

    def start(self, enc_outputs, enc_final):
        """(s_0, U h_j precomputed for attention, or None)."""
        if enc_outputs.shape[-1] != self.enc_size:
            raise ValueError(f"Seq2SeqDecoder: encoder outputs must be (batch, source length, "
                             f"{self.enc_size}), got shape {enc_outputs.shape}")
        keys = self.attention.project_keys(enc_outputs) if self.attention else None
        return self.bridge(enc_final).tanh(), keys

    def step(self, y_emb, s, enc_outputs, enc_final, keep, projected_keys=None):
        """One output step: (logits (B, vocab), new state s_t, attention weights (B, S) or
        None) from the embedded previous token y_emb (B, emb_dim) and state s_(t-1)."""
        if self.attention is None:
            context, weights = enc_final, None                     # fixed for every step
        else:
            context, weights = self.attention(s, enc_outputs, mask=keep,
                                              projected_keys=projected_keys)
        s = self.cell(mg.cat([y_emb, context], -1), s)
        logits = self.out(self.dropout(mg.cat([s, context, y_emb], -1)))
        return logits, s, weights

    def forward(self, tgt_in, enc_outputs, enc_final, keep):
        """Teacher forcing: tgt_in (B, T) starts with BOS. -> (logits (B, T, vocab),
        attention weights (B, T, S) or None)."""
        tgt_in = as_token_tensor(tgt_in, enc_outputs.device, "Seq2SeqDecoder")
        B = enc_outputs.shape[0]
        if tgt_in.ndim != 2 or tgt_in.shape[0] != B or tgt_in.shape[1] == 0:
            raise ValueError(f"Seq2SeqDecoder: tgt_in must be token ids (batch={B} as the "
                             f"source, target length >= 1), got shape {tgt_in.shape}")
        s, keys = self.start(enc_outputs, enc_final)
        embs = mg.unbind(self.dropout(self.embedding(tgt_in)), 1)
        logits, weights = [], []
        for y_emb in embs:
            out, s, w = self.step(y_emb, s, enc_outputs, enc_final, keep, keys)
            logits.append(out)
            weights.append(w)
        return (mg.stack(logits, 1),
                None if self.attention is None else mg.stack(weights, 1))


class Seq2Seq(nn.Module):
    """Article 2.2.3.1: the RNN encoder-decoder, `attention=False` (one fixed context
    vector) or `attention=True` (Bahdanau). forward(src, tgt_in) -> logits (B, T, vocab)
    (with need_weights, also the attention weights (B, T, S)); greedy_decode generates."""

    def __init__(self, src_vocab_size, tgt_vocab_size, emb_dim=32, hidden_size=64,
                 attention=True, bidirectional=True, attn_dim=None, pad_id=0, dropout=0.0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Seq2SeqEncoder(src_vocab_size, emb_dim, hidden_size, bidirectional,
                                      pad_id, dropout)
        self.decoder = Seq2SeqDecoder(tgt_vocab_size, emb_dim, hidden_size,
                                      self.encoder.output_size, attention, attn_dim, pad_id,
                                      dropout)

    def forward(self, src, tgt_in, need_weights=False):
        enc_outputs, enc_final, keep = self.encoder(src)
        logits, weights = self.decoder(tgt_in, enc_outputs, enc_final, keep)
        return (logits, weights) if need_weights else logits

    def greedy_decode(self, src, bos_id, eos_id, max_len=32, return_weights=False):
        """Feed back the most likely token each step. Returns token-id lists (no BOS, cut
        before EOS), and with return_weights the attention weights (B, steps, S) (None
        without attention). Runs as inference: no gradients, dropout off (the model's modes
        are restored after)."""
        if not backend.is_integer(max_len) or max_len < 1:
            raise ValueError(f"greedy_decode: max_len must be an integer >= 1, got {max_len!r}")
        vocab = self.decoder.out.out_features
        for name, tok in (("bos_id", bos_id), ("eos_id", eos_id)):
            # an eos_id the model cannot emit would never stop a row: say so instead
            if not backend.is_integer(tok) or not 0 <= tok < vocab:
                raise ValueError(f"greedy_decode: {name} must be a target token id in "
                                 f"0..{vocab - 1}, got {tok!r}")
        with inference(self):
            enc_outputs, enc_final, keep = self.encoder(src)
            B = enc_outputs.shape[0]
            s, keys = self.decoder.start(enc_outputs, enc_final)
            y = mg.full((B,), bos_id, dtype=mg.int64, device=enc_outputs.device)
            seqs, done, weights = [[] for _ in range(B)], [False] * B, []
            for _ in range(max_len):
                logits, s, w = self.decoder.step(self.decoder.embedding(y), s, enc_outputs,
                                                 enc_final, keep, keys)
                y = never_pad(logits, self.pad_id, eos_id).argmax(-1)
                weights.append(w)
                for b, tok in enumerate(y.tolist()):
                    done[b] = done[b] or tok == eos_id
                    if not done[b]:
                        seqs[b].append(tok)
                if all(done):
                    break
        if not return_weights:
            return seqs
        return seqs, (None if weights[0] is None else mg.stack(weights, 1))
