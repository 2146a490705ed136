"""Arguments that used to be taken silently (truncated, ignored, or turned into NaN) or that
failed deep inside with a bare traceback: each now refused with a message naming it."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.nn import init
from minigrad.utils import data
import minitransformer

x2 = mg.ones(3, 3)
idx = mg.tensor([0, 1])
logits, target = mg.randn(2, 3), mg.tensor([0, 2])
q = mg.randn(1, 2, 4)
ds = data.TensorDataset(mg.arange(5))

CASES = {
    # silently wrong before
    "tril 1.5": (lambda: x2.tril(1.5), TypeError, "diagonal must be an int"),
    "triu True": (lambda: mg.triu(x2, True), TypeError, "diagonal must be an int"),
    "one_hot 2.5": (lambda: F.one_hot(idx, 2.5), TypeError, "num_classes must be an int"),
    "ignore_index 1.5": (lambda: F.cross_entropy(logits, target, ignore_index=1.5), TypeError,
                         "ignore_index must be an int"),
    "nll ignore_index None": (lambda: F.nll_loss(logits, target, ignore_index=None),
                              TypeError, "ignore_index must be an int"),
    "padding_idx 1.5": (lambda: F.embedding(idx, mg.randn(4, 2), padding_idx=1.5), TypeError,
                        "padding_idx must be an int"),
    "embedding 1-D weight": (lambda: F.embedding(idx, mg.randn(4)), ValueError,
                             "weight must be a 2-D table"),
    "int attn_mask": (lambda: F.scaled_dot_product_attention(
        q, q, q, attn_mask=mg.ones(2, 2, dtype=mg.int64)), TypeError,
        "attn_mask must be boolean .* or floating"),
    "layer_norm ()": (lambda: F.layer_norm(x2, []), ValueError, "at least one trailing dim"),
    "batch_norm eps": (lambda: F.batch_norm(x2, mg.zeros(3), mg.ones(3), eps=-3), ValueError,
                       "eps must be >= 0"),
    "cosine eps": (lambda: F.cosine_similarity(x2, x2, eps=-1), ValueError, "eps must be >= 0"),
    "Adam wd nan": (lambda: optim.Adam([nn.Parameter(mg.ones(1))], weight_decay=math.nan),
                    ValueError, "invalid weight_decay nan"),
    "default dtype None": (lambda: mg.set_default_dtype(None), TypeError, "only floating"),
    "dtype=tensor": (lambda: mg.ones(2, dtype=mg.tensor(2.5)), TypeError, "pass t.dtype"),
    "dtype=np value": (lambda: mg.ones(2, dtype=np.int64(2)), TypeError, "a dtype is needed"),
    "full_like None": (lambda: mg.full_like(x2, None), TypeError, "fill_value must be a number"),
    "full_like str": (lambda: mg.full_like(x2, "2"), TypeError, "fill_value must be a number"),
    "Subset 1.5": (lambda: data.Subset(ds, [1.5]), TypeError, "an index must be an int"),
    "Subset int": (lambda: data.Subset(ds, -1), TypeError, "a sequence of ints"),
    "attention dropout": (lambda: minitransformer.attention_with_weights(q, q, q, dropout_p=-1),
                          ValueError, r"dropout_p must be in \[0, 1\)"),
    "warmup_cosine step": (lambda: optim.warmup_cosine(-3, 0.1, 0.0, 2, 10), ValueError,
                           "must be >= 0"),
    "warmup_cosine lrs": (lambda: optim.warmup_cosine(3, 0.1, -0.2, 2, 10), ValueError,
                          "must be >= 0"),
    "step_decay gamma": (lambda: optim.step_decay(3, 0.1, 2, gamma=-1), ValueError, "gamma > 0"),
    "noam factor": (lambda: optim.noam(5, 64, 10, factor=-1), ValueError, "factor"),
    "split True": (lambda: mg.split(x2, True), TypeError, "split_size must be an int"),
    "chunk True": (lambda: mg.chunk(x2, True), ValueError, "chunks must be a positive integer"),
    "multinomial True": (lambda: mg.multinomial(mg.ones(3), True), TypeError,
                         "num_samples must be an int"),
    "drop_last str": (lambda: data.DataLoader(ds, drop_last="no"), TypeError,
                      "drop_last must be True or False"),
    # bare tracebacks before
    "exp None": (lambda: mg.exp(None), TypeError, "expected a Tensor, got NoneType"),
    "relu ndarray": (lambda: F.relu(np.ones(3)), TypeError, "expected Tensor inputs"),
    "silu None": (lambda: F.silu(None), TypeError, "silu: expected a Tensor"),
    "cat None item": (lambda: mg.cat([x2, None]), TypeError, "item 1 of the sequence"),
    "stack ndarray": (lambda: mg.stack([x2, np.ones((3, 3))]), TypeError, "not a Tensor"),
    "cat one tensor": (lambda: mg.cat(x2), TypeError, "got one Tensor"),
    "type_as None": (lambda: x2.type_as(None), TypeError, "type_as: expected a Tensor"),
    "view_as list": (lambda: x2.view_as([1, 2]), TypeError, "view_as: expected a Tensor"),
    "expand_as str": (lambda: x2.expand_as("a"), TypeError, "expand_as: expected a Tensor"),
    "sdpa ints": (lambda: F.scaled_dot_product_attention(*(mg.ones(1, 2, 2, dtype=mg.int64),)
                                                          * 3), TypeError, "floating-point"),
    "pad int": (lambda: F.pad(x2, 1), TypeError, "tuple of ints of even length"),
    "arange str": (lambda: mg.arange("2"), TypeError, "end must be a number"),
    "MHA str": (lambda: minitransformer.MultiHeadAttention("a", 2), ValueError,
                "d_model must be a positive integer"),
    "MHA float": (lambda: minitransformer.MultiHeadAttention(2.5, 2), ValueError,
                  "d_model must be a positive integer"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_bad_argument_is_named(name):
    call, error, match = CASES[name]
    with pytest.raises(error, match=match):
        call()


def test_what_stays_accepted():
    np.testing.assert_array_equal(mg.arange(0, 5, mg.tensor(2)).numpy(), [0, 2, 4])
    assert mg.full((2,), mg.tensor(3.0)).tolist() == [3.0, 3.0]
    assert x2.std(correction=None).item() == x2.std().item()       # None: the default, 1
    assert x2.var(0, correction=None).shape == (3,)
    assert x2.tril(np.int64(1)).shape == (3, 3)
    assert F.one_hot(idx, -1).shape == (2, 2)
    assert data.Subset(ds, mg.tensor([1, 3]))[1][0].item() == 3
    assert mg.ones(2, dtype=np.float64).dtype == mg.float64        # a NumPy type is a dtype
    assert F.scaled_dot_product_attention(q, q, q, attn_mask=mg.zeros(2, 2)).shape == q.shape


def test_an_integer_to_a_negative_integer_power_is_named():
    for call in (lambda: mg.tensor([2, 1]) ** mg.tensor(-1), lambda: (-3) ** mg.tensor([2, -1])):
        with pytest.raises(ValueError, match="negative integer power"):
            call()
    assert (mg.tensor([2, 3]) ** 2).tolist() == [4, 9]
    assert (mg.tensor([2.0]) ** -1).item() == 0.5


def test_data_loader_takes_pytorchs_shuffle_none():
    assert len(list(data.DataLoader(ds, shuffle=None))) == 5
    assert len(list(data.DataLoader(ds, batch_size=2, shuffle=np.True_, drop_last=True))) == 2


def test_noam_refuses_a_zero_factor():
    with pytest.raises(ValueError, match="factor"):
        optim.noam(1, 512, factor=0)


NUMBERS = {
    "clip min": lambda: x2.clamp(min="2"),
    "normalize eps": lambda: F.normalize(x2, eps="a"),
    "layer_norm eps": lambda: F.layer_norm(x2, (3,), eps=None),
    "sdpa scale": lambda: F.scaled_dot_product_attention(q, q, q, scale="a"),
    "orthogonal gain": lambda: init.orthogonal_(mg.zeros(2, 2), gain="a"),
    "constant val": lambda: init.constant_(mg.zeros(2), "a"),
    "dropout p": lambda: F.dropout(x2, p=None),
    "label_smoothing": lambda: F.cross_entropy(logits, target, label_smoothing=None),
    "huber delta": lambda: F.huber_loss(x2, x2, delta=None),
    "smooth_l1 beta": lambda: F.smooth_l1_loss(x2, x2, beta=None),
    "hardtanh min_val": lambda: F.hardtanh(x2, None, 1.0),
    "isclose rtol": lambda: mg.isclose(x2, x2, rtol=None),
    "clip_grad_norm_ max_norm": lambda: nn.utils.clip_grad_norm_([nn.Parameter(mg.ones(1))],
                                                                 "a"),
    "plateau metrics": lambda: optim.ReduceLROnPlateau(
        optim.SGD([nn.Parameter(mg.ones(1))], lr=0.1)).step("a"),
}


@pytest.mark.parametrize("name", NUMBERS)
def test_a_number_argument_that_is_not_one_is_named(name):
    argument = name.split()[-1]
    with pytest.raises(TypeError, match=f"{argument} must be a number"):
        NUMBERS[name]()


def test_numbers_may_still_come_as_one_element_tensors():
    assert x2.clamp(max=mg.tensor(0.5)).sum().item() == 4.5
    assert init.constant_(mg.zeros(2), mg.tensor(2.0)).tolist() == [2.0, 2.0]
    p = nn.Parameter(mg.ones(1))
    p.grad = mg.ones(1) * 5
    assert nn.utils.clip_grad_norm_([p], 1.0, norm_type="inf").item() == 5.0
    optim.ReduceLROnPlateau(optim.SGD([p], lr=0.1)).step(mg.tensor(1.0))
