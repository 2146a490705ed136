"""mg.distributions, the most used part of torch.distributions: Normal, Uniform, Bernoulli,
Categorical, OneHotCategorical, MultivariateNormal, Independent and kl_divergence, built
from Tensor ops so log_prob, entropy, rsample and the KLs carry gradients."""
from minigrad.distributions import constraints  # noqa: F401
from minigrad.distributions.distribution import Distribution  # noqa: F401
from minigrad.distributions.normal import Normal  # noqa: F401
from minigrad.distributions.uniform import Uniform  # noqa: F401
from minigrad.distributions.bernoulli import Bernoulli  # noqa: F401
from minigrad.distributions.categorical import Categorical  # noqa: F401
from minigrad.distributions.one_hot_categorical import OneHotCategorical  # noqa: F401
from minigrad.distributions.multivariate_normal import MultivariateNormal  # noqa: F401
from minigrad.distributions.independent import Independent  # noqa: F401
from minigrad.distributions.kl import kl_divergence, register_kl  # noqa: F401

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical",
           "OneHotCategorical", "MultivariateNormal", "Independent", "kl_divergence",
           "register_kl", "constraints"]
