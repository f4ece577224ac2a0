"""etc_fast: explore-then-commit scientific-law discovery with language models.

Public entry points:

* :mod:`etc_fast.tasks` — NewtonBench modules and custom tasks (``get_task``).
* :mod:`etc_fast.sampling` — candidate pools, evaluation grids, bootstrap probes.
* :mod:`etc_fast.expr` — the hypothesis language (expressions -> postfix programs).
* :mod:`etc_fast.acquisition` — one planner step on the :mod:`kernels` (the paper's, and the noise-aware one).
* :mod:`etc_fast.protocol` — planner / baseline loops, ``run_trial``.
* :mod:`etc_fast.evaluate` — sandboxed replay, RMSLE with coverage, judges.
* ``python -m etc_fast.run CONFIG`` / ``python -m etc_fast.replay`` / ``python -m etc_fast.report``.
"""

__version__ = "0.1.0"
