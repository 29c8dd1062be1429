"""Pure-Python tests of the network zoo spec table (no torch needed)."""
import json
from pathlib import Path

import pytest

from calibration.networks import zoo


def test_spec_table_fields():
    assert len(zoo.NETWORKS) >= 14
    for name, spec in zoo.NETWORKS.items():
        assert spec.name == name
        assert spec.split in zoo.SPLITS
        assert spec.source in ("torchvision", "timm", "transformers", "diffusers", "torch_geometric", "custom")
        assert spec.family in ("cnn", "transformer", "segmentation", "rnn", "detection", "mlp", "gnn")
        assert spec.input_kind in ("image", "tokens", "sequence")
        assert callable(spec.builder)
        if spec.input_kind == "tokens":
            assert spec.vocab_size > 1 and len(spec.sample_shape) == 1   # (seq,): SEQ_LEN unless a model's own length
            assert spec.input_name == "input_ids"
        else:
            assert spec.input_name == "input"
        assert spec.input_shape(7)[0] == 7


def test_spec_is_frozen():
    spec = zoo.NETWORKS["resnet50"]
    with pytest.raises(Exception):
        spec.split = "heldout"


def test_splits_disjoint_and_sized():
    train, held = set(zoo.names("train")), set(zoo.names("heldout"))
    assert not train & held
    assert 8 <= len(train) <= 11 and 5 <= len(held) <= 9
    assert train | held == set(zoo.names())


def test_heldout_covers_families():
    fams = {zoo.NETWORKS[n].family for n in zoo.names("heldout")}
    assert {"cnn", "transformer", "segmentation", "rnn"} <= fams


def test_required_networks_present():
    for n in ("resnet18", "resnet50", "vit_b_16", "bert_base", "gpt2", "lstm", "gru", "deepcam_lite",
              "deeplabv3_resnet50", "fcn_resnet50", "swin_t", "efficientnet_b0"):
        assert n in zoo.NETWORKS
    assert zoo.NETWORKS["deepcam_lite"].sample_shape == (16, 384, 576)
    assert zoo.NETWORKS["deeplabv3_resnet50"].sample_shape == (3, 512, 512)


def test_extras_not_default():
    assert "vgg16" in zoo.NETWORKS and "vgg16" not in zoo.names()
    assert "vgg16" in zoo.names(include_extra=True)


def test_parse_names():
    assert zoo.parse_names("") == zoo.names()
    assert zoo.parse_names("resnet18, gpt2") == ["resnet18", "gpt2"]
    assert zoo.parse_names("heldout") == zoo.names("heldout")
    assert zoo.parse_names("resnet18,train")[0] == "resnet18"
    assert len(zoo.parse_names("resnet18,train")) == len(zoo.names("train"))  # deduplicated
    assert set(zoo.parse_names("all")) == set(zoo.NETWORKS)
    with pytest.raises(KeyError):
        zoo.parse_names("resnet19")


def test_build_small_networks_with_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    for name, batch in (("lstm", 2), ("gru", 1), ("resnet18", 2)):
        model, inputs, meta = zoo.build(name, batch)
        assert not model.training
        assert inputs[0].shape[0] == batch and inputs[0].abs().sum() > 0
        with torch.inference_mode():
            y = model(*inputs)
        assert isinstance(y, torch.Tensor) and y.shape[0] == batch
        assert meta["network"] == name and meta["n_params"] > 0


def test_build_token_inputs_with_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    (x,) = zoo.make_inputs(zoo.NETWORKS["bert_base"], 3)
    assert x.dtype == torch.int64 and x.shape == (3, zoo.SEQ_LEN)
    assert int(x.min()) >= 1 and int(x.max()) < zoo.NETWORKS["bert_base"].vocab_size


def test_excluded_networks_are_never_fitted():
    """A network whose export is not the program that was measured (ViTPose-B: the trace keeps 4 of the 12 layers that
    run; Pixtral: the trace's packed patch sequence kept as a constant; Autoformer: a host-to-device copy in every
    layer that the graph computes on the device) stays out of the fit and out of every reported split but its own."""
    from calibration.fit.dataset import Case
    from calibration.fit.fit import training_cases

    assert zoo.parse_names("excluded") == ["vitpose_base", "pixtral_vision", "autoformer_electricity"]
    cases = [Case(n, "fp16", 32, "", "", 1e-3, "", (), 0.0, 0, None, "") for n in ("vitpose_base", "resnet50")]
    assert [c.network for c in training_cases(cases)] == ["resnet50"]


