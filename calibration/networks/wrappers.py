"""nn.Module wrappers that make every zoo network take one tensor and return one tensor (needs torch)."""
from __future__ import annotations

import torch
import torch.nn as nn


class SelectOut(nn.Module):
    """torchvision segmentation model -> its 'out' tensor."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class LastHidden(nn.Module):
    """Hugging Face text model -> last_hidden_state (forward takes input_ids only)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


class PixelLastHidden(nn.Module):
    """Hugging Face vision model -> last_hidden_state (forward takes pixel_values)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(pixel_values=x).last_hidden_state


class RNNHead(nn.Module):
    """Stacked LSTM/GRU (batch_first) followed by a per-step linear head."""

    def __init__(self, kind: str, in_features: int, hidden: int, layers: int, out_features: int):
        super().__init__()
        rnn_cls = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn_cls(in_features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, out_features)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class BiRNNHead(nn.Module):
    """Bidirectional LSTM/GRU (batch_first) followed by a per-step linear head."""

    def __init__(self, kind: str, in_features: int, hidden: int, layers: int, out_features: int):
        super().__init__()
        rnn_cls = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn_cls(in_features, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, out_features)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class TanhMLP(nn.Module):
    """Plain wide MLP with tanh activations (PINN-style): depth x Linear(width) + a linear head."""

    def __init__(self, in_features: int, width: int, depth: int, out_features: int):
        super().__init__()
        layers: list[nn.Module] = []
        d = in_features
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class ConvAutoencoder(nn.Module):
    """DCGAN-style convolutional autoencoder: 4x4 stride-2 convolutions down, 4x4 stride-2 transposed up."""

    def __init__(self, channels: tuple[int, ...] = (64, 128, 256, 512)):
        super().__init__()
        enc: list[nn.Module] = []
        c_in = 3
        for i, c in enumerate(channels):
            enc += [nn.Conv2d(c_in, c, 4, stride=2, padding=1, bias=i == 0)]
            if i:
                enc.append(nn.BatchNorm2d(c))
            enc.append(nn.LeakyReLU(0.2))
            c_in = c
        dec: list[nn.Module] = []
        for c in list(channels[-2::-1]) + [3]:
            dec.append(nn.ConvTranspose2d(c_in, c, 4, stride=2, padding=1, bias=c == 3))
            dec += [nn.Tanh()] if c == 3 else [nn.BatchNorm2d(c), nn.ReLU()]
            c_in = c
        self.encoder = nn.Sequential(*enc)
        self.decoder = nn.Sequential(*dec)

    def forward(self, x):
        return self.decoder(self.encoder(x))


class _DoubleConv(nn.Sequential):
    def __init__(self, c_in: int, c_out: int):
        super().__init__(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(),
                         nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())


class UNet(nn.Module):
    """The original U-Net shape (Ronneberger et al.) with padding: max-pool down, 2x2 transposed conv up, skips."""

    def __init__(self, base: int = 32, depth: int = 4, in_channels: int = 3, classes: int = 2):
        super().__init__()
        widths = [base * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList([_DoubleConv(in_channels, widths[0])] +
                                  [_DoubleConv(widths[i], widths[i + 1]) for i in range(depth)])
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList([nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) for i in reversed(range(depth))])
        self.up_conv = nn.ModuleList([_DoubleConv(2 * widths[i], widths[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else self.pool(x))
            skips.append(x)
        skips.pop()
        for up, conv in zip(self.up, self.up_conv):
            x = conv(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


class VideoLastHidden(nn.Module):
    """Hugging Face video encoder (V-JEPA 2) on (batch, frames, channels, height, width) -> last_hidden_state, the
    predictor skipped."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(pixel_values_videos=x, skip_predictor=True).last_hidden_state


class AudioLastHidden(nn.Module):
    """Hugging Face speech encoder (wav2vec2-style) -> last_hidden_state (forward takes raw input_values)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(input_values=x).last_hidden_state


class AudioCodec(nn.Module):
    """Hugging Face neural audio codec (EnCodec) -> reconstructed waveform (forward takes a mono waveform (batch, time))."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(input_values=x.unsqueeze(1)).audio_values


class MelNoiseWaveform(nn.Module):
    """Hugging Face vocoder (UnivNet) on one (batch, frames, mels + noise channels) tensor: the last
    config.model_in_channels channels are the noise sequence -> waveforms."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.noise_channels = model.config.model_in_channels

    def forward(self, x):
        mels = x.shape[-1] - self.noise_channels
        return self.model(input_features=x[..., :mels], noise_sequence=x[..., mels:]).waveforms


class PixelDepth(nn.Module):
    """Hugging Face depth estimator (Depth Anything) -> predicted_depth (forward takes pixel_values)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(pixel_values=x).predicted_depth


class FeatureEncoder(nn.Module):
    """Hugging Face encoder taking spectrogram input_features (Whisper's encoder) -> last_hidden_state."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, x):
        return self.encoder(input_features=x).last_hidden_state


class _GatedResidual(nn.Module):
    def __init__(self, channels: int, kernel: int, dilation: int):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv = nn.Conv1d(channels, 2 * channels, kernel, dilation=dilation)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        h = self.conv(nn.functional.pad(x, (self.pad, 0)))
        a, b = h.chunk(2, dim=1)
        h = torch.tanh(a) * torch.sigmoid(b)
        return x + self.res(h), self.skip(h)


class WaveNetTCN(nn.Module):
    """WaveNet-style temporal convolution network: causal dilated Conv1d stacks with gated tanh/sigmoid units,
    residual and skip 1x1 convolutions; input (batch, in_channels, time)."""

    def __init__(self, in_channels: int = 32, channels: int = 128, kernel: int = 2, dilations: int = 10,
                 stacks: int = 2, out_channels: int = 256):
        super().__init__()
        self.inp = nn.Conv1d(in_channels, channels, 1)
        self.blocks = nn.ModuleList([_GatedResidual(channels, kernel, 2 ** i)
                                     for _ in range(stacks) for i in range(dilations)])
        self.head = nn.Sequential(nn.ReLU(), nn.Conv1d(channels, channels, 1), nn.ReLU(),
                                  nn.Conv1d(channels, out_channels, 1))

    def forward(self, x):
        x = self.inp(x)
        skips = 0
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        return self.head(skips)


class PixelLogits(nn.Module):
    """Hugging Face dense-prediction model (UperNet) -> logits (forward takes pixel_values)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(pixel_values=x).logits


