"""Seeds and generator state, as torch's: mg.Generator (a seeded source to pass as
`generator=`), get_rng_state / set_rng_state (save and restore the CPU generator, e.g. in a
checkpoint), initial_seed and seed.

    g = mg.Generator().manual_seed(0)
    a = mg.randn(3, generator=g)            # the same three numbers on every run
    state = mg.get_rng_state()              # a uint8 tensor, as torch.get_rng_state()
    x = mg.rand(2); mg.set_rng_state(state); y = mg.rand(2)     # x == y

Underneath each is a NumPy Generator (PCG64). A state is its 128-bit state, its 128-bit
increment, the 32-bit half of a draw it may hold back and the seed it started from (which
initial_seed() gives after set_state, as torch's), packed into 45 bytes: a tensor that
mg.save can write beside the weights. The 37 bytes of the states minigrad made before the
seed was added are still taken (the seed then stays as it was).
"""
from minigrad import backend
from minigrad.tensor import Tensor

np = backend.get("cpu").xp              # NumPy: generators live on the host

_STATE_BYTES = 45    # 16 (state) + 16 (inc) + 1 (has_uint32) + 4 (uinteger) + 8 (the seed)
_OLD_STATE_BYTES = 37                    # the same without the seed


def _check_seed(seed, op):
    if not backend.is_integer(seed) or not 0 <= seed < 2 ** 64:     # as torch's (64 bits)
        raise ValueError(f"{op}: the seed must be a non-negative integer below 2**64, got "
                         f"{seed!r}")
    return int(seed)


def _fresh_seed():
    """A seed from the operating system's entropy, below 2⁶³ as torch.seed()'s."""
    return int(np.random.SeedSequence().entropy % 2 ** 63)


def pack_state(bit_generator, seed):
    """A PCG64 bit generator's state, and the seed it started from, as a uint8 CPU tensor
    of 45 bytes."""
    s = bit_generator.state
    if s["bit_generator"] != "PCG64":
        raise TypeError(f"get_state: only a PCG64 generator's state can be packed, this one "
                        f"is {s['bit_generator']}")
    raw = (s["state"]["state"].to_bytes(16, "little") + s["state"]["inc"].to_bytes(16, "little")
           + bytes([s["has_uint32"]]) + s["uinteger"].to_bytes(4, "little")
           + seed.to_bytes(8, "little"))
    return Tensor(np.frombuffer(raw, np.uint8).copy())


def unpack_state(bit_generator, state, op):
    """Restore a PCG64 bit generator from what pack_state made; returns the seed it
    started from (None for a state of the old 37 bytes, which has none)."""
    if not isinstance(state, Tensor) or state.dtype != np.uint8 or \
            state.shape not in ((_STATE_BYTES,), (_OLD_STATE_BYTES,)):
        raise TypeError(f"{op}: expected the uint8 tensor of {_STATE_BYTES} bytes that "
                        f"get_rng_state()/get_state() returned, got "
                        f"{getattr(state, 'dtype', type(state).__name__)} "
                        f"{getattr(state, 'shape', '')}")
    raw = state.numpy().tobytes()
    inc = int.from_bytes(raw[16:32], "little")
    if inc % 2 == 0 or raw[32] > 1:      # PCG64's increment is always odd
        raise ValueError(f"{op}: these bytes are not a generator state (a corrupted or "
                         f"foreign tensor)")
    bit_generator.state = {"bit_generator": "PCG64",
                           "state": {"state": int.from_bytes(raw[:16], "little"), "inc": inc},
                           "has_uint32": raw[32],
                           "uinteger": int.from_bytes(raw[33:37], "little")}
    return int.from_bytes(raw[37:], "little") if len(raw) == _STATE_BYTES else None


class Generator:
    """A source of random numbers of its own, as torch.Generator: draws that take
    `generator=` (randn, rand, randint, randperm, normal, bernoulli, multinomial, the
    in-place fills, nn.init, DataLoader, random_split) use it instead of the global
    generator that mg.manual_seed seeds. It draws on the host whatever `device` says (the
    values are then copied to the tensor's device), so a seed gives the same numbers on
    the CPU and the GPU."""

    def __init__(self, device="cpu"):
        self.device = backend.device_name(device)
        self.manual_seed(0)

    def manual_seed(self, seed):
        """Restart from `seed` (a non-negative int); returns the generator, as torch's."""
        self._seed = _check_seed(seed, "Generator.manual_seed")
        self.rng = np.random.default_rng(self._seed)
        return self

    def seed(self):
        """Restart from a seed drawn from the operating system, and return that seed."""
        self.manual_seed(_fresh_seed())
        return self._seed

    def initial_seed(self):
        """The seed it last started from."""
        return self._seed

    def get_state(self):
        return pack_state(self.rng.bit_generator, self._seed)

    def set_state(self, state):
        """Continue from `state` (get_state's); initial_seed() is then the seed of the
        generator that state was taken from, as torch's."""
        seed = unpack_state(self.rng.bit_generator, state, "Generator.set_state")
        self._seed = self._seed if seed is None else seed
        return self

    def __repr__(self):
        return f"<minigrad.Generator device={self.device!s} initial_seed={self._seed}>"


def get_rng_state():
    """The CPU generator's state (that of mg.manual_seed's draws), as a uint8 tensor."""
    return pack_state(backend.get("cpu").rng.bit_generator, initial_seed())


def set_rng_state(new_state):
    """Put the CPU generator back in a state get_rng_state() returned; initial_seed() is
    then the seed that state started from, as torch's."""
    seed = unpack_state(backend.get("cpu").rng.bit_generator, new_state, "set_rng_state")
    if seed is not None:
        backend.set_cpu_seed(seed)


def initial_seed():
    """The seed the CPU generator started from: the one mg.manual_seed last set (0 if
    never), or that of the state set_rng_state restored since."""
    return backend.current_seed()


def seed():
    """Seed every device's generator from the operating system's entropy; returns the seed."""
    s = _fresh_seed()
    backend.manual_seed(s)
    return s
