"""argparse types for the demos' and benchmarks' numeric flags: a bad value is refused by
argparse with the flag's name and what would be valid, before any work starts."""
import argparse
import math


def _number(kind, low, strict):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = None
        ok = value is not None and math.isfinite(value) and \
            (value > low if strict else value >= low)
        if not ok:
            what = "an integer" if kind is int else "a finite number"
            raise argparse.ArgumentTypeError(
                f"must be {what} {'>' if strict else '>='} {low}, got {text!r}")
        return value
    parse.__name__ = f"{kind.__name__} {'>' if strict else '>='} {low}"   # argparse's name
    return parse


positive_int = _number(int, 1, strict=False)          # >= 1
non_negative_int = _number(int, 0, strict=False)      # >= 0
positive_float = _number(float, 0, strict=True)       # > 0


def probability(text):
    """A dropout probability: a number in [0, 1) (1 would drop everything)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value < 1.0:                           # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}")
    return value
