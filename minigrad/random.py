"""mg.random, as torch.random: the global generator's seed and state (manual_seed, seed,
initial_seed, get_rng_state, set_rng_state: generator.py's), and fork_rng, a block whose
draws leave the generators as they were before it.

    with mg.random.fork_rng():
        noise = mg.randn(3)                # the draws after the block are unchanged
"""
import contextlib
import copy

from minigrad import backend
from minigrad.generator import get_rng_state, set_rng_state, initial_seed, seed  # noqa: F401


def manual_seed(seed):
    """Seed every random draw on every device, as mg.manual_seed."""
    backend.manual_seed(seed)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Save the global generators' states (the CPU's, and every started device's) and put
    them back on exit, error or not. enabled=False does nothing. `devices` and
    `device_type` are torch's (which GPUs to fork): minigrad forks every device it has."""
    if not isinstance(enabled, bool):
        raise TypeError(f"fork_rng: enabled must be a bool, got {enabled!r}")
    if not enabled:
        yield
        return
    cpu, host = get_rng_state(), backend.get("cpu")
    # each started device's generator (a backend may be listed under several names)
    others = {id(b): (b, copy.deepcopy(b.rng)) for b in backend._BACKENDS.values()
              if b is not host}
    # the seeds too: a manual_seed inside clears those kept for devices not started yet
    seeds, device_seeds = backend._SEED[0], dict(backend._DEVICE_SEEDS)
    try:
        yield
    finally:
        set_rng_state(cpu)
        backend._SEED[0] = seeds
        backend._DEVICE_SEEDS.clear()
        backend._DEVICE_SEEDS.update(device_seeds)
        for b, rng in others.values():
            b.rng = rng
