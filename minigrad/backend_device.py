"""The default device: where factories (zeros, randn, tensor, arange, ..., and so new
layers' parameters) put a tensor when given no device=, as torch.set_default_device and
`with torch.device(...)`. Per thread, as PyTorch's. Ops on existing tensors never read
it: they build their constants beside their inputs. Also a device's own seed
(mg.cuda.manual_seed's), which its generator starts from when it is built, and the one the
CPU's generator started from (mg.initial_seed's)."""
import threading

from minigrad import backend


class _DefaultDevice(threading.local):
    """This thread's choice: the Device set_default_device or a `with device:` block
    chose, or None where none was (then the CPU; mg.tensor of an array keeps the array's
    device)."""
    def __init__(self):
        self.device = None
        self.entered = []           # what each open `with device:` block replaced


_DEFAULT = _DefaultDevice()
_CPU = backend.device_name("cpu")


def default_device(device=None):
    """`device`'s Device, or where it is None the default device: every factory's one
    answer (one thread-local read on its hot path)."""
    if device is None:
        return _DEFAULT.device or _CPU
    return backend.device_name(device)


def chosen_default_device():
    """The default device if one was set (set_default_device or `with device:`), else
    None: mg.tensor and as_tensor then keep a given array's or tensor's own device."""
    return _DEFAULT.device


def set_default_device(device):
    """Make `device` the default, as torch.set_default_device; None: back to the CPU. Its
    library is asked for at its first use ("cuda" without CuPy fails there, as PyTorch's);
    an unknown name fails here."""
    _DEFAULT.device = None if device is None else backend.device_name(device)


def get_default_device():
    """The device factories use when given none: the CPU unless set."""
    return _DEFAULT.device or _CPU


def enter_device(device):
    """`with device:` — the default inside the block, nesting."""
    _DEFAULT.entered.append(_DEFAULT.device)
    _DEFAULT.device = device
    return device


def exit_device():
    """The block's end (on an exception too): the default before it is back, whatever
    set_default_device did inside, as PyTorch's."""
    _DEFAULT.device = _DEFAULT.entered.pop()


def device_seed(name):
    """The seed device `name`'s generator started from: its own, or manual_seed's."""
    return backend._DEVICE_SEEDS.get(name, backend._SEED[0])


def set_device_seed(name, seed, reseed=True):
    """Seed one device's generator (now if built, else when it is; reseed=False: only
    record the seed, its state having been restored)."""
    backend._DEVICE_SEEDS[name] = seed
    b = backend._BACKENDS.get(name)
    if b is not None and reseed:
        b.rng = b.xp.random.default_rng(seed)


def current_seed():
    """The seed the CPU generator started from: the one manual_seed last set (0 if never),
    or that of the state mg.set_rng_state restored since (set_cpu_seed)."""
    return backend._CPU_SEED[0]


def set_cpu_seed(seed):
    """Record `seed` as the one the CPU generator's state started from (the generators of
    devices built later still start from manual_seed's)."""
    backend._CPU_SEED[0] = seed
