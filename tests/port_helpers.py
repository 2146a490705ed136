"""Helpers of the ported-script tests (test_ported_scripts*.py): each program takes the
library as `torch` (minigrad or PyTorch) and returns (initial weights, losses)."""
import importlib

import numpy as np

import minigrad


def _libs(lib):
    """(torch, nn, F, torch.utils.data) of minigrad or PyTorch."""
    return (lib, lib.nn, importlib.import_module(lib.__name__ + ".nn.functional"),
            importlib.import_module(lib.__name__ + ".utils.data"))


def _state(model, prefix=""):
    return {prefix + k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


def _load(torch, model, state, prefix="", strict=True):
    if state is not None:
        model.load_state_dict({k[len(prefix):]: torch.tensor(v) for k, v in state.items()
                               if k.startswith(prefix)}, strict=strict)


def _host(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _compare(torch, program, **kw):
    """Runs `program` under minigrad, then under PyTorch from minigrad's initial weights
    (one thread): the same losses, to float32 rounding."""
    mg_out = program(*_libs(minigrad), **kw)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pt_out = program(*_libs(torch), init=mg_out[0], **kw)
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_allclose(mg_out[1], pt_out[1], rtol=1e-4, atol=1e-5)
    return mg_out[1]


def _drawn(torch, init, state0, key, draw):
    """`draw()` under minigrad (recorded in state0 under `key`); minigrad's draw replayed
    under PyTorch, whose generator gives other numbers."""
    if init is None:
        out = draw()
        state0["drawn:" + key] = out.numpy().copy()
        return out
    return torch.tensor(init["drawn:" + key])


def _weights(init):
    """The initial weights alone, without the draws (_drawn) that travel with them."""
    return None if init is None else {k: v for k, v in init.items()
                                      if not k.startswith("drawn:")}


class _Replayed:
    """A sampler's indices: under minigrad those `sampler` yields, recorded in state0 as
    they are taken (one list an epoch: an endless sampler is recorded as far as it is
    read); under PyTorch minigrad's, replayed epoch by epoch."""

    def __init__(self, init, state0, key, sampler):
        self.init, self.state0, self.key, self.sampler, self.epoch = init, state0, key, \
            sampler, 0

    def __iter__(self):
        key, self.epoch = f"drawn:{self.key}{self.epoch}", self.epoch + 1
        if self.init is not None:
            return iter(np.asarray(self.init[key]).tolist())
        taken = self.state0[key] = []
        return (taken.append(i) or i for i in self.sampler)

    def __len__(self):
        return len(self.sampler)


class _Draws:
    """_drawn with keys of its own (a count): for draws made in a loop of any length."""

    def __init__(self, torch, init, state0, key):
        self.args, self.key, self.n = (torch, init, state0), key, 0

    def __call__(self, draw):
        self.n += 1
        return _drawn(*self.args, f"{self.key}{self.n}", draw)
