"""Karpathy's minGPT, ported: utils.py's CfgNode, model.py (NewGELU, CausalSelfAttention with
its `bias` mask buffer, Block, GPT with _init_weights, configure_optimizers' whitelist /
blacklist of module types, generate with top_k or greedy), trainer.py's Trainer (an endless
RandomSampler with replacement, callbacks) and demo.ipynb's sort task with its eval_split.
For test_ported_scripts_four.py: returns (initial weights, losses)."""
import math
import os
import pickle
import random
import time
from collections import defaultdict

import numpy as np

from port_helpers import _Draws, _Replayed, _load, _state, _weights


class CfgNode:
    """A lightweight configuration class inspired by yacs."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __str__(self):
        return "\n".join("%s: %s" % (k, v) for k, v in self.__dict__.items())

    def merge_from_dict(self, d):
        self.__dict__.update(d)

    def to_dict(self):
        return {k: v.to_dict() if isinstance(v, CfgNode) else v for k, v in self.__dict__.items()}


def _set_seed(torch, seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def _model_classes(torch, nn, F):
    class NewGELU(nn.Module):
        """The GELU of Google BERT and OpenAI GPT (the tanh approximation)."""
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                               (x + 0.044715 * torch.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)   # key, query, value
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout = nn.Dropout(config.attn_pdrop)
            self.resid_dropout = nn.Dropout(config.resid_pdrop)
            # a causal mask: attention only to the left in the input sequence
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size,
                                                               config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()      # batch size, sequence length, embedding dimensionality
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)   # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)   # re-assemble the heads
            y = self.resid_dropout(self.c_proj(y))
            return y

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = nn.ModuleDict(dict(
                c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
                act=NewGELU(),
                dropout=nn.Dropout(config.resid_pdrop)))
            m = self.mlp
            self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))    # MLP forward

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlpf(self.ln_2(x))
            return x

    class GPT(nn.Module):
        @staticmethod
        def get_default_config():
            C = CfgNode()
            C.model_type = "gpt"
            C.n_layer = None
            C.n_head = None
            C.n_embd = None
            C.vocab_size = None
            C.block_size = None
            C.embd_pdrop = 0.1
            C.resid_pdrop = 0.1
            C.attn_pdrop = 0.1
            return C

        def __init__(self, config):
            super().__init__()
            assert config.vocab_size is not None
            assert config.block_size is not None
            self.block_size = config.block_size
            type_given = config.model_type is not None
            params_given = all([config.n_layer is not None, config.n_head is not None,
                                config.n_embd is not None])
            assert type_given ^ params_given          # exactly one of these
            if type_given:
                config.merge_from_dict({
                    "gpt2": dict(n_layer=12, n_head=12, n_embd=768),
                    "gopher-44m": dict(n_layer=8, n_head=16, n_embd=512),
                    "gpt-mini": dict(n_layer=6, n_head=6, n_embd=192),
                    "gpt-micro": dict(n_layer=4, n_head=4, n_embd=128),
                    "gpt-nano": dict(n_layer=3, n_head=3, n_embd=48),
                }[config.model_type])
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.embd_pdrop),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd)))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():        # scaled init of the residual projections
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
            n_params = sum(p.numel() for p in self.transformer.parameters())
            self.n_params_msg = "number of parameters: %.2fM" % (n_params / 1e6,)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                torch.nn.init.zeros_(module.bias)
                torch.nn.init.ones_(module.weight)

        def configure_optimizers(self, train_config):
            """Parameters that decay (the weights of Linear layers) and those that don't
            (biases, LayerNorm and Embedding weights), in two AdamW groups."""
            decay = set()
            no_decay = set()
            whitelist_weight_modules = (torch.nn.Linear, )
            blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
            for mn, m in self.named_modules():
                for pn, p in m.named_parameters():
                    fpn = "%s.%s" % (mn, pn) if mn else pn    # full param name
                    # named_modules and named_parameters recurse, so a parameter is seen
                    # several times; its own module decides
                    if pn.endswith("bias"):
                        no_decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                        decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                        no_decay.add(fpn)
            param_dict = {pn: p for pn, p in self.named_parameters()}
            inter_params = decay & no_decay
            union_params = decay | no_decay
            assert len(inter_params) == 0, \
                "parameters %s made it into both decay/no_decay sets!" % (str(inter_params), )
            assert len(param_dict.keys() - union_params) == 0, \
                "parameters %s were not separated into either decay/no_decay set!" \
                % (str(param_dict.keys() - union_params), )
            optim_groups = [
                {"params": [param_dict[pn] for pn in sorted(list(decay))],
                 "weight_decay": train_config.weight_decay},
                {"params": [param_dict[pn] for pn in sorted(list(no_decay))],
                 "weight_decay": 0.0}]
            optimizer = torch.optim.AdamW(optim_groups, lr=train_config.learning_rate,
                                          betas=train_config.betas)
            return optimizer

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.block_size, \
                f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)  # (1, t)
            tok_emb = self.transformer.wte(idx)          # (b, t, n_embd)
            pos_emb = self.transformer.wpe(pos)          # (1, t, n_embd)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx
    return GPT


def _trainer_class(torch, data_mod, replay):
    DataLoader = data_mod.dataloader.DataLoader

    class Trainer:
        @staticmethod
        def get_default_config():
            C = CfgNode()
            C.device = "auto"
            C.num_workers = 4
            C.max_iters = None
            C.batch_size = 64
            C.learning_rate = 3e-4
            C.betas = (0.9, 0.95)
            C.weight_decay = 0.1        # only applied on matmul weights
            C.grad_norm_clip = 1.0
            return C

        def __init__(self, config, model, train_dataset):
            self.config = config
            self.model = model
            self.optimizer = None
            self.train_dataset = train_dataset
            self.callbacks = defaultdict(list)
            if config.device == "auto":
                self.device = "cuda" if torch.cuda.is_available() else "cpu"
            else:
                self.device = config.device
            self.model = self.model.to(self.device)
            self.iter_num = 0
            self.iter_time = 0.0
            self.iter_dt = 0.0

        def add_callback(self, onevent: str, callback):
            self.callbacks[onevent].append(callback)

        def set_callback(self, onevent: str, callback):
            self.callbacks[onevent] = [callback]

        def trigger_callbacks(self, onevent: str):
            for callback in self.callbacks.get(onevent, []):
                callback(self)

        def run(self):
            model, config = self.model, self.config
            self.optimizer = model.configure_optimizers(config)
            sampler = torch.utils.data.RandomSampler(self.train_dataset, replacement=True,
                                                     num_samples=int(1e10))
            train_loader = DataLoader(
                self.train_dataset,
                sampler=replay(sampler),        # (PyTorch's run takes minigrad's draws)
                shuffle=False,
                pin_memory=True,
                batch_size=config.batch_size,
                num_workers=config.num_workers)
            model.train()
            self.iter_num = 0
            self.iter_time = time.time()
            data_iter = iter(train_loader)
            while True:
                try:            # the next batch (x, y); re-init the iterator if needed
                    batch = next(data_iter)
                except StopIteration:
                    data_iter = iter(train_loader)
                    batch = next(data_iter)
                batch = [t.to(self.device) for t in batch]
                x, y = batch
                logits, self.loss = model(x, y)
                model.zero_grad(set_to_none=True)
                self.loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
                self.optimizer.step()
                self.trigger_callbacks("on_batch_end")
                self.iter_num += 1
                tnow = time.time()
                self.iter_dt = tnow - self.iter_time
                self.iter_time = tnow
                if config.max_iters is not None and self.iter_num >= config.max_iters:
                    break
    return Trainer


def mingpt(torch, nn, F, data_mod, init=None, dropout=0.1, ckpt_dir=None, num_workers=0):
    GPT = _model_classes(torch, nn, F)
    state0 = {}
    draw = _Draws(torch, init, state0, "sort")     # PyTorch's run takes minigrad's draws
    Dataset = data_mod.Dataset

    class SortDataset(Dataset):
        """Sorting, as demo.ipynb: input 0 0 2 1 0 1 -> output 0 0 0 1 1 2, the model
        seeing the input and the output so far (targets -1 where there is nothing to
        predict). `size` items (the demo's 10000, smaller here)."""
        def __init__(self, split, length=6, num_digits=3, size=10000):
            assert split in {"train", "test"}
            self.split = split
            self.length = length
            self.num_digits = num_digits
            self.size = size

        def __len__(self):
            return self.size

        def get_vocab_size(self):
            return self.num_digits

        def get_block_size(self):
            # the length of the sequence fed into the transformer: input and output
            # concatenated, less one (the last is never an input)
            return self.length * 2 - 1

        def __getitem__(self, idx):
            while True:
                inp = draw(lambda: torch.randint(self.num_digits, size=(self.length,),
                                                 dtype=torch.long))
                # half of the time, boost inputs with many repeated numbers: the hard part
                if draw(lambda: torch.rand(1)).item() < 0.5:
                    if inp.unique().nelement() > self.length // 2:
                        continue                 # too many unique digits, re-sample
                # which split an input falls in, by its hash
                h = hash(pickle.dumps(inp.tolist()))
                inp_split = "test" if h % 4 == 0 else "train"
                if inp_split == self.split:
                    break
            sol = torch.sort(inp)[0]
            cat = torch.cat((inp, sol), dim=0)
            x = cat[:-1].clone()
            y = cat[1:].clone()
            y[:self.length - 1] = -1             # predict only the output locations
            return x, y
    _set_seed(torch, 3407)
    train_dataset = SortDataset("train")
    test_dataset = SortDataset("test", size=12)
    x, y = train_dataset[0]
    assert x.tolist()[6:] == sorted(x.tolist()[:6])[:5] and y.tolist()[:5] == [-1] * 5
    model_config = GPT.get_default_config()
    model_config.model_type = "gpt-nano"
    model_config.vocab_size = train_dataset.get_vocab_size()
    model_config.block_size = train_dataset.get_block_size()
    model_config.embd_pdrop = model_config.resid_pdrop = model_config.attn_pdrop = dropout
    model = GPT(model_config)
    assert model.n_params_msg == "number of parameters: 0.09M"
    _load(torch, model, _weights(init))
    state0.update(_state(model))
    Trainer = _trainer_class(torch, data_mod, lambda s: _Replayed(init, state0, "order", s))
    train_config = Trainer.get_default_config()
    train_config.learning_rate = 5e-4       # the model is tiny: a bigger learning rate
    train_config.max_iters = 12             # (the demo's 2000)
    train_config.batch_size = 16
    train_config.num_workers = num_workers  # (the demo's 4: 0 records the draws here)
    trainer = Trainer(train_config, model, train_dataset)
    losses = []

    def batch_end_callback(trainer):
        losses.append(trainer.loss.item())
        if trainer.iter_num % 4 == 0:
            assert "iter_dt" in f"iter_dt {trainer.iter_dt * 1000:.2f}ms; " \
                f"iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}"
    trainer.set_callback("on_batch_end", batch_end_callback)
    trainer.run()
    model.eval()

    def eval_split(trainer, split, max_batches):
        dataset = {"train": train_dataset, "test": test_dataset}[split]
        n = train_dataset.length
        results = []
        mistakes_printed_already = 0
        loader = data_mod.DataLoader(dataset, batch_size=100, num_workers=0, drop_last=False)
        for b, (x, y) in enumerate(loader):
            x = x.to(trainer.device)
            y = y.to(trainer.device)
            inp = x[:, :n]              # isolate the input pattern alone
            sol = y[:, -n:]
            cat = model.generate(inp, n, do_sample=False)   # greedy argmax, not sampling
            sol_candidate = cat[:, n:]
            correct = (sol == sol_candidate).all(1).cpu()
            for i in range(x.size(0)):
                results.append(correct[i])
                if not correct[i] and mistakes_printed_already < 3:
                    mistakes_printed_already += 1
            if max_batches is not None and b + 1 >= max_batches:
                break
        rt = torch.tensor(results, dtype=torch.float)
        return rt.sum()
    with torch.no_grad():
        test_score = eval_split(trainer, "test", max_batches=1)
        idx = torch.tensor([[0, 2, 1, 2, 0, 1]], dtype=torch.long)
        top_k = model.generate(idx, 3, do_sample=True, top_k=1)    # top_k=1 is greedy too
        greedy = model.generate(idx, 3, do_sample=False)
    assert top_k.tolist() == greedy.tolist() and 0 <= test_score.item() <= 12
    if ckpt_dir:                        # chargpt.py's callback: save the latest model
        ckpt_path = os.path.join(ckpt_dir, "model.pt")
        torch.save(model.state_dict(), ckpt_path)
        model.load_state_dict(torch.load(ckpt_path))
    # from_pretrained's copy of Hugging Face's weights, whose Conv1D modules hold the
    # weights of these four Linear layers transposed: here a copy of the model's own
    config = GPT.get_default_config()
    config.model_type = "gpt-nano"
    config.vocab_size = model_config.vocab_size
    config.block_size = model_config.block_size
    model_hf = GPT(config)
    sd, sd_hf = model_hf.state_dict(), {}
    transposed = ["attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
                  "mlp.c_proj.weight"]
    for k, v in model.state_dict().items():
        sd_hf[k] = v.t().contiguous() if any(k.endswith(w) for w in transposed) else v
    keys = [k for k in sd_hf if not k.endswith(".attn.bias")]     # the masks: buffers
    assert len(keys) == len([k for k in sd if not k.endswith(".attn.bias")])
    for k in keys:
        if any(k.endswith(w) for w in transposed):
            assert sd_hf[k].shape[::-1] == sd[k].shape       # the Conv1D weights: transpose
            with torch.no_grad():
                sd[k].copy_(sd_hf[k].t())
        else:
            assert sd_hf[k].shape == sd[k].shape             # the others: copy over
            with torch.no_grad():
                sd[k].copy_(sd_hf[k])
    model_hf.eval()
    x = torch.tensor([2, 0, 1], dtype=torch.long)[None, ...].to(trainer.device)
    assert torch.equal(model_hf(x)[0], model(x)[0])
    return state0, losses + [test_score.item()] + greedy[0, 6:].tolist()
