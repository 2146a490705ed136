"""VonMises(loc, concentration), as torch.distributions.VonMises: the circular normal on
[-pi, pi). log I0 is log i0e(k) + k, stable for large k; draws by Best and Fisher's (1979)
rejection method, computed in float64 and not reparameterised (sample, no rsample)."""
import math

import minigrad as mg
from minigrad.autograd import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (Distribution, broadcast_all, expand_as,
                                                 one_stream)

_MAX_ROUNDS = 1000          # each round accepts with probability > 0.65: never reached


class VonMises(Distribution):
    """Density exp(k cos(x - loc)) / (2 pi I0(k)), k the concentration (they broadcast);
    variance is the circular variance 1 - I1(k) / I0(k), as PyTorch."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.interval(-math.pi, math.pi)

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, loc=self.loc, concentration=self.concentration)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.concentration
        return 1 - mg.special.i1e(k) / mg.special.i0e(k)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        # k cos(x - loc) - log(2 pi) - log I0(k), with log I0(k) = log i0e(k) + k
        return k * ((value - self.loc).cos() - 1) - math.log(2 * math.pi) - \
            mg.special.i0e(k).log()

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        generator = one_stream(generator)
        with no_grad():
            k = self.concentration.detach().to(mg.float64).expand(shape)
            loc = self.loc.detach().to(mg.float64).expand(shape)
            # the wrapped-Cauchy envelope's parameter r; rho by the form without
            # cancellation at small k: (tau - sqrt(2 tau)) / 2k = 2k / (tau + sqrt(2 tau))
            tau = 1 + (1 + 4 * k ** 2).sqrt()
            rho = 2 * k / (tau + (2 * tau).sqrt())
            r = (1 + rho ** 2) / (2 * rho)
            x, done = mg.zeros_like(k), mg.zeros(shape, dtype=mg.bool, device=k.device)
            for _ in range(_MAX_ROUNDS):
                u1, u2, u3 = (mg.rand(shape, dtype=mg.float64, device=k.device,
                                      generator=generator) for _ in range(3))
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                theta = (u3 - 0.5).sign() * f.clamp(-1, 1).acos()
                x = mg.where(accept & ~done, theta, x)
                done = done | accept
                if bool(done.all()):
                    break
            x = (x + loc + math.pi) % (2 * math.pi) - math.pi
            return x.to(self.loc.dtype)