class DetectionHeads(nn.Module):
    """torchvision one-stage detector (RetinaNet, SSDlite, FCOS) without its transform and box decoding: backbone +
    FPN and the head's per-anchor class logits and box regressions concatenated (batch, anchors, classes + 4; FCOS's
    regression head adds its centerness: classes + 4 + 1)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.backbone = model.backbone
        self.head = model.head

    def forward(self, x):
        features = list(self.backbone(x).values())
        cls = self.head.classification_head(features)
        reg = self.head.regression_head(features)
        return torch.cat([cls, *reg] if isinstance(reg, tuple) else [cls, reg], dim=2)


class FramePairFlow(nn.Module):
    """torchvision RAFT on a frame pair stacked on channels (batch, 6, H, W) -> the last flow estimate."""

    def __init__(self, model: nn.Module, updates: int = 12):
        super().__init__()
        self.model = model
        self.updates = updates

    def forward(self, x):
        return self.model(x[:, :3], x[:, 3:], num_flow_updates=self.updates)[-1]


class PastValuesForecast(nn.Module):
    """Hugging Face TimesFM on a (batch, context) series, no padding, frequency class 0 -> mean forecast."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        freq = torch.zeros(x.shape[0], 1, dtype=torch.long, device=x.device)
        return self.model(past_values=x, past_values_padding=torch.zeros_like(x), freq=freq).last_hidden_state


class PastValuesLastHidden(nn.Module):
    """Hugging Face time-series encoder (PatchTST, PatchTSMixer) on a (batch, context, channels) series ->
    last_hidden_state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(past_values=x).last_hidden_state


class InputsLastHidden(nn.Module):
    """Hugging Face Perceiver (with its own input preprocessor) -> the latents' last_hidden_state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(inputs=x).last_hidden_state


