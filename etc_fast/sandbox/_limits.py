"""Resource limits of one sandboxed run."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["SandboxLimits"]


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """Limits applied to one sandboxed run.

    Attributes:
        wall_s: Wall-clock seconds before the whole process group is killed.
        cpu_s: CPU seconds of the worker (RLIMIT_CPU; rounded up to whole seconds).
        memory_mb: Address-space limit of the worker in MiB (RLIMIT_AS).
        output_bytes: Bytes of stdout (and, separately, stderr) kept; the run is killed once its
            output passes ``max(16 * output_bytes, 1 MiB)``.
        disk_bytes: Bytes the run may store in its directory (the size of its tmpfs, else a budget
            the supervisor enforces; RLIMIT_FSIZE caps each file at the same size).
        disk_files: Files and directories the run may create there.
    """

    wall_s: float = 20.0
    cpu_s: float = 15.0
    memory_mb: int = 1024
    output_bytes: int = 65536
    disk_bytes: int = 64 * 1024 * 1024
    disk_files: int = 1024

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a finite positive number, got {v!r}")
        for name in ("memory_mb", "output_bytes", "disk_bytes", "disk_files"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive integer, got {v!r}")

    @property
    def kill_output_bytes(self) -> int:
        """Total output after which the run is killed."""
        return max(16 * self.output_bytes, 1 << 20)

    def to_job(self) -> dict:
        """The limits as sent to the sandbox child with a job (it applies ``cpu_s`` and ``memory_mb``;
        the supervisor enforces wall time and output size)."""
        return {"wall_s": float(self.wall_s), "cpu_s": float(self.cpu_s), "memory_mb": int(self.memory_mb),
                "file_bytes": int(self.disk_bytes)}
