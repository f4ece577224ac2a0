"""The power of a design read before its run (etc_fast.results._design, report._stats.design_variance)."""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from etc_fast.report._stats import design_variance, detectable_difference
from etc_fast.results._design import (
    REFERENCE,
    Components,
    cell_power,
    family_of,
    parts,
    study_components,
    variance_components,
)

ROOT = Path(__file__).resolve().parents[2]


def test_detectable_difference_closed_form():
    # one comparison: z(0.975) + z(0.8) = 2.8016; 400 independent trial pairs of variance 0.5
    v = design_variance([[1]] * 400, between_family=0.0, between_law=0.0, within=0.5)
    assert v == pytest.approx(0.5 / 400)
    assert detectable_difference(v) == pytest.approx(2.801585 * math.sqrt(0.5 / 400), rel=1e-6)
    # Holm over 6 comparisons: its first step, alpha / 6
    z6 = NormalDist().inv_cdf(1 - 0.05 / 12) + NormalDist().inv_cdf(0.8)
    assert detectable_difference(1.0, comparisons=6) == pytest.approx(z6)
    assert z6 == pytest.approx(3.4798, abs=1e-4)


def test_design_variance_weights_families_by_their_trials():
    # two families: one of 3 laws x 2 trials (6), one of 1 law x 2 trials (2); N = 8
    v = design_variance([[2, 2, 2], [2]], between_family=0.04, between_law=0.01, within=0.2)
    fam = (6 / 8) ** 2 + (2 / 8) ** 2
    law = 4 * (2 / 8) ** 2
    assert v == pytest.approx(0.04 * fam + 0.01 * law + 0.2 / 8)
    with pytest.raises(ValueError):
        design_variance([[0]], between_family=0.0, between_law=0.0, within=0.1)
    with pytest.raises(ValueError):
        design_variance([[1]], between_family=-1.0, between_law=0.0, within=0.1)
    with pytest.raises(ValueError):
        detectable_difference(0.1, comparisons=0)


def test_power_by_simulation():
    """A design simulated under the two-level model at the detectable difference is found, with
    the cluster-level test, in about 80% of replicates (fixed seed)."""
    rng = np.random.default_rng(58)
    design = [[2] * 4] * 20 + [[2]] * 20  # 20 families of 4 laws, 20 of one law; 2 trials a law
    sc, sl, w, k = 0.004, 0.002, 0.3, 3
    var = design_variance(design, between_family=sc, between_law=sl, within=w)
    delta = detectable_difference(var, comparisons=k)
    crit = NormalDist().inv_cdf(1 - 0.05 / (2 * k))
    reps, hits, means = 4000, 0, []
    for _ in range(reps):
        total, n = 0.0, 0
        for fam in design:
            u = rng.normal(0, math.sqrt(sc))
            for t in fam:
                e = rng.normal(0, math.sqrt(sl))
                total += float(np.sum(delta + u + e + rng.normal(0, math.sqrt(w), t)))
                n += t
        m = total / n
        means.append(m)
        hits += abs(m) / math.sqrt(var) > crit
    assert np.var(means, ddof=1) == pytest.approx(var, rel=0.08)
    assert hits / reps == pytest.approx(0.8, abs=0.03)


def _summary(name, system, noise, rows):
    return {"name": name,
            "tables": {"pooled": {"columns": ["system", "noise"], "rows": [[system, noise]]},
                       "modules": {"columns": ["task", "configuration", "n", "credited"], "rows": rows}}}


def test_components_from_module_tables():
    rows = [["m0", "variance_c", 10, 10], ["m0", REFERENCE, 10, 5], ["m1", "variance_c", 10, 5], ["m1", REFERENCE, 10, 5],
            ["m0", "gp_var_c", 4, 4]]  # gp_var_c: one module only, left out
    out = study_components(_summary("s", "vanilla_equation", 0.0, rows), ["variance_c", "gp_var_c", REFERENCE])
    assert [p for p, _, _ in out] == [f"s: variance_c - {REFERENCE}"]
    d = np.array([0.5, 0.0])
    v = np.array([0.25 / 9, 0.5 / 9])
    assert out[0][1] == pytest.approx(np.var(d, ddof=1) - v.mean())
    assert out[0][2] == pytest.approx(np.mean([0.25, 0.5]))
    comps = variance_components({"s": _summary("s", "vanilla_equation", 0.0, rows),
                                 "mixed": {**_summary("mixed", "simple_system", 0.0, rows),
                                           "tables": {**_summary("m", "simple_system", 0.0, rows)["tables"],
                                                      "pooled": {"columns": ["system", "noise"],
                                                                 "rows": [["simple_system", 0.0], ["simple_system", 0.01]]}}}},
                                ["variance_c"])
    assert set(comps) == {("equations", "noiseless"), ("equations", "noisy"), ("systems", "noiseless")}
    assert comps[("systems", "noiseless")].borrowed == "equations noiseless"  # the mixed study counts nowhere


