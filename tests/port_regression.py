"""pytorch/examples' regression/main.py, ported: a degree-4 polynomial drawn at random
(W_target, b_target), make_features' powers by torch.cat, poly_desc's formatted
coefficients ('{:+.2f}' of 0-d tensors), get_batch's torch.randn batches, one
torch.nn.Linear fitted by F.smooth_l1_loss with the update written by hand
(param.data.add_(-0.1 * param.grad)) and fc.zero_grad(), until loss.item() < 1e-3 (here
also at most `max_batches`). For test_ported_scripts_ten.py: returns (initial weights,
values)."""
import re
from itertools import count

from port_helpers import _Draws, _load, _state, _weights

POLY_DEGREE = 4


def regression(torch, nn, F, data_mod, init=None, max_batches=400):
    state0 = {}
    torch.manual_seed(0)
    draw = _Draws(torch, init, state0, "randn")     # PyTorch's run takes minigrad's draws
    W_target = draw(lambda: torch.randn(POLY_DEGREE, 1) * 5)
    b_target = draw(lambda: torch.randn(1) * 5)

    def make_features(x):
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        """Creates a string description of a polynomial."""
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = draw(lambda: torch.randn(batch_size))
        x = make_features(random)
        y = f(x)
        return x, y
    # define model
    fc = torch.nn.Linear(W_target.size(0), 1)
    _load(torch, fc, _weights(init))
    state0.update(_state(fc))
    out = []
    for batch_idx in count(1):
        # get data
        batch_x, batch_y = get_batch()
        # reset gradients
        fc.zero_grad()
        # forward pass
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        # backward pass
        output.backward()
        # apply gradients
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        out.append(loss)
        # stop criterion
        if loss < 1e-3 or batch_idx == max_batches:
            break
    print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
    learned = poly_desc(fc.weight.view(-1), fc.bias)
    actual = poly_desc(W_target.view(-1), b_target)
    print("==> Learned function:\t" + learned)
    print("==> Actual function:\t" + actual)
    # the descriptions' coefficients, as printed
    numbers = [float(v) for d in (learned, actual) for v in re.findall(r"[-+]\d+\.\d\d", d)]
    assert len(numbers) == 2 * (POLY_DEGREE + 1), (learned, actual)
    return state0, out + [batch_idx] + numbers
