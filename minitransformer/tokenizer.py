"""CharTokenizer: one token per character, the vocabulary being the sorted set of a corpus's
characters (as nanoGPT's shakespeare_char). It saves to and loads from a JSON-able dict, which
the checkpoint keeps beside the weights."""
import numbers
from collections.abc import Iterable


class UnknownCharacterError(ValueError):
    """Text holds characters that are not in the tokenizer's vocabulary."""


class CharTokenizer:
    """One token per character: the vocabulary is the sorted set of a text's characters
    (nanoGPT's shakespeare_char), saved with each checkpoint."""

    def __init__(self, chars):
        chars = list(chars)
        if not chars:
            raise ValueError("CharTokenizer: the vocabulary is empty (was the text empty?)")
        if len(set(chars)) != len(chars) or any(len(c) != 1 for c in chars):
            raise ValueError("CharTokenizer: the vocabulary must be distinct single characters")
        self.chars = chars
        self.stoi = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text):
        """The vocabulary of `text`: its distinct characters, sorted."""
        return cls(sorted(set(text)))

    @property
    def vocab_size(self):
        return len(self.chars)

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        """str -> list of token ids. Characters outside the vocabulary are an error that
        names them."""
        try:
            return [self.stoi[c] for c in text]
        except KeyError:
            unknown = sorted({c for c in text if c not in self.stoi})
            shown = ", ".join(repr(c) for c in unknown[:20])
            more = f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
            raise UnknownCharacterError(
                f"CharTokenizer: {len(unknown)} character(s) not in the vocabulary: "
                f"{shown}{more}. The vocabulary has {self.vocab_size} characters: "
                f"{''.join(self.chars)!r}") from None

    def decode(self, ids):
        """Token ids (list, NumPy array or minigrad tensor of one sequence) -> str."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"CharTokenizer.decode: takes a sequence of token ids, got "
                            f"{type(ids).__name__}")
        ids = list(ids)
        wrong = [i for i in ids if not isinstance(i, numbers.Integral) or isinstance(i, bool)]
        if wrong:            # int(1.7) would silently read token 1; a list is a batch
            raise TypeError(f"CharTokenizer.decode: token ids must be integers (one "
                            f"sequence: decode each row of a batch), got {wrong[:3]}")
        n = self.vocab_size
        bad = [i for i in ids if not 0 <= int(i) < n]
        if bad:
            raise ValueError(f"CharTokenizer: token ids {bad[:10]} are out of range "
                             f"(valid: 0..{n - 1})")
        return "".join(self.chars[int(i)] for i in ids)

    def to_dict(self):
        return {"type": "char", "chars": "".join(self.chars)}

    @classmethod
    def from_dict(cls, d):
        if d.get("type", "char") != "char":
            raise ValueError(f"CharTokenizer: cannot load a tokenizer of type {d.get('type')!r}")
        return cls(d["chars"])

    def __eq__(self, other):
        return isinstance(other, CharTokenizer) and self.chars == other.chars

    def __repr__(self):
        return f"CharTokenizer(vocab_size={self.vocab_size})"
