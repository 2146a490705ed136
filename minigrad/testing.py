"""mg.testing.assert_close, as torch.testing.assert_close: tensors (or numbers, or nested
sequences and mappings of them) equal up to |actual - expected| <= atol + rtol·|expected|,
with torch's default tolerances for the dtypes compared, and an AssertionError that says
how many elements differ and by how much at most.

    mg.testing.assert_close(model(x), expected)             # float32: rtol 1.3e-6, atol 1e-5
    mg.testing.assert_close(a, b, rtol=0, atol=0)           # exact
"""
import collections.abc
import numbers

from minigrad.backend import np
from minigrad.tensor import Tensor

# (rtol, atol) by dtype, as torch's; integers and bools compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _tolerance(dtype):
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def _fail(msg, default, path):
    where = f"\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in path)}" \
        if path else ""
    text = msg(default) if callable(msg) else msg if msg is not None else default + where
    raise AssertionError(text)


def _values(x):
    """(host array, dtype, device) of a tensor or a number."""
    if isinstance(x, Tensor):
        return x.detach().numpy(), x.dtype, str(x.device)
    value = np.asarray(x)
    if isinstance(x, bool):
        return value, np.dtype(bool), None
    # Python numbers: int64 and float64, as torch's reading of them
    return value, np.dtype("int64" if isinstance(x, numbers.Integral) else "float64"), None


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, msg, path):
    a, a_dtype, a_device = _values(actual)
    e, e_dtype, e_device = _values(expected)
    for name, x, y, check in (("shape", a.shape, e.shape, True),
                              ("dtype", a_dtype, e_dtype, check_dtype),
                              ("device", a_device, e_device, check_device)):
        if check and x != y:
            _fail(msg, f"The values for attribute '{name}' do not match: {x} != {y}.", path)
    if rtol is None:
        rtol, atol = (max(t) for t in zip(_tolerance(a_dtype), _tolerance(e_dtype)))
    common = _common_type(a, e)
    a, e = a.astype(common), e.astype(common)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)       # exact for integers (float64 would round past 2**53)
        # an infinity matches only itself (inf <= atol + rtol·inf would let -inf pass)
        close = (a == e) | (np.isfinite(a) & np.isfinite(e) &
                            (diff.astype(np.float64) <= atol + rtol * np.abs(e)))
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return
    _fail(msg, _mismatch(a, e, diff, close, rtol, atol), path)


def _common_type(a, e):
    """The type both are compared in: complex if either is, else float64 if either is
    floating, else int64 (integers and bools compare exactly)."""
    kinds = {a.dtype.kind, e.dtype.kind}
    return np.complex128 if "c" in kinds else np.float64 if "f" in kinds else np.int64


def _mismatch(a, e, diff, close, rtol, atol):
    """The failure message, in torch's words: a 0-d pair as one scalar, else how many
    elements differ and where the greatest differences are."""
    equal = rtol == 0 and atol == 0
    title = "not equal!" if equal else "not close!"
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(e)
    allowed = {"absolute": "" if equal else f" (up to {atol} allowed)",
               "relative": "" if equal else f" (up to {rtol} allowed)"}
    if a.ndim == 0:
        return "\n".join([f"Scalars are {title}", "", f"Expected {e.item()} but got {a.item()}.",
                          f"Absolute difference: {diff.item()}{allowed['absolute']}",
                          f"Relative difference: {rel.item()}{allowed['relative']}"])
    bad = int((~close).sum())
    lines = [f"Tensor-likes are {title}", "",
             f"Mismatched elements: {bad} / {close.size} ({100 * bad / close.size:.1f}%)"]
    for what, d in (("absolute", diff), ("relative", rel)):
        shown = np.where(close, -np.inf, np.nan_to_num(d.astype(np.float64), nan=np.inf))
        i = np.unravel_index(int(np.argmax(shown)), d.shape)
        lines.append(f"Greatest {what} difference: {d[i]} at index "
                     f"{tuple(int(k) for k in i)}{allowed[what]}")
    return "\n".join(lines)


def _walk(actual, expected, path, **options):
    leaf = (Tensor, numbers.Number)
    if isinstance(actual, leaf) and isinstance(expected, leaf):
        if isinstance(actual, Tensor) != isinstance(expected, Tensor):
            raise TypeError(f"assert_close: cannot compare a {type(actual).__name__} with a "
                            f"{type(expected).__name__}; make both tensors (mg.tensor(...)) "
                            f"or both numbers")
        return _compare(actual, expected, path=path, **options)
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(options["msg"], f"The keys of the mappings do not match: "
                                  f"{sorted(map(repr, actual))} != "
                                  f"{sorted(map(repr, expected))}.", path)
        for key in actual:
            _walk(actual[key], expected[key], path + [key], **options)
        return
    sequence = (collections.abc.Sequence,)
    if isinstance(actual, sequence) and isinstance(expected, sequence) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(options["msg"], f"The length of the sequences mismatch: {len(actual)} != "
                                  f"{len(expected)}", path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _walk(x, y, path + [i], **options)
        return
    raise TypeError(f"assert_close: cannot compare {type(actual).__name__} with "
                    f"{type(expected).__name__}; expected tensors, numbers, or sequences or "
                    f"mappings of them")


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, msg=None, **ignored):
    """Raise AssertionError unless actual and expected are close: the same shape (and
    dtype and device, unless told not to check) and every element within
    atol + rtol·|expected| (NaN equal to NaN only with equal_nan). Give rtol and atol both
    or neither: by default each dtype's, the larger of the two dtypes' (float16 1e-3 and
    1e-5, float32 1.3e-6 and 1e-5, float64 1e-7 and 1e-7, integers exact). msg replaces
    the message (a string, or a function of the default one). torch's layout and stride
    checks (check_layout, check_stride, allow_subclasses) are taken and have nothing to
    check here."""
    unknown = set(ignored) - {"check_layout", "check_stride", "allow_subclasses"}
    if unknown:
        raise TypeError(f"assert_close: unexpected keyword arguments {sorted(unknown)}")
    if (rtol is None) != (atol is None):
        raise ValueError(f"assert_close: give both rtol and atol, or neither for the dtype's "
                         f"defaults; got rtol={rtol}, atol={atol}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and (not isinstance(value, numbers.Real) or value < 0):
            raise ValueError(f"assert_close: {name} must be a non-negative number, got "
                             f"{value!r}")
    _walk(actual, expected, [], rtol=rtol, atol=atol, equal_nan=equal_nan,
          check_dtype=check_dtype, check_device=check_device, msg=msg)
