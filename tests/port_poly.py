"""PyTorch's "Learning PyTorch with Examples", ported: sin(x) fitted by a third-order
polynomial seven ways. Raw tensors with the gradients written by hand; autograd with the
update under no_grad; a custom autograd Function (LegendrePolynomial3); nn.Sequential of
Linear and Flatten on x's powers; the same with optim.RMSprop; a custom Module
(Polynomial3) of scalar Parameters; and DynamicNet, whose forward's depth is drawn by
`random.randint` and reuses one Parameter. Each runs a few dozen of the tutorial's 2000
steps. For test_ported_scripts_five.py: returns (initial weights, losses)."""
import math
import random as _random
import re

from port_helpers import _Draws, _load, _state


def raw_tensors(torch, draw, losses, steps):
    dtype = torch.float
    device = torch.device("cpu")
    # device = torch.device("cuda:0")   # the tutorial's line for a GPU
    # random input and output data
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    # random weights
    a = draw(lambda: torch.randn((), device=device, dtype=dtype))
    b = draw(lambda: torch.randn((), device=device, dtype=dtype))
    c = draw(lambda: torch.randn((), device=device, dtype=dtype))
    d = draw(lambda: torch.randn((), device=device, dtype=dtype))
    learning_rate = 1e-6
    for t in range(steps):
        # forward pass: the predicted y
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        # the loss, as a Python number
        loss = (y_pred - y).pow(2).sum().item()
        losses.append(loss)
        if t % 100 == 99:
            print(t, loss)
        # backprop by hand: the gradients of a, b, c, d
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        # gradient descent
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    losses.append(a.item())
    return f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3"


def with_autograd(torch, draw, losses, steps):
    dtype = torch.float
    device = "cpu"
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    # requires_grad=True: backward computes the gradients of these
    a = draw(lambda: torch.randn((), dtype=dtype)).requires_grad_()
    b = draw(lambda: torch.randn((), device=device, dtype=dtype)).requires_grad_()
    c = draw(lambda: torch.randn((), dtype=dtype)).requires_grad_()
    d = draw(lambda: torch.randn((), dtype=dtype)).requires_grad_()
    learning_rate = 1e-6
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        # the loss a tensor of shape (): loss.item() its value
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        # the update is not to be recorded: under no_grad
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            # zero the gradients for the next step
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3"


def legendre(torch, draw, losses, steps):
    class LegendrePolynomial3(torch.autograd.Function):
        """A custom autograd Function: P3(x) = 1/2 (5x^3 - 3x), forward and backward."""

        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    # weights near the result, for convergence (the tutorial's choice)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for t in range(steps):
        # the Function through its apply, under a short name
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)"


def with_nn(torch, init, state0, losses, steps, use_optim):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    # y is linear in (x, x^2, x^3): a linear layer on the tensor of those powers
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)            # (2000, 3), broadcast against p's (3,)
    # Flatten(0, 1) makes Linear's (2000, 1) output y's shape (2000,)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    key = "rmsprop." if use_optim else "nn."
    _load(torch, model, init, key)
    state0.update(_state(model, key))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    if use_optim:
        learning_rate = 1e-3
        optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    else:
        learning_rate = 1e-6
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        if use_optim:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            continue
        model.zero_grad()
        loss.backward()
        # each parameter, a Tensor, updated in place
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    # the first layer, as from a list
    linear_layer = model[0]
    losses.append(linear_layer.weight[:, 2].item())
    return f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + " \
        f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3"


def custom_module(torch, init, state0, losses, steps):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            """Four scalar Parameters."""
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + " \
                f"{self.d.item()} x^3"
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = Polynomial3()
    _load(torch, model, init, "poly3.")
    state0.update(_state(model, "poly3."))
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return f"Result: {model.string()}"


def dynamic_net(torch, init, state0, losses, steps):
    random = _random.Random(0)          # the tutorial's `random`, seeded here

    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
            self.e = torch.nn.Parameter(torch.randn(()))

        def forward(self, x):
            """A third-order polynomial, then 0, 1 or 2 more orders (drawn), all of the
            extra terms sharing the one weight e: ordinary Python control flow, and one
            Parameter used many times in a graph."""
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

        def string(self):
            return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + " \
                f"{self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?"
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = DynamicNet()
    _load(torch, model, init, "dynamic.")
    state0.update(_state(model, "dynamic."))
    # plain SGD would struggle here: momentum
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return f"Result: {model.string()}"


def poly(torch, nn, F, data_mod, init=None, steps=20):
    torch.manual_seed(0)
    state0, losses = {}, []
    draw = _Draws(torch, init, state0, "w")     # PyTorch's run takes minigrad's randn
    results = [raw_tensors(torch, draw, losses, steps),
               with_autograd(torch, draw, losses, steps),
               legendre(torch, draw, losses, steps),
               with_nn(torch, init, state0, losses, steps, use_optim=False),
               with_nn(torch, init, state0, losses, steps, use_optim=True),
               custom_module(torch, init, state0, losses, steps),
               dynamic_net(torch, init, state0, losses, steps)]
    assert all(r.startswith("Result: y = ") for r in results), results
    print("\n".join(results))
    # the results' coefficients too, as printed
    numbers = [float(v) for r in results for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", r)]
    return state0, losses + numbers
