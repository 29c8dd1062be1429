"""nn.Module wrappers that make every zoo network take one tensor and return one tensor (needs torch)."""
from __future__ import annotations

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
