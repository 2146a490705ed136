"""nn.Transformer and its parts with PyTorch's signatures: given torch.nn's state dict, the
same outputs and gradients (of inputs and parameters) as torch.nn.TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer over their
options and masks; the same state-dict keys and causal mask; and without PyTorch, the
properties that define them: a causal mask hides the future, dropout only in training, the
initialisation, the errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad import functional as F

# PyTorch's own notices: a boolean key_padding_mask beside a float mask is deprecated; its
# encoder's fast path (not here) is off for batch_first=False or norm_first=True
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

E, H, FF, S, T, N = 8, 2, 16, 5, 4, 3

_rng = np.random.default_rng(0)
_SRC_KPM = np.zeros((N, S), bool)
_SRC_KPM[0, 3:] = True
_SRC_KPM[2, 0] = True
_TGT_KPM = np.zeros((N, T), bool)
_TGT_KPM[1, 2:] = True
_CAUSAL = np.triu(np.ones((T, T), bool), 1)             # True: not allowed
_CAUSAL_FLOAT = np.triu(np.full((T, T), -np.inf), 1)
_FLOAT_SS = _rng.standard_normal((S, S))
_FLOAT_TS = _rng.standard_normal((T, S))

LAYER_CONFIGS = [dict(), dict(batch_first=True), dict(norm_first=True),
                 dict(activation="gelu", batch_first=True), dict(activation="silu"),
                 dict(activation="GELU module", norm_first=True), dict(bias=False)]

ENCODER_MASKS = {          # for self-attention over a source of length S (here T for causal)
    "none": {}, "key_padding": dict(src_key_padding_mask=_SRC_KPM),
    "float": dict(src_mask=_FLOAT_SS),
    "float_and_padding": dict(src_mask=_FLOAT_SS, src_key_padding_mask=_SRC_KPM)}
DECODER_MASKS = {
    "none": {}, "causal_hint": dict(tgt_mask=_CAUSAL, tgt_is_causal=True),
    "causal_float_and_padding": dict(tgt_mask=_CAUSAL_FLOAT, tgt_key_padding_mask=_TGT_KPM,
                                     memory_key_padding_mask=_SRC_KPM),
    "memory_mask": dict(memory_mask=_FLOAT_TS, memory_key_padding_mask=_SRC_KPM)}


def _activations(torch, name):
    """(theirs, ours) for a config's activation."""
    return {"silu": (torch.nn.functional.silu, F.silu),
            "GELU module": (torch.nn.GELU(), nn.GELU())}.get(name, (name, name))


def _build(torch, kind, cfg, lib):
    """The module `kind` of torch.nn (lib=torch.nn) or ours (lib=nn), E wide, H heads."""
    cfg = dict(cfg)
    if "activation" in cfg:
        cfg["activation"] = _activations(torch, cfg["activation"])[lib is nn]
    if kind == "transformer":
        return lib.Transformer(E, H, 2, 2, FF, **cfg)
    layer = (lib.TransformerDecoderLayer if "dec" in kind else
             lib.TransformerEncoderLayer)(E, H, FF, **cfg)
    if kind.endswith("layer"):
        return layer
    norm = lib.LayerNorm(E, bias=cfg.get("bias", True))
    if kind == "encoder":
        extra = dict(enable_nested_tensor=False) if lib is not nn else {}
        return lib.TransformerEncoder(layer, 2, norm, **extra)
    return lib.TransformerDecoder(layer, 2, norm)


def _pair(kind, cfg):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = _build(torch, kind, cfg, torch.nn).double().eval()
    with torch.no_grad():          # non-zero biases, norms not ones: so they count
        for p in theirs.parameters():
            if p.ndim == 1:
                p.normal_()
    ours = _build(torch, kind, cfg, nn).double().eval()
    ours.load_state_dict(theirs.state_dict())
    return torch, theirs, ours


