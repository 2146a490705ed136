"""einsum: products and sums of tensors named by subscripts, as torch.einsum
("ij,jk->ik" is a matrix product, "bhqd,bhkd->bhqk" attention scores, "ii->" a trace).

One op, Einsum, on an equation already made explicit: every operand's subscripts are
letters ("..." replaced by letters of its own), the output is named, and each letter has
one size. Its gradient is einsum again: for operand k, the upstream gradient times every
other operand, summed to operand k's subscripts,

    d out / d A_k = einsum(out, other operands... -> subscripts of A_k)

with two helpers where A_k's subscripts are not all plain: a subscript repeated in A_k
("ii": only the diagonal was read) keeps the gradient on that diagonal through an identity
matrix, and a subscript only A_k has (summed away in forward) spreads the gradient evenly
along it through a vector of ones. Because the gradient is itself an Einsum, a gradient of
a gradient works too.
"""
import string

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor

_LETTERS = string.ascii_letters     # the subscripts torch and NumPy accept: a-z, A-Z


class Einsum(Function):
    """out = einsum(",".join(inputs) + "->" + output, *operands), with `sizes` the size of
    each letter: an operand whose dim is 1 where the letter's size is larger broadcasts."""
    def forward(self, *arrays, inputs, output, sizes):
        self.subs, self.out, self.sizes = inputs, output, sizes
        full = []
        for a, subs in zip(arrays, inputs):
            shape = tuple(sizes[c] for c in subs)
            # broadcast size-1 dims here: NumPy's einsum refuses them when it plans the
            # order of contractions (optimize=True)
            full.append(a if a.shape == shape else self.xp.broadcast_to(a, shape))
        out = self.xp.einsum(",".join(inputs) + "->" + output, *full, optimize=True)
        if len(arrays) == 1 and self.xp.may_share_memory(out, arrays[0]):
            out = out.copy()   # "ij->ji" or "ii->i" of one operand can be a view: a new tensor
        return out

    def backward(self, g):
        return tuple(self._grad_of(k, g) if p.requires_grad else None
                     for k, p in enumerate(self.inputs))

    def _grad_of(self, k, g):
        """d out / d A_k: einsum of g with every other operand, to A_k's subscripts."""
        subs_k = self.subs[k]
        terms = [self.out] + [s for j, s in enumerate(self.subs) if j != k]
        operands = [g] + [t for j, t in enumerate(self.inputs) if j != k]
        sizes = dict(self.sizes)
        free = (c for c in _LETTERS if c not in sizes)
        letters = ""                     # the gradient's subscripts: A_k's, repeats renamed
        for c in subs_k:
            if c in letters:             # "ii": forward read only where both are equal, so
                f = next(free, None)     # the gradient is g on the diagonal, 0 elsewhere
                if f is None:
                    raise NotImplementedError(
                        "einsum: the gradient of an operand with a repeated subscript needs "
                        "a letter the equation does not use, and all 52 are used")
                sizes[f] = sizes[c]
                terms.append(c + f)
                operands.append(self._constant("eye", sizes[c], g.dtype))
                letters += f
            else:
                letters += c
        used = set("".join(terms))
        for c in dict.fromkeys(subs_k):  # (in order, once each)
            if c not in used:            # summed away in forward: each element along c
                terms.append(c)          # added to the output alike, so each gets all of g
                operands.append(self._constant("ones", sizes[c], g.dtype))
        return Einsum.apply(*operands, inputs=tuple(terms), output=letters, sizes=sizes)

    def _constant(self, kind, n, dtype):
        """An identity matrix or a vector of ones of size n, kept by the backend."""
        xp = self.xp
        if kind == "ones":
            data = backend.filled(xp, (n,), 1, dtype)
        else:
            data = backend.constant(xp, ("eye", n, dtype.str), lambda: (
                xp.arange(n)[:, None] == xp.arange(n)).astype(dtype))
        return self.const(data)


