"""Generated seq2seq tasks: correct targets, disjoint splits, a longer-input set."""
import datetime
import re

import pytest

from minitransformer.tasks import (CharVocab, date_task, exact_match, ordinal,
                                   reversal_task)


@pytest.fixture(scope="module")
def dates():
    return date_task(n_train=3000, n_held_out=300, n_longer=300, seed=1)


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]


def test_date_targets_are_the_dates_the_sources_name(dates):
    for src, tgt in dates.train[:500] + dates.longer[:200]:
        d = datetime.date.fromisoformat(tgt)
        nums = re.findall(r"\d+", src)
        assert str(d.year) in nums, (src, tgt)
        words = re.findall(r"[a-z]+", src)
        weekdays = [w for w in words if w[:3] in ("mon", "tue", "wed", "thu", "fri", "sat",
                                                  "sun") and w not in ("march",)]
        for w in weekdays:
            assert d.strftime("%A").lower().startswith(w), (src, tgt)


def test_date_splits_are_disjoint_and_longer_is_longer(dates):
    train_dates = {t for _, t in dates.train}
    assert not train_dates & {t for _, t in dates.held_out + dates.longer}
    assert not {s for s, _ in dates.train} & {s for s, _ in dates.held_out}
    longest_train = max(len(s) for s, _ in dates.train)
    assert longest_train <= dates.info["max_train_len"]
    assert max(len(s) for s, _ in dates.held_out) <= dates.info["max_train_len"]
    assert min(len(s) for s, _ in dates.longer) > longest_train
    assert len(dates.train) == 3000 and len(dates.longer) == 300


def test_date_surface_formats_are_varied(dates):
    srcs = [s for s, _ in dates.train]
    assert any(re.search(r"\d(st|nd|rd|th)\b", s) for s in srcs)      # ordinals
    assert any(re.search(r"\bsaturday\b", s) for s in srcs)            # day names
    assert any(re.search(r"\b(jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)\b", s) for s in srcs)
    assert any(re.fullmatch(r"\d{4}/\d\d/\d\d", s) for s in srcs)      # numeric
    assert any(re.fullmatch(r"\d\d\.\d\d\.\d{4}", s) for s in srcs)
    a = date_task(n_train=100, n_held_out=10, n_longer=10, seed=7)
    b = date_task(n_train=100, n_held_out=10, n_longer=10, seed=7)
    assert a.train == b.train and a.longer == b.longer


def test_vocab_and_batches(dates):
    v = dates.src_vocab
    assert (v.pad_id, v.bos_id, v.eos_id) == (0, 1, 2)
    assert v.decode(v.encode("3 march 1999", bos=True, eos=True) + [0, 0]) == "3 march 1999"
    with pytest.raises(KeyError, match="not in the vocabulary"):
        v.encode("März")
    src, tgt_in, tgt_out = dates.batch(dates.train[:4])
    assert src.shape[0] == 4 and tgt_in.shape == tgt_out.shape == (4, 11)
    assert tgt_in.numpy()[:, 0].tolist() == [1] * 4 and tgt_out.numpy()[:, -1].tolist() == [2] * 4
    assert dates.tgt_vocab.decode(tgt_out.numpy()[0].tolist()) == dates.train[0][1]


def test_reversal_and_copy():
    r = reversal_task(n_train=500, n_held_out=100, n_longer=50, max_len=8, longer_len=(9, 12))
    assert all(t == s[::-1] for s, t in r.train + r.longer)
    assert not {s for s, _ in r.train} & {s for s, _ in r.held_out}
    assert max(len(s) for s, _ in r.train) <= 8 < min(len(s) for s, _ in r.longer)
    c = reversal_task(n_train=50, n_held_out=10, n_longer=10, copy=True)
    assert all(t == s for s, t in c.train)
    with pytest.raises(ValueError, match="longer_len"):
        reversal_task(max_len=10, longer_len=(10, 12))


def test_exact_match_counts_whole_strings():
    v = CharVocab("ab")
    pairs = [("ab", "ba"), ("ab", "ab")]
    oracle = lambda srcs: [v.encode(s[::-1]) for s in srcs]    # noqa: E731
    assert exact_match(oracle, pairs, v) == 0.5


def test_exact_match_compares_ids_so_stray_special_tokens_are_wrong():
    # decode() skips <bos>/<pad>, so comparing decoded strings scored "b<bos>a" as "ba"
    v = CharVocab("ab")
    a, b = v.stoi["a"], v.stoi["b"]
    outputs = {"ab": [b, v.bos_id, a], "aa": [a, v.pad_id, a], "bb": [b, b]}
    pairs = [("ab", "ba"), ("aa", "aa"), ("bb", "bb")]
    assert exact_match(lambda srcs: [outputs[s] for s in srcs], pairs, v) == 1 / 3
    assert v.decode([b, v.bos_id, a], show_special=True) == "b<bos>a"


def test_tasks_refuse_what_they_cannot_deliver_instead_of_hanging():
    import random
    t = reversal_task(n_train=10, n_held_out=2, n_longer=2)
    with pytest.raises(ValueError, match=r"batch_size must be 1\.\.10"):
        t.batches(11, random.Random(0))
    assert next(t.batches(10, random.Random(0)))[0].shape[0] == 10
    with pytest.raises(ValueError, match="only 14 are left"):
        reversal_task(n_train=100, min_len=1, max_len=3, alphabet="ab", longer_len=(4, 5))
    with pytest.raises(ValueError, match="only 2 are left"):      # held-out avoids train
        reversal_task(n_train=10, n_held_out=5, n_longer=2, alphabet="ab", min_len=2,
                      max_len=3, longer_len=(4, 4))
    every = reversal_task(n_train=14, n_held_out=0, n_longer=2, min_len=1, max_len=3,
                          alphabet="ab", longer_len=(4, 5))
    assert len({s for s, _ in every.train}) == 14                # all of them can be drawn
    with pytest.raises(ValueError, match="min_len <= max_len"):
        reversal_task(min_len=5, max_len=3, longer_len=(6, 7))
    with pytest.raises(ValueError, match="first < last"):
        date_task(n_train=10, years=(2000, 2000))


def test_empty_inputs_keep_two_dims_and_bad_ids_are_named():
    t = reversal_task(n_train=10, n_held_out=2, n_longer=2)
    assert t.sources([]).shape == (0, 0)
    assert [x.shape for x in t.batch([])] == [(0, 0)] * 3
    v = CharVocab("abc")
    for ids in ([99], [3, -1, 4]):
        with pytest.raises(ValueError, match=r"outside the vocabulary \(0\.\.5\)"):
            v.decode(ids)
    assert v.decode([3, 4, 2, 5]) == "ab"


def test_task_edges_checked_exactly():
    import random
    from minitransformer.tasks import Seq2SeqTask
    v = CharVocab("abc")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        v.decode([len(v.itos)])
    t = reversal_task(n_train=10, n_held_out=2, n_longer=2)
    with pytest.raises(ValueError, match="batch_size must be 1"):
        t.batches(0, random.Random(0))
    assert Seq2SeqTask("none", v, v, [], [], []).max_target_len() == 0
    with pytest.raises(ValueError, match="0 <= min_len"):
        reversal_task(min_len=-1, max_len=3, longer_len=(4, 5))
    with pytest.raises(ValueError, match="only 1 are left"):     # "aa" is one letter
        reversal_task(alphabet="aa", min_len=1, max_len=1, n_train=2, n_held_out=0,
                      n_longer=1, longer_len=(2, 2))