def _inputs(kind, cfg, unbatched=False):
    """src and/or tgt and memory, laid out as cfg's batch_first says."""
    rng = np.random.default_rng(1)
    shape = (lambda n: (n, E)) if unbatched else \
        (lambda n: (N, n, E)) if cfg.get("batch_first") else (lambda n: (n, N, E))
    src, tgt = rng.standard_normal(shape(S)), rng.standard_normal(shape(T))
    return {"transformer": [src, tgt]}.get(kind, [tgt, src] if "dec" in kind else [src])


def _compare(kind, cfg, masks, unbatched=False):
    torch, theirs, ours = _pair(kind, cfg)
    arrays = _inputs(kind, cfg, unbatched)
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    m_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    t_masks = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v
               for k, v in masks.items()}
    t_out, m_out = theirs(*t_in, **t_masks), ours(*m_in, **masks)
    np.testing.assert_allclose(m_out.numpy(), t_out.detach().numpy(), rtol=1e-9, atol=1e-11)
    g = np.random.default_rng(2).standard_normal(t_out.shape)
    (t_out * torch.tensor(g)).sum().backward()
    (m_out * mg.tensor(g)).sum().backward()
    for a, b in zip(m_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=name)


def _layer_mask(kind, masks):
    """Encoder masks under the layer's argument name (the stack calls it `mask`)."""
    return {("mask" if k == "src_mask" and kind == "encoder" else k): v
            for k, v in masks.items()}


@pytest.mark.parametrize("cfg", LAYER_CONFIGS, ids=str)
@pytest.mark.parametrize("mask", sorted(ENCODER_MASKS))
def test_encoder_layer_matches_torch(cfg, mask):
    _compare("enc_layer", cfg, ENCODER_MASKS[mask])


@pytest.mark.parametrize("cfg", LAYER_CONFIGS, ids=str)
@pytest.mark.parametrize("mask", sorted(DECODER_MASKS))
def test_decoder_layer_matches_torch(cfg, mask):
    _compare("dec_layer", cfg, DECODER_MASKS[mask])


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True, norm_first=True)], ids=str)
@pytest.mark.parametrize("mask", ["none", "float", "float_and_padding"])
def test_encoder_stack_matches_torch(cfg, mask):
    """(A float mask that is not causal must not be taken for the causal one.)"""
    _compare("encoder", cfg, _layer_mask("encoder", ENCODER_MASKS[mask]))


@pytest.mark.parametrize("hint", [None, True])
@pytest.mark.parametrize("padding", [{}, dict(src_key_padding_mask=_SRC_KPM)], ids=str)
def test_encoder_stack_with_a_causal_mask_detected_or_hinted_matches_torch(hint, padding):
    """is_causal=None: the stack finds that the mask is the causal one, as PyTorch's."""
    causal = np.triu(np.full((S, S), -np.inf), 1)
    _compare("encoder", dict(batch_first=True), dict(mask=causal, is_causal=hint, **padding))


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True, norm_first=True)], ids=str)
@pytest.mark.parametrize("mask", ["none", "causal_float_and_padding", "causal_hint"])
def test_decoder_stack_matches_torch(cfg, mask):
    _compare("decoder", cfg, DECODER_MASKS[mask])


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True, norm_first=True,
                                              activation="gelu"), dict(bias=False)], ids=str)
def test_transformer_matches_torch(cfg):
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=mg.float64).numpy()
    _compare("transformer", cfg, dict(tgt_mask=causal, src_key_padding_mask=_SRC_KPM,
                                      tgt_key_padding_mask=_TGT_KPM,
                                      memory_key_padding_mask=_SRC_KPM))


@pytest.mark.parametrize("kind", ["enc_layer", "dec_layer", "encoder", "decoder",
                                  "transformer"])
