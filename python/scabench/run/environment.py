"""What a result was measured on."""
import os
import platform
import subprocess


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def omniorb_version():
    try:
        out = subprocess.run(["pkg-config", "--modversion", "omniORB4"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def describe_environment(cores):
    return {
        "cores": cores,
        "online_cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": platform.release(),
        "omniorb_version": omniorb_version(),
        "python": platform.python_version(),
    }
