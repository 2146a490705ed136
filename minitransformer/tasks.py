"""Generated sequence-to-sequence tasks (no downloads): date-format translation and sequence
reversal / copy, each with a training set, a held-out set that shares nothing with it, and
a "longer" set whose inputs are all longer than any input seen in training.

    task = date_task()               # "wednesday 3 march 1999" -> "1999-03-03"
    task.train[0]                    # ('feb 23rd 1976', '1976-02-23')
    src, tgt_in, tgt_out = task.batch(task.train[:32])   # padded id tensors

Data are plain Python strings and ints until `batch` turns them into minigrad tensors.
"""
import datetime
import random
from dataclasses import dataclass, field

import minigrad as mg

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"


class CharVocab:
    """Character-level vocabulary: ids 0, 1, 2 are <pad>, <bos>, <eos>, then the characters
    of `alphabet` in order."""

    def __init__(self, alphabet):
        self.itos = [PAD, BOS, EOS] + sorted(set(alphabet))
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __len__(self):
        return len(self.itos)

    def encode(self, text, bos=False, eos=False):
        try:
            ids = [self.stoi[c] for c in text]
        except KeyError as e:
            raise KeyError(f"CharVocab.encode: character {e.args[0]!r} of {text!r} is not in "
                           f"the vocabulary {''.join(self.itos[3:])!r}") from None
        return [self.bos_id] * bos + ids + [self.eos_id] * eos

    def decode(self, ids, show_special=False):
        """Characters of `ids`, stopping at <eos>. <pad>/<bos> are skipped, or with
        show_special written out as "<pad>"/"<bos>" (to show a model's output as it is)."""
        out = []
        for i in ids:
            if not 0 <= i < len(self.itos):              # (a negative id would count back)
                raise ValueError(f"CharVocab.decode: id {i!r} is outside the vocabulary "
                                 f"(0..{len(self.itos) - 1})")
            if i == self.eos_id:
                break
            if i > self.eos_id or show_special:
                out.append(self.itos[i])
        return "".join(out)

    def pad(self, seqs):
        """Right-pad lists of ids to one length with pad_id."""
        width = max((len(s) for s in seqs), default=0)
        return [list(s) + [self.pad_id] * (width - len(s)) for s in seqs]


@dataclass
class Seq2SeqTask:
    """A generated task: (source, target) string pairs in three disjoint splits."""
    name: str
    src_vocab: CharVocab
    tgt_vocab: CharVocab
    train: list
    held_out: list
    longer: list
    info: dict = field(default_factory=dict)

    def batch(self, pairs, device="cpu"):
        """(src, tgt_in, tgt_out) int64 tensors, right-padded with pad_id (0): src (B, S);
        tgt_in = <bos> + target (B, T); tgt_out = target + <eos> (B, T), the labels."""
        src = self.src_vocab.pad([self.src_vocab.encode(s) for s, _ in pairs])
        tgt = [self.tgt_vocab.encode(t) for _, t in pairs]
        tgt_in = self.tgt_vocab.pad([[self.tgt_vocab.bos_id] + t for t in tgt])
        tgt_out = self.tgt_vocab.pad([t + [self.tgt_vocab.eos_id] for t in tgt])
        return tuple(_ids(x, device) for x in (src, tgt_in, tgt_out))

    def sources(self, texts, device="cpu"):
        """Source strings as one right-padded (B, S) int64 tensor (for decoding)."""
        return _ids(self.src_vocab.pad([self.src_vocab.encode(s) for s in texts]), device)

    def batches(self, batch_size, rng, device="cpu"):
        """Endless shuffled training batches of batch_size pairs (each pass over the
        training set in a new order; a last, smaller batch left out)."""
        if not 1 <= batch_size <= len(self.train):
            raise ValueError(f"{self.name} task: batch_size must be 1..{len(self.train)} (the "
                             f"training set's size), got {batch_size}")
        return self._batches(batch_size, rng, device)

    def _batches(self, batch_size, rng, device):
        while True:
            order = list(range(len(self.train)))
            rng.shuffle(order)
            for i in range(0, len(order) - batch_size + 1, batch_size):
                yield self.batch([self.train[j] for j in order[i:i + batch_size]], device)

    def max_target_len(self):
        return max((len(t) for _, t in self.train + self.held_out + self.longer), default=0)


def _ids(rows, device):
    """Rows of token ids (of one length) as a (B, S) int64 tensor, (0, 0) for no rows."""
    t = mg.tensor(rows, dtype=mg.int64, device=device)
    return t if rows else t.reshape(0, 0)


def is_exact(ids, target, tgt_vocab):
    """True when the output token ids (cut before <eos>) are exactly the target's ids.
    Compared as ids, not via `decode`, which skips <pad>/<bos>: an output with a stray
    <bos> or <pad> inside it is wrong, not quietly cleaned up."""
    return [int(i) for i in ids] == tgt_vocab.encode(target)


def exact_match(predict, pairs, tgt_vocab, batch_size=256):
    """The fraction of `pairs` whose whole output is right (`is_exact`). `predict(sources)`
    takes a list of source strings and returns a list of token-id lists."""
    if not pairs:
        return float("nan")
    right = 0
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i:i + batch_size]
        outs = predict([s for s, _ in chunk])
        right += sum(is_exact(o, t, tgt_vocab) for o, (_, t) in zip(outs, chunk))
    return right / len(pairs)