def test_unbatched_matches_torch(kind):
    masks = {"enc_layer": dict(src_mask=_FLOAT_SS, src_key_padding_mask=_SRC_KPM[0]),
             "encoder": dict(src_key_padding_mask=_SRC_KPM[0]),
             "transformer": dict(tgt_mask=_CAUSAL, memory_key_padding_mask=_SRC_KPM[0])}
    _compare(kind, dict(), masks.get(kind, dict(tgt_mask=_CAUSAL, tgt_is_causal=True,
                                                memory_key_padding_mask=_SRC_KPM[0])),
             unbatched=True)


@pytest.mark.parametrize("kind", ["enc_layer", "dec_layer", "encoder", "decoder",
                                  "transformer"])
@pytest.mark.parametrize("cfg", [dict(), dict(bias=False, activation="GELU module")], ids=str)
def test_state_dict_keys_are_pytorchs(kind, cfg):
    torch = pytest.importorskip("torch")
    theirs, ours = (_build(torch, kind, cfg, lib) for lib in (torch.nn, nn))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in ours.parameters()] == \
        [tuple(p.shape) for p in theirs.parameters()]


@pytest.mark.parametrize("sz,dtype", [(4, None), (1, "float64"), (0, None)])
def test_square_subsequent_mask_is_pytorchs(sz, dtype):
    torch = pytest.importorskip("torch")
    ours = nn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(
        sz, dtype=getattr(torch, dtype) if dtype else None)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- without PyTorch --------------------------------------------------------------------
def test_a_causal_mask_hides_the_future():
    """With the causal mask, output t of the decoder-only stack and of the Transformer does
    not move when inputs after t change (and does when they are at or before t)."""
    mg.manual_seed(0)
    stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF, batch_first=True), 2)
    model = nn.Transformer(E, H, 1, 1, FF, batch_first=True)
    stack.double().eval(), model.double().eval()
    mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=mg.float64)
    a = np.random.default_rng(5).standard_normal((N, T, E))
    b = a.copy()
    b[:, 2:] = 3.0
    src = mg.tensor(np.random.default_rng(6).standard_normal((N, S, E)))
    for run in (lambda x: stack(mg.tensor(x), mask=mask),
                lambda x: model(src, mg.tensor(x), tgt_mask=mask)):
        ya, yb = run(a).numpy(), run(b).numpy()
        np.testing.assert_allclose(ya[:, :2], yb[:, :2], rtol=1e-12)
        assert not np.allclose(ya[:, 2:], yb[:, 2:])


def test_dropout_in_training_only():
    mg.manual_seed(0)
    model = nn.Transformer(E, H, 1, 1, FF, dropout=0.3).double()
    src, tgt = mg.randn(S, N, E, dtype=mg.float64), mg.randn(T, N, E, dtype=mg.float64)

    def run(seed):
        mg.manual_seed(seed)
        return model(src, tgt).numpy()
    a, b, c = run(1), run(1), run(2)
    assert np.array_equal(a, b) and not np.allclose(a, c)
    model.eval()
    plain = nn.Transformer(E, H, 1, 1, FF, dropout=0.0).double()
    plain.load_state_dict(model.state_dict())
    np.testing.assert_allclose(run(1), run(2), rtol=0)
    np.testing.assert_allclose(run(1), plain(src, tgt).numpy(), rtol=1e-12)


