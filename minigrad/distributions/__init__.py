"""mg.distributions, the most used part of torch.distributions: Normal, Uniform, Bernoulli,
Categorical, OneHotCategorical, MultivariateNormal, Independent, Exponential, Laplace,
Cauchy, Gumbel, LogNormal, Poisson, Binomial, Gamma, Chi2, Beta, Dirichlet, HalfNormal,
StudentT, Geometric, NegativeBinomial, Multinomial, MixtureSameFamily, RelaxedBernoulli,
RelaxedOneHotCategorical, LowRankMultivariateNormal, Weibull, Pareto, HalfCauchy,
InverseGamma, Kumaraswamy, VonMises, ContinuousBernoulli, FisherSnedecor,
OneHotCategoricalStraightThrough, LKJCholesky, GeneralizedPareto, LogisticNormal, Wishart,
transforms with TransformedDistribution, the constraint registry (biject_to, transform_to),
and kl_divergence, built from Tensor ops so log_prob, entropy, rsample and the KLs carry
gradients (Gamma, Chi2, Beta, Dirichlet, StudentT, InverseGamma, FisherSnedecor and
Wishart draws through ops/gamma_sample.py)."""
from minigrad.distributions import constraints  # noqa: F401
from minigrad.distributions.distribution import Distribution  # noqa: F401
from minigrad.distributions.normal import Normal  # noqa: F401
from minigrad.distributions.uniform import Uniform  # noqa: F401
from minigrad.distributions.bernoulli import Bernoulli  # noqa: F401
from minigrad.distributions.categorical import Categorical  # noqa: F401
from minigrad.distributions.one_hot_categorical import OneHotCategorical  # noqa: F401
from minigrad.distributions.multivariate_normal import MultivariateNormal  # noqa: F401
from minigrad.distributions.independent import Independent  # noqa: F401
from minigrad.distributions.exponential import Exponential  # noqa: F401
from minigrad.distributions.laplace import Laplace  # noqa: F401
from minigrad.distributions.cauchy import Cauchy  # noqa: F401
from minigrad.distributions.gumbel import Gumbel  # noqa: F401
from minigrad.distributions.log_normal import LogNormal  # noqa: F401
from minigrad.distributions.poisson import Poisson  # noqa: F401
from minigrad.distributions.binomial import Binomial  # noqa: F401
from minigrad.distributions.gamma import Gamma  # noqa: F401
from minigrad.distributions.chi2 import Chi2  # noqa: F401
from minigrad.distributions.beta import Beta  # noqa: F401
from minigrad.distributions.dirichlet import Dirichlet  # noqa: F401
from minigrad.distributions import transforms  # noqa: F401
from minigrad.distributions.transformed_distribution import TransformedDistribution  # noqa
from minigrad.distributions.transforms import (  # noqa: F401
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
    CumulativeDistributionTransform, ExpTransform, IndependentTransform,
    LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
    SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform,
    StickBreakingTransform, TanhTransform, Transform, identity_transform)
from minigrad.distributions.constraint_registry import biject_to, transform_to  # noqa: F401
from minigrad.distributions.lkj_cholesky import LKJCholesky  # noqa: F401
from minigrad.distributions.half_normal import HalfNormal  # noqa: F401
from minigrad.distributions.student_t import StudentT  # noqa: F401
from minigrad.distributions.geometric import Geometric  # noqa: F401
from minigrad.distributions.negative_binomial import NegativeBinomial  # noqa: F401
from minigrad.distributions.multinomial import Multinomial  # noqa: F401
from minigrad.distributions.mixture_same_family import MixtureSameFamily  # noqa: F401
from minigrad.distributions.relaxed_bernoulli import (LogitRelaxedBernoulli,  # noqa: F401
                                                      RelaxedBernoulli)
from minigrad.distributions.relaxed_categorical import (ExpRelaxedCategorical,  # noqa: F401
                                                        RelaxedOneHotCategorical)
from minigrad.distributions.low_rank_multivariate_normal import (  # noqa: F401
    LowRankMultivariateNormal)
from minigrad.distributions.weibull import Weibull  # noqa: F401
from minigrad.distributions.pareto import Pareto  # noqa: F401
from minigrad.distributions.half_cauchy import HalfCauchy  # noqa: F401
from minigrad.distributions.inverse_gamma import InverseGamma  # noqa: F401
from minigrad.distributions.kumaraswamy import Kumaraswamy  # noqa: F401
from minigrad.distributions.von_mises import VonMises  # noqa: F401
from minigrad.distributions.continuous_bernoulli import ContinuousBernoulli  # noqa: F401
from minigrad.distributions.fisher_snedecor import FisherSnedecor  # noqa: F401
from minigrad.distributions.one_hot_categorical_st import (  # noqa: F401
    OneHotCategoricalStraightThrough)
from minigrad.distributions.generalized_pareto import GeneralizedPareto  # noqa: F401
from minigrad.distributions.logistic_normal import LogisticNormal  # noqa: F401
from minigrad.distributions.wishart import Wishart  # noqa: F401
from minigrad.distributions.kl import kl_divergence, register_kl  # noqa: F401
from minigrad.distributions import kl_families  # noqa: F401  (registers its KLs)
from minigrad.distributions import kl_more  # noqa: F401  (registers its KLs)
from minigrad.distributions import kl_mixed  # noqa: F401  (registers its KLs)

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical",
           "OneHotCategorical", "MultivariateNormal", "Independent", "Exponential",
           "Laplace", "Cauchy", "Gumbel", "LogNormal", "Poisson", "Binomial", "Gamma", "Chi2",
           "Beta", "Dirichlet", "HalfNormal", "StudentT", "Geometric", "NegativeBinomial",
           "Multinomial", "MixtureSameFamily", "LogitRelaxedBernoulli", "RelaxedBernoulli",
           "ExpRelaxedCategorical", "RelaxedOneHotCategorical", "TransformedDistribution",
           "LowRankMultivariateNormal", "Weibull", "Pareto", "HalfCauchy", "InverseGamma",
           "Kumaraswamy", "VonMises", "ContinuousBernoulli", "FisherSnedecor",
           "OneHotCategoricalStraightThrough", "LKJCholesky", "GeneralizedPareto",
           "LogisticNormal", "Wishart", "kl_divergence", "register_kl",
           "constraints", "transforms", "biject_to", "transform_to", "AbsTransform",
           "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]
