"""``OUT/provenance.json``: which code ran a run, when, and on what machine.

Written when a run directory is opened (the start) and again when the invocation ends (the end). A
resumed run keeps the first start; a later invocation whose code or machine differs from the first
one's is listed under ``later`` (so a run finished by other code says so). Run directories written
before this file existed have none; readers treat it as optional (:func:`read_provenance`).

Fields::

    etc_fast       the package version of the first invocation
    code           {"commit": git commit of the code's checkout, "dirty": tracked files modified}
                   (both null when the code is not a git checkout or git is not available)
    started_utc    when the first invocation opened the directory (ISO 8601, seconds, "Z")
    ended_utc      when the last invocation ended (null while one is running or after a crash)
    machine        platform, cpu, cpu_arch, simd, logical_cores, python, numpy, numba
                   (:func:`machine_info`)
    later          [{"code", "machine", "started_utc"}] for invocations that differ (optional)
    invocations    [{"started_utc", "ended_utc", "trials_run", "executor", "workers"}], one per
                   invocation that ran trials (optional; the parts of a study run in parts)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["PROVENANCE", "code_state", "machine_info", "machine_text", "numpy_simd", "read_provenance", "utc_now",
           "write_provenance_end", "write_provenance_start"]

#: File name of the provenance record in a run directory.
PROVENANCE = "provenance.json"


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (Linux), else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(module: str) -> str:
    try:
        return str(__import__(module).__version__)
    except Exception:  # noqa: BLE001 - a missing or broken package is recorded as such
        return "not installed"


def _cpu_arch() -> str:
    """The CPU's microarchitecture as LLVM names it for Numba's kernels (``znver4``, ``skylake-avx512``)."""
    try:
        import llvmlite.binding as llvm

        return str(llvm.get_host_cpu_name())
    except Exception:  # noqa: BLE001 - no LLVM: the field says so
        return "unknown"


def numpy_simd() -> str:
    """The vector instruction levels NumPy's compiled loops dispatch to on this CPU beyond the
    baseline it was built for (``X86_V3 X86_V4 AVX512_ICL``; ``baseline`` when none). Two CPUs that
    differ here may give transcendental functions, and so a run's fits, different last digits."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__  # NumPy 2.x

        return " ".join(n for n in __cpu_dispatch__ if __cpu_features__.get(n)) or "baseline"
    except ImportError:  # a NumPy without the private table
        return "unknown"


def machine_info() -> dict[str, Any]:
    """The machine a run is on: platform, CPU model and microarchitecture, the SIMD levels NumPy
    uses, logical cores, Python/NumPy/Numba versions. Two machines with the same model name can
    differ in the last two (a cloud's "AMD EPYC" is several generations), and with them a run's
    last digits, so a resumed run whose CPU differs is listed under ``later``."""
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_arch": _cpu_arch(),
        "simd": numpy_simd(),
        "logical_cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": _version("numpy"),
        "numba": _version("numba"),
    }


def machine_text(machine: dict[str, Any]) -> str:
    """One line naming a machine (:func:`machine_info`'s fields, or a stated ``text``)."""
    if machine.get("text"):
        return str(machine["text"])
    arch = f" ({machine['cpu_arch']}, SIMD {machine.get('simd', '?')})" if machine.get("cpu_arch") else ""
    return (f"{machine.get('cpu', 'unknown CPU')}{arch}, {machine.get('logical_cores', '?')} logical cores, "
            f"{machine.get('platform', 'unknown platform')}, Python {machine.get('python', '?')}, "
            f"NumPy {machine.get('numpy', '?')}, Numba {machine.get('numba', '?')}")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def code_state(root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The git commit of the code's checkout and whether tracked files differ from it.

    Args:
        root: The checkout (default: the directory holding the ``etc_fast`` package). It counts only
            when it is the top of a git work tree, so an installed copy inside some other
            repository is not credited to that repository's commit.

    Returns:
        ``{"commit": str | None, "dirty": bool | None}``; both ``None`` when there is no checkout
        (or no ``git`` to ask).
    """
    if root is None:
        import etc_fast

        root = Path(etc_fast.__file__).resolve().parent.parent
    root = Path(root).resolve()
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() != root:
        return {"commit": None, "dirty": None}
    head = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if head is None:
        return {"commit": None, "dirty": None}
    return {"commit": head.strip(), "dirty": None if status is None else bool(status.strip())}


def read_provenance(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run's ``provenance.json``, or ``None`` when it has none (a run written before it existed).

    Raises:
        ValueError: The file exists but is not a JSON object (the message names the file).
    """
    path = Path(run_dir) / PROVENANCE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data


def _write(run_dir: Path, data: dict[str, Any]) -> None:
    from etc_fast.store import atomic_write

    atomic_write(run_dir / PROVENANCE, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def write_provenance_start(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Record an invocation's start: a new record, or the stored one with its end cleared (and this
    invocation listed under ``later`` when its code or machine differs from the first one's).
    An unreadable stored record is replaced by a new one. Returns what was written."""
    import etc_fast

    root = Path(run_dir)
    code, machine, now = code_state(), machine_info(), utc_now()
    try:
        old = read_provenance(root)
    except ValueError:
        old = None
    if old is None or not old.get("started_utc"):
        data: dict[str, Any] = {"etc_fast": etc_fast.__version__, "code": code, "started_utc": now,
                                "ended_utc": None, "machine": machine}
    else:
        data = {**old, "ended_utc": None}
        seen = [(old.get("code"), old.get("machine"))] + [(e.get("code"), e.get("machine")) for e in old.get("later", [])]
        if (code, machine) not in seen:
            data["later"] = [*old.get("later", []), {"code": code, "machine": machine, "started_utc": now}]
    _write(root, data)
    return data


def write_provenance_end(run_dir: str | os.PathLike[str], *, started_utc: str | None = None, trials_run: int = 0,
                         executor: str | None = None, workers: int | None = None) -> None:
    """Record the end of the invocation that wrote the start (nothing when there is no record);
    one that ran trials is added to ``invocations`` (from ``started_utc``, with how many and where)."""
    root = Path(run_dir)
    try:
        data = read_provenance(root)
    except ValueError:
        return
    if data is None:
        return
    data["ended_utc"] = utc_now()
    if trials_run > 0:
        data["invocations"] = [*data.get("invocations", []), {
            "started_utc": started_utc, "ended_utc": data["ended_utc"], "trials_run": int(trials_run),
            "executor": executor, "workers": workers}]
    _write(root, data)
