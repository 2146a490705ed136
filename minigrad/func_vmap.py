"""`mg.func.vmap`, as torch.func.vmap: a function mapped over a dim of its inputs, run once
per index and the results stacked (func.py's docstring says why a loop)."""
import functools
import threading

from minigrad import backend
from minigrad.ops.shape import stack
from minigrad.pytree import _broadcast, _flatten, _spec_str, _unflatten
from minigrad.tensor import Tensor

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                 "either use the 'same' or 'different' randomness flags on vmap or perform "
                 "the randomness operation out of vmap")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dim `in_dims` of its arguments, as torch.func.vmap: the results
    for each index stacked along `out_dims`. in_dims: an int (every argument), or a tuple
    with one entry per argument, each an int, None (not mapped) or a nested structure
    matching the argument's; keyword arguments are not mapped. out_dims likewise for the
    output (None: an output that is the same for every index, returned once).

    Honestly a loop: func runs once per index, on the argument slices, and the results
    are stacked. The values are PyTorch's (vmap(grad(f)) gives per-sample gradients,
    nested vmaps work, gradients flow back through), the speed is a Python loop's, not
    one batched op's; func also may do what PyTorch's refuses inside vmap (.item(), data-
    dependent Python control flow). A mapped dim of size 0 is refused (nothing would run
    to tell the output's shape), and so is an in-place change of an unmapped argument
    (it would be made once per index; a tensor func captures is not watched).
    randomness: 'error' refuses a draw from the default generators inside func
    (PyTorch's error), 'different' lets each index draw its own, 'same' gives every index
    the same draws (the generators restarted from one state per index). chunk_size is
    checked, and changes nothing."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                           f"or 'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        leaves, spec, dims, size = _mapped_inputs(name, in_dims, args)
        watched = _unmapped(leaves, dims)
        results = []
        with _Randomness(randomness):
            for b in _Randomness.indices(randomness, size):
                part = [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)]
                results.append(func(*_unflatten(part, spec), **kwargs))
                if any(x._version != v for x, v in watched):
                    raise RuntimeError(
                        f"vmap({name}): `{name}` changed an input that is not mapped (in_dim "
                        f"None) in place. minigrad's vmap runs it once per index, so the "
                        f"change would be made {size} times (PyTorch's makes it once, and "
                        f"refuses to write mapped values into it): change a clone of it")
        return _stacked(name, results, out_dims)
    return wrapped


def _mapped_inputs(name, in_dims, args):
    """(leaves of args, their spec, each leaf's in_dim (non-negative, or None), the
    mapped size), checked as PyTorch's vmap checks them."""
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    leaves, spec = _flatten(args)
    dims = _broadcast(in_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{_spec_str(_flatten(in_dims)[1])} but inputs has structure "
                         f"{_spec_str(spec)}.")
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    for i, (x, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {x.ndim} so expected in_dim to "
                             f"satisfy -{x.ndim} <= in_dim < {x.ndim}.")
        dims[i] = d % x.ndim
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise ValueError(f"vmap({name}): the mapped dimension has size 0; minigrad's vmap "
                         f"runs the function once per index, so nothing would tell the "
                         f"shape of its output")
    return leaves, spec, dims, sizes[0]


def _unmapped(leaves, dims):
    """(tensor, its version) for each unmapped input whose memory no mapped input shares:
    func must not change those in place (see wrapped)."""
    mapped = {id(x._version_counter) for x, d in zip(leaves, dims) if d is not None}
    return [(x, x._version) for x, d in zip(leaves, dims) if d is None and
            isinstance(x, Tensor) and id(x._version_counter) not in mapped]


def _stacked(name, results, out_dims):
    """The per-index results of func as vmap's output: each Tensor stacked along its
    out_dim, each out_dim None output given once."""
    flat, spec = _flatten(results[0])
    if not isinstance(out_dims, (int, tuple, list, dict, type(None))) or \
            isinstance(out_dims, bool) or any(
                d is not None and (not isinstance(d, int) or isinstance(d, bool))
                for d in _flatten(out_dims)[0]):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         f"None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    if spec is None and isinstance(out_dims, tuple) and len(out_dims) == 1:
        out_dims = out_dims[0]          # (PyTorch's: one Tensor out, out_dims=(d,))
    dims = _broadcast(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         f"compatible with the structure of `outputs`. out_dims has structure "
                         f"{_spec_str(_flatten(out_dims)[1])} but outputs has structure "
                         f"{_spec_str(spec)}.")
    per_index = []
    for r in results:
        leaves, s = _flatten(r)
        if s != spec:
            raise ValueError(f"vmap({name}): the function returned {_spec_str(s)} for one "
                             f"index and {_spec_str(spec)} for another; it must return the "
                             f"same structure for each")
        per_index.append(leaves)
    out = []
    for k, d in enumerate(dims):
        values = [leaves[k] for leaves in per_index]
        if d is None:
            if isinstance(values[0], Tensor) and not all(       # (a NaN equals a NaN here)
                    v is values[0] or v.backend.xp.array_equal(v._data, values[0]._data,
                                                               equal_nan=True)
                    for v in values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None (output {k} differs between "
                                 f"indices)")
            out.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                             f"type {type(values[0])}. Did you mean to set out_dims= to "
                             f"None for output?")
        out.append(stack(values, dim=d))
    return _unflatten(out, spec)


class _Randomness:
    """vmap's randomness: 'error' puts a guard in the place of each device's generator
    (b.rng), which refuses draws made in this thread (other threads draw as ever);
    'same' hands out the index numbers, restarting the generators before each;
    'different' changes nothing."""

    def __init__(self, mode):
        self.mode, self.guarded = mode, []

    def __enter__(self):
        if self.mode == "error":
            me = threading.get_ident()
            for b in backend.started():
                if not isinstance(b.rng, _RefusingRng):       # (an outer vmap's stays)
                    b.rng = _RefusingRng(b.rng, me)
                    self.guarded.append(b)

    def __exit__(self, *exc):
        for b in self.guarded:
            if isinstance(b.rng, _RefusingRng):    # (unless func reseeded: keep that)
                b.rng = b.rng.rng

    @staticmethod
    def indices(mode, size):
        if mode != "same":
            yield from range(size)
            return
        from minigrad.utils.checkpoint import _copy_rng, _rng_states
        start = _rng_states()
        for b in range(size):
            for be, state in start:
                be.rng = _copy_rng(state)
            yield b


class _RefusingRng:
    """A device's generator inside vmap(randomness='error'): draws from the thread running
    the vmap raise PyTorch's error."""

    def __init__(self, rng, thread):
        self.rng, self.thread = rng, thread

    def __getattr__(self, name):
        if threading.get_ident() == self.thread and not name.startswith("__"):
            raise RuntimeError(_RANDOM_ERROR)
        return getattr(self.rng, name)
