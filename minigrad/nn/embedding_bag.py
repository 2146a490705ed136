"""EmbeddingBag: a table whose rows are looked up in bags and reduced per bag (F.embedding_bag),
with PyTorch's arguments, initialisation (N(0, 1), the padding row zero), repr and
from_pretrained."""
from minigrad import creation, functional as F
from minigrad.nn.layers import _check_sizes, add_table, reset_table
from minigrad.nn.module import Module
from minigrad.ops.embedding_bag import _MODES
from minigrad.tensor import Tensor


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings: forward(input, offsets=None,
    per_sample_weights=None) -> (B, embedding_dim)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        F._no_sparse(sparse)
        _check_sizes("EmbeddingBag", num_embeddings=num_embeddings,
                     embedding_dim=embedding_dim)
        if mode not in _MODES:
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got "
                             f"{mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx must be within num_embeddings "
                                 f"({-num_embeddings}..{num_embeddings - 1}), got "
                                 f"{padding_idx}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        add_table(self, "EmbeddingBag", _weight, True, device, dtype)   # (as Embedding's)

    def reset_parameters(self):
        reset_table(self)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose table is a copy of `embeddings` (rows, dim), frozen (no
        gradient) unless freeze=False, as PyTorch."""
        table = creation.tensor(embeddings) if not isinstance(embeddings, Tensor) else \
            embeddings.detach().clone()
        if table.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-D (rows, "
                             f"dim), got shape {table.shape}")
        bag = cls(*table.shape, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  _weight=table, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += f", max_norm={self.max_norm}" if self.max_norm is not None else ""
        s += f", norm_type={self.norm_type}" if self.norm_type != 2 else ""
        s += ", scale_grad_by_freq=True" if self.scale_grad_by_freq else ""
        s += f", mode={self.mode!r}"
        s += f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return s