def _mlp(sizes: list[int], last_act: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if last_act or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    """DLRM (Naumov et al. 2019) on Criteo-style rows of integer features (batch, dense + sparse): the first `dense`
    columns are counts fed to the bottom MLP as log(1 + x), the rest are ids into one embedding table each (one
    table with offsets); pairwise dot-product interaction of the bottom output and the embeddings (upper triangle),
    top MLP to a click probability."""

    def __init__(self, dense: int = 13, sparse: int = 26, rows: int = 100000, dim: int = 128,
                 bottom: tuple[int, ...] = (512, 256, 128), top: tuple[int, ...] = (1024, 1024, 512, 256, 1)):
        super().__init__()
        self.dense = dense
        self.embedding = nn.Embedding(sparse * rows, dim)
        self.register_buffer("offsets", torch.arange(sparse) * rows)
        self.bottom = _mlp([dense, *bottom], last_act=True)
        n = sparse + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = _mlp([dim + n * (n - 1) // 2, *top], last_act=False)

    def forward(self, x):
        d = self.bottom(torch.log1p(x[:, :self.dense].float()).to(self.embedding.weight.dtype))
        e = self.embedding(x[:, self.dense:] + self.offsets)
        z = torch.cat([d.unsqueeze(1), e], dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.li, self.lj]
        return torch.sigmoid(self.top(torch.cat([d, inter], dim=1)))


class PixelOutput(nn.Module):
    """Hugging Face image model -> one named output field (reconstruction, heatmaps, alphas) (forward takes pixel_values)."""

    def __init__(self, model: nn.Module, field: str):
        super().__init__()
        self.model = model
        self.field = field

    def forward(self, x):
        return getattr(self.model(pixel_values=x), self.field)


class DenseKeypoints(nn.Module):
    """Hugging Face SuperPoint -> its two dense maps, flattened and joined: the keypoint heatmap after the max-pool
    non-maximum suppression and the L2-normalised descriptor map (forward takes a grey (batch, 1, H, W) image; the
    thresholding, border removal, top-k and descriptor sampling after them are data-dependent and not run)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        encoded = self.model.encoder(x).last_hidden_state
        scores = self.model.keypoint_decoder._get_pixel_scores(encoded)
        head = self.model.descriptor_decoder
        descriptors = nn.functional.normalize(head.conv_descriptor_b(head.relu(head.conv_descriptor_a(encoded))), p=2, dim=1)
        return torch.cat([scores.flatten(1), descriptors.flatten(1)], dim=1)


class DiffusionUNetNoise(nn.Module):
    """Diffusers conditional UNet (Stable Diffusion style) -> predicted noise for one denoising step (forward takes the
    latent (batch, 4, h, w)); the timestep and the text-encoder context (77 tokens) are fixed buffers expanded to the
    batch, so the text encoder is not run."""

    def __init__(self, model: nn.Module, context_tokens: int = 77):
        super().__init__()
        self.model = model
        self.register_buffer("context", torch.randn(1, context_tokens, model.config.cross_attention_dim))
        self.register_buffer("timestep", torch.tensor([500.0]))

    def forward(self, x):
        b = x.shape[0]
        return self.model(x, self.timestep.expand(b), self.context.expand(b, -1, -1)).sample


class ClassConditionalDiT(nn.Module):
    """Diffusers DiT (class-conditional diffusion transformer) -> one denoising step's output (forward takes the latent
    (batch, 4, h, w)); the timestep and class label are fixed buffers expanded to the batch."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.register_buffer("timestep", torch.tensor([500]))
        self.register_buffer("label", torch.tensor([1]))

    def forward(self, x):
        b = x.shape[0]
        return self.model(x, timestep=self.timestep.expand(b), class_labels=self.label.expand(b)).sample


class LatentDecode(nn.Module):
    """Diffusers VAE (AutoencoderKL) -> the decoded image of a latent (forward takes the latent (batch, c, h, w));
    the encoder is built but never run, so the exported graph is the decoder (post-quant conv included)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model.decode(x).sample


class NgramSeq2Seq(nn.Module):
    """Hugging Face ProphetNet on (batch, seq) source ids: the decoder runs on the first `target_len` ids shifted right
    (start id 102, [SEP]); returns the main stream and the n-gram predict streams joined on the time axis (the predict
    streams feed no main-stream output, so returning the main stream alone would drop them from the graph)."""

    def __init__(self, model: nn.Module, target_len: int = 128, start_id: int = 102):
        super().__init__()
        self.model = model
        self.target_len = target_len
        self.start_id = start_id

    def forward(self, input_ids):
        start = torch.full_like(input_ids[:, :1], self.start_id)
        decoder_ids = torch.cat([start, input_ids[:, : self.target_len - 1]], dim=1)
        out = self.model(input_ids=input_ids, decoder_input_ids=decoder_ids, use_cache=False)
        return torch.cat([out.last_hidden_state, out.last_hidden_state_ngram], dim=1)


class CodebookDecoderLogits(nn.Module):
    """Hugging Face MusicGen decoder (MusicgenForCausalLM) -> per-codebook logits (batch, codebooks, frames, vocab).
    Forward takes (batch, codebooks * frames) codebook ids, codebook-major, reshaped to the model's
    (batch * codebooks, frames); the text conditioning (a `context_tokens`-token text encoder output already projected
    to the decoder width) is a fixed buffer expanded to the batch, so the text encoder is not run."""

    def __init__(self, model: nn.Module, context_tokens: int = 16):
        super().__init__()
        self.model = model
        self.codebooks = model.config.num_codebooks
        self.register_buffer("context", torch.randn(1, context_tokens, model.config.hidden_size))

    def forward(self, input_ids):
        b = input_ids.shape[0]
        ids = input_ids.reshape(b * self.codebooks, -1)
        logits = self.model(input_ids=ids, encoder_hidden_states=self.context.expand(b, -1, -1), use_cache=False).logits
        return logits.reshape(b, self.codebooks, *logits.shape[1:])


class SeriesDecompositionForecast(nn.Module):
    """Hugging Face Autoformer (encoder + decoder) on a (batch, past_length, variates) multivariate history: the time
    features of the past and of the horizon are fixed buffers expanded to the batch, every value observed, and the
    horizon's values a zero placeholder (the decoder starts from the decomposed last `label_length` steps and zeros /
    the context mean, as in the paper's inference); -> the decoder's last_hidden_state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        _no_padding_mask_when_traced(type(model).__module__)
        self.model = model
        c = model.config
        past = c.context_length + max(c.lags_sequence)
        self.register_buffer("past_time", torch.randn(1, past, c.num_time_features))
        self.register_buffer("future_time", torch.randn(1, c.prediction_length, c.num_time_features))
        self.horizon = c.prediction_length

    def forward(self, x):
        b = x.shape[0]
        future = torch.zeros(b, self.horizon, x.shape[2], dtype=x.dtype, device=x.device)
        return self.model(past_values=x, past_time_features=self.past_time.expand(b, -1, -1),
                          past_observed_mask=torch.ones_like(x), future_values=future,
                          future_time_features=self.future_time.expand(b, -1, -1), use_cache=False).last_hidden_state


def _no_padding_mask_when_traced(module_name: str) -> None:
    """Make `module_name`'s create_bidirectional_mask return None for no padding mask while traced too, as it does in
    eager mode: transformers materialises an all-true mask under tracing (torch.jit / torch.export), which Autoformer's
    auto-correlation cannot take (it adds the mask to a (batch * heads, time, head_dim) tensor and fails); the eager
    program, the one that runs, adds no mask."""
    import sys

    mod = sys.modules[module_name]
    orig = getattr(mod, "create_bidirectional_mask", None)
    if orig is None or getattr(orig, "_zoo_no_padding", False):
        return

    def create_bidirectional_mask(config, inputs_embeds, attention_mask, *args, **kwargs):
        if attention_mask is None:
            return None
        return orig(config, inputs_embeds, attention_mask, *args, **kwargs)

    create_bidirectional_mask._zoo_no_padding = True
    mod.create_bidirectional_mask = create_bidirectional_mask


def capacity_experts_forward(self, hidden_states, top_k_index, top_k_weights):
    """A transformers experts forward (registered as "zoo_capacity") of static shapes: capacity-factor dispatch, as
    GShard / Switch / DeepSpeed-MoE / Tutel run a mixture of experts. Every (token, choice) pair gets a slot
    expert * capacity + its rank among the pairs routed to that expert (first choices of all tokens ranked before
    second choices), capacity = ceil(capacity_factor * tokens * top_k / experts); pairs past the capacity are dropped
    (a spare zero row). The slots' rows are scattered into an (experts, capacity, d) buffer, every expert runs its
    gated FFN on its capacity rows as one batched matmul over the experts, and each pair gathers its slot's row back,
    scaled by its routing weight and summed over the choices."""
    tokens, d = hidden_states.shape
    k = top_k_index.shape[-1]
    experts = self.num_experts
    num, den = self.capacity_factor
    capacity = (tokens * k * num + experts * den - 1) // (experts * den)
    choice = top_k_index.t().reshape(-1)                                    # (k * tokens,), choice-major
    onehot = nn.functional.one_hot(choice, experts)                         # (k * tokens, experts)
    rank = (torch.cumsum(onehot, dim=0) * onehot).sum(-1) - 1               # rank among the pairs of its expert
    slot = torch.where(rank < capacity, choice * capacity + rank, experts * capacity)
    rows = hidden_states.repeat(k, 1)                                       # (k * tokens, d), choice-major
    buf = hidden_states.new_zeros(experts * capacity + 1, d).index_put((slot,), rows)
    x = buf[: experts * capacity].view(experts, capacity, d)
    gate, up = torch.bmm(x, self.gate_up_proj.transpose(1, 2)).chunk(2, dim=-1)
    y = torch.bmm(self.act_fn(gate) * up, self.down_proj.transpose(1, 2))  # (experts, capacity, d)
    y = torch.cat([y.reshape(experts * capacity, d), y.new_zeros(1, d)])
    out = y[slot] * top_k_weights.t().reshape(-1, 1).to(y.dtype)
    return out.view(k, tokens, d).sum(0)


class CapacityMoELastHidden(nn.Module):
    """Hugging Face mixture-of-experts decoder (Mixtral) -> last_hidden_state (forward takes input_ids), its experts
    run by `capacity_experts_forward` (capacity factor 5/4), the same program in eager mode and in the graph:
    transformers' own paths are the grouped_mm one (histc, which neither ONNX exporter writes, and grouped_mm) and an
    eager loop over the experts hit, whose shapes depend on the routing."""

    def __init__(self, model: nn.Module, capacity_factor: tuple[int, int] = (5, 4)):
        super().__init__()
        from transformers.integrations.moe import ExpertsInterface

        ExpertsInterface.register("zoo_capacity", capacity_experts_forward)
        model.set_experts_implementation("zoo_capacity")
        for m in model.modules():
            if hasattr(m, "gate_up_proj") and hasattr(m, "num_experts"):
                m.capacity_factor = capacity_factor
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).last_hidden_state


class JointTextImageDiT(nn.Module):
    """Diffusers SD3Transformer2DModel (MMDiT: joint attention over text and image tokens) -> one denoising step's
    output (forward takes the latent (batch, 16, h, w)); the timestep, the pooled text embedding (CLIP-L + CLIP-G,
    2048) and the text encoders' token states (77 CLIP + `text_tokens - 77` T5 tokens, 4096 wide) are fixed buffers
    expanded to the batch, so no text encoder is run."""

    def __init__(self, model: nn.Module, text_tokens: int = 333):
        super().__init__()
        self.model = model
        c = model.config
        self.register_buffer("context", torch.randn(1, text_tokens, c.joint_attention_dim))
        self.register_buffer("pooled", torch.randn(1, c.pooled_projection_dim))
        self.register_buffer("timestep", torch.tensor([500.0]))

    def forward(self, x):
        b = x.shape[0]
        return self.model(x, encoder_hidden_states=self.context.expand(b, -1, -1),
                          pooled_projections=self.pooled.expand(b, -1), timestep=self.timestep.expand(b)).sample


class TeacherForcedTranscript(nn.Module):
    """Hugging Face SpeechT5ForSpeechToText on a (batch, samples) 16 kHz waveform, teacher-forced as in training: the
    text decoder reads `target_len` character ids (a fixed buffer: the transcript shifted right, expanded to the
    batch); -> the character logits (batch, target_len, vocab)."""

    def __init__(self, model: nn.Module, target_len: int = 160):
        super().__init__()
        self.model = model
        c = model.config
        ids = torch.randint(4, c.vocab_size, (1, target_len))
        ids[0, 0] = c.decoder_start_token_id
        self.register_buffer("target", ids)

    def forward(self, x):
        b = x.shape[0]
        return self.model(input_values=x, decoder_input_ids=self.target.expand(b, -1), use_cache=False).logits


class TextConditionedDenoiser(nn.Module):
    """Diffusers text-conditioned diffusion transformer (Wan's video DiT, Sana's linear DiT) -> one denoising step's
    output (forward takes the latent, (batch, c, h, w) or (batch, c, frames, h, w)); the timestep and the text
    encoder's token states (`text_tokens` x `text_dim`) are fixed buffers expanded to the batch, so no text encoder
    is run."""

    def __init__(self, model: nn.Module, text_tokens: int, text_dim: int):
        super().__init__()
        self.model = model
        self.register_buffer("context", torch.randn(1, text_tokens, text_dim))
        self.register_buffer("timestep", torch.tensor([500.0]))

    def forward(self, x):
        b = x.shape[0]
        return self.model(x, encoder_hidden_states=self.context.expand(b, -1, -1),
                          timestep=self.timestep.expand(b)).sample


class WanVideoDenoiser(TextConditionedDenoiser):
    """Diffusers WanTransformer3DModel -> one denoising step (forward takes the video latent (batch, 16, frames, h,
    w)); 512 umT5 token states (4096 wide) as a fixed buffer."""

    def __init__(self, model: nn.Module):
        super().__init__(model, text_tokens=512, text_dim=model.config.text_dim)
        model.set_attn_processor(WanRotaryStackProcessor())


class WanRotaryStackProcessor:
    """diffusers' WanAttnProcessor for text-to-video (no image context), its rotary embedding written as one stack of
    the rotated even and odd channels instead of two strided writes into an empty tensor (the same values; those
    writes trace to scatters of the example's batch, a graph wrong at any other batch). Set in eager mode too."""

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, rotary_emb=None):
        from diffusers.models.attention_dispatch import dispatch_attention_fn
        from diffusers.models.transformers.transformer_wan import _get_qkv_projections

        query, key, value = _get_qkv_projections(attn, hidden_states, encoder_hidden_states)
        query = attn.norm_q(query).unflatten(2, (attn.heads, -1))
        key = attn.norm_k(key).unflatten(2, (attn.heads, -1))
        value = value.unflatten(2, (attn.heads, -1))
        if rotary_emb is not None:
            def rotate(x, freqs_cos, freqs_sin):
                x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-1)
                cos, sin = freqs_cos[..., 0::2], freqs_sin[..., 1::2]
                return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2).type_as(x)

            query, key = rotate(query, *rotary_emb), rotate(key, *rotary_emb)
        out = dispatch_attention_fn(query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False)
        out = out.flatten(2, 3).type_as(query)
        return attn.to_out[1](attn.to_out[0](out))