def test_families_and_cells():
    from etc_fast.runner import parse_config
    from etc_fast.runner._grid import expand_grid

    assert family_of("m7_malus_law") == "m7_malus_law"
    assert family_of("configs/tasks/hill_binding.yaml") == "custom:configs/tasks/hill_binding.yaml"
    assert family_of("gen-s0-0000").startswith("generated:")
    cfg = parse_config({"name": "t", "grids": [{"model": "symbolic", "configurations": ["variance_c", REFERENCE],
                                                "tasks": ["m0_gravity", "m1_coulomb_force"], "difficulties": ["easy", "hard"],
                                                "noise": [0.0], "budgets": [4], "rollouts": 3}]})
    specs = expand_grid(cfg)
    comps = {("equations", "noiseless"): Components(0.01, 0.2, ("x",))}
    (cell,) = cell_power(specs, comps)
    assert (cell.families, cell.laws, cell.trials_per_arm, cell.rollouts, cell.comparisons) == (2, 4, 12, (3,), 1)
    var = design_variance([[3, 3], [3, 3]], between_family=0.01, between_law=0.01, within=0.2)
    assert cell.detectable == pytest.approx(detectable_difference(var))
    assert cell.families_needed == math.ceil(2.801585**2 * 0.01 / 0.05**2)
    timing = {("newtonbench", "noiseless"): (10.0, "x")}
    assert len(specs) == 24 and parts(specs, timing, hours=30 / 3600) == [(3, 30.0)] * 8


def test_design_command_on_the_shipped_answer_config(capsys):
    from etc_fast.results.__main__ import main

    assert main(["--root", str(ROOT), "design", str(ROOT / "configs/answer.yaml")]) == 0
    out = capsys.readouterr().out
    assert "58,170 trials" in out
    rows = [r for r in out.splitlines() if r.startswith("| vanilla_equation | 0 |")]
    assert len(rows) == 5 and all("✓" in r for r in rows)  # noiseless equation cells meet 5 points
    assert main(["--root", str(ROOT), "design", str(ROOT / "configs/answer.yaml"), "--hours", "0"]) == 2