# ---- what users call -------------------------------------------------------------------
def einsum(equation, *operands):
    """Einstein summation, as torch.einsum: `equation` names each operand's dims with
    letters ("bij,bjk->bik"); letters shared by operands are multiplied along, letters
    missing from the output are summed. Without "->" the output is every letter that
    appears once, in alphabetical order; "..." stands for the dims not named (broadcast
    between operands, and in front of the output when it is implicit). The operands may also
    be given as one list: einsum("ij,jk", [a, b])."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string such as 'ij,jk->ik', got "
                        f"{type(equation).__name__} (give the equation first)")
    if not operands:
        raise ValueError("einsum: needs at least one operand after the equation")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum: operand {i} is a {type(t).__name__}; operands must be "
                            f"Tensors (make one with mg.tensor(...))")
    dtypes = {t.dtype for t in operands}
    if len(dtypes) > 1:    # no silent upcast: float32 beside float64 is refused (as torch)
        raise TypeError(f"einsum: operands have dtypes {[str(t.dtype) for t in operands]}; "
                        f"all must have one dtype (convert with .to(dtype) first)")
    inputs, output, sizes = parse(equation, [t.shape for t in operands])
    return Einsum.apply(*operands, inputs=inputs, output=output, sizes=sizes)


def parse(equation, shapes):
    """(input subscripts, output subscripts, size of each letter) for `equation` applied to
    operands of `shapes`: spaces dropped, "..." replaced by letters the equation does not
    use (the same letters for every operand, aligned from the right as broadcasting is),
    the implicit output made explicit. Raises a clear error for whatever does not fit."""
    eq = "".join(equation.split())
    where = f"einsum: equation {equation!r}"
    if eq.count("->") > 1:
        raise ValueError(f"{where} has more than one '->'; write 'inputs->output'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"{where} names {len(terms)} operand(s) (terms separated by ','), "
                         f"but {len(shapes)} operand(s) were given")
    for i, term in enumerate(terms + ([rhs] if arrow else [])):
        _check_term(term, where, "the output" if i == len(terms) else f"operand {i}")

    # how many dims each operand's "..." stands for
    spans = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        named, has_ellipsis = len(term.replace("...", "")), "..." in term
        fits = len(shape) >= named if has_ellipsis else len(shape) == named
        if not fits:
            dims = f"{named} or more" if has_ellipsis else str(named)
            raise ValueError(f"{where}: operand {i} has {len(shape)} dims (shape "
                             f"{tuple(shape)}), but its subscripts {term!r} need {dims}")
        spans.append(len(shape) - named if has_ellipsis else 0)
    free = [c for c in _LETTERS if c not in eq]
    span = max(spans)
    if span > len(free):
        raise NotImplementedError(f"{where}: '...' stands for {span} dims, but only "
                                  f"{len(free)} letters are left to name them")
    ellipsis = "".join(free[:span])                # the broadcast dims, outermost first
    inputs = tuple(t.replace("...", ellipsis[span - n:]) for t, n in zip(terms, spans))

    if arrow:
        output = rhs.replace("...", ellipsis)
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"{where}: the output subscript {c!r} appears more than "
                                 f"once (each output dim needs its own letter)")
            if not any(c in subs for subs in inputs):
                raise ValueError(f"{where}: the output subscript {c!r} is in no operand's "
                                 f"subscripts {terms}")
    else:   # implicit: the letters that appear once, in alphabetical order, after "..."
        once = sorted(c for c in set(lhs) if c in _LETTERS and lhs.count(c) == 1)
        output = ellipsis + "".join(once)
    return inputs, output, _letter_sizes(inputs, shapes, where, ellipsis)


def _check_term(term, where, what):
    """Refuse a term with anything but letters and at most one '...'."""
    rest = term.replace("...", "", 1)
    bad = [c for c in rest if c not in _LETTERS]
    if bad:
        hint = "'...' may appear once per operand" if "." in bad else \
            "subscripts are letters a-z and A-Z, and '...'"
        raise ValueError(f"{where}: {what} has the invalid subscript {bad[0]!r} in "
                         f"{term!r} ({hint})")


def _letter_sizes(inputs, shapes, where, ellipsis):
    """Each letter's size. Within one operand a repeated letter must have one size (a
    diagonal is square); between operands sizes must match, or be 1 to broadcast."""
    def name(c):                      # a letter standing for a "..." dim: the user's words
        if c in ellipsis:
            return f"dim {ellipsis.index(c) - len(ellipsis)} of '...'"
        return f"subscript {c!r}"
    sizes, seen = {}, {}
    for i, (subs, shape) in enumerate(zip(inputs, shapes)):
        mine = {}
        for c, n in zip(subs, shape):
            if mine.setdefault(c, n) != n:
                raise ValueError(f"{where}: subscript {c!r} is repeated in operand {i} "
                                 f"(shape {tuple(shape)}) with sizes {mine[c]} and {n}; a "
                                 f"repeated subscript (a diagonal) needs equal sizes")
        for c, n in mine.items():
            if c not in sizes or sizes[c] == 1:
                sizes[c], seen[c] = n, i
            elif n not in (1, sizes[c]):
                raise ValueError(f"{where}: {name(c)} has size {sizes[c]} in operand "
                                 f"{seen[c]} (shape {tuple(shapes[seen[c]])}) but {n} in "
                                 f"operand {i} (shape {tuple(shape)}); the sizes of one "
                                 f"subscript must match, or be 1 to broadcast")
    return sizes