class SanaDenoiser(TextConditionedDenoiser):
    """Diffusers SanaTransformer2DModel -> one denoising step (forward takes the DC-AE latent (batch, 32, h, w));
    300 Gemma-2 token states (caption_channels wide) as a fixed buffer."""

    def __init__(self, model: nn.Module):
        super().__init__(model, text_tokens=300, text_dim=model.config.caption_channels)


class FluxDenoiser(nn.Module):
    """Diffusers FluxTransformer2DModel (guidance-distilled, as FLUX.1-dev) -> one denoising step on a VAE latent
    (forward takes (batch, 16, h, w)): the latent is packed into 2x2 patches ((batch, h/2 * w/2, 64), as the Flux
    pipeline does), run with its (row, column) position ids (3-axis RoPE), and unpacked back. The T5 token states
    (512 x 4096), the pooled CLIP embedding (768), the timestep and the guidance scale are fixed buffers expanded to
    the batch, so no text encoder is run."""

    def __init__(self, model: nn.Module, text_tokens: int = 512):
        super().__init__()
        import diffusers.models.transformers.transformer_flux as flux

        if not getattr(flux.apply_rotary_emb, "_zoo", False):
            flux.apply_rotary_emb = _rotary_pairs_unflattened(flux.apply_rotary_emb)
        self.model = model
        c = model.config
        self.register_buffer("context", torch.randn(1, text_tokens, c.joint_attention_dim))
        self.register_buffer("pooled", torch.randn(1, c.pooled_projection_dim))
        self.register_buffer("txt_ids", torch.zeros(text_tokens, 3))
        self.register_buffer("timestep", torch.tensor([0.5]))
        self.register_buffer("guidance", torch.tensor([3.5]))

    def forward(self, x):
        b, c, h, w = x.shape
        hp, wp = h // 2, w // 2
        packed = x.view(b, c, hp, 2, wp, 2).permute(0, 2, 4, 1, 3, 5).reshape(b, hp * wp, c * 4)
        rows = torch.arange(hp, device=x.device, dtype=x.dtype).view(hp, 1).expand(hp, wp)
        cols = torch.arange(wp, device=x.device, dtype=x.dtype).view(1, wp).expand(hp, wp)
        img_ids = torch.stack([torch.zeros_like(rows), rows, cols], dim=-1).reshape(hp * wp, 3)
        out = self.model(packed, encoder_hidden_states=self.context.expand(b, -1, -1),
                         pooled_projections=self.pooled.expand(b, -1), timestep=self.timestep.expand(b),
                         img_ids=img_ids, txt_ids=self.txt_ids, guidance=self.guidance.expand(b)).sample
        return out.view(b, hp, wp, c, 2, 2).permute(0, 3, 1, 4, 2, 5).reshape(b, c, h, w)


