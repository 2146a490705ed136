"""minigrad.optim: optimisers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam,
RAdam) with PyTorch's update equations and parameter groups, gradient clipping, and
learning-rate schedules (plain functions, and PyTorch's scheduler classes, ReduceLROnPlateau
among them, also under minigrad.optim.lr_scheduler)."""
from minigrad.optim.optimizer import (Optimizer, flatten_state_dict,  # noqa: F401
                                      unflatten_state_dict)
from minigrad.optim.sgd import SGD  # noqa: F401
from minigrad.optim.adam import Adam, AdamW  # noqa: F401
from minigrad.optim.rmsprop import RMSprop  # noqa: F401
from minigrad.optim.adagrad import Adagrad  # noqa: F401
from minigrad.optim.adadelta import Adadelta  # noqa: F401
from minigrad.optim.adamax import Adamax  # noqa: F401
from minigrad.optim.nadam import NAdam  # noqa: F401
from minigrad.optim.radam import RAdam  # noqa: F401
from minigrad.optim.rprop import Rprop  # noqa: F401
from minigrad.optim.asgd import ASGD  # noqa: F401
from minigrad.optim.adafactor import Adafactor  # noqa: F401
from minigrad.optim.lbfgs import LBFGS  # noqa: F401
from minigrad.optim.muon import Muon  # noqa: F401
from minigrad.optim import lr_scheduler  # noqa: F401
from minigrad.optim.lr_scheduler import (warmup_cosine, noam, step_decay, set_lr,  # noqa
                                         LRScheduler, LambdaLR, StepLR, MultiStepLR,
                                         ExponentialLR, CosineAnnealingLR, LinearLR,
                                         SequentialLR, OneCycleLR,
                                         ReduceLROnPlateau, ConstantLR, PolynomialLR,
                                         CosineAnnealingWarmRestarts, CyclicLR)
from minigrad.optim.chained import MultiplicativeLR, ChainedScheduler  # noqa: F401
from minigrad.optim import swa_utils  # noqa: F401
from minigrad.nn.utils import clip_grad_norm_, clip_grad_value_  # noqa: F401
