"""CharTokenizer: vocabulary, round trip, saving, and the error that names unknown characters."""
import json

import numpy as np
import pytest

import minigrad as mg
from minitransformer.tokenizer import CharTokenizer, UnknownCharacterError


def test_vocabulary_is_sorted_set_of_characters():
    tok = CharTokenizer.from_text("hello, world\n")
    assert tok.chars == sorted(set("hello, world\n"))
    assert tok.vocab_size == len(set("hello, world\n")) == len(tok)


def test_encode_decode_round_trip():
    text = "First Citizen:\nBefore we proceed — any further, hear me speak.\n"
    tok = CharTokenizer.from_text(text)
    ids = tok.encode(text)
    assert all(isinstance(i, int) for i in ids) and len(ids) == len(text)
    assert tok.decode(ids) == text
    assert tok.decode(np.array(ids)) == text
    assert tok.decode(mg.tensor(ids)) == text


def test_unknown_characters_are_named():
    tok = CharTokenizer.from_text("abc ")
    with pytest.raises(UnknownCharacterError) as e:
        tok.encode("a bad zebra!")
    msg = str(e.value)
    for c in "dzer!":
        assert repr(c) in msg
    assert "'a'" not in msg.split("not in the vocabulary")[1].split(".")[0]
    assert "5 character(s)" in msg  # the distinct unknown ones: d, z, e, r, !
    assert isinstance(e.value, ValueError)


def test_decode_rejects_out_of_range_ids():
    tok = CharTokenizer.from_text("ab")
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([0, 2])


def test_dict_round_trip_is_json_able():
    tok = CharTokenizer.from_text("ünïcode text\twith\ttabs\n")
    d = json.loads(json.dumps(tok.to_dict()))
    assert CharTokenizer.from_dict(d) == tok


def test_empty_vocabulary_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        CharTokenizer.from_text("")


def test_negative_ids_are_out_of_range_not_counted_from_the_end():
    tok = CharTokenizer.from_text("ab")
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([0, -1])


def test_tokenizers_are_equal_only_with_the_same_vocabulary():
    assert CharTokenizer.from_text("abc") == CharTokenizer(["a", "b", "c"])
    assert CharTokenizer.from_text("abc") != CharTokenizer.from_text("abd")
    assert CharTokenizer(["b", "a"]) != CharTokenizer(["a", "b"])     # order is the id map


def test_vocabulary_must_be_distinct_single_characters():
    with pytest.raises(ValueError, match="distinct single characters"):
        CharTokenizer(["a", "a"])
    with pytest.raises(ValueError, match="distinct single characters"):
        CharTokenizer(["ab", "c"])
    with pytest.raises(ValueError, match="type"):
        CharTokenizer.from_dict({"type": "bpe", "chars": "ab"})


def test_decode_refuses_ids_that_are_not_integers():
    """decode([1.7]) read token 1 (int() truncated it), as decode([True]) did; a batch (2-D)
    is named as one, not a bare int() TypeError."""
    tok = CharTokenizer("abc")
    assert tok.decode(np.array([2, 1])) == "cb" and tok.decode(range(3)) == "abc"
    assert tok.decode(i for i in [0, 1, 2]) == "abc"          # a generator, read once
    for bad in ([1.7], np.array([1.7]), [True], np.array([[1, 2]])):
        with pytest.raises(TypeError, match="token ids must be integers"):
            tok.decode(bad)
    with pytest.raises(TypeError, match="takes a sequence of token ids, got str"):
        tok.decode("ab")
