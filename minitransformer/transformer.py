"""The full encoder-decoder Transformer (article 2.2.4 Transformer架构组成, "Attention Is
All You Need"), with greedy and beam-search decoding.

    src ─ Embedding·√d_model + PE ─ Encoder ──────────────┐ memory
    tgt ─ Embedding·√d_model + PE ─ Decoder (masked self, cross, FFN) ─ Linear ─ logits
"""
import math

import minigrad as mg
from minigrad import backend, nn

from minitransformer.decoder import Decoder
from minitransformer.encoder import Encoder
from minitransformer.inference import inference, never_pad
from minitransformer.masks import causal_mask, combine_masks, padding_mask
from minitransformer.positional import SinusoidalPositionalEncoding
from minitransformer.tokens import as_token_tensor


class TokenEmbedding(nn.Module):
    """Article 2.2.4.1, "pre-processing": token ids -> vectors, multiplied by √d_model as
    the paper does (§3.4; it gives no reason, the usual one is that the embeddings are then
    not drowned by the positional encoding, whose entries are of size 1). A token
    id outside the vocabulary is the embedding op's IndexError (naming the id and the valid
    range), prefixed with this embedding's name."""

    def __init__(self, vocab_size, d_model, padding_idx=None, name="token"):
        super().__init__()
        self.vocab_size, self.d_model, self.name = vocab_size, d_model, name
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        tokens = as_token_tensor(tokens, self.embedding.weight.device, f"{self.name} embedding")
        try:
            return self.embedding(tokens) * self.scale
        except IndexError as e:   # the op checks the range (and says which id is out of it)
            # "source token embedding: ...", and plain "token embedding: ..." unnamed
            name = "token" if self.name == "token" else f"{self.name} token"
            raise IndexError(f"{name} {e}") from None