class TiledImageCrossAttentionLM(nn.Module):
    """Hugging Face MllamaModel (Llama 3.2 Vision: a tiled-image ViT whose states the language model reads through
    gated cross-attention layers) -> the language model's last_hidden_state (forward takes the image tiles (batch,
    tiles, 3, size, size), one image a sample, all its tiles valid: the aspect ratio id is that of the tiles' `grid`).
    The prompt's token embeddings (`text_tokens` x d) and its cross-attention mask (every token reads every tile) are
    fixed buffers expanded to the batch; the 128k-row token table is dropped (its lookup, one gather of the prompt's
    rows, is left out; the table alone is 2.1 GB of fp32 weights)."""

    def __init__(self, model: nn.Module, text_tokens: int = 256, grid: tuple[int, int] = (2, 2)):
        super().__init__()
        self.model = model
        c = model.config
        model.language_model.embed_tokens = None
        ratios = [list(r) for r in c.vision_config.supported_aspect_ratios]
        tiles = grid[0] * grid[1]
        self.register_buffer("embeds", torch.randn(1, text_tokens, c.text_config.hidden_size) * 0.02)
        self.register_buffer("ratio_id", torch.tensor([[ratios.index(list(grid)) + 1]]))
        self.register_buffer("ratio_mask", torch.ones(1, 1, tiles, dtype=torch.long))
        self.register_buffer("cross_mask", torch.ones(1, text_tokens, 1, tiles, dtype=torch.long))

    def forward(self, x):
        b = x.shape[0]
        return self.model(inputs_embeds=self.embeds.expand(b, -1, -1), pixel_values=x.unsqueeze(1),
                          aspect_ratio_ids=self.ratio_id.expand(b, -1),
                          aspect_ratio_mask=self.ratio_mask.expand(b, -1, -1),
                          cross_attention_mask=self.cross_mask.expand(b, -1, -1, -1), use_cache=False).last_hidden_state


def _rotary_pairs_unflattened(orig):
    """diffusers' apply_rotary_emb with its interleaved (real, imaginary) pairs split by unflatten(-1, (-1, 2)) rather
    than reshape(*x.shape[:-1], -1, 2) (the same view; the reshape's leading sizes trace to constants of the example's
    batch, a graph wrong at any other batch); other layouts go to the original."""

    def apply_rotary_emb(x, freqs_cis, use_real=True, use_real_unbind_dim=-1, sequence_dim=2):
        if not (use_real and use_real_unbind_dim == -1):
            return orig(x, freqs_cis, use_real, use_real_unbind_dim, sequence_dim)
        cos, sin = freqs_cis
        cos, sin = (cos[None, None], sin[None, None]) if sequence_dim == 2 else (cos[None, :, None], sin[None, :, None])
        x_real, x_imag = x.unflatten(-1, (-1, 2)).unbind(-1)
        x_rotated = torch.stack([-x_imag, x_real], dim=-1).flatten(3)
        return (x.float() * cos.to(x.device) + x_rotated.float() * sin.to(x.device)).to(x.dtype)

    apply_rotary_emb._zoo = True
    return apply_rotary_emb


class HybridDeltaNetLastHidden(nn.Module):
    """Hugging Face hybrid Gated DeltaNet decoder (Qwen3.5's text model: three linear-attention layers to one gated
    full-attention layer) -> last_hidden_state (forward takes input_ids). Its gated delta rule and its short causal
    convolution run through `chunk_gated_delta_rule_static` and `causal_conv1d_plain` in eager mode and in the graph
    alike: transformers' own torch path solves each chunk's unit lower-triangular system with
    torch.linalg.solve_triangular (no ONNX operator) and writes every chunk's output into a preallocated tensor (a
    scatter traced at the example's batch), and its fused kernels (fla, causal-conv1d), where installed, would run
    another program than the graph's."""

    def __init__(self, model: nn.Module):
        super().__init__()
        import sys

        mod = sys.modules[type(model).__module__]  # (imported: the model's class lives there)
        mod.torch_chunk_gated_delta_rule = chunk_gated_delta_rule_static
        mod.causal_conv1d_fn = causal_conv1d_plain
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).last_hidden_state


def causal_conv1d_plain(hidden_states, weight, bias=None, activation=None, **kwargs):
    """transformers' torch path of the short causal depthwise convolution (kernel 4) over (batch, channels, seq)."""
    import torch.nn.functional as F
    from transformers.activations import ACT2FN

    seq_len = hidden_states.shape[-1]
    out = F.conv1d(hidden_states.to(weight.dtype), weight=weight.unsqueeze(1), bias=bias,
                   padding=weight.shape[-1] - 1, groups=hidden_states.shape[1])[:, :, :seq_len]
    if activation is not None:
        out = ACT2FN[activation](out)
    return out.to(hidden_states.dtype)


def chunk_gated_delta_rule_static(query, key, value, g, beta, chunk_size: int = 64, initial_state=None,
                                  output_final_state: bool = False, use_qk_l2norm_in_kernel: bool = False, **kwargs):
    """transformers' torch_chunk_gated_delta_rule (chunks of 64 tokens: intra-chunk decayed attention, a sequential
    scan of the (k_dim x v_dim) state over the chunks), the same values written with static shapes: each chunk's unit
    lower-triangular system (I + N) X = V is solved by its exact inverse, the product of (I + (-N)^(2^j)) for j < 6
    (N is nilpotent, N^64 = 0: 5 squarings and 6 products of 64x64 matrices), and the chunks' outputs are stacked
    rather than written into a preallocated tensor. No initial state (a prefill); the final state is not returned."""
    initial_dtype = query.dtype
    if initial_state is not None or output_final_state:
        raise NotImplementedError("prefill only: no initial state, no final state")
    query, key, value, beta, g = [x.transpose(1, 2).to(torch.float32, memory_format=torch.contiguous_format)
                                  for x in (query, key, value, beta, g)]
    if use_qk_l2norm_in_kernel:
        query = query * torch.rsqrt((query * query).sum(dim=-1, keepdim=True) + 1e-6)
        key = key * torch.rsqrt((key * key).sum(dim=-1, keepdim=True) + 1e-6)
    query = query * query.shape[-1] ** -0.5
    sequence_length = key.shape[2]
    pad = (chunk_size - sequence_length % chunk_size) % chunk_size
    if pad:
        query, key, value = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (query, key, value))
        beta, g = (torch.nn.functional.pad(x, (0, pad)) for x in (beta, g))
    num_chunks = (sequence_length + pad) // chunk_size
    v_beta = value * beta.unsqueeze(-1)
    k_beta = key * beta.unsqueeze(-1)
    query, key, k_beta, v_beta = (x.unflatten(2, (num_chunks, chunk_size)) for x in (query, key, k_beta, v_beta))
    decay = g.unflatten(2, (num_chunks, chunk_size))
    upper = torch.ones(chunk_size, chunk_size, dtype=torch.bool, device=query.device).triu(1)
    cum_decay = decay.cumsum(dim=3)
    pairwise_decay = (cum_decay.unsqueeze(4) - cum_decay.unsqueeze(3)).masked_fill(upper, float("-inf")).exp()
    ut_system = (k_beta @ key.transpose(-1, -2)) * pairwise_decay
    intra_chunk_attn = (query @ key.transpose(-1, -2)) * pairwise_decay
    decayed_k_beta = k_beta * cum_decay.exp().unsqueeze(-1)
    eye = torch.eye(chunk_size, dtype=ut_system.dtype, device=ut_system.device)
    power = -ut_system.tril(-1)
    inverse = eye + power
    steps = 1
    while steps * 2 < chunk_size:
        power = power @ power
        inverse = inverse @ (eye + power)
        steps *= 2
    new_values, k_cumdecay = inverse @ v_beta, inverse @ decayed_k_beta
    query = query * cum_decay.exp().unsqueeze(-1)
    key = key * (cum_decay[..., -1:] - cum_decay).exp().unsqueeze(-1)
    chunk_decay = cum_decay[..., -1].exp()[..., None, None]
    outs, state = [], None
    for i in range(num_chunks):
        if state is None:
            v_new = new_values[:, :, i]
            out = intra_chunk_attn[:, :, i] @ v_new
            state = key[:, :, i].transpose(-1, -2) @ v_new
        else:
            v_new = new_values[:, :, i] - k_cumdecay[:, :, i] @ state
            out = query[:, :, i] @ state + intra_chunk_attn[:, :, i] @ v_new
            state = state * chunk_decay[:, :, i] + key[:, :, i].transpose(-1, -2) @ v_new
        outs.append(out)
    core = torch.stack(outs, dim=2).flatten(2, 3)[:, :, :sequence_length]
    return core.transpose(1, 2).to(initial_dtype, memory_format=torch.contiguous_format), None