def test_the_spent_ninth_blind_set_is_training_data_outside_the_default_sweep():
    """The ninth blind set's 9 networks (each scored once: accuracy/blind9_once.json) are training networks now."""
    doc = json.loads((Path(__file__).parents[2] / "calibration/data/h200/accuracy/blind9_once.json").read_text())
    blind9 = sorted({c["network"] for c in doc["cases"]})
    assert len(blind9) == 9 and all(zoo.NETWORKS[n].split == "train" for n in blind9)
    assert not set(blind9) & set(zoo.names()) and "blind9" not in zoo.SPLITS


BLIND10 = ["eomt_large", "gemma3n_4l", "halonet26t", "mobilenetv5_300m", "univnet", "volo_d1", "xlstm_7b_2l",
           "zamba2_7l"]


def test_the_spent_tenth_blind_set_is_training_data_of_new_families_outside_the_default_sweep():
    """The tenth blind set (scored once on an H100: h100/accuracy/blind10_once.json; MobileNetV5 never timed) is in
    the training split now, its 8 families still apart from every network chosen before it."""
    doc = json.loads((Path(__file__).parents[2] / "calibration/data/h100/accuracy/blind10_once.json").read_text())
    assert sorted({c["network"] for c in doc["cases"]}) == [n for n in BLIND10 if n != "mobilenetv5_300m"]
    assert all(zoo.NETWORKS[n].split == "train" for n in BLIND10) and "blind10" not in zoo.SPLITS
    assert not set(BLIND10) & set(zoo.names())
    fams = {zoo.NETWORKS[n].arch_family for n in BLIND10}
    others = {s.arch_family for s in zoo.NETWORKS.values() if s.name not in BLIND10}
    assert len(fams) == 8 and not fams & others


def test_every_blind10_network_has_one_committed_export():
    from calibration.fit.dataset import onnx_export

    paths = {n: onnx_export(n) for n in BLIND10}
    assert all(p is not None for p in paths.values())
    assert {n for n, p in paths.items() if p.name.endswith(".dynamo.onnx")} == {
        "halonet26t", "volo_d1", "mobilenetv5_300m", "univnet"}


BLIND11 = ["bitnet_4l", "cohere_3l", "ecaresnet50t", "efficientvit_m5", "pixtral_vision", "sew_tiny", "zoedepth_nyu"]


def test_the_spent_eleventh_blind_set_is_training_data_but_pixtral():
    """The eleventh blind set (scored once on an H100: h100/accuracy/blind11_once.json) is in the training split now,
    but Pixtral, whose export fixed the trace's packed sequence (excluded); its 7 families still apart from every
    network chosen before it."""
    doc = json.loads((Path(__file__).parents[2] / "calibration/data/h100/accuracy/blind11_once.json").read_text())
    assert sorted({c["network"] for c in doc["cases"]}) == BLIND11
    assert {n: zoo.NETWORKS[n].split for n in BLIND11 if zoo.NETWORKS[n].split != "train"} == {
        "pixtral_vision": "excluded"}
    assert "blind11" not in zoo.SPLITS and not set(BLIND11) & set(zoo.names())
    fams = {zoo.NETWORKS[n].arch_family for n in BLIND11}
    others = {s.arch_family for s in zoo.NETWORKS.values() if s.name not in BLIND11}
    assert len(fams) == 7 and not fams & others


def test_every_blind11_network_has_a_committed_torchscript_export():
    from calibration.fit.dataset import onnx_export

    assert all(onnx_export(n, ("torchscript",)) is not None for n in BLIND11)


BLIND12 = sorted(["apertus_3l", "falcon_h1_3l", "csatv2", "parakeet_encoder", "vjepa2_16f"])
BLIND13 = sorted(["gemma4_vit_512", "moonshine_base_encoder", "mistral_3l", "superpoint_dense", "seresnext50_legacy",
                  "longt5_tglobal_base"])
