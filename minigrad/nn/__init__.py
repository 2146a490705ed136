"""minigrad.nn: modules and layers, with PyTorch's names, arguments and parameter names."""
from minigrad.nn.module import Module, Parameter  # noqa: F401
from minigrad.nn.containers import ModuleList, ModuleDict, Sequential  # noqa: F401
from minigrad.nn.layers import (Linear, Embedding, LayerNorm, Dropout, ReLU, GELU,  # noqa
                                Tanh, Sigmoid, Identity, Softmax, LogSoftmax)
from minigrad.nn.layers import (SiLU, LeakyReLU, Softplus, ELU, Flatten,  # noqa: F401
                                Unflatten, RMSNorm)
from minigrad.nn.losses import (CrossEntropyLoss, MSELoss, NLLLoss,  # noqa: F401
                                BCEWithLogitsLoss, BCELoss, L1Loss)
from minigrad.nn.activations import (GLU, Hardtanh, ReLU6, LogSigmoid, Mish,  # noqa
                                     Softsign, SELU, PReLU, CosineSimilarity,
                                     PairwiseDistance)
from minigrad.nn.activations import (CELU, Hardswish, Hardsigmoid, Hardshrink,  # noqa
                                     Softshrink, Tanhshrink, Threshold, Softmin, RReLU)
from minigrad.nn.losses import SmoothL1Loss, HuberLoss, KLDivLoss  # noqa: F401
from minigrad.nn.losses import NLLLoss2d  # noqa: F401
from minigrad.nn.losses import (MarginRankingLoss, HingeEmbeddingLoss,  # noqa: F401
                                CosineEmbeddingLoss, SoftMarginLoss,
                                MultiLabelSoftMarginLoss, MultiMarginLoss,
                                TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss)
from minigrad.nn.containers import ParameterList, ParameterDict  # noqa: F401
from minigrad.nn.batchnorm import BatchNorm1d  # noqa: F401
from minigrad.nn.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d,  # noqa: F401
                              ConvTranspose2d, ConvTranspose3d, Fold, Unfold)
from minigrad.nn.batchnorm import BatchNorm2d, BatchNorm3d, SyncBatchNorm  # noqa: F401
from minigrad.nn.normalization import (GroupNorm, InstanceNorm1d, InstanceNorm2d,  # noqa
                                       InstanceNorm3d, LocalResponseNorm)
from minigrad.nn.image import (Upsample, PixelShuffle, PixelUnshuffle,  # noqa: F401
                               ChannelShuffle, Softmax2d, Dropout1d, Dropout2d, Dropout3d,
                               AlphaDropout, UpsamplingNearest2d, UpsamplingBilinear2d)
from minigrad.nn.padding import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d,  # noqa
                                 ConstantPad2d, ConstantPad3d, ReflectionPad1d,
                                 ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
                                 ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                                 CircularPad2d, CircularPad3d)
from minigrad.nn.layers import Bilinear  # noqa: F401
from minigrad.nn.pool import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,  # noqa
                              AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d,
                              AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                              LPPool1d, LPPool2d)
from minigrad.nn.rnn_cells import RNNCellBase, RNNCell, GRUCell, LSTMCell  # noqa: F401
from minigrad.nn.rnn import RNNBase, RNN, GRU, LSTM  # noqa: F401
from minigrad.nn.attention import MultiheadAttention  # noqa: F401
from minigrad.nn.transformer import (Transformer, TransformerEncoder,  # noqa: F401
                                     TransformerDecoder, TransformerEncoderLayer,
                                     TransformerDecoderLayer)
from minigrad.nn.losses_extra import (CTCLoss, MultiLabelMarginLoss,  # noqa: F401
                                     TripletMarginWithDistanceLoss, LinearCrossEntropyLoss)
from minigrad.ops.linear_cross_entropy import LinearCrossEntropyOptions  # noqa: F401
from minigrad.nn.embedding_bag import EmbeddingBag  # noqa: F401
from minigrad.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from minigrad.nn.pool_extra import (MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,  # noqa: F401
                                    AdaptiveMaxPool3d, LPPool3d, FeatureAlphaDropout,
                                    FractionalMaxPool2d, FractionalMaxPool3d)
from minigrad.nn.buffer import Buffer  # noqa: F401
from minigrad.nn.lazy import (LazyLinear, UninitializedParameter,  # noqa: F401
                              UninitializedBuffer, LazyConv1d, LazyConv2d, LazyConv3d,
                              LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                              LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                              LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from minigrad.nn.lrn_cross_map import CrossMapLRN2d  # noqa: F401
from minigrad.nn.legacy import Container, DataParallel  # noqa: F401
from minigrad.nn import init, utils, grad, parameter, common_types  # noqa: F401
from minigrad import functional  # noqa: F401
import sys as _sys

_sys.modules[__name__ + ".functional"] = functional   # `import minigrad.nn.functional as F`
from minigrad.nn import modules  # noqa: F401,E402  (every Module class above, by PyTorch's path)
