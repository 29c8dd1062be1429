"""Network zoo: specs of the reference networks and builders with random weights (no downloads).

`NETWORKS` maps a name to a frozen `NetworkSpec`; `build(name, batch)` returns
`(module.eval(), example_inputs, meta)`. Every module returns one plain tensor so that it can be
traced and exported. The spec table is pure Python; torch is imported only inside the builders.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
SPLITS = ("train", "heldout", "blind")


@dataclass(frozen=True)
class NetworkSpec:
    """One reference network.

    input_kind: 'image' (float NCHW), 'tokens' (int64 ids, shape (batch, seq)) or
    'sequence' (float (batch, time, features)). sample_shape excludes the batch dim.
    default: part of the default sweep (export/timing without --names).
    """

    name: str
    family: str
    source: str
    split: str
    builder: Callable[[], Any] = field(repr=False, compare=False)
    input_kind: str
    sample_shape: tuple[int, ...]
    vocab_size: int = 0
    default: bool = True
    description: str = ""
    arch: str = ""      # architecture family for grouped cross-validation (default: the name)

    @property
    def arch_family(self) -> str:
        return self.arch or self.name

    @property
    def input_name(self) -> str:
        return "input_ids" if self.input_kind == "tokens" else "input"

    def input_shape(self, batch: int) -> tuple[int, ...]:
        return (batch, *self.sample_shape)


# ----------------------------------------------------------------------------- builders
def _torchvision(fn_name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        import torchvision.models as tvm

        return getattr(tvm, fn_name)(weights=None, **kwargs)

    return build


def _torchvision_seg(fn_name: str, in_channels: int = 3, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        import torch.nn as nn
        import torchvision.models.segmentation as seg

        model = getattr(seg, fn_name)(weights=None, weights_backbone=None, aux_loss=False, **kwargs)
        if in_channels != 3:
            old = model.backbone.conv1
            model.backbone.conv1 = nn.Conv2d(in_channels, old.out_channels, kernel_size=old.kernel_size,
                                             stride=old.stride, padding=old.padding, bias=False)
        return _SelectOut(model)

    return build


def _torchvision_video(fn_name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        import torchvision.models.video as tvv

        return getattr(tvv, fn_name)(weights=None, **kwargs)

    return build


def _lraspp() -> Any:
    import torchvision.models.segmentation as seg

    return _SelectOut(seg.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None))


def _hf(config_name: str, model_name: str = "AutoModel", model_kwargs: dict | None = None,
        **config_kwargs: Any) -> Callable[[], Any]:
    """Hugging Face model from its default config (+ overrides), SDPA attention where supported.

    model_kwargs go to the model constructor (e.g. add_pooling_layer=False: a pooler whose output
    is unused would run in eager mode but vanish from the exported graph).
    """
    def build() -> Any:
        import transformers

        config = getattr(transformers, config_name)(**config_kwargs)
        kw = dict(model_kwargs or {})
        if model_name == "AutoModel":
            cls = transformers.AutoModel
            try:
                model = cls.from_config(config, attn_implementation="sdpa", **kw)
            except (ValueError, TypeError, ImportError):  # model without SDPA support
                model = cls.from_config(config, **kw)
        else:
            config._attn_implementation = "sdpa"
            model = getattr(transformers, model_name)(config, **kw)
        return _LastHidden(model)

    return build


def _rnn(kind: str, in_features: int, hidden: int, layers: int, out_features: int) -> Callable[[], Any]:
    def build() -> Any:
        return _RNNHead(kind, in_features, hidden, layers, out_features)

    return build


def _timm(name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        import timm

        return timm.create_model(name, pretrained=False, **kwargs)

    return build


def _custom(cls_name: str, *args: Any) -> Callable[[], Any]:
    def build() -> Any:
        return _wrap(cls_name, *args)

    return build


def _wrap(cls_name: str, *args: Any) -> Any:
    from . import wrappers

    return getattr(wrappers, cls_name)(*args)


def _SelectOut(model: Any) -> Any:
    return _wrap("SelectOut", model)


def _LastHidden(model: Any) -> Any:
    return _wrap("LastHidden", model)


def _RNNHead(*args: Any) -> Any:
    return _wrap("RNNHead", *args)


# ----------------------------------------------------------------------------- spec table
IMG = (3, 224, 224)
SEG = (3, 512, 512)
SEQ_LEN = 128


def _specs() -> list[NetworkSpec]:
    S = NetworkSpec
    return [
        # ---- training split: networks whose measurements calibrate the model
        S("resnet18", "cnn", "torchvision", "train", _torchvision("resnet18"), "image", IMG, arch="resnet"),
        S("resnet50", "cnn", "torchvision", "train", _torchvision("resnet50"), "image", IMG, arch="resnet"),
        S("mobilenet_v3_large", "cnn", "torchvision", "train", _torchvision("mobilenet_v3_large"), "image", IMG, arch="mobilenet"),
        S("convnext_tiny", "cnn", "torchvision", "train", _torchvision("convnext_tiny"), "image", IMG),
        S("densenet121", "cnn", "torchvision", "train", _torchvision("densenet121"), "image", IMG),
        S("vit_b_16", "transformer", "torchvision", "train", _torchvision("vit_b_16"), "image", IMG),
        S("deeplabv3_resnet50", "segmentation", "torchvision", "train",
          _torchvision_seg("deeplabv3_resnet50"), "image", SEG, arch="resnet"),
        S("lraspp_mobilenet_v3_large", "segmentation", "torchvision", "train", _lraspp, "image", SEG, arch="mobilenet"),
        S("bert_base", "transformer", "transformers", "train", _hf("BertConfig", model_kwargs={"add_pooling_layer": False}), "tokens", (SEQ_LEN,),
          vocab_size=30522, description="BertConfig() defaults, seq 128"),
        S("lstm", "rnn", "custom", "train", _rnn("lstm", 256, 512, 2, 10000), "sequence", (64, 256),
          description="LSTM(256->512, 2 layers), seq 64, linear head to 10000"),
        # ---- held-out split: different architectures, used only to validate predictions
        S("efficientnet_b0", "cnn", "torchvision", "heldout", _torchvision("efficientnet_b0"), "image", IMG),
        S("regnet_y_1_6gf", "cnn", "torchvision", "heldout", _torchvision("regnet_y_1_6gf"), "image", IMG),
        S("swin_t", "transformer", "torchvision", "heldout", _torchvision("swin_t"), "image", IMG),
        S("gpt2", "transformer", "transformers", "heldout", _hf("GPT2Config", use_cache=False), "tokens",
          (SEQ_LEN,), vocab_size=50257, description="GPT2Config() (small), causal, seq 128"),
        S("distilbert", "transformer", "transformers", "heldout", _hf("DistilBertConfig"), "tokens",
          (SEQ_LEN,), vocab_size=30522, description="DistilBertConfig() defaults, seq 128"),
        S("fcn_resnet50", "segmentation", "torchvision", "heldout", _torchvision_seg("fcn_resnet50"),
          "image", SEG, arch="resnet"),
        S("deepcam_lite", "segmentation", "custom", "heldout",
          _torchvision_seg("deeplabv3_resnet50", in_channels=16, num_classes=3), "image", (16, 384, 576),
          description="DeepCAM-like: deeplabv3_resnet50 with 16 input channels, 3 classes, 384x576", arch="resnet"),
        S("gru", "rnn", "custom", "heldout", _rnn("gru", 80, 768, 2, 32), "sequence", (100, 80),
          description="GRU(80->768, 2 layers), seq 100, linear head to 32"),
        # ---- extras: not in the default sweep (heavy or redundant); pass --names to use them

        S("roberta_base", "transformer", "transformers", "train", _hf("RobertaConfig", model_kwargs={"add_pooling_layer": False}, vocab_size=50265),
          "tokens", (SEQ_LEN,), vocab_size=50265, default=False),
        # ---- blind split: families absent from every fit, measured once (2026-12-03) and never used to
        #      choose a model, a class, a constant or a hyperparameter; not in the default sweep
        S("googlenet", "cnn", "torchvision", "blind",
          _torchvision("googlenet", aux_logits=False, init_weights=False), "image", IMG, default=False, arch="inception"),
        S("inception_v3", "cnn", "torchvision", "blind",
          _torchvision("inception_v3", aux_logits=False, init_weights=False), "image", (3, 299, 299), default=False, arch="inception"),
        S("vgg16", "cnn", "torchvision", "blind", _torchvision("vgg16"), "image", IMG, default=False, arch="plain_cnn"),
        S("alexnet", "cnn", "torchvision", "blind", _torchvision("alexnet"), "image", IMG, default=False, arch="plain_cnn"),
        S("squeezenet1_1", "cnn", "torchvision", "blind", _torchvision("squeezenet1_1"), "image", IMG,
          default=False, arch="squeezenet"),
        S("shufflenet_v2_x1_0", "cnn", "torchvision", "blind", _torchvision("shufflenet_v2_x1_0"), "image",
          IMG, default=False, arch="shufflenet"),
        S("r3d_18", "cnn", "torchvision", "blind", _torchvision_video("r3d_18"), "image", (3, 16, 112, 112),
          default=False, arch="video3d", description="3D ResNet-18 on 16 frames of 112x112"),
        S("conv_autoencoder", "cnn", "custom", "blind", _custom("ConvAutoencoder"), "image", (3, 256, 256),
          default=False, arch="autoencoder", description="4x4 stride-2 convs 64-512 down, 4x4 stride-2 transposed convs up, 256x256"),
        S("unet", "segmentation", "custom", "blind", _custom("UNet"), "image", (3, 256, 256), default=False, arch="unet",
          description="U-Net, widths 32-512, 3x3 convs + BN, 2x2 transposed convs, 256x256"),
        S("mixer_b16", "mlp", "timm", "blind", _timm("mixer_b16_224"), "image", IMG, default=False, arch="mlp_mixer"),
        S("poolformer_s12", "cnn", "timm", "blind", _timm("poolformer_s12"), "image", IMG, default=False, arch="metaformer"),
        S("t5_encoder", "transformer", "transformers", "blind", _hf("T5Config", "T5EncoderModel"),
          "tokens", (SEQ_LEN,), vocab_size=32128, default=False, arch="t5", description="T5Config() (small) encoder, seq 128"),
        S("opt_125m", "transformer", "transformers", "blind", _hf("OPTConfig", use_cache=False), "tokens", (SEQ_LEN,),
          vocab_size=50272, default=False, arch="opt", description="OPTConfig() (125m) decoder, seq 128"),
        S("llama_small", "transformer", "transformers", "blind",
          _hf("LlamaConfig", hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
              num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048, use_cache=False),
          "tokens", (SEQ_LEN,), vocab_size=32000, default=False, arch="llama",
          description="LlamaConfig d=1024, 8 layers, 16 heads, SwiGLU 2816, RMSNorm, rotary; seq 128"),
        S("bilstm", "rnn", "custom", "blind", _custom("BiRNNHead", "lstm", 256, 512, 1, 1000), "sequence",
          (64, 256), default=False, arch="birnn", description="bidirectional LSTM(256->512, 1 layer), seq 64, head to 1000"),
        S("tanh_mlp", "mlp", "custom", "blind", _custom("TanhMLP", 1024, 4096, 6, 1024), "sequence", (1024,),
          default=False, arch="mlp", description="6 x Linear(4096) + tanh, 1024 in/out (PINN-style wide MLP)"),
        S("vit_hf", "transformer", "transformers", "heldout", _hf_vit, "image", IMG, default=False,
          description="ViTConfig() defaults via transformers (pixel_values input)"),
    ]


def _hf_vit() -> Any:
    import transformers

    config = transformers.ViTConfig()
    config._attn_implementation = "sdpa"
    return _wrap("PixelLastHidden", transformers.ViTModel(config, add_pooling_layer=False))


NETWORKS: dict[str, NetworkSpec] = {s.name: s for s in _specs()}


def names(split: str | None = None, include_extra: bool = False) -> list[str]:
    """Network names in table order, optionally filtered by split; extras only if asked."""
    return [n for n, s in NETWORKS.items()
            if (split is None or s.split == split) and (include_extra or s.default)]


def parse_names(arg: str | None) -> list[str]:
    """'a,b' -> ['a', 'b'] (validated); None/'' -> default sweep; 'train'/'heldout'/'blind'/'all' allowed."""
    if not arg:
        return names()
    out: list[str] = []
    for tok in (t.strip() for t in arg.split(",")):
        if not tok:
            continue
        if tok in SPLITS:
            out += names(tok, include_extra=tok == "blind")
        elif tok == "all":
            out += names(include_extra=True)
        elif tok in NETWORKS:
            out.append(tok)
        else:
            raise KeyError(f"unknown network {tok!r}; known: {', '.join(NETWORKS)}")
    return list(dict.fromkeys(out))


def torch_dtype(precision: str) -> Any:
    import torch

    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def make_inputs(spec: NetworkSpec, batch: int, precision: str = "fp32", device: str = "cpu",
                seed: int = 0) -> tuple:
    """Random example inputs (never zeros); int64 token ids for NLP networks."""
    import torch

    g = torch.Generator().manual_seed(seed)
    shape = spec.input_shape(batch)
    if spec.input_kind == "tokens":
        x = torch.randint(1, spec.vocab_size, shape, generator=g, dtype=torch.int64)
    else:
        x = torch.randn(shape, generator=g).to(torch_dtype(precision))
    return (x.to(device),)


def build(name: str, batch: int, precision: str = "fp32", device: str = "cpu", seed: int = 0):
    """Build network `name` with random weights: (module.eval(), example_inputs, meta)."""
    import torch

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    spec = NETWORKS[name]
    torch.manual_seed(seed)
    module = spec.builder().eval()
    if precision in ("fp16", "bf16"):
        module = module.to(torch_dtype(precision))
    module = module.to(device)
    inputs = make_inputs(spec, batch, precision, device, seed)
    meta = {
        "network": name, "family": spec.family, "source": spec.source, "split": spec.split,
        "precision": precision, "batch": batch, "input_names": [spec.input_name], "output_names": ["output"],
        "input_shapes": [list(x.shape) for x in inputs], "input_dtypes": [str(x.dtype) for x in inputs],
        "n_params": sum(p.numel() for p in module.parameters()), "description": spec.description,
    }
    return module, inputs, meta
