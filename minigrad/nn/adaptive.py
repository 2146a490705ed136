"""AdaptiveLogSoftmaxWithLoss (Grave et al. 2016, "Efficient softmax approximation for
GPUs"): a log-softmax over many classes split by frequency into a shortlist, scored by the
head along with one entry per cluster, and tail clusters, each its own smaller projection;
with PyTorch's arguments, submodules (head, tail), state-dict names and output tuple."""
from collections import namedtuple

from minigrad import backend, functional as F
from minigrad.nn.containers import ModuleList, Sequential
from minigrad.nn.layers import Linear
from minigrad.nn.module import Module
from minigrad.ops.index import IndexAdd, gather, raw_index
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: which rows fall in which cluster, on the host

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features), target (N,)) -> (output, loss): output the
    log-probability of each target, loss the mean of -output; log_prob(input) the full
    (N, n_classes) log-probabilities; predict(input) the most likely class of each row.
    cutoffs split the classes: [0, c0) the shortlist, [c0, c1) the first cluster, ...,
    up to n_classes; cluster i projects to in_features // div_value^(i+1) dims first."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        try:
            cutoffs = list(cutoffs)
            valid = cutoffs and cutoffs == sorted(cutoffs) and min(cutoffs) > 0 and \
                max(cutoffs) <= n_classes - 1 and len(set(cutoffs)) == len(cutoffs) and \
                all(int(c) == c for c in cutoffs)
        except (TypeError, ValueError):      # not a sequence, or not of numbers
            valid = False
        if not valid:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "unique, positive integers sorted in an increasing order, where "
                             f"each value is between 1 and n_classes-1, got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input, target):
        if not isinstance(input, Tensor):
            raise TypeError(f"AdaptiveLogSoftmaxWithLoss: input must be a Tensor (N, "
                            f"{self.in_features}) or ({self.in_features},), got "
                            f"{type(input).__name__}")
        t = raw_index(target, input, "AdaptiveLogSoftmaxWithLoss", "target")
        if not hasattr(t, "dtype") or t.dtype.kind not in "iu":
            raise TypeError(f"AdaptiveLogSoftmaxWithLoss: target must hold integer class "
                            f"indices, got {getattr(t, 'dtype', type(target).__name__)}")
        if t.ndim == 1:
            if input.ndim != 2:
                raise ValueError(f"AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                 f"input tensors, but found inputs with size {input.shape}")
            if input.shape[0] != t.shape[0]:
                raise ValueError(f"AdaptiveLogSoftmaxWithLoss: input and target should have "
                                 f"the same size in the batch dimension, got {input.shape} "
                                 f"and {tuple(t.shape)}")
        elif t.ndim == 0:
            if input.ndim != 1:
                raise ValueError(f"AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                 f"input tensors, but found inputs with size {input.shape}")
        else:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, "
                             "multi-target not supported")
        batched = t.ndim == 1
        x = input if batched else input.unsqueeze(0)
        host = backend.to_host(t).reshape(-1).astype(np.int64)
        if host.size and (host.min() < 0 or host.max() >= self.n_classes):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: target values should be in [0, "
                             f"{self.n_classes - 1}], but values in range [{host.min()}, "
                             f"{host.max()}] were found")
        be, n = backend.get(x.device), host.size
        # the head's entry for each row: its own class in the shortlist, else its cluster's
        cluster = np.searchsorted(np.asarray(self.cutoffs), host, side="right")
        head_entry = np.where(cluster == 0, host, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(x), 1)
        output = gather(head_logprob, 1, be.from_numpy(head_entry[:, None]))[:, 0]
        for i in range(self.n_clusters):
            rows = np.nonzero(cluster == i + 1)[0]
            if not rows.size:
                continue
            rows_d = be.from_numpy(rows)
            local = be.from_numpy((host[rows] - self.cutoffs[i])[:, None])
            logprob = F.log_softmax(self.tail[i](x[rows_d]), 1)
            output = output + IndexAdd.apply(gather(logprob, 1, local)[:, 0], index=rows_d,
                                             shape=(n,))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output[0], loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), 1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i:
                                                self.shortlist_size + i + 1])
        return cat(parts, 1)

    def _check_2d(self, input, what):
        if not isinstance(input, Tensor) or input.ndim != 2:
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss.{what}: expects a 2D input "
                             f"(N, {self.in_features}), got "
                             f"{getattr(input, 'shape', type(input).__name__)}")

    def log_prob(self, input):
        """log p(c | row) for every class c: (N, n_classes)."""
        self._check_2d(input, "log_prob")
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (N,), as log_prob(input).argmax(1), but the
        tails run only for the rows whose head's best entry is a cluster."""
        self._check_2d(input, "predict")
        head_output = self.head(input)
        best = head_output.argmax(1)
        outside = best._data >= self.shortlist_size
        if not bool(outside.any()):
            return best
        if bool(outside.all()):
            return self._full_log_prob(input, head_output).argmax(1)
        rows = best.backend.xp.nonzero(outside)[0]
        chosen = self._full_log_prob(input[rows], head_output[rows]).argmax(1)
        picked = best._data.copy()
        picked[rows] = chosen._data
        return Tensor._make(picked, input.device)

    def extra_repr(self):
        return ""