chunk_gated_delta_rule_static._zoo = True


class FoldingTrunkPairs(nn.Module):
    """transformers ESMFold's folding trunk (EsmFoldingTrunk: triangular self-attention blocks over a sequence state
    and a pair state) -> the pair state after its blocks (forward takes the sequence state (batch, residues, 1024),
    the ESM-2 language model's projected states). The pair state starts as ESMFold's relative-position embedding of
    the residue indices (0..L-1), every residue valid (no mask: the blocks' triangle updates and attention then use
    masks of ones, and the sequence attention masks nothing; ESMFold's `mask == False` on a mask tensor has no traced
    form); one pass through the blocks, unchunked (chunk_size None); the recycling, the structure module and the heads
    are left out. Its permute_final_dims runs through `permute_final_dims_nonnegative` (the same permutation, written
    with non-negative dims: the exporter writes negative ones into Transpose, an invalid graph) in eager mode too."""

    def __init__(self, trunk: nn.Module):
        super().__init__()
        import transformers.models.esm.modeling_esmfold as esmfold

        esmfold.permute_final_dims = permute_final_dims_nonnegative
        self.pairwise_positional_embedding = trunk.pairwise_positional_embedding
        self.blocks = trunk.blocks

    def forward(self, x):
        residx = torch.cumsum(torch.ones_like(x[..., 0], dtype=torch.long), dim=-1) - 1
        s, z = x, self.pairwise_positional_embedding(residx)
        for block in self.blocks:
            s, z = block(s, z, mask=None, chunk_size=None)
        return z


def permute_final_dims_nonnegative(tensor, inds):
    """openfold's permute_final_dims (permute the last len(inds) dims by inds) with non-negative dims."""
    lead = tensor.dim() - len(inds)
    return tensor.permute(list(range(lead)) + [lead + i for i in inds])


class CogVideoXDenoiser(TextConditionedDenoiser):
    """Diffusers CogVideoXTransformer3DModel -> one denoising step (forward takes the video latent (batch, frames, 16,
    h, w), frames before channels as CogVideoX has it); 226 T5 token states (text_embed_dim wide) as a fixed buffer.
    The patch embedding's sin-cos position table (a buffer outside the state dict, which the exporter would write
    into the graph as a constant) is made a state-dict buffer, so that the weight-free graph leaves it out as well."""

    def __init__(self, model: nn.Module):
        super().__init__(model, text_tokens=model.config.max_text_seq_length, text_dim=model.config.text_embed_dim)
        embed = model.patch_embed
        if getattr(embed, "pos_embedding", None) is not None:
            table = embed._buffers.pop("pos_embedding")
            embed.register_buffer("pos_embedding", table, persistent=True)


class AcousticLatentDecode(nn.Module):
    """Hugging Face VibeVoice acoustic tokenizer (a sigma-VAE of causal 1-D ConvNeXt stages) -> the decoded waveform of
    a latent sequence (forward takes the latents (batch, frames, latent channels), as VibeVoice's diffusion head makes
    them); only the decoder is kept (the encoder is dropped, never run), the same program as the model's decode."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.decoder = model.decoder

    def forward(self, x):
        return self.decoder(x.permute(0, 2, 1)).audio


class ImagePairMatches(nn.Module):
    """Hugging Face dense keypoint matcher (EfficientLoFTR) on a pair of grey images stacked on dim 1 (batch, 2, 1, H,
    W) -> the refined keypoints of every coarse cell in both images and their matching scores, flattened and joined.
    The model's own matching is static-shape (mutual-nearest scores of every coarse cell, -1 where no match), so the
    whole forward runs: coarse-to-fine matching included."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model(pixel_values=x)
        return torch.cat([out.keypoints.flatten(1), out.matching_scores.flatten(1)], dim=1)


