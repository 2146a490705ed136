"""Token ids as tensors: the one conversion every model's token input goes through."""
import minigrad as mg


def as_token_tensor(tokens, device=None, where="as_token_tensor"):
    """`tokens` (a Tensor, a NumPy array, or nested lists of ids) as an integer Tensor on
    `device`. Host data becomes int64; a Tensor must hold integers (`where` names the caller
    in the error) and is moved if it is elsewhere. device None: a Tensor stays where it is,
    host data goes to the CPU."""
    if not isinstance(tokens, mg.Tensor):
        return mg.tensor(tokens, dtype=mg.int64, device=device or "cpu")
    if tokens.dtype.kind not in "iu":
        raise TypeError(f"{where}: token ids must be integers, got dtype {tokens.dtype}")
    return tokens if device is None or tokens.device == device else tokens.to(device)