def test_initialisation_is_pytorchs():
    """A stack's layers start as copies of the one given; Transformer then draws every
    matrix anew, Xavier-uniform, and leaves biases and norms as their modules set them."""
    mg.manual_seed(0)
    stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF), 2)
    for p, q in zip(stack.layers[0].parameters(), stack.layers[1].parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    model = nn.Transformer(E, H, 2, 1, FF)
    params = dict(model.named_parameters())
    a, b = (params[f"encoder.layers.{i}.linear1.weight"].numpy() for i in (0, 1))
    assert not np.allclose(a, b)
    bound = np.sqrt(6 / (E + FF))                  # Xavier's, above Linear's 1/sqrt(E)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 1 / np.sqrt(E)
    assert np.all(params["encoder.layers.0.self_attn.in_proj_bias"].numpy() == 0)
    assert np.all(params["decoder.norm.weight"].numpy() == 1)
    lin_bias = params["decoder.layers.0.linear2.bias"].numpy()
    assert np.abs(lin_bias).max() <= 1 / np.sqrt(FF) and np.abs(lin_bias).max() > 0


def test_an_activation_module_and_custom_stacks():
    """A Module activation is a submodule (no parameters, as PyTorch); custom_encoder and
    custom_decoder take the stacks' places, and are initialised too."""
    layer = nn.TransformerEncoderLayer(E, H, FF, activation=nn.GELU())
    assert isinstance(layer.activation, nn.GELU) and "activation" in dict(
        layer.named_children())
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF), 1)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, FF), 1)
    model = nn.Transformer(E, H, custom_encoder=enc, custom_decoder=dec)
    assert model.encoder is enc and model.decoder is dec and enc.norm is None
    assert model(mg.randn(S, N, E), mg.randn(T, N, E)).shape == (T, N, E)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by nhead \(3\)"):
        nn.TransformerEncoderLayer(10, 3)
    with pytest.raises(ValueError, match="positive integers"):
        nn.TransformerDecoderLayer(8, 2, dim_feedforward=0)
    with pytest.raises(RuntimeError, match="'relu' or 'gelu'.*not 'tanh'"):
        nn.TransformerDecoderLayer(E, H, activation="tanh")
    with pytest.raises(TypeError, match="a callable, got int"):
        nn.TransformerEncoderLayer(E, H, activation=3)
    with pytest.raises(ValueError, match="num_layers must be a non-negative integer"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF), -1)
    with pytest.raises(TypeError, match="must be a Module"):
        nn.TransformerDecoder("layer", 2)
    with pytest.raises(ValueError, match="sz must be a non-negative integer"):
        nn.Transformer.generate_square_subsequent_mask(2.5)


def test_bad_inputs_are_named_as_the_caller_gave_them():
    enc = nn.TransformerEncoderLayer(E, H, FF)
    dec = nn.TransformerDecoderLayer(E, H, FF, batch_first=True)
    model = nn.Transformer(E, H, 1, 1, FF)
    x = mg.randn(S, N, E)
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: src must be \(L, E\) or "
                                         r"batched \(L, N, E\).*d_model = 8, got \(5, 3, 6\)"):
        enc(mg.randn(S, N, 6))
    with pytest.raises(RuntimeError, match="is_causal=True is a hint that src_mask"):
        enc(x, is_causal=True)
    with pytest.raises(ValueError, match=r"src_mask must be \(5, 5\) or \(6, 5, 5\)"):
        enc(x, src_mask=np.zeros((4, 5), bool))
    with pytest.raises(ValueError, match=r"src_key_padding_mask must be \(3, 5\)"):
        enc(x, src_key_padding_mask=np.zeros((N, 4), bool))
    with pytest.raises(ValueError, match=r"tgt \(3, 4, 8\) and memory \(2, 5, 8\) must"):
        dec(mg.randn(N, T, E), mg.randn(2, S, E))
    with pytest.raises(ValueError, match=r"memory_key_padding_mask must be \(3, 5\)"):
        dec(mg.randn(N, T, E), mg.randn(N, S, E), memory_key_padding_mask=np.zeros((N, T)))
    with pytest.raises(RuntimeError, match="memory_is_causal=True is a hint that "
                                           "memory_mask"):
        dec(mg.randn(N, T, E), mg.randn(N, S, E), memory_is_causal=True)
    with pytest.raises(TypeError, match="tgt_mask must be boolean or floating point"):
        model(x, mg.randn(T, N, E), tgt_mask=np.zeros((T, T), np.int64))
    with pytest.raises(ValueError, match=r"src \(5, 3, 8\) and tgt \(4, 2, 8\) must"):
        model(x, mg.randn(T, 2, E))
    with pytest.raises(ValueError, match=r"Transformer: tgt must be .*got \(4, 6\)"):
        model(x, mg.randn(T, 6))