BLIND14 = sorted(["sd15_unet", "dit_xl2_256", "resnetv2_50d_evos", "fnet_base"])
BLIND15 = sorted(["sd_vae_decoder", "prophetnet_large", "musicgen_small_decoder", "autoformer_electricity"])
BLIND16 = sorted(["mixtral_3l", "sd3_mmdit_12l", "speecht5_asr", "deformable_detr_r50"])
BLIND17 = sorted(["flux_dev_6l", "wan21_t2v_10l", "sana_1600m_10l", "mllama_v6_t4"])
BLIND18 = sorted(["qwen35_4l", "esmfold_trunk_4b", "hunyuan_video_vae_dec", "cogvideox_2b_4l"])
BLIND19 = sorted(["doge_cdmoe_4l", "vibevoice_acoustic_dec", "efficientloftr_480x640", "lw_detr_small"])
BLIND20 = sorted(["fun_asr_nano_encoder", "diffllama_4l", "owlv2_base_960", "efficientvim_m4"])
BLIND21 = sorted(["superglue_1024kp", "granite_swa_4l", "xcodec2_encoder", "slanext_wired"])
# spent blind set -> (GPU whose accuracy folder holds its one look, its networks, those exported by the dynamo exporter:
# CSATv2's adaptive pool to a size that does not divide the input, FNet's and Autoformer's torch.fft written as DFT)
SPENT = {"blind12": ("h100", BLIND12, {"csatv2"}), "blind13": ("h200", BLIND13, set()),
         "blind14": ("h100", BLIND14, {"fnet_base"}), "blind15": ("h100", BLIND15, {"autoformer_electricity"}),
         "blind16": ("h100", BLIND16, set()), "blind17": ("h100", BLIND17, set()),
         "blind18": ("h100", BLIND18, set()), "blind19": ("h100", BLIND19, set()),
         "blind20": ("h100", BLIND20, set()), "blind21": ("h100", BLIND21, set())}


# measured, but the exported graph is not the program that ran (Autoformer: a host-to-device copy in every layer)
EXCLUDED_AFTER_LOOK = {"autoformer_electricity"}


@pytest.mark.parametrize("split", sorted(SPENT))
def test_a_spent_blind_set_is_training_data(split):
    """A blind set scored once (<gpu>/accuracy/<split>_once.json) is in the training split afterwards (or excluded,
    when its graph was found not to be the program that ran); its families still apart from every network chosen before
    it."""
    gpu, nets, _ = SPENT[split]
    doc = json.loads((Path(__file__).parents[2] / f"calibration/data/{gpu}/accuracy/{split}_once.json").read_text())
    assert sorted({c["network"] for c in doc["cases"]}) == nets
    assert all(zoo.NETWORKS[n].split == ("excluded" if n in EXCLUDED_AFTER_LOOK else "train") for n in nets)
    assert split not in zoo.SPLITS and not set(nets) & set(zoo.names())
    fams = {zoo.NETWORKS[n].arch_family for n in nets}
    others = {s.arch_family for s in zoo.NETWORKS.values() if s.name not in nets}
    assert len(fams) == len(nets) and not fams & others


@pytest.mark.parametrize("split", sorted(SPENT))
def test_every_spent_blind_network_has_one_committed_export(split):
    from calibration.fit.dataset import onnx_export

    _, nets, dynamo = SPENT[split]
    paths = {n: onnx_export(n, ("torchscript", "dynamo")) for n in nets}
    assert all(p is not None for p in paths.values())
    assert {n for n, p in paths.items() if p.name.endswith(".dynamo.onnx")} == dynamo


BLIND22 = sorted(["graphsage_2048n", "reformer_4096", "xclip_b32_8f", "ppocrv5_server_rec"])


def test_the_twenty_second_blind_set_is_its_own_split_of_new_families():
    """Chosen before any measurement: 4 families apart from every other network; not read by any fit."""
    from calibration.fit.fit import training_cases  # noqa: F401 (the fit's split filter: train only)

    assert "blind22" in zoo.SPLITS and sorted(zoo.names("blind22", include_extra=True)) == BLIND22
    assert sorted(zoo.parse_names("blind22")) == BLIND22
    assert not set(BLIND22) & set(zoo.names())
    fams = {zoo.NETWORKS[n].arch_family for n in BLIND22}
    others = {s.arch_family for s in zoo.NETWORKS.values() if s.name not in BLIND22}
    assert len(fams) == 4 and not fams & others


def test_every_blind22_network_has_a_committed_export():
    """TorchScript, all four."""
    from calibration.fit.dataset import onnx_export

    paths = {n: onnx_export(n, ("torchscript", "dynamo")) for n in BLIND22}
    assert all(p is not None for p in paths.values())
    assert {n for n, p in paths.items() if p.name.endswith(".dynamo.onnx")} == set()
