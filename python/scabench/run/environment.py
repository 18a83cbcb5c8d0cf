"""What a result was measured on."""

import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_hz() -> float:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":")[1]) * 1e6
    except OSError:
        pass
    return 1e9


def l2_bytes(core: int) -> int:
    base = Path(f"/sys/devices/system/cpu/cpu{core}/cache")
    for index in sorted(base.glob("index*")):
        try:
            if (index / "level").read_text().strip() == "2":
                text = (index / "size").read_text().strip().upper()
                mult = {"K": 1 << 10, "M": 1 << 20}.get(text[-1], 1)
                return int(text.rstrip("KM")) * mult
        except OSError:
            continue
    return 2 << 20


def omniorb_version() -> str:
    try:
        out = subprocess.run(["pkg-config", "--modversion", "omniORB4"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def describe_environment(cores: list[int] | str) -> dict[str, Any]:  # "all": every CPU
    return {
        "cores": cores,
        "online_cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": platform.release(),
        "omniorb_version": omniorb_version(),
        "python": platform.python_version(),
    }
