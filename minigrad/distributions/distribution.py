"""Distribution: the base of mg.distributions, as torch.distributions.Distribution. A
distribution has a batch_shape (independent, differently parameterised copies) and an
event_shape (the shape of one draw); sample(sample_shape) gives sample_shape + batch_shape +
event_shape. log_prob, entropy and rsample are built from Tensor ops, so gradients reach
the parameters. Draws come from minigrad's generators (mg.manual_seed, or generator= on
sample/rsample: an mg.Generator, a NumPy Generator or an int seed): reproducible, though
not the numbers torch draws."""
import math

import minigrad as mg
from minigrad import backend
from minigrad.autograd import no_grad
from minigrad.tensor import Tensor

_VALIDATE = [True]            # PyTorch validates by default (unless python -O)


def _as_shape(sample_shape, op):
    if backend.is_integer(sample_shape):
        return (int(sample_shape),)
    try:
        shape = tuple(int(s) for s in sample_shape)
    except TypeError:
        raise TypeError(f"{op}: sample_shape must be a tuple of ints, got "
                        f"{sample_shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: sample_shape must not be negative, got {shape}")
    return shape


def broadcast_all(*values):
    """Tensors and numbers as tensors of one broadcast shape; numbers take the first
    floating tensor's dtype and device (the default dtype if none)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, Tensor) and (not backend.is_scalar(v) or isinstance(v, bool)):
            raise TypeError(f"a distribution's parameters must be tensors or numbers, got "
                            f"{type(v).__name__}")
    like = next((t for t in tensors if backend.is_floating(t.dtype)), None)
    dtype = like.dtype if like is not None else mg.get_default_dtype()
    device = tensors[0].device if tensors else None
    values = [v if isinstance(v, Tensor) else mg.tensor(float(v), dtype=dtype, device=device)
              for v in values]
    return mg.broadcast_tensors(*values)


def one_stream(generator):
    """generator for two draws in a row: an int seed becomes one seeded mg.Generator, so
    the second draw continues the first's stream instead of restarting it."""
    if backend.is_integer(generator) and not isinstance(generator, bool):
        return mg.Generator().manual_seed(int(generator))
    return generator


def sum_rightmost(value, dims):
    """value summed over its last `dims` dims."""
    return value.sum(tuple(range(-dims, 0))) if dims > 0 else value


def expand_as(dist, batch_shape, **params):
    """A copy of dist of type(dist) with its parameters expanded to batch_shape."""
    batch_shape = tuple(batch_shape)
    new = type(dist)(**{k: v.expand(batch_shape) for k, v in params.items()},
                     validate_args=False)
    new._validate_args = dist._validate_args
    return new


class lazy_property:
    """An attribute computed on first use and then kept (probs from logits, say): a
    parameter given is stored under its name, and only it is validated."""
    def __init__(self, compute):
        self.compute, self.__doc__ = compute, compute.__doc__
        self.name = compute.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


def probs_to_logits(probs, is_binary=False):
    """Log-odds (binary) or log-probabilities of probs, clamped away from 0 and 1 first."""
    eps = mg.finfo(probs.dtype).eps
    p = probs.clamp(eps, 1 - eps)
    return p.log() - (-p).log1p() if is_binary else p.log()


class Distribution:
    """The base: subclasses set arg_constraints and support, and give log_prob and the
    rest; sample is rsample under no_grad where the distribution has rsample."""
    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None

    @staticmethod
    def set_default_validate_args(value):
        """Whether distributions check their arguments and samples unless told (True)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got "
                             f"{value!r}")
        _VALIDATE[0] = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)
        self._validate_args = _VALIDATE[0] if validate_args is None else validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        for name, constraint in self.arg_constraints.items():
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                        lazy_property):
                continue                                 # not given: derived when asked
            value = getattr(self, name)
            with no_grad():
                ok = bool(constraint.check(value).all())
            if not ok:
                raise ValueError(
                    f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but "
                    f"found invalid values:\n{value!r}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return _as_shape(sample_shape, type(self).__name__) + self._batch_shape + \
            self._event_shape

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError(f"{type(self).__name__} has no expand")

    def sample(self, sample_shape=(), generator=None):
        """Draws of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape, generator=generator)

    def rsample(self, sample_shape=(), generator=None):
        raise NotImplementedError(f"{type(self).__name__} has no rsample (no "
                                  f"reparameterised draw); use sample")

    def sample_n(self, n, generator=None):
        return self.sample((n,), generator=generator)

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} has no cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} has no icdf")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} has no entropy")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} has no enumerable support")

    def perplexity(self):
        return self.entropy().exp()

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} has no mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} has no mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} has no variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _validate_sample(self, value):
        """A ValueError unless value has event_shape on the right, broadcasts with
        batch_shape and lies in the support."""
        name = type(self).__name__
        if not isinstance(value, Tensor):
            raise ValueError(f"{name}: the value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__}")
        event = self._event_shape
        if tuple(value.shape[len(value.shape) - len(event):]) != event or \
                len(value.shape) < len(event):
            raise ValueError(f"{name}: the right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {event}")
        for got, want in zip(reversed(value.shape), reversed(self._batch_shape + event)):
            if got != 1 and want != 1 and got != want:
                raise ValueError(f"{name}: value is not broadcastable with batch_shape+"
                                 f"event_shape: {tuple(value.shape)} vs "
                                 f"{self._batch_shape + event}")
        support = self.support
        if support is not None:
            with no_grad():
                ok = bool(support.check(value).all())
            if not ok:
                raise ValueError(
                    f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be "
                    f"within the support ({support!r}) of the distribution {self!r}, but "
                    f"found invalid values:\n{value!r}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {tuple(self.__dict__[k].shape)}" for k in names)
        return f"{type(self).__name__}({args})"


LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
