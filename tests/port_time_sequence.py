"""pytorch/examples' time_sequence_prediction, ported: generate_sine_wave.py's shifted sine
waves (NumPy, float64), then train.py's Sequence model (two nn.LSTMCell and a Linear)
stepping through time by `input.split(1, dim=1)` from zero states (float64), the `future`
loop feeding each output back in, torch.stack(outputs, 1).squeeze(2), seq.double(), and
optim.LBFGS with a closure; after each step the test waves' prediction into the future.
Smaller than the example (shorter waves, fewer of them, fewer steps). For
test_ported_scripts_ten.py: returns (initial weights, values)."""
import numpy as np

from port_helpers import _load, _state


def _sine_waves(T=20, L=60, N=12, seed=2):
    """generate_sine_wave.py: N waves of period 2πT, each shifted by a random integer."""
    np.random.seed(seed)
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    return data


def time_sequence(torch, nn, F, data_mod, init=None, steps=3, future=20, hidden=51):
    optim = torch.optim

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, hidden)
            self.lstm2 = nn.LSTMCell(hidden, hidden)
            self.linear = nn.Linear(hidden, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), hidden, dtype=torch.double)
            c_t = torch.zeros(input.size(0), hidden, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), hidden, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), hidden, dtype=torch.double)

            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):     # if we should predict the future
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.stack(outputs, 1).squeeze(2)
            return outputs
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set (the example's torch.load('traindata.pt'))
    data = _sine_waves()
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    assert input.dtype == torch.float64 and tuple(input.shape) == (9, 59)
    # build the model
    seq = Sequence()
    seq.double()
    assert all(p.dtype == torch.float64 for p in seq.parameters())
    state0 = {}
    _load(torch, seq, init)
    state0.update(_state(seq))
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=6)     # (max_iter: 20)
    out = []
    # begin to train
    for i in range(steps):          # (the example's 15)
        print("STEP: ", i)

        def closure():
            optimizer.zero_grad()
            out_ = seq(input)
            loss = criterion(out_, target)
            print("loss:", loss.item())
            out.append(loss.item())
            loss.backward()
            return loss
        final = optimizer.step(closure)
        out.append(final.item())
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print("test loss:", loss.item())
            y = pred.detach().numpy()
        out.append(loss.item())
        # (the example draws y's three waves, the future dotted, to predict%d.pdf)
        assert y.shape == (3, test_input.size(1) + future)
        out.extend(y[:, -1].tolist())
    return state0, out
