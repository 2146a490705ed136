"""In-place array steps that Adagrad, Adadelta, Adamax, NAdam and RAdam share, each in the
order of operations of PyTorch's tensor method it stands for, so the two agree to rounding.

Every step writes into arrays the optimiser owns (its state, the parameter, a scratch array
`tmp`) and never into the gradient, which may be `.grad`'s own array; `out=` keeps a 0-d
result an array. (PyTorch's vectorised CPU kernels fuse some multiply-adds, which NumPy
does not: the two then differ in the last bit, not in the order.)
"""


def lerp_(xp, m, g, weight, tmp):
    """m ← m + w·(g - m), as torch's lerp_: for |w| >= 0.5 it is g - (g - m)·(1 - w), which
    lands on g exactly at w = 1."""
    xp.subtract(g, m, out=tmp)
    if abs(weight) < 0.5:
        tmp *= weight
        m += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(g, tmp, out=m)


def addcmul_(xp, v, a, b, value, tmp):
    """v ← v + (value·a)·b, as torch's addcmul_: value first, so that a² alone (which may
    overflow where (1-β)·a² does not) is never formed."""
    xp.multiply(a, value, out=tmp)
    tmp *= b
    v += tmp


def addcdiv_(xp, p, a, b, value, tmp):
    """p ← p + (value·a)/b, as torch's addcdiv_ (tmp must not be b)."""
    xp.multiply(a, value, out=tmp)
    tmp /= b
    p += tmp


def l2(g, p, weight_decay):
    """The gradient with PyTorch's L2 penalty folded in, g + λ·p (a new array: g may be
    .grad's own), or g itself where λ is 0."""
    return g + weight_decay * p if weight_decay != 0 else g


def weight_decayed(p, g, lr, weight_decay, decoupled):
    """Weight decay as a group asks: decoupled (p ← p(1 - lr·λ) in place, AdamW's), or
    PyTorch's L2 penalty folded into the gradient. Returns the gradient to follow."""
    if decoupled:
        if weight_decay != 0:
            p *= 1 - lr * weight_decay
        return g
    return l2(g, p, weight_decay)


def adam_moments_(xp, m, v, g, betas, tmp):
    """Adam's running moments in place (NAdam's and RAdam's too): m += (1-β1)(g - m), as
    torch's lerp_, and v = β2 v + (1-β2) g², as its mul_ then addcmul_."""
    beta1, beta2 = betas
    lerp_(xp, m, g, 1 - beta1, tmp)
    v *= beta2
    addcmul_(xp, v, g, g, 1 - beta2, tmp)
