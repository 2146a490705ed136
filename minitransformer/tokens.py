"""Token ids as tensors: the one conversion every model's token input goes through."""
import minigrad as mg


def as_token_tensor(tokens, device=None, where="as_token_tensor", what="token ids"):
    """`tokens` (a Tensor, a NumPy array, or nested lists of ids) as an integer Tensor on
    `device`. Host data becomes int64; a Tensor must hold integers (`where` names the caller
    in the error) and is moved if it is elsewhere. device None: a Tensor stays where it is,
    host data goes to the CPU."""
    if not isinstance(tokens, mg.Tensor):
        ids = mg.tensor(tokens, device=device or "cpu")   # its own dtype: 1.7 stays 1.7
        if ids.dtype.kind not in "iu" and ids.numel():
            raise TypeError(f"{where}: {what} must be integers, got {ids.dtype} values "
                            f"(truncating them would silently change them)")
        return ids.to(dtype=mg.int64)
    if tokens.dtype.kind not in "iu":
        raise TypeError(f"{where}: {what} must be integers, got dtype {tokens.dtype}")
    return tokens if device is None or tokens.device == device else tokens.to(device)
