"""PyTorch's "Reinforcement Learning (DQN) Tutorial", ported: Transition and ReplayMemory,
the DQN network, select_action's epsilon-greedy choice, optimize_model (the masked
next-state values from the target network, SmoothL1Loss, AdamW with amsgrad, value
clipping), the soft update of the target network through state dicts, and plot_durations'
running mean (unfold). The environment is a small deterministic corridor held here, in
gymnasium's reset/step shape (the tutorial's CartPole needs gym). For
test_ported_scripts_four.py: returns (initial weights, losses)."""
import math
import random as _random
from collections import deque, namedtuple
from itertools import count

import numpy as np

from port_helpers import _load, _state


class Corridor:
    """Cells 0..n-1, the agent starting in the middle; action 0 steps left, 1 right.
    Reaching the right end ends the episode with reward 1 (terminated), the left end with
    reward 0; `max_steps` steps truncate it. The observation is [position, 1 - position]
    scaled to [0, 1], a float32 array as CartPole's."""

    class _Space:
        def __init__(self, n, rng):
            self.n, self.rng = n, rng

        def sample(self):
            return self.rng.randrange(self.n)

    def __init__(self, n=6, max_steps=12, seed=0):
        self.n, self.max_steps = n, max_steps
        self.action_space = Corridor._Space(2, _random.Random(seed))

    def _obs(self):
        x = self.pos / (self.n - 1)
        return np.array([x, 1.0 - x], dtype=np.float32)

    def reset(self):
        self.pos, self.t = self.n // 2, 0
        return self._obs(), {}

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        terminated = self.pos in (0, self.n - 1)
        reward = 1.0 if self.pos == self.n - 1 else -0.05
        return self._obs(), reward, terminated, self.t >= self.max_steps, {}


def dqn(torch, nn, F, data_mod, init=None):
    optim = torch.optim
    random = _random.Random(0)          # the tutorial uses `random` itself, seeded nowhere
    env = Corridor()
    device = torch.device("cuda" if torch.cuda.is_available() else
                          "mps" if torch.backends.mps.is_available() else "cpu")
    # the tutorial's newer spelling of the same
    device = torch.accelerator.current_accelerator().type if \
        torch.accelerator.is_available() else "cpu"
    device = torch.device("cpu")        # (the tests compare on the CPU)
    Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))

    class ReplayMemory(object):
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            """Save a transition"""
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return random.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super(DQN, self).__init__()
            self.layer1 = nn.Linear(n_observations, 32)      # (the tutorial's 128)
            self.layer2 = nn.Linear(32, 32)
            self.layer3 = nn.Linear(32, n_actions)

        # called with one element to choose the next action, or a batch when optimising;
        # returns tensor([[left0exp, right0exp]...])
        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)
    BATCH_SIZE = 8                      # (the tutorial's 128)
    GAMMA = 0.99
    EPS_START = 0.9
    EPS_END = 0.01
    EPS_DECAY = 25                      # (the tutorial's 2500: the runs here are short)
    TAU = 0.005
    LR = 3e-4
    n_actions = env.action_space.n
    state, info = env.reset()
    n_observations = len(state)
    torch.manual_seed(0)
    policy_net = DQN(n_observations, n_actions).to(device)
    target_net = DQN(n_observations, n_actions).to(device)
    _load(torch, policy_net, init)
    target_net.load_state_dict(policy_net.state_dict())
    state0 = _state(policy_net)
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(10000)
    steps_done = 0
    losses = []

    def select_action(state):
        nonlocal steps_done
        sample = random.random()
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        if sample > eps_threshold:
            with torch.no_grad():
                # t.max(1) is the largest column of each row; .indices where it is: the
                # action with the larger expected reward
                if steps_done % 2:      # the tutorial's older spelling, max(1)[1]
                    return policy_net(state).max(1)[1].view(1, 1)
                return policy_net(state).max(1).indices.view(1, 1)
        else:
            return torch.tensor([[env.action_space.sample()]], device=device, dtype=torch.long)
    episode_durations = []

    def plot_durations(show_result=False):
        durations_t = torch.tensor(episode_durations, dtype=torch.float)
        # the means of 3 episodes (the tutorial's 100), zeros before there are 3
        if len(durations_t) >= 3:
            means = durations_t.unfold(0, 3, 1).mean(1).view(-1)
            means = torch.cat((torch.zeros(2), means))
            return list(means.numpy())          # (the tutorial plots it: plt.plot(...))
        return list(durations_t.numpy())

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return
        transitions = memory.sample(BATCH_SIZE)
        # a batch-array of Transitions to a Transition of batch-arrays
        batch = Transition(*zip(*transitions))
        # a mask of the non-final states, and those states batched (a final state is the
        # one after which the simulation ended)
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                      device=device, dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        # Q(s_t, a): the model computes Q(s_t), then the columns of the actions taken
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        # V(s_{t+1}) of all next states, from the older target_net: max_a Q(s_{t+1}, a),
        # 0 where the state was final
        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()                        # Huber loss
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)   # in-place clipping
        optimizer.step()
        losses.append(loss.item())
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        num_episodes = 600
    else:
        num_episodes = 50
    num_episodes = 6                    # (the runs here are short)
    means = []
    for i_episode in range(num_episodes):
        state, info = env.reset()
        state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        for t in count():
            action = select_action(state)
            observation, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            done = terminated or truncated
            if terminated:
                next_state = None
            else:
                next_state = torch.tensor(observation, dtype=torch.float32,
                                          device=device).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
            # soft update of the target network's weights: θ′ ← τ θ + (1 −τ )θ′
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[key] * TAU + \
                    target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                episode_durations.append(t + 1)
                means = plot_durations()
                break
    assert len(means) == num_episodes and means[:2] == [0.0, 0.0] and \
        isinstance(means[2], np.float32)
    drift = sum((p - q).abs().sum().item() for p, q in zip(policy_net.parameters(),
                                                          target_net.parameters()))
    return state0, losses + means + [drift, steps_done]
