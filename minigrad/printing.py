"""mg.set_printoptions: how tensors print, as torch.set_printoptions. minigrad prints through
NumPy's repr (tensor.py), so the options are NumPy's print options, kept here and applied
only while a tensor prints (NumPy's own arrays print as before). Until an option is set,
NumPy's defaults apply (8 digits where torch shows 4: np.float32(0.1) prints as 0.1)."""
import contextlib
import sys

from minigrad.backend import np

# torch's profiles, in NumPy's names: precision, threshold (elements before summarising),
# edgeitems (shown at each end of a summarised dim), linewidth (characters per line)
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=sys.maxsize, edgeitems=3, linewidth=80),
}
_options = {}                       # NumPy printoptions keywords set by set_printoptions


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """As torch.set_printoptions: `profile` ('default', 'short', 'full') sets the four
    numbers first, and any given number then overrides its own; sci_mode True prints floats
    in scientific notation, False never, None as NumPy decides. The numbers not given keep
    their current values; sci_mode, as torch's, is reset by each call that does not give it."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of "
                             f"{', '.join(map(repr, _PROFILES))}, got {profile!r}")
        _options.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"set_printoptions: {name} must be an int >= 0, got {value!r}")
        _options[name] = value
    # sci_mode is set by every call, as torch's: not given (None) goes back to NumPy's choice
    _options.pop("formatter", None)
    _options.pop("suppress", None)
    if sci_mode is not None:
        _options["suppress"] = not sci_mode
        if sci_mode:           # NumPy has no switch for it: a float formatter
            _options["formatter"] = {"float_kind": _scientific}


def _scientific(x):
    return np.format_float_scientific(x, precision=_options.get("precision", 4),
                                      unique=False)


def options():
    """A context in which NumPy prints with the options set (none set: no change)."""
    return np.printoptions(**_options) if _options else contextlib.nullcontext()
