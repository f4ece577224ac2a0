"""provenance.json: written by every run, first start kept on resume, end updated; code and machine."""

import json
import subprocess

import pytest

from etc_fast.runner import _provenance as prov
from etc_fast.runner import parse_config, run_config
from etc_fast.store import check_manifest
from tests.results.conftest import TINY
from tests.runner._fakes import FakeWorker


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_code_state_of_a_checkout_clean_and_modified(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert prov.code_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert prov.code_state(tmp_path)["dirty"] is False
    (tmp_path / "a.py").write_text("x = 2\n")
    assert prov.code_state(tmp_path) == {"commit": head, "dirty": True}
    # a folder inside the checkout is not its top: the code is not credited to the enclosing repository
    (tmp_path / "pkg").mkdir()
    assert prov.code_state(tmp_path / "pkg") == {"commit": None, "dirty": None}


def test_code_state_without_a_checkout(tmp_path):
    assert prov.code_state(tmp_path) == {"commit": None, "dirty": None}


def test_machine_info_and_text():
    m = prov.machine_info()
    assert set(m) == {"platform", "cpu", "cpu_arch", "simd", "logical_cores", "python", "numpy", "numba"}
    assert m["cpu"] and isinstance(m["logical_cores"], int)
    assert m["cpu_arch"] not in ("", "unknown") and m["simd"] not in ("", "unknown")  # Numba's LLVM; NumPy 2's dispatch
    text = prov.machine_text(m)
    assert m["cpu"] in text and f"{m['logical_cores']} logical cores" in text and f"NumPy {m['numpy']}" in text
    assert f"({m['cpu_arch']}, SIMD {m['simd']})" in text
    older = {k: v for k, v in m.items() if k not in ("cpu_arch", "simd")}  # a run stored before they were recorded
    assert prov.machine_text(older).startswith(f"{m['cpu']}, {m['logical_cores']} logical cores")
    assert prov.machine_text({"text": "a stated machine"}) == "a stated machine"


def test_run_writes_provenance_and_resume_keeps_the_first_start(tmp_path, monkeypatch):
    cfg = parse_config({**TINY, "out": str(tmp_path / "run")}, source="tiny.yaml")
    times = iter(["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-02T00:00:00Z", "2026-01-02T00:05:00Z"])
    monkeypatch.setattr(prov, "utc_now", lambda: next(times))
    run_config(cfg, worker=FakeWorker(), limit=3, tty=False, report=False)
    out = tmp_path / "run"
    first = json.loads((out / "provenance.json").read_text())
    assert first["started_utc"] == "2026-01-01T00:00:00Z" and first["ended_utc"] == "2026-01-01T00:01:00Z"
    assert first["machine"] == prov.machine_info() and first["code"] == prov.code_state()
    assert "later" not in first
    assert check_manifest(out) == []  # the end is recorded before the manifest is written
    other = {**prov.machine_info(), "cpu": "another CPU"}
    monkeypatch.setattr(prov, "machine_info", lambda: other)
    run_config(cfg, worker=FakeWorker(), tty=False, report=False)
    second = json.loads((out / "provenance.json").read_text())
    assert second["started_utc"] == "2026-01-01T00:00:00Z" and second["ended_utc"] == "2026-01-02T00:05:00Z"
    assert second["later"] == [{"code": first["code"], "machine": other, "started_utc": "2026-01-02T00:00:00Z"}]
    assert check_manifest(out) == []


def test_an_interrupted_invocation_leaves_no_end(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    prov.write_provenance_start(out)
    prov.write_provenance_end(out)
    assert prov.read_provenance(out)["ended_utc"]
    prov.write_provenance_start(out)  # a resume that is then killed
    assert prov.read_provenance(out)["ended_utc"] is None


def test_old_runs_have_none_and_a_damaged_file_is_named(tmp_path):
    assert prov.read_provenance(tmp_path) is None
    (tmp_path / "provenance.json").write_text("[1, 2")
    with pytest.raises(ValueError, match="provenance.json: unreadable"):
        prov.read_provenance(tmp_path)
    prov.write_provenance_start(tmp_path)  # a damaged record is replaced by a new one
    assert prov.read_provenance(tmp_path)["ended_utc"] is None


def test_the_machine_command_prints_what_provenance_records(capsys):
    from etc_fast.results.__main__ import main

    assert main(["machine"]) == 0
    assert capsys.readouterr().out == prov.machine_text(prov.machine_info()) + "\n"
