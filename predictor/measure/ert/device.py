"""CuPy availability, GPU description and run provenance (never changes clocks or settings)."""
from __future__ import annotations

import datetime as _dt
import subprocess
from dataclasses import asdict, dataclass


class ErtUnavailable(RuntimeError):
    """No CuPy, or CuPy without a usable GPU: the one-line reason is the message."""


def import_cupy():
    """Import CuPy and check that a GPU is visible; raises ErtUnavailable with a one-line reason."""
    try:
        import cupy as cp
    except Exception as e:  # ImportError, or a broken install raising something else
        raise ErtUnavailable(f"CuPy is not importable ({type(e).__name__}: {e}); install "
                             "cupy-cuda13x (or the build matching your CUDA) on a machine with an "
                             "NVIDIA GPU") from None
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as e:
        raise ErtUnavailable(f"CuPy found no usable CUDA device ({type(e).__name__}: {e})") from None
    if count < 1:
        raise ErtUnavailable("CuPy found no CUDA device (getDeviceCount() == 0)")
    return cp


@dataclass(frozen=True)
class GpuInfo:
    """What the runtime reports about device 0."""

    name: str
    sm_count: int
    l2_bytes: int
    compute_capability: str
    total_mem_bytes: int
    max_threads_per_sm: int
    shared_mem_per_sm_bytes: int
    regs_per_sm: int

    def to_dict(self) -> dict:
        return asdict(self)


def _prop(props: dict, attrs: dict, key: str, attr_key: str, default=0):
    v = props.get(key)
    if v is None:
        v = attrs.get(attr_key, default)
    return v


def gpu_info(cp, device: int = 0) -> GpuInfo:
    props = dict(cp.cuda.runtime.getDeviceProperties(device))
    try:
        attrs = dict(cp.cuda.Device(device).attributes)
    except Exception:
        attrs = {}
    name = props.get("name", b"unknown")
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    major = _prop(props, attrs, "major", "ComputeCapabilityMajor")
    minor = _prop(props, attrs, "minor", "ComputeCapabilityMinor")
    return GpuInfo(
        name=str(name).strip("\x00 "),
        sm_count=int(_prop(props, attrs, "multiProcessorCount", "MultiProcessorCount")),
        l2_bytes=int(_prop(props, attrs, "l2CacheSize", "L2CacheSize")),
        compute_capability=f"{int(major)}.{int(minor)}",
        total_mem_bytes=int(props.get("totalGlobalMem", 0)),
        max_threads_per_sm=int(_prop(props, attrs, "maxThreadsPerMultiProcessor",
                                     "MaxThreadsPerMultiProcessor", 2048)),
        shared_mem_per_sm_bytes=int(_prop(props, attrs, "sharedMemPerMultiprocessor",
                                          "MaxSharedMemoryPerMultiprocessor")),
        regs_per_sm=int(_prop(props, attrs, "regsPerMultiprocessor", "MaxRegistersPerMultiprocessor",
                              65536)),
    )


_SMI_FIELDS = ("sm_clock", "max_sm_clock", "mem_clock", "driver_version")


def read_clocks(pci_bus_id: str | None = None) -> dict:
    """``nvidia-smi`` clocks and driver (of the GPU at ``pci_bus_id``, else the first listed),
    read-only: never sets clocks. {"error": ...} if nvidia-smi is unavailable."""
    cmd = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,driver_version",
           "--format=csv,noheader"]
    if pci_bus_id:
        cmd += ["-i", pci_bus_id]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=15, check=True).stdout
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:200]}
    line = out.strip().splitlines()[0] if out.strip() else ""
    fields = [f.strip() for f in line.split(",")]
    rec: dict = {"raw": line, "time": utc_now()}
    for key, val in zip(_SMI_FIELDS, fields):
        if key == "driver_version":
            rec[key] = val
            continue
        try:
            rec[key + "_mhz"] = float(val.split()[0])
        except (ValueError, IndexError):
            rec[key + "_mhz"] = None
    return rec


def pci_bus_id(cp, device: int = 0) -> str | None:
    try:
        return str(cp.cuda.Device(device).pci_bus_id)
    except Exception:
        return None


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _version(n: int) -> str:
    """CUDA's integer version (13000) as '13.0'."""
    return f"{n // 1000}.{(n % 1000) // 10}"


def provenance(cp, gpu: GpuInfo, command: str) -> dict:
    """Versions and identity recorded with every run."""
    rec = {"date": utc_now(), "command": command, "gpu": gpu.name, "gpu_info": gpu.to_dict(),
           "cupy": getattr(cp, "__version__", "unknown")}
    try:
        rec["cuda_runtime"] = _version(int(cp.cuda.runtime.runtimeGetVersion()))
    except Exception as e:
        rec["cuda_runtime"] = f"unknown ({type(e).__name__})"
    try:
        rec["cuda_driver_api"] = _version(int(cp.cuda.runtime.driverGetVersion()))
    except Exception as e:
        rec["cuda_driver_api"] = f"unknown ({type(e).__name__})"
    return rec
