"""bench.bench_inputs: the laws it writes and the generated laws it picks by number of inputs."""

from __future__ import annotations

from bench import bench_inputs
from etc_fast.tasks.generate import law_by_name


def test_generated_picks_are_the_first_laws_of_each_input_count() -> None:
    picks = bench_inputs.generated_picks(0, [1, 5, 10], 2)
    assert [d for d, _, _ in picks] == [1, 1, 5, 5, 10, 10]
    for d, name, cls in picks:
        law = law_by_name(name)
        assert (law.n_inputs, law.task_class) == (d, cls)
    # no earlier law of seed 0 has the same input count as a pick and was passed over
    chosen = {name for _, name, _ in picks}
    last = max(int(name.rsplit("-", 1)[1]) for name in chosen)
    counts = {1: 0, 5: 0, 10: 0}
    for i in range(last + 1):
        law = law_by_name(f"gen-s0-{i:04d}")
        if law.n_inputs in counts and counts[law.n_inputs] < 2:
            counts[law.n_inputs] += 1
            assert law.name in chosen, law.name


def test_an_input_count_with_no_law_in_the_scan_gets_none() -> None:
    assert bench_inputs.generated_picks(0, [10], 3, scan=5) == []


def test_task_text_names_every_input() -> None:
    text = bench_inputs.task_text("sum2_log", 4)
    assert "law: C * x1 * x2**(-2) + K * x3**(0.5) * x4**(2)" in text
    assert text.count("- name: x") == 4