class CrossDomainMoELastHidden(nn.Module):
    """Hugging Face Doge decoder with its cross-domain mixture of experts (DogeCDMoE: a shared SwiGLU expert plus
    product-key retrieval of single-neuron experts) -> last_hidden_state (forward takes input_ids). transformers'
    DogeCDMoE returns (hidden_states, router_logits) but its decoder layer adds the tuple to the residual as if it
    were a tensor (an error in eager mode): each CDMoE's forward is wrapped to return its hidden states alone, the same
    values, in eager mode and in the graph alike (the router logits only feed the training loss)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        for layer in model.layers:
            if type(layer.mlp).__name__ == "DogeCDMoE":
                layer.mlp.forward = _first_output(layer.mlp.forward)
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).last_hidden_state


def _first_output(forward):
    def first(*args, **kwargs):
        out = forward(*args, **kwargs)
        return out[0] if isinstance(out, tuple) else out

    return first


class StackedFrameEncoder(nn.Module):
    """Hugging Face speech encoder on low-frame-rate stacked filterbank frames (Fun-ASR-Nano's SenseVoice SAN-M
    encoder: forward takes (batch, frames, 7 x 80)) -> last_hidden_state, every frame valid: the FSMN branches get an
    all-ones frame mask (as the library's feature extractor gives an unpadded batch) and the attention no mask, the
    program eager mode runs for an unpadded batch (the library drops an all-true mask for SDPA; under tracing it would
    materialise it), in the graph alike. Its sinusoid table (2049 x 560, a non-persistent buffer) is made a state-dict
    buffer (else written into the graph as a 4.6 MB constant; the same values)."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        _no_attention_mask(type(encoder).__module__)
        for m in encoder.modules():
            m._non_persistent_buffers_set.clear()
        self.encoder = encoder

    def forward(self, x):
        mask = torch.ones(x.shape[:2], dtype=torch.long, device=x.device)
        return self.encoder(input_features=x, input_features_mask=mask).last_hidden_state


def _no_attention_mask(module_name: str) -> None:
    """Make `module_name`'s create_bidirectional_mask return None (no padding: attention over every frame)."""
    import sys

    mod = sys.modules[module_name]
    if getattr(getattr(mod, "create_bidirectional_mask", None), "_zoo_no_mask", False):
        return

    def create_bidirectional_mask(*args, **kwargs):
        return None

    create_bidirectional_mask._zoo_no_mask = True
    mod.create_bidirectional_mask = create_bidirectional_mask


def text_queries(num_queries: int, query_len: int, vocab_size: int):
    """A fixed set of CLIP-style text queries: random ids (seed 0), each ending with the end-of-text id (the highest,
    the token CLIP's text tower pools)."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, vocab_size - 1, (num_queries, query_len), generator=g)
    ids[:, -1] = vocab_size - 1
    return ids


class OpenVocabularyDetections(nn.Module):
    """Hugging Face open-vocabulary detector (OWLv2) on an image and a fixed set of text queries (a buffer of
    `num_queries` token sequences of `query_len` ids, the same for every image, as a user's query list is) -> every
    patch's query logits, box and objectness, flattened and joined. The text tower runs on the queries of every image,
    as the model's forward does. Its non-persistent buffers (the box bias of every patch, position ids) are made
    state-dict buffers (else written into the graph as constants; the same values)."""

    def __init__(self, model: nn.Module, num_queries: int = 4, query_len: int = 16, vocab_size: int = 49408):
        super().__init__()
        for m in model.modules():
            m._non_persistent_buffers_set.clear()
        self.model = model
        self.register_buffer("query_ids", text_queries(num_queries, query_len, vocab_size))

    def forward(self, x):
        ids = self.query_ids.repeat(x.shape[0], 1)
        out = self.model(input_ids=ids, pixel_values=x)
        return torch.cat([out.logits.flatten(1), out.pred_boxes.flatten(1), out.objectness_logits.flatten(1)], dim=1)


class KeypointPairMatches(nn.Module):
    """Hugging Face SuperGlue matcher on the keypoints of an image pair, as a detector gives them (forward takes
    (batch, 2, keypoints, 2 + 1 + 256): each keypoint's x, y in pixels of a `height` x `width` image, its score and
    its 256-d descriptor) -> both images' matching scores and matches (the index of the matched keypoint, -1 where
    none), flattened and joined. The model's own matching of an image pair (_match_image_pair: keypoint encoder,
    self/cross attentional GNN, Sinkhorn optimal transport, mutual nearest neighbours) runs as the library writes it,
    static-shape for a fixed keypoint count; its SuperPoint detector (the zoo's superpoint_dense) is dropped, never
    run: the keypoints are the input, as a matcher is run on stored detections."""

    def __init__(self, model: nn.Module, height: int = 480, width: int = 640):
        super().__init__()
        model.keypoint_detector = None
        self.model = model
        self.height, self.width = height, width

    def forward(self, x):
        keypoints, scores, descriptors = x[..., :2], x[..., 2], x[..., 3:]
        matches, matching_scores, _, _ = self.model._match_image_pair(keypoints, descriptors, scores, self.height,
                                                                      self.width)
        return torch.cat([matching_scores.flatten(1), matches.flatten(1).to(matching_scores.dtype)], dim=1)


class PackedCodecEncoder(nn.Module):
    """Hugging Face X-Codec2 speech codec's encoder on frames of 20 ms that pack both of its inputs (forward takes
    (batch, frames, 320 + 160): each frame's 320 waveform samples at 16 kHz and its 160 stacked log-mel features,
    which the feature extractor makes at the same 50 frames a second) -> the frame codes (as floats) and the quantized
    latents, flattened and joined. encode() runs as the library writes it: the w2v-BERT 2.0 semantic encoder on the
    features, its conv adapter, the acoustic encoder on the waveform, the joint projection and the FSQ quantizer; the
    latents are returned too because the quantizer always computes them (else the graph would drop what eager mode
    runs). encode() runs under no_grad, a tokenizer's inference program (the library runs its semantic half so
    already): the TorchScript trace of the acoustic encoder's anti-aliased activations at 16 kHz otherwise held every
    activation for backward (14.5 GB at the example batch of 2). The resamplers' kaiser-sinc filters (non-persistent
    buffers) are made state-dict buffers (else, expanded to every channel, they are written into the graph as
    constants; the same values)."""

    def __init__(self, model: nn.Module, samples_per_frame: int = 320):
        super().__init__()
        model.acoustic_decoder = None    # decode() only (Vocos: an inverse STFT), never run by encode()
        for m in model.modules():
            if type(m).__name__ in ("Xcodec2UpSample1d", "Xcodec2DownSample1d"):
                m._non_persistent_buffers_set.clear()
                m.forward = _static_channel_resample(m)
        self.model = model
        self.samples_per_frame = samples_per_frame

    def forward(self, x):
        waveform = x[..., :self.samples_per_frame].reshape(x.shape[0], 1, -1)
        features = x[..., self.samples_per_frame:]
        with torch.no_grad():
            out = self.model.encode(waveform, features, output_latents=True)
        return torch.cat([out.audio_codes.flatten(1).to(out.latents.dtype), out.latents.flatten(1)], dim=1)


def _static_channel_resample(module: nn.Module):
    """X-Codec2's anti-aliasing up-/down-sampler's forward (Xcodec2UpSample1d: replicate pad, a depthwise transposed
    conv by its kaiser-sinc filter, scale and trim; Xcodec2DownSample1d: replicate pad, a depthwise strided conv), the
    library's code but for the channel count the filter is expanded to, read as a Python int: traced from the input's
    shape, it left the kernel's shape unknown to the TorchScript exporter (the same values, the same kernels)."""
    import torch.nn.functional as F

    if type(module).__name__ == "Xcodec2UpSample1d":
        def forward(hidden_states):
            channels = int(hidden_states.shape[1])
            hidden_states = F.pad(hidden_states, (module.pad, module.pad), mode="replicate")
            hidden_states = module.ratio * F.conv_transpose1d(
                hidden_states, module.filter.to(hidden_states.dtype).expand(channels, -1, -1), stride=module.stride,
                groups=channels)
            return hidden_states[..., module.pad_left: -module.pad_right]
    else:
        def forward(hidden_states):
            channels = int(hidden_states.shape[1])
            hidden_states = F.pad(hidden_states, (module.pad_left, module.pad_right), mode="replicate")
            return F.conv1d(hidden_states, module.filter.to(hidden_states.dtype).expand(channels, -1, -1),
                            stride=module.stride, groups=channels)
    return forward