# ---- dates -----------------------------------------------------------------------------------
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def ordinal(n):
    """1 -> "1st", 2 -> "2nd", 3 -> "3rd", 11 -> "11th", 22 -> "22nd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _fields(date):
    month, weekday = MONTHS[date.month - 1], WEEKDAYS[date.weekday()]
    return dict(d=date.day, dd=f"{date.day:02d}", do=ordinal(date.day), m=date.month,
                mm=f"{date.month:02d}", month=month, mon=month[:3], y=date.year,
                weekday=weekday, wd=weekday[:3])


# Surface formats seen in training (each also shows up in the held-out set). Numeric ones
# are unambiguous by construction: year first, or day.month.year with dots.
DATE_FORMATS = [
    "{d} {month} {y}", "{weekday} {d} {month} {y}", "{month} {d}, {y}", "{do} {month} {y}",
    "{wd} {d} {mon} {y}", "{y}/{mm}/{dd}", "{dd}.{mm}.{y}", "{d}-{mon}-{y}",
    "{mon} {dd} {y}", "{month} {do}, {y}", "the {do} of {month} {y}", "{wd}, {mon} {d} {y}",
    "{y}-{m}-{d}", "{weekday}, {month} {d}, {y}", "{do} of {month}, {y}", "{y} {month} {d}",
    "{dd}{mon}{y}", "{wd} {do} {mon} {y}", "{d}.{m}.{y}", "{mon} {do} {y}",
]
# Long formats used only for the "longer" set: the same words, more of them.
LONG_DATE_FORMATS = [
    "{weekday}, the {do} of {month}, {y}", "{weekday} the {do} of {month} {y}",
    "{weekday}, {do} of {month} {y}", "{weekday}, {month} the {do}, {y}",
    "{weekday} {do} {month}, {y}",
]


def date_task(n_train=20000, n_held_out=1000, n_longer=1000, max_train_len=26, seed=0,
              years=(1950, 2050)):
    """Date-format translation: many surface forms -> ISO "yyyy-mm-dd". Held-out DATES never
    occur in training (so no held-out source does either). Training and held-out sources
    are at most `max_train_len` characters; every "longer" source is longer than that,
    written in long-only formats or long instances of the training formats."""
    if not years[0] < years[1]:
        raise ValueError(f"date_task: years must be (first, last) with first < last (dates "
                         f"from 1 January of the first to 31 December before the last), got "
                         f"{years}")
    rng = random.Random(seed)
    start = datetime.date(years[0], 1, 1)
    n_days = (datetime.date(years[1], 1, 1) - start).days
    days = rng.sample(range(n_days), n_days)
    n_eval_dates = max(n_days // 10, 1)
    eval_dates, train_dates = days[:n_eval_dates], days[n_eval_dates:]

    def sample(day_pool, formats, n, keep):
        out, seen, tries = [], set(), 0
        while len(out) < n:
            tries += 1
            if tries > 50 * n + 1000:
                raise ValueError(f"date_task: could not draw {n} distinct examples")
            date = start + datetime.timedelta(days=rng.choice(day_pool))
            src = rng.choice(formats).format(**_fields(date))
            if keep(src) and src not in seen:
                seen.add(src)
                out.append((src, date.isoformat()))
        return out

    short = lambda s: len(s) <= max_train_len          # noqa: E731
    train = sample(train_dates, DATE_FORMATS, n_train, short)
    held_out = sample(eval_dates, DATE_FORMATS, n_held_out, short)
    longer = sample(eval_dates, DATE_FORMATS + LONG_DATE_FORMATS * 3, n_longer,
                    lambda s: len(s) > max_train_len)
    return Seq2SeqTask("dates", CharVocab(" ,-./0123456789abcdefghijklmnopqrstuvwxyz"),
                       CharVocab("-0123456789"), train, held_out, longer,
                       dict(max_train_len=max_train_len, years=years))


# ---- reversal / copy -------------------------------------------------------------------------
def reversal_task(n_train=10000, n_held_out=1000, n_longer=1000, min_len=3, max_len=12,
                  longer_len=(13, 18), alphabet="abcdefghij", copy=False, seed=0):
    """Sequence reversal ("abcd" -> "dcba"), or copying with copy=True. Training and held-out
    strings are min_len..max_len long and disjoint; the "longer" set is longer_len[0]..
    longer_len[1] long."""
    if not 0 <= min_len <= max_len < longer_len[0] <= longer_len[1]:
        raise ValueError(f"reversal_task: needs 0 <= min_len <= max_len < longer_len[0] <= "
                         f"longer_len[1], got min_len={min_len}, max_len={max_len}, "
                         f"longer_len={longer_len}")
    rng = random.Random(seed)
    k = len(set(alphabet))

    def draw(lo, hi, n, avoid):
        out, seen = [], set(avoid)
        possible = sum(k ** n_chars for n_chars in range(lo, hi + 1)) - len(seen)
        if n > possible:
            raise ValueError(f"reversal_task: asked for {n} distinct strings of length "
                             f"{lo}..{hi} over {k} characters, but only {possible} are left; "
                             f"ask for fewer, or widen the lengths or the alphabet")
        while len(out) < n:
            s = "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))
            if s not in seen:
                seen.add(s)
                out.append((s, s if copy else s[::-1]))
        return out

    train = draw(min_len, max_len, n_train, ())
    held_out = draw(min_len, max_len, n_held_out, [s for s, _ in train])
    longer = draw(longer_len[0], longer_len[1], n_longer, ())
    vocab = CharVocab(alphabet)
    return Seq2SeqTask("copy" if copy else "reversal", vocab, CharVocab(alphabet), train,
                       held_out, longer, dict(max_train_len=max_len))
