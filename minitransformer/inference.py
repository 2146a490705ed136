"""Decoding runs as inference: dropout off and no graph, whatever mode the model was in."""
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
