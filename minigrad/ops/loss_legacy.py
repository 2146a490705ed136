"""PyTorch's deprecated size_average and reduce, the losses' older spelling of `reduction`,
mapped in one place so old code (F.nll_loss(x, t, size_average=False), nn.MSELoss(
reduce=False)) runs unchanged. Each loss calls this only when either is given (a None
check, nothing more, on the usual path); given, they override `reduction`, as PyTorch's."""
import warnings


def legacy_reduction(size_average, reduce, op, stacklevel=3):
    """The reduction (size_average, reduce) stand for, as PyTorch: reduce false -> 'none'
    (size_average is then ignored), else size_average false -> 'sum', else 'mean'; a None
    counts as True. Warns, as PyTorch, that they are deprecated and what to pass instead.
    A string is refused: it is the reduction passed by position where these now stand."""
    for name, value in (("size_average", size_average), ("reduce", reduce)):
        if isinstance(value, str):
            raise TypeError(f"{op}: {name} must be a bool or None, got {value!r}; pass the "
                            f"reduction by keyword: reduction={value!r}")
    reduction = "none" if not (True if reduce is None else reduce) else \
        "mean" if (True if size_average is None else size_average) else "sum"
    warnings.warn(f"{op}: size_average and reduce are deprecated (as in PyTorch); use "
                  f"reduction='{reduction}' instead", UserWarning, stacklevel=stacklevel)
    return reduction
