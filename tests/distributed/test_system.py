"""Systems as data: every bundled system loads; bad fields give a one-line error naming the field."""
import copy
import json
from importlib import resources

import pytest

from predictor.distributed.system import bundled_names, load_system, parse_system
from predictor.machine.profile import load_profile
from predictor.types import PredictorError

BUNDLED = sorted({f[:-5] for f in bundled_names().values()})


def test_the_systems_users_name_are_bundled():
    assert set(BUNDLED) >= {"dgx1-v100", "dgx2-v100", "dgx-a100", "dgx-h100", "hgx-h200", "summit", "perlmutter",
                            "ib-cluster"}


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_system_loads_with_a_known_gpu_and_sources(name):
    s = load_system(name)
    load_profile(s.gpu)  # references a bundled GPU profile
    assert s.provenance and all(src in s.sources for src in s.provenance.values())


def test_summit_and_perlmutter_numbers():
    s = load_system("summit")
    assert (s.gpus_per_node, s.inter.nics_per_node, s.inter.nic_bandwidth_Bps, s.max_nodes) == (6, 2, 12.5e9, 4608)
    assert s.intra.bandwidth_per_gpu_Bps == 50e9  # 2 NVLink 2 bricks x 25 GB/s per direction between neighbours
    p = load_system("perlmutter")
    assert (p.gpus_per_node, p.inter.nics_per_node, p.inter.topology) == (4, 4, "dragonfly")


def test_aliases_are_case_insensitive():
    assert load_system("DGX1V").name == "dgx1-v100"


def test_unknown_system():
    with pytest.raises(PredictorError, match="unknown system 'nope'"):
        load_system("nope")


def _doc(name="dgx-a100"):
    text = resources.files("predictor.distributed").joinpath("systems", f"{name}.json").read_text()
    return json.loads(text)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["inter_node"].pop("nics_per_node"), "inter_node.nics_per_node must be"),
    (lambda d: d["inter_node"]["nics_per_node"].update(value=2.5), "inter_node.nics_per_node must be a whole number"),
    (lambda d: d["intra_node"].update(sockets={"value": 2, "source": "dgxa100-datasheet"}),
     "intra_node.sockets > 1 needs intra_node.inter_socket_Bps"),
    (lambda d: d["intra_node"].update(sockets={"value": 3, "source": "dgxa100-datasheet"},
                                      inter_socket_Bps={"value": 1e10, "source": "dgxa100-datasheet"}),
     "must divide evenly over intra_node.sockets"),
    (lambda d: d["intra_node"]["bandwidth_per_gpu_Bps"].update(value=-1), "intra_node.bandwidth_per_gpu_Bps = -1"),
    (lambda d: d["intra_node"]["bandwidth_per_gpu_Bps"].update(source="nowhere"), "cites source 'nowhere'"),
    (lambda d: d["intra_node"].update(link="carrier-pigeon"), "intra_node.link 'carrier-pigeon'"),
    (lambda d: d["gpus_per_node"].update(value="8"), "gpus_per_node must be a finite number"),
    (lambda d: d.update(schema_version=7), "schema_version must be 1"),
])
def test_bad_field_is_named(mutate, message):
    d = copy.deepcopy(_doc())
    mutate(d)
    with pytest.raises(PredictorError, match=message) as e:
        parse_system(d, "test")
    assert "\n" not in str(e.value)


def test_nvls_needs_nvswitch():
    d = _doc("dgx-h100")
    d["intra_node"]["nvswitch"] = False
    with pytest.raises(PredictorError, match="intra_node.nvls needs intra_node.nvswitch"):
        parse_system(d)


def test_user_file(tmp_path):
    d = _doc()
    d["name"] = "mine"
    p = tmp_path / "mine.json"
    p.write_text(json.dumps(d))
    assert load_system(str(p)).name == "mine"
    p.write_text("{not json")
    with pytest.raises(PredictorError, match="is not valid JSON"):
        load_system(str(p))
