"""PyTorch's "Parametrizations Tutorial", ported: a hand-made symmetric layer, then
register_parametrization with Symmetric and Skew, the parametrized module's
parametrizations.weight.original, caching with parametrize.cached(), chained
parametrizations (Skew then the Cayley map or the matrix exponential: orthogonal; Symmetric
then the matrix exponential: positive definite), right_inverse with `layer.weight = X`, a
pruning parametrization, and remove_parametrizations leaving the values parametrized or not.
Draws (torch.rand, orthogonal_, bernoulli) are minigrad's, replayed under PyTorch. For
test_ported_scripts_nine.py: returns (initial weights and draws, values seen)."""
import importlib

from port_helpers import _Draws, _load, _state, _weights


def parametrizations(torch, nn, F, data_mod, init=None):
    parametrize = importlib.import_module(torch.__name__ + ".nn.utils.parametrize")
    state0, seen = {}, []
    draw = _Draws(torch, init, state0, "draw")
    layers = [0]

    def linear(*shape):
        """nn.Linear(*shape), from minigrad's initial weights under PyTorch."""
        layers[0] += 1
        m, key = nn.Linear(*shape), f"layer{layers[0]}."
        if init is None:
            state0.update(_state(m, key))
        _load(torch, m, _weights(init), key)
        return m

    def close(a, b):
        return float(torch.dist(a, b)) < 1e-5

    # by hand
    def symmetric(X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    X = draw(lambda: torch.rand(3, 3))
    A = symmetric(X)
    assert torch.allclose(A, A.T)

    class LinearSymmetric(nn.Module):
        def __init__(self, n_features):
            super().__init__()
            self.weight = nn.Parameter(draw(lambda: torch.rand(n_features, n_features)))

        def forward(self, x):
            A = symmetric(self.weight)
            return x @ A

    layer = LinearSymmetric(3)
    out = layer(draw(lambda: torch.rand(8, 3)))
    seen.append(out.sum().item())

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    layer = linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    A = layer.weight
    assert torch.allclose(A, A.T)
    print(A)
    seen += A.flatten().tolist()

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

    cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
    if init is None:
        state0.update(_state(cnn, "cnn."))
    _load(torch, cnn, _weights(init), "cnn.")
    parametrize.register_parametrization(cnn, "weight", Skew())
    print(cnn.weight[0, 1])
    print(cnn.weight[2, 2])
    seen += cnn.weight[0, 1].flatten().tolist()
    assert close(cnn.weight, -cnn.weight.transpose(-1, -2))

    # inspecting a parametrized module (torch prints ParametrizedLinear and a ModuleDict,
    # minigrad Linear and a ParametrizationDict: the values are compared, not the reprs)
    layer = linear(3, 3)
    print(f"Unparametrized:\n{layer}")
    parametrize.register_parametrization(layer, "weight", Symmetric())
    print(f"\nParametrized:\n{layer}")
    print(layer.parametrizations)
    print(layer.parametrizations.weight)
    print(layer.parametrizations.weight[0])
    print(dict(layer.named_parameters()))
    assert sorted(dict(layer.named_parameters())) == ["bias",
                                                      "parametrizations.weight.original"]
    print(layer.parametrizations.weight.original)
    symmetric = Symmetric()
    weight_orig = layer.parametrizations.weight.original
    seen.append(torch.dist(layer.weight, symmetric(weight_orig)).item())
    seen += [parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "weight"),
             parametrize.is_parametrized(layer, "bias")]

    # caching
    calls = [0]

    class NoisyParametrization(nn.Module):
        def forward(self, X):
            print("Computing the Parametrization")
            calls[0] += 1
            return X

    layer = linear(4, 4)
    parametrize.register_parametrization(layer, "weight", NoisyParametrization())
    print("Here, layer.weight is recomputed every time we call it")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()
    seen.append(calls[0])
    with parametrize.cached():
        print("Here, it is computed just the first time layer.weight is called")
        foo = layer.weight + layer.weight.T
        bar = layer.weight.sum()
    seen += [calls[0], foo.sum().item(), bar.item()]

    # chaining: orthogonal and positive definite matrices
    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", torch.eye(n))

        def forward(self, X):
            # (I + X)(I - X)^{-1}
            return torch.linalg.solve(self.Id - X, self.Id + X)

    layer = linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Skew())
    parametrize.register_parametrization(layer, "weight", CayleyMap(3))
    X = layer.weight
    seen.append(torch.dist(X.T @ X, torch.eye(3)).item())      # X is orthogonal

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)

    layer_orthogonal = linear(3, 3)
    parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
    parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
    X = layer_orthogonal.weight
    seen.append(torch.dist(X.T @ X, torch.eye(3)).item())      # X is orthogonal

    layer_spd = linear(3, 3)
    parametrize.register_parametrization(layer_spd, "weight", Symmetric())
    parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
    X = layer_spd.weight
    seen.append(torch.dist(X, X.T).item())                     # X is symmetric
    seen.append(bool((torch.linalg.eigvalsh(X) > 0.).all()))   # X is positive definite
    # a training step through the chain: the gradient reaches the original
    opt = torch.optim.SGD(layer_orthogonal.parameters(), lr=0.1)
    x = draw(lambda: torch.rand(5, 3))
    loss = (layer_orthogonal(x) ** 2).sum()
    loss.backward()
    opt.step()
    seen += layer_orthogonal.parametrizations.weight.original.flatten().tolist()
    X = layer_orthogonal.weight
    seen.append(torch.dist(X.T @ X, torch.eye(3)).item())

    # initializing: right_inverse
    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            # A skew-symmetric: its upper triangle is what forward uses
            return A.triu(1)

    layer = linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Skew())
    X = draw(lambda: torch.rand(3, 3))
    X = X - X.T                             # skew-symmetric
    layer.weight = X                        # layer.weight initialized to X
    seen.append(torch.dist(layer.weight, X).item())

    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", torch.eye(n))

        def forward(self, X):
            # (I + X)(I - X)^{-1}, X skew-symmetric
            return torch.linalg.solve(self.Id - X, self.Id + X)

        def right_inverse(self, A):
            # (A + I)^{-1}(A - I), A orthogonal (it commutes with A + I)
            return torch.linalg.solve(A + self.Id, A - self.Id)

    layer_orthogonal = linear(3, 3)
    parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
    parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))

    def orthogonal():
        X = torch.empty(3, 3)
        nn.init.orthogonal_(X)
        if X.det() < 0.:
            X[0].neg_()                     # a positive determinant
        return X

    X = draw(orthogonal)
    assert X.det() > 0
    layer_orthogonal.weight = X
    seen.append(torch.dist(layer_orthogonal.weight, X).item())

    class PruningParametrization(nn.Module):
        def __init__(self, X, p_drop=0.2):
            super().__init__()
            # zeros with probability p_drop
            mask = torch.full_like(X, 1.0 - p_drop)
            self.mask = draw(lambda: torch.bernoulli(mask))

        def forward(self, X):
            return X * self.mask

        def right_inverse(self, A):
            return A

    layer = linear(3, 4)
    X = draw(lambda: torch.rand_like(layer.weight))
    print(f"Initialization matrix:\n{X}")
    parametrize.register_parametrization(layer, "weight", PruningParametrization(layer.weight))
    layer.weight = X
    print(f"\nInitialized weight:\n{layer.weight}")
    seen += layer.weight.flatten().tolist()

    # removing
    layer = linear(3, 3)
    print("Before:")
    print(layer)
    print(layer.weight)
    parametrize.register_parametrization(layer, "weight", Skew())
    print("\nParametrized:")
    print(layer)
    print(layer.weight)
    skew = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight")
    print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
    print(layer)
    print(layer.weight)
    seen += [float(torch.dist(layer.weight, skew)), isinstance(layer.weight, nn.Parameter),
             parametrize.is_parametrized(layer), hasattr(layer, "parametrizations")]

    layer = linear(3, 3)
    before = layer.weight.detach().clone()
    print("Before:")
    print(layer)
    print(layer.weight)
    parametrize.register_parametrization(layer, "weight", Skew())
    print("\nParametrized:")
    print(layer)
    print(layer.weight)
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    print("\nAfter. Same as Before:")
    print(layer)
    print(layer.weight)
    seen += [float(torch.dist(layer.weight, before)), isinstance(layer.weight, nn.Parameter),
             layer.weight.requires_grad]
    return state0, seen
