"""Batch normalisation layers: `BatchNorm1d`, `BatchNorm2d` and `BatchNorm3d`, as torch.nn's,
with PyTorch's parameter and buffer names (weight, bias, running_mean, running_var,
num_batches_tracked), so state dicts map both ways. The normalisation itself is
ops/batch_norm.py."""
from minigrad import backend, creation
from minigrad.args import number_arg
from minigrad.autograd import no_grad
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter
from minigrad.ops.batch_norm import batch_norm


class _BatchNorm(Module):
    """What every BatchNorm{1,2,3}d shares; a subclass says which input shapes it takes.

    Training mode normalises each channel with the batch's mean and biased variance, and
    (with track_running_stats) moves running_mean / running_var towards the batch's mean
    and unbiased variance: running ← (1 - momentum)·running + momentum·batch, or, with
    momentum=None, their plain average over all batches so far (num_batches_tracked counts
    them). Eval mode normalises with the running statistics; without them
    (track_running_stats=False) it uses the batch's, as in training."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if not backend.is_integer(num_features) or num_features < 0:
            raise TypeError(f"{type(self).__name__}: num_features must be a non-negative "
                            f"integer (the number of channels), got {num_features!r}")
        if momentum is not None and \
                not 0.0 <= number_arg(type(self).__name__, "momentum", momentum) <= 1.0:
            raise ValueError(f"{type(self).__name__}: momentum must be in [0, 1] or None (a "
                             f"cumulative average), got {momentum!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)
        if affine:
            self.weight = Parameter(creation.ones(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(num_features, device=device,
                                                     dtype=dtype))
        if track_running_stats:
            self.register_buffer("running_mean",
                                 creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var",
                                 creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 creation.tensor(0, dtype=backend.int64, device=device))
        else:   # registered as None, as PyTorch: no state-dict entries, but the names exist
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    # older state dicts lack the count: load them, keeping it (Module.load_state_dict)
    _optional_state = ("num_batches_tracked",)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input(self, x):
        raise NotImplementedError

    def forward(self, input):
        self._check_input(input)
        if not input.ndim >= 2 or input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}): input has shape "
                             f"{input.shape}, expected {self.num_features} channels at dim 1")
        counting = self.training and self.track_running_stats and \
            self.num_batches_tracked is not None
        factor = self.momentum
        if counting and self.momentum is None:      # the average of all batches so far
            factor = 1.0 / (int(self.num_batches_tracked) + 1)
        # running statistics are updated only in training (if tracked) and read only in
        # eval (if present); without them eval normalises with the batch's, as training
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        out = batch_norm(input, self.running_mean if keep else None,
                         self.running_var if keep else None, self.weight, self.bias,
                         use_batch, 0.0 if factor is None else factor, self.eps)
        if counting:                                # after a batch_norm that did not raise
            with no_grad():
                self.num_batches_tracked.add_(1)
        return out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of an (N, C) or (N, C, L) input over N (and L), per channel C,
    as torch.nn.BatchNorm1d; weight (ones) and bias (zeros) of shape (C,) scale and shift."""

    def _check_input(self, x):
        if x.ndim not in (2, 3):
            raise ValueError(f"BatchNorm1d: expected 2D or 3D input, (N, C) or (N, C, L), "
                             f"got {x.ndim}D input of shape {x.shape}")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of an (N, C, H, W) input over N, H and W, per channel C, as
    torch.nn.BatchNorm2d."""

    def _check_input(self, x):
        if x.ndim != 4:
            raise ValueError(f"BatchNorm2d: expected 4D input, (N, C, H, W), got {x.ndim}D "
                             f"input of shape {x.shape}")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of an (N, C, D, H, W) input over N, D, H and W, per channel C,
    as torch.nn.BatchNorm3d."""

    def _check_input(self, x):
        if x.ndim != 5:
            raise ValueError(f"BatchNorm3d: expected 5D input, (N, C, D, H, W), got {x.ndim}D "
                             f"input of shape {x.shape}")


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm for one process: minigrad has no process groups, so the batch
    statistics are this process's own and this is BatchNorm over an input of any rank >= 2,
    (N, C, *). process_group is accepted and must be None."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        if process_group is not None:
            raise ValueError("SyncBatchNorm: minigrad is single-process; process_group must be "
                             f"None, got {process_group!r}")
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input(self, x):
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input, (N, C, *), got "
                             f"{x.ndim}D input of shape {x.shape}")