def _tiny_config(tmp_path: Path) -> Path:
    import yaml

    cfg = {"name": "tiny", "grids": [{"model": "symbolic", "configurations": ["variance_c", REFERENCE],
                                      "tasks": ["m0_gravity", "m1_coulomb_force"], "noise": [0.0, 0.01],
                                      "budgets": [4], "rollouts": 2}]}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_design_times_what_is_left_of_a_run_from_its_own_trials(tmp_path):
    import json

    from etc_fast.results import ResultsError
    from etc_fast.results._design import design_report, run_timing
    from etc_fast.runner import expand_grid, load_config

    path = _tiny_config(tmp_path)
    specs = expand_grid(load_config(path))
    assert len(specs) == 16
    run = tmp_path / "run"
    run.mkdir()
    noiseless = [s for s in specs if s.noise == 0.0]
    lines = [{"trial_id": s.trial_id, "spec": s.to_dict(), "summary": {"status": "completed", "judge_status": "ok",
                                                                         "wall_s": 6.0 + 2 * i}}
             for i, s in enumerate(noiseless[:3])]
    # a failed trial and a trial whose judge was not reached are still to run; another design's trial is ignored
    lines.append({"trial_id": noiseless[3].trial_id, "summary": {"status": "failed", "wall_s": 100.0}})
    lines.append({"trial_id": noiseless[4].trial_id, "summary": {"status": "completed", "judge_status": "error"}})
    lines.append({"trial_id": "not-in-grid", "summary": {"status": "completed", "judge_status": "ok", "wall_s": 1e6}})
    (run / "trials.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    timed = run_timing(run, specs, workers=2)
    assert timed.done == {s.trial_id for s in noiseless[:3]}
    assert timed.by_class == {("newtonbench", "noiseless"): (4.0, "this run: 3 trials")}  # mean 8 s over 2 workers
    assert timed.by_inputs == {("newtonbench", "noiseless"): {3: 4.0}}  # both laws have three inputs
    out = design_report(path, ROOT, run=run, workers=2, hours=1.0)
    assert "| newtonbench | noiseless | 8 | 5 | 4.000 | 0.01 | this run: 3 trials, by inputs (3) |" in out
    assert "| newtonbench | noisy | 8 | 8 |" in out and "| all | | 16 | 13 |" in out
    # one part holds the 13 trials left (5 x 4 s, and 8 noisy ones timed by the stored studies)
    assert f"| 1 | 13 | 0.01 | `python -m etc_fast.run {path} --out {run} --limit 13` |" in out
    # on one worker a trial takes twice as long, whether this run or a stored study times it
    def noisy(text: str) -> float:
        return float(next(r for r in text.splitlines() if r.startswith("| newtonbench | noisy |")).split("|")[5])

    assert noisy(design_report(path, ROOT, run=run, workers=1)) == pytest.approx(2 * noisy(out), abs=2e-3)
    assert run_timing(run, specs, workers=1).by_class[("newtonbench", "noiseless")][0] == 8.0
    with pytest.raises(ResultsError, match="no trials.jsonl"):
        run_timing(tmp_path, specs)
    (run / "trials.jsonl").write_text(json.dumps(lines[-1]) + "\n")
    with pytest.raises(ResultsError, match="none of its 1 stored trials"):
        run_timing(run, specs)


def test_design_command_refuses_a_bad_run_or_workers(tmp_path, capsys):
    from etc_fast.results.__main__ import main

    path = _tiny_config(tmp_path)
    assert main(["--root", str(ROOT), "design", str(path), "--run", str(tmp_path / "nowhere")]) == 2
    assert "--run" in capsys.readouterr().err
    assert main(["--root", str(ROOT), "design", str(path), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_a_run_times_the_laws_left_by_their_input_count(tmp_path):
    """Laws of many inputs cost more: the trials left are timed at their own input count, and a
    count not reached takes the nearest one reached (named in the suite's row)."""
    import json

    import yaml

    from etc_fast.results._design import design_report, input_count, run_timing
    from etc_fast.runner import expand_grid, load_config

    cache: dict = {}
    names = [f"gen-s3-{i:04d}" for i in range(40)]
    counts = {n: input_count(type("S", (), {"task": n, "difficulty": "easy", "law_version": "v0"})(), cache) for n in names}
    by_count: dict[int, list[str]] = {}
    for n, d in counts.items():
        by_count.setdefault(d, []).append(n)
    few, many = min(by_count), max(by_count)
    middle = sorted(by_count)[len(by_count) // 2]
    assert few < middle < many, by_count
    tasks = [by_count[few][0], by_count[many][0], by_count[middle][0]]
    cfg = {"name": "by-inputs", "grids": [{"model": "symbolic", "configurations": [REFERENCE, "variance_c"],
                                           "tasks": tasks, "noise": [0.0], "budgets": [4], "rollouts": 2}]}
    path = tmp_path / "by-inputs.yaml"
    path.write_text(yaml.safe_dump(cfg))
    specs = expand_grid(load_config(path))
    run = tmp_path / "run"
    run.mkdir()
    # the few-input law's trials took 2 s each, the many-input law's 40 s: one of each law is done
    wall = {tasks[0]: 2.0, tasks[1]: 40.0}
    done = [next(s for s in specs if s.task == t) for t in tasks[:2]]
    (run / "trials.jsonl").write_text("".join(
        json.dumps({"trial_id": s.trial_id, "spec": s.to_dict(),
                    "summary": {"status": "completed", "judge_status": "ok", "wall_s": wall[s.task]}}) + "\n"
        for s in done))
    timed = run_timing(run, specs, workers=1)
    assert timed.by_inputs[("generated", "noiseless")] == {few: 2.0, many: 40.0}
    assert timed.by_class[("generated", "noiseless")][0] == 21.0
    left = [s for s in specs if s.trial_id not in timed.done]
    nearest = many if many - middle <= middle - few else few
    assert [timed.seconds(s, cache)[0] for s in left] == [wall[t] if t in wall else {few: 2.0, many: 40.0}[nearest]
                                                          for t in (s.task for s in left)]
    out = design_report(path, ROOT, run=run, workers=1)
    row = next(r for r in out.splitlines() if r.startswith("| generated | noiseless |"))
    want = (3 * 2.0 + 3 * 40.0 + 4 * {few: 2.0, many: 40.0}[nearest]) / 10
    assert float(row.split("|")[5]) == pytest.approx(want, abs=1e-3)
    assert f"by inputs ({few}, {many}); {middle} as {nearest}" in row