class TableStructureTokens(nn.Module):
    """Hugging Face SLANeXt table structure recognizer (a SAM ViT-B encoder, a strided conv, then the SLA head: an
    attention-GRU decoder that feeds back its argmax token as a one-hot, re-projecting the 16 x 16 feature map at
    every step) -> the structure-token probabilities of every step (batch, max_text_length + 1, tokens). The head's
    loop runs all max_text_length + 1 steps, the fixed-length program the Paddle inference graph runs: the library
    stops once every sequence of the batch has emitted its end token, a data-dependent exit whose host sync no graph
    holds (with the same values for the steps both run). The head runs in the module's dtype: the library's casts its
    features to fp32 (zeros and .float()), which against half weights fails at fp16/bf16."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.backbone = model.backbone
        self.cell = model.head.structure_attention_cell
        self.generator = model.head.structure_generator
        self.steps = model.config.max_text_length + 1
        self.tokens = model.config.out_channels
        self.hidden = model.config.hidden_size

    def forward(self, x):
        import torch.nn.functional as F

        feats = self.backbone(x).last_hidden_state
        state = feats.new_zeros(feats.shape[0], self.hidden)
        token = torch.zeros(feats.shape[0], dtype=torch.long, device=feats.device)
        preds = []
        for _ in range(self.steps):
            state, _ = self.cell(state, feats, F.one_hot(token, self.tokens).to(feats.dtype))
            step = self.generator(state)
            token = step.argmax(dim=1)
            preds.append(step)
        return F.softmax(torch.stack(preds, dim=1), dim=-1, dtype=torch.float32).to(feats.dtype)


class _InlineContext:
    """A stand-in for an autograd Function's context when its forward is called directly (inference: nothing is kept
    for backward)."""

    def save_for_backward(self, *tensors):
        pass


def _bucket_sort_and_undo(sequence_length, buckets, num_hashes):
    """Reformer's LSH bucket sort and the permutation that undoes it, as the library computes them, the undo buffer
    made with empty_like."""
    from transformers.models.reformer.modeling_reformer import _stable_argsort

    with torch.no_grad():
        sorted_bucket_idx = _stable_argsort(buckets, dim=-1)
        indices = torch.arange(sorted_bucket_idx.shape[-1], device=buckets.device).view(1, 1, -1)
        undo_sorted_bucket_idx = torch.empty_like(sorted_bucket_idx).scatter_(
            -1, sorted_bucket_idx, indices.expand(sorted_bucket_idx.shape))
    return sorted_bucket_idx, undo_sorted_bucket_idx


class ReversibleLastHidden(nn.Module):
    """Hugging Face Reformer -> last_hidden_state (forward takes input_ids), its reversible layers run inline: the
    encoder's _ReversibleFunction.apply calls the Function's own forward with a stand-in context, the computation
    eager mode runs (the autograd Function exists to recompute activations in backward; the TorchScript exporter cannot
    trace one whose arguments are a ModuleList and Python lists). The LSH layers' undo-sort buffer is made with
    empty_like (the library's Tensor.new(*size) of traced sizes was written into the graph as a constant of the export
    batch's shape; the same values: every element is scattered). The same in eager mode and in the graph."""

    def __init__(self, model: nn.Module):
        super().__init__()
        for m in model.modules():
            if hasattr(m, "_get_sorted_bucket_idx_and_undo_sorted_bucket_idx"):
                m._get_sorted_bucket_idx_and_undo_sorted_bucket_idx = _bucket_sort_and_undo
        self.model = model

    def forward(self, input_ids):
        from transformers.models.reformer import modeling_reformer as mr

        function = mr._ReversibleFunction     # apply is torch.autograd.Function's, inherited
        function.apply = staticmethod(lambda *args: function.forward(_InlineContext(), *args))
        try:
            return self.model(input_ids=input_ids).last_hidden_state
        finally:
            del function.apply


class VideoTextRetrieval(nn.Module):
    """Hugging Face X-CLIP on a clip of frames and a fixed set of text queries (a buffer of `num_queries` token
    sequences of `query_len` ids, shared by every clip of the batch, as the model's forward takes them) -> each clip's
    logits against every query and its video embedding, joined. The text tower runs once a batch on the queries; the
    prompt generator makes every clip's own text embeddings."""

    def __init__(self, model: nn.Module, num_queries: int = 4, query_len: int = 16):
        super().__init__()
        self.model = model
        self.register_buffer("query_ids", text_queries(num_queries, query_len, model.config.text_config.vocab_size))

    def forward(self, x):
        out = self.model(input_ids=self.query_ids, pixel_values=x)
        return torch.cat([out.logits_per_video.flatten(1), out.video_embeds.flatten(1)], dim=1)


class GraphBatchNodes(nn.Module):
    """A torch_geometric node-level GNN on a batch of graphs of `nodes` nodes each (forward takes (batch, nodes,
    features)) -> every node's output features (batch, nodes, out). Each graph is the same fixed random graph of
    `in_degree` in-edges a node (sources drawn uniformly, seed 0; a buffer); the batch is their disjoint union, as
    torch_geometric's DataLoader batches graphs (edge indices offset by nodes per graph)."""

    def __init__(self, model: nn.Module, nodes: int = 2048, in_degree: int = 16):
        super().__init__()
        self.model = model
        g = torch.Generator().manual_seed(0)
        src = torch.randint(0, nodes, (nodes * in_degree,), generator=g)
        dst = torch.arange(nodes).repeat_interleave(in_degree)
        self.register_buffer("edges", torch.stack([src, dst]))

    def forward(self, x):
        batch, nodes, features = x.shape
        offsets = (torch.arange(batch, device=x.device) * nodes).view(1, batch, 1)
        edge_index = (self.edges.unsqueeze(1) + offsets).reshape(2, -1)
        return self.model(x.reshape(batch * nodes, features), edge_index).reshape(batch, nodes, -1)