class Transformer(nn.Module):
    """Article 2.2.4 Transformer架构组成: the encoder-decoder model of the paper. Defaults
    are the paper's base model: d_model 512, 8 heads, 6 + 6 layers, d_ff 2048, dropout
    0.1, post-norm. `forward(src, tgt_in)` -> logits (B, T, tgt_vocab_size) with teacher
    forcing; `greedy_decode` and `beam_search` generate. Weight matrices start Xavier-
    uniform, as in the paper's reference code and torch.nn.Transformer. `pad_id` (a token
    id of both vocabularies, or None for none) is masked out of attention and its
    embeddings start at zero."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, n_heads=8,
                 num_encoder_layers=6, num_decoder_layers=6, d_ff=2048, dropout=0.1,
                 activation="relu", norm_first=False, max_len=1024, pad_id=0):
        super().__init__()
        for name, size in (("src_vocab_size", src_vocab_size), ("tgt_vocab_size",
                                                                tgt_vocab_size)):
            if not backend.is_integer(size) or size < 1:
                raise ValueError(f"Transformer: {name} must be a positive integer, got "
                                 f"{size!r}")
        smallest = min(src_vocab_size, tgt_vocab_size)
        if pad_id is not None and not (backend.is_integer(pad_id) and 0 <= pad_id < smallest):
            raise ValueError(f"Transformer: pad_id must be a token id in both vocabularies, "
                             f"0..{smallest - 1}, or None for no padding; got {pad_id!r}")
        self.d_model, self.pad_id, self.max_len = d_model, pad_id, max_len
        self.src_embed = TokenEmbedding(src_vocab_size, d_model, pad_id, name="source")
        self.tgt_embed = TokenEmbedding(tgt_vocab_size, d_model, pad_id, name="target")
        self.positional = SinusoidalPositionalEncoding(d_model, max_len, dropout)
        self.encoder = Encoder(d_model, n_heads, d_ff, num_encoder_layers, dropout,
                               activation, norm_first)
        self.decoder = Decoder(d_model, n_heads, d_ff, num_decoder_layers, dropout,
                               activation, norm_first)
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        for p in self.parameters():
            if p.ndim > 1:
                nn.init.xavier_uniform_(p)
        if pad_id is not None:
            with mg.no_grad():
                for emb in (self.src_embed.embedding, self.tgt_embed.embedding):
                    emb.weight[pad_id] = 0.0

    @property
    def device(self):
        return self.generator.weight.device

    # ---- the three pieces, usable on their own --------------------------------------------
    def src_mask(self, src):
        """(B, 1, 1, S): every query may attend to the real (non-pad) source tokens; None
        (every token) without a pad_id."""
        return self._padding(src)

    def tgt_mask(self, tgt):
        """(B, 1, T, T): causal AND not padding (2.2.3.4); (T, T) without a pad_id."""
        T = tgt.shape[1]
        return combine_masks(causal_mask(T, device=tgt.device), self._padding(tgt))

    def _padding(self, tokens):
        return None if self.pad_id is None else padding_mask(tokens, self.pad_id)

    def encode(self, src, src_mask=None):
        """src (B, S) ids -> memory (B, S, d_model)."""
        src = as_token_tensor(src, self.device, "Transformer")
        src_mask = self.src_mask(src) if src_mask is None else src_mask
        return self.encoder(self.positional(self.src_embed(src)), src_mask)

    def decode(self, tgt, memory, memory_mask=None, tgt_mask=None, need_weights=False):
        """tgt (B, T) ids (starting with BOS) -> logits (B, T, vocab) for the next token at
        every position; with need_weights also every decoder layer's cross-attention
        weights [(B, heads, T, S), ...]. memory_mask None lets every query see every source
        position, padding too (decode cannot tell from memory where it was): pass
        `self.src_mask(src)`, as forward and the decoding loops do, for a padded batch."""
        tgt = as_token_tensor(tgt, memory.device, "Transformer")
        tgt_mask = self.tgt_mask(tgt) if tgt_mask is None else tgt_mask
        x = self.positional(self.tgt_embed(tgt))
        out = self.decoder(x, memory, tgt_mask, memory_mask, need_weights=need_weights)
        if need_weights:
            return self.generator(out[0]), out[1]
        return self.generator(out)

    def forward(self, src, tgt_in, need_weights=False):
        """Teacher forcing: logits (B, T, vocab) predicting tgt_in shifted left by one."""
        src = as_token_tensor(src, self.device, "Transformer")
        tgt_in = as_token_tensor(tgt_in, self.device, "Transformer")
        if src.ndim != 2 or tgt_in.ndim != 2 or src.shape[0] != tgt_in.shape[0]:
            raise ValueError(f"Transformer: src and tgt_in must be token ids (batch, length) "
                             f"with the same batch, got shapes {src.shape} and {tgt_in.shape}")
        src_mask = self.src_mask(src)
        memory = self.encode(src, src_mask)
        return self.decode(tgt_in, memory, src_mask, need_weights=need_weights)

    # ---- generation -------------------------------------------------------------------------
    def _decoding_args(self, where, src, bos_id, eos_id, max_len):
        """The source as a token tensor and max_len resolved, or an error naming what was
        wrong. None: self.max_len - 1 tokens, the longest output after which the model can
        still be asked for EOS within the positional table (as the longest target it can
        train on: BOS + target fills the table); max_len=self.max_len is one more, cut."""
        src = as_token_tensor(src, self.device, "Transformer")
        if src.ndim != 2 or 0 in src.shape:
            raise ValueError(f"{where}: src must be token ids (batch >= 1, source length >= 1),"
                             f" got shape {src.shape}")
        # the last step reads BOS + max_len - 1 tokens: max_len positions of the table
        max_len = self.max_len - 1 if max_len is None else max_len
        if not backend.is_integer(max_len) or not 1 <= max_len <= self.max_len:
            raise ValueError(f"{where}: max_len must be an integer in 1..{self.max_len} (the "
                             f"positional table's length), got {max_len!r}")
        vocab = self.generator.out_features
        for name, tok in (("bos_id", bos_id), ("eos_id", eos_id)):
            if not backend.is_integer(tok) or not 0 <= tok < vocab:
                raise ValueError(f"{where}: {name} must be a target token id in 0..{vocab - 1},"
                                 f" got {tok!r}")
        return src, max_len

    def greedy_decode(self, src, bos_id, eos_id, max_len=None):
        """The most likely next token, one step at a time, for a batch of sources. Returns a
        list of token-id lists (no BOS, cut before EOS; never the padding token). Runs as
        inference: no gradients, dropout off (the model's modes are restored after)."""
        src, max_len = self._decoding_args("greedy_decode", src, bos_id, eos_id, max_len)
        with inference(self):
            src_mask = self.src_mask(src)
            memory = self.encode(src, src_mask)
            seqs = [[bos_id] for _ in range(src.shape[0])]
            done = [False] * len(seqs)
            for _ in range(max_len):
                logits = self.decode(seqs, memory, src_mask)
                nxt = never_pad(logits[:, -1], self.pad_id, eos_id).argmax(-1).tolist()
                for b, tok in enumerate(nxt):
                    seqs[b].append(eos_id if done[b] else tok)
                    done[b] = done[b] or tok == eos_id
                if all(done):
                    break
        return [_strip(s, eos_id) for s in seqs]

    def beam_search(self, src, bos_id, eos_id, beam_size=4, max_len=None, length_penalty=0.6):
        """Beam search: keep the `beam_size` best partial outputs (by summed log-probability),
        extend each by every token, keep the best again. Finished hypotheses are ranked by
        log p / ((5 + len) / 6) ** length_penalty (GNMT's normalisation; 0 = raw sum).
        Returns the best token-id list per source (no BOS/EOS). Runs as inference (as
        greedy_decode)."""
        src, max_len = self._decoding_args("beam_search", src, bos_id, eos_id, max_len)
        if not backend.is_integer(beam_size) or beam_size < 1:
            raise ValueError(f"beam_search: beam_size must be an integer >= 1, got "
                             f"{beam_size!r}")
        if not (backend.is_scalar(length_penalty) and not isinstance(length_penalty, bool)
                and 0 <= length_penalty < math.inf):
            raise ValueError(f"beam_search: length_penalty must be a finite number >= 0 (GNMT "
                             f"uses 0..1; its early stop assumes >= 0), got {length_penalty!r}")
        B, K = src.shape[0], beam_size
        with inference(self):
            src_mask = self.src_mask(src)
            memory = self.encode(src, src_mask)
            # each source's K beams sit in consecutive rows: row b*K + k
            rows = mg.tensor([b for b in range(B) for _ in range(K)], dtype=mg.int64,
                             device=memory.device)
            memory = memory[rows]
            src_mask = None if src_mask is None else src_mask[rows]
            beams = [[([bos_id], 0.0 if k == 0 else -math.inf) for k in range(K)]
                     for _ in range(B)]
            finished = [[] for _ in range(B)]
            for step in range(max_len):
                seqs = [seq for bb in beams for seq, _ in bb]
                last = self.decode(seqs, memory, src_mask)[:, -1]
                logp = never_pad(last, self.pad_id, eos_id).log_softmax(-1).tolist()
                for b in range(B):
                    cands = []
                    for k, (seq, score) in enumerate(beams[b]):
                        if score == -math.inf:
                            continue
                        row = logp[b * K + k]
                        # the K best tokens, ties to the lower id (as argmax: beam 1 = greedy)
                        best = sorted(range(len(row)), key=lambda t: (-row[t], t))[:K]
                        cands += [(score + row[t], seq + [t]) for t in best]
                    cands.sort(key=lambda c: c[0], reverse=True)
                    alive = []
                    for score, seq in cands:   # every finished one is kept, K live ones
                        if seq[-1] == eos_id:
                            finished[b].append((score / _gnmt(len(seq) - 1, length_penalty),
                                                seq))
                        elif len(alive) < K:
                            alive.append((seq, score))
                    # dead placeholders keep every row the same length (step + 2 tokens)
                    alive += [([bos_id] * (step + 2), -math.inf)] * (K - len(alive))
                    beams[b] = alive
                if all(_beam_done(finished[b], beams[b], length_penalty, max_len)
                       for b in range(B)):
                    break
        results = []
        for b in range(B):
            # the live beams compete too: at max_len they are outputs cut there, as greedy's
            # (after an early stop none of them can win; see _beam_done)
            pool = finished[b] + [(s / _gnmt(len(q) - 1, length_penalty), q + [eos_id])
                                  for q, s in beams[b] if s > -math.inf]
            results.append(_strip(max(pool, key=lambda c: c[0])[1], eos_id))
        return results


def _gnmt(length, alpha):
    return ((5 + length) / 6) ** alpha


def _beam_done(finished, alive, alpha, max_len):
    """Stop when no live beam can still beat the best finished hypothesis: a log-probability
    only falls as a sequence grows, and its length normaliser is at most that of max_len
    tokens, so s / gnmt(max_len) bounds what a live beam can still reach."""
    if all(s == -math.inf for _, s in alive):
        return True
    if not finished:
        return False
    best = max(f[0] for f in finished)
    return all(s == -math.inf or s / _gnmt(max_len, alpha) < best for _, s in alive)


def _strip(seq, eos_id):
    """Drop the leading BOS and everything from the first EOS on."""
    out = []
    for tok in seq[1:]:
        if tok == eos_id:
            break
        out.append(tok)
    return out
