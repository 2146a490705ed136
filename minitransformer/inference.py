"""What decoding shares: it runs as inference (dropout off, no graph, whatever mode the model
was in), and it never outputs the padding token."""
import math
from contextlib import contextmanager

import minigrad as mg


@contextmanager
def inference(model):
    """Inside: every submodule in eval mode (dropout off) and no gradients recorded. On the
    way out each submodule gets back its own mode, so a model mid-training (or one with a
    submodule frozen in eval) is left exactly as it was. Generating with dropout on would
    give a different output on every call."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with mg.no_grad():
            yield
    finally:
        for m, training in modes:
            m.training = training


def never_pad(logits, pad_id, eos_id):
    """Next-token logits (B, vocab) with the padding token ruled out (-inf): padding is
    never an output, and a decoded pad would be hidden from every later step as padding.
    (Unless pad_id is None, or is the EOS token too.)"""
    if pad_id is None or pad_id == eos_id:
        return logits
    ban = mg.arange(logits.shape[-1], device=logits.device) == pad_id
    return logits.masked_fill(ban, -math.inf)
