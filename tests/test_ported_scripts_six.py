"""Ported scripts, a sixth set (see test_ported_scripts.py): Karpathy's "Let's build GPT
from scratch" lecture, the bigram model, the self-attention trick cells and gpt.py
(port_gpt_lecture.py); Robert Guthrie's "Deep Learning for NLP with PyTorch": the
bag-of-words classifier, N-gram model, CBOW and LSTM tagger (port_nlp_tutorial.py) and
the BiLSTM-CRF (port_bilstm_crf.py); PyTorch's "Tensors" tutorial and the "Introduction
to PyTorch Tensors" video cells (port_tensors_basics.py). Each runs under minigrad and,
from minigrad's initial weights and draws, under PyTorch: the same values step by step."""
import math

import numpy as np

import minigrad
from port_bilstm_crf import bilstm_crf
from port_gpt_lecture import TEXT, gpt, trick
from port_helpers import _compare, _libs
from port_nlp_tutorial import nlp_tutorial
from port_tensors_basics import tensors_basics


def test_attention_trick_three_ways_agree():
    out = trick(*_libs(minigrad))[1]
    assert out[:5] == [1.0] * 5                    # xbow three ways; c's first row; shape
    assert out[5] == 1.0 and abs(out[6] - 1) < 1e-6 and out[7] == 1.0   # causal rows


def test_attention_trick_matches_torch(torch):
    _compare(torch, trick)


def test_gpt_lecture_bigram_then_gpt_train_and_generate():
    out = gpt(*_libs(minigrad))[1]
    assert np.isfinite(out).all() and len(out) == 67
    bigram, model = out[:33], out[33:]
    assert abs(bigram[0] - math.log(32)) < 0.6           # 32 characters, near uniform
    assert 0.005 < model[0] < 0.01                       # millions of parameters
    assert abs(model[1] - math.log(32)) < 0.3            # std 0.02 init: near uniform
    assert np.mean(model[16:21]) < np.mean(model[1:6])
    assert all(0 <= i < len(set(TEXT)) for i in bigram[20:] + model[21:]) and model[21] == 0


def test_gpt_lecture_matches_torch(torch):
    _compare(torch, gpt, dropout=0.0)


def test_nlp_tutorial_bow_ngram_cbow_tagger_train():
    out = nlp_tutorial(*_libs(minigrad))[1]
    assert len(out) == 81 and np.isfinite(out).all()
    probs = np.exp(np.reshape(out[:6], (3, 2))).sum(1)   # log_softmax rows
    np.testing.assert_allclose(probs, 1, rtol=1e-5)
    assert out[27] < out[8]                              # BoW's loss over 20 epochs
    assert out[28] > out[29] and out[30] < out[31]       # the test sentences, after
    assert out[32] - out[33] > out[6] - out[7]           # creo leans SPANISH now
    assert out[36] < out[34] and out[50] < out[47]       # n-gram and CBOW total losses
    assert out[75] < out[66] / 5 and out[76:] == [0, 1, 2, 0, 1]   # the tagger learns it


def test_nlp_tutorial_matches_torch(torch):
    _compare(torch, nlp_tutorial)


def test_bilstm_crf_trains_and_decodes():
    out = bilstm_crf(*_libs(minigrad))[1]
    assert len(out) == 30 and np.isfinite(out).all()
    assert all(t in range(3) for t in out[1:12] + out[19:])   # never START or STOP
    assert out[16] < out[12] and out[17] < out[13]         # both sentences' NLL
    assert all(v > 0 for v in out[12:18])                 # log Z above the gold score


def test_bilstm_crf_matches_torch(torch):
    _compare(torch, bilstm_crf)


def test_tensors_tutorial_cells():
    out = tensors_basics(*_libs(minigrad))[1]
    assert np.isfinite(out).all()
    assert out[:4] == [1, 1, 1, 1] and all(0 <= v < 1 for v in out[4:8])
    assert -1.0 in out                                    # the broadcast error caught


def test_tensors_tutorial_matches_torch(torch):
    _compare(torch, tensors_basics)
