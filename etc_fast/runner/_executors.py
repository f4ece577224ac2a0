"""Executors: run trial specs in parallel and yield their records as they finish.

Each executor hands each trial to a :class:`TrialWorker`; the worker builds the policy
(``etc_fast.policies.create_policy``) and the judge (``etc_fast.evaluate.create_judge``), runs
``etc_fast.protocol.run_trial`` and returns ``TrialRecord.to_dict()``. Whatever goes wrong inside a
trial — an exception, the trial timeout, a worker process that dies — comes back as a record with
status ``failed`` and the error text, so a run always goes on. Records are identical whichever
executor ran them (apart from ``wall_s``).

* :class:`LocalExecutor`: a process pool (one trial per process at a time). Workers die with the
  run: each asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``) and watches
  the run's process besides; stopping the executor early terminates them.
* :class:`ThreadExecutor`: threads in this process. An LLM trial spends its time waiting for the
  network, and the numeric work releases the GIL (the kernels are ``nogil``; analysis code runs in
  sandbox processes), so dozens of LLM trials share one interpreter instead of one process each.
  ``trial_timeout_s`` cannot interrupt a thread: there the LLM client's ``retry_budget_s`` and the
  sandbox's limits bound a trial instead.
* :class:`RayExecutor`: Ray tasks.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import dataclasses
import json
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from etc_fast.protocol import TrialRecord, TrialSpec

__all__ = [
    "TrialWorker", "TrialTimeout", "LocalExecutor", "ThreadExecutor", "RayExecutor", "create_executor", "failed_record",
]


class TrialTimeout(BaseException):
    """Raised inside a worker when a trial runs past ``trial_timeout_s``.

    A ``BaseException`` so that code guarding against policy errors with ``except Exception``
    does not swallow it.
    """


def failed_record(spec: TrialSpec, error: str, *, wall_s: float = 0.0, detail: str | None = None) -> dict[str, Any]:
    """The record of a trial that could not finish (status ``failed``)."""
    event: dict[str, Any] = {"phase": "runner", "error": error}
    if detail:
        event["traceback"] = detail
    return TrialRecord(spec=spec, status="failed", error=error, wall_s=wall_s, events=[event]).to_dict()


#: After a trial's deadline the alarm fires again every this many seconds until the trial has
#: stopped: a ``TrialTimeout`` raised while Python runs a weakref callback or a ``__del__`` is
#: printed as "Exception ignored" and lost, and the trial would otherwise go on without a limit.
REFIRE_S = 10.0
#: Seconds of Numba JIT compilation per trial that the trial clock does not count. Compiling the
#: kernels on a cold cache (a fresh checkout, an edited kernel: ``kernels/_jit.py`` then drops the
#: cached kernels of the modules that can hold the edit) is a once-per-checkout cost of minutes on a loaded machine, not the trial's work;
#: counted, it turned the first run after a merge into ``TrialTimeout`` failures. Past this
#: allowance compilation counts like anything else, so a trial still ends.
JIT_ALLOWANCE_S = 900.0


class _Clock:
    """The running trial deadline of this process's main thread (one at a time)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.allowance = JIT_ALLOWANCE_S
        self.depth = 0  # nested compilations (a kernel compiles the kernels it calls)
        self.compile_start = 0.0
        self.extended = False

    def arm(self, seconds: float) -> None:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3), REFIRE_S)

    def compile_started(self) -> None:
        self.depth += 1
        if self.depth == 1:
            now = time.monotonic()
            self.compile_start = now
            self.extended = self.deadline > now and self.allowance > 0
            if self.extended:  # the compilation may use the allowance left on top of the deadline
                self.arm(self.deadline - now + self.allowance)

    def compile_ended(self) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth == 0 and self.extended:
            self.extended = False
            now = time.monotonic()
            used = min(now - self.compile_start, self.allowance)
            self.allowance -= used
            self.deadline += used
            left = self.deadline - now
            self.arm(left if left > 0 else REFIRE_S)  # past it, the alarm has fired: it fires again later


_CLOCK: _Clock | None = None
_LISTENING = False


def _listen_to_jit() -> None:
    """Register (once per process) the Numba listener that stops the trial clock while compiling, or
    while waiting for another process that compiles a kernel this one needs (``kernels/_once.py``)."""
    global _LISTENING
    if _LISTENING:
        return
    _LISTENING = True
    try:
        from numba.core import event
    except Exception:  # noqa: BLE001 - no Numba: nothing compiles
        return

    class _JitListener(event.Listener):
        def on_start(self, ev: Any) -> None:
            clock = _CLOCK
            if clock is not None and threading.current_thread() is threading.main_thread():
                clock.compile_started()

        def on_end(self, ev: Any) -> None:
            clock = _CLOCK
            if clock is not None and threading.current_thread() is threading.main_thread():
                clock.compile_ended()

    event.register("numba:compile", _JitListener())
    with contextlib.suppress(ImportError):  # waiting for another process's compilation of a kernel counts alike
        from kernels import COMPILE_WAIT_EVENT as WAIT_EVENT

        event.register(WAIT_EVENT, _JitListener())


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TrialTimeout` in this thread after ``seconds`` (main thread, POSIX only), and
    again every :data:`REFIRE_S` seconds until the block is left; Numba compilation is not counted
    (up to :data:`JIT_ALLOWANCE_S`)."""
    global _CLOCK
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    assert seconds is not None

    def _expire(signum: int, frame: Any) -> None:
        raise TrialTimeout(f"trial exceeded trial_timeout_s = {seconds:g} s")

    _listen_to_jit()
    previous = signal.signal(signal.SIGALRM, _expire)
    clock = _CLOCK = _Clock(float(seconds))
    clock.arm(float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        _CLOCK = None
        signal.signal(signal.SIGALRM, previous)


#: Judges built so far, per thread (an LLM judge counts its tokens; one per thread keeps each
#: trial's share exact when trials run in threads).
_JUDGES = threading.local()


@dataclasses.dataclass(frozen=True)
class TrialWorker:
    """Runs one trial from a spec; picklable, shipped once to every worker process.

    Attributes:
        policy_options: Keyword arguments for ``create_policy`` per model name.
        judge: Judge name for ``create_judge``.
        judge_kwargs: Keyword arguments for ``create_judge``.
        trial_timeout_s: Wall-clock limit per trial (``None`` = none).
        ledger_run: The run's ledger id: every paid call of a trial is recorded for this run and
            that trial (:func:`etc_fast.llm.ledger_tag`); ``None`` records them with no run.
    """

    policy_options: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    judge: str = "structural"
    judge_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    trial_timeout_s: float | None = None
    ledger_run: str | None = None

    @classmethod
    def from_config(cls, config: Any) -> TrialWorker:
        """The worker for a :class:`etc_fast.runner.RunConfig`."""
        return cls(
            policy_options={m: config.policy_options(m) for m in config.models},
            judge=config.judge,
            judge_kwargs=config.judge_kwargs(),
            trial_timeout_s=config.trial_timeout_s,
        )

    # -- building blocks (override in subclasses to plug in other trial logic) -----------------
    def make_policy(self, model: str) -> Any:
        from etc_fast.policies import create_policy

        return create_policy(model, **dict(self.policy_options.get(model, {})))

    def make_judge(self) -> Any:
        key = json.dumps([self.judge, dict(self.judge_kwargs)], sort_keys=True, default=str)
        built = getattr(_JUDGES, "built", None)
        if built is None:
            built = _JUDGES.built = {}
        if key not in built:
            from etc_fast.evaluate import create_judge

            built[key] = create_judge(self.judge, **dict(self.judge_kwargs))
        return built[key]

    def run_trial(self, spec: TrialSpec) -> TrialRecord:
        from etc_fast.protocol import run_trial

        policy = self.make_policy(spec.model)
        try:
            return run_trial(spec, policy, judge=self.make_judge())
        finally:
            close = getattr(policy, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()

    def rejudge(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """``record`` (a stored ``TrialRecord`` dict) with its submission judged again."""
        from etc_fast.llm import ledger_tag
        from etc_fast.protocol import judge_submission
        from etc_fast.tasks import get_task

        rec = dict(record)
        spec = rec["spec"]
        task = get_task(spec["task"], spec["difficulty"], spec["law_version"])
        with ledger_tag(self.ledger_run, rec.get("trial_id")):
            rec["judge"] = judge_submission(str(rec.get("final_source") or ""), task, self.make_judge())
        return rec

    def warm_up(self, spec: TrialSpec) -> None:
        """Pay once, before trials start in threads, what the first trial would otherwise pay in
        every thread at once: importing the model SDK, loading the task and the compiled
        evaluation kernels (scoring a constant law in the sandbox), starting the judge's server."""
        _prestart_helpers(self.judge)
        if spec.model not in ("symbolic", "scripted"):
            with contextlib.suppress(ImportError):
                import openai  # noqa: F401
        with contextlib.suppress(Exception):
            from etc_fast.evaluate import evaluate_submission
            from etc_fast.tasks import get_task

            task = get_task(spec.task, spec.difficulty, spec.law_version)
            evaluate_submission(f"def discovered_law({', '.join(task.variable_names)}):\n    return 1.0\n", task)

    def preflight(self, models: Sequence[str]) -> None:
        """Build each model's policy and the judge once, so configuration errors surface early; start
        this process's sandbox zygote in the background meanwhile (the run probes it next)."""
        _prestart_helpers("")
        for model in models:
            self.make_policy(model)
        self.make_judge()

    def check_endpoints(self, models: Sequence[str]) -> list[str]:
        """One cheap call per distinct LLM endpoint (base_url, model id, key) of the policies and
        the judge, before any trial runs (none in replay mode). Returns what was checked.

        Raises:
            InfrastructureError: An endpoint rejects the key, lacks the model, or cannot be reached.
        """
        clients = []
        for model in models:
            clients.append(getattr(self.make_policy(model), "client", None))
        clients.append(getattr(self.make_judge(), "client", None))
        seen: set[Any] = set()
        checked = []
        for client in clients:
            endpoint = getattr(getattr(client, "settings", None), "endpoint", None)
            if endpoint is None or endpoint in seen or not callable(getattr(client, "preflight", None)):
                continue
            seen.add(endpoint)
            try:
                checked.append(client.preflight())
            finally:
                with contextlib.suppress(Exception):
                    client.close()
        return checked

    # -- the call a worker process makes -----------------------------------------------------
    def __call__(self, spec_dict: Mapping[str, Any]) -> dict[str, Any]:
        from etc_fast.llm import ledger_tag

        spec = TrialSpec.from_dict(dict(spec_dict))
        t0 = time.perf_counter()
        try:
            with _deadline(self.trial_timeout_s), ledger_tag(getattr(self, "ledger_run", None), spec.trial_id):
                record = self.run_trial(spec)
            return record.to_dict()
        except (Exception, TrialTimeout) as exc:
            error = f"{type(exc).__name__}: {exc}"
            return failed_record(spec, error, wall_s=time.perf_counter() - t0, detail=traceback.format_exc())


def _prestart_helpers(judge: str) -> None:
    """Start the helper processes a trial needs (the sandbox zygotes, the structural judge's server)
    in background threads, so that their imports overlap other start-up work instead of the first
    trial. Each is started by exec, once per process; a failure is reported by the first use."""
    with contextlib.suppress(Exception):
        from etc_fast.sandbox import LEAN_PRELOAD, zygote

        zygote().prestart()
        zygote(LEAN_PRELOAD).prestart()
    if judge == "structural":
        with contextlib.suppress(Exception):
            from etc_fast.evaluate import judge_server

            judge_server().prestart()


def _limit_threads(workers: int) -> None:
    """Keep each worker's Numba thread pool to its share of the cores."""
    try:
        import numba

        cores = os.cpu_count() or 1
        numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS, cores // max(1, workers))))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - numba missing or its thread layer unavailable: leave the default
        pass


# ----------------------------------------------------------------------------------------
# Local process pool
# ----------------------------------------------------------------------------------------
_WORKER: TrialWorker | None = None
_PRELOAD = ("numpy", "etc_fast.protocol", "etc_fast.runner._executors")


def die_with_parent(parent_pid: int | None = None) -> None:
    """Make this process end when the run does: SIGKILL from the kernel when its parent dies
    (Linux ``PR_SET_PDEATHSIG``), and, when ``parent_pid`` is given, a thread that exits the process
    once that process is gone (the pool's parent may be a fork server, not the run itself)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if parent_pid is None:
        return

    def watch() -> None:
        while True:
            time.sleep(0.5)
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except OSError:
                pass

    threading.Thread(target=watch, name="watch-run", daemon=True).start()


def _pool_init(worker: TrialWorker, workers: int, parent_pid: int | None = None) -> None:
    global _WORKER
    die_with_parent(parent_pid)
    _WORKER = worker
    _limit_threads(workers)
    _prestart_helpers(getattr(worker, "judge", ""))


def _pool_entry(spec_dict: dict[str, Any]) -> dict[str, Any]:
    assert _WORKER is not None, "worker process was not initialized"
    return _WORKER(spec_dict)


class LocalExecutor:
    """A ``concurrent.futures.ProcessPoolExecutor`` (forkserver on Linux, spawn elsewhere).

    At most ``workers`` trials are in flight. When a worker process dies, the trials that were in
    flight are re-run one at a time in a fresh pool; one that kills its worker again is recorded
    as failed.

    Args:
        workers: Worker processes.
        start_method: ``forkserver`` or ``spawn`` (default: forkserver where available).
    """

    name = "local"

    def __init__(self, workers: int, *, start_method: str | None = None) -> None:
        self.workers = max(1, int(workers))
        if start_method is None:
            start_method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        if start_method not in ("forkserver", "spawn"):
            raise ValueError(f"start_method must be 'forkserver' or 'spawn', got {start_method!r}")
        self.start_method = start_method

    def _pool(self, worker: TrialWorker) -> cf.ProcessPoolExecutor:
        ctx = multiprocessing.get_context(self.start_method)
        if self.start_method == "forkserver":
            # Workers fork from a server that has the trial machinery imported already, so a pool
            # (and its replacement after a crash) starts in milliseconds instead of seconds.
            ctx.set_forkserver_preload(list(_PRELOAD))
        return cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=ctx,
            initializer=_pool_init,
            initargs=(worker, self.workers, os.getpid()),
        )

    def run(self, specs: Sequence[TrialSpec], worker: TrialWorker) -> Generator[tuple[TrialSpec, dict[str, Any]], None, None]:
        """Yield ``(spec, record_dict)`` for every spec, in completion order."""
        pending = collections.deque(specs)
        suspects: collections.deque[TrialSpec] = collections.deque()
        inflight: dict[cf.Future, tuple[TrialSpec, bool, float]] = {}
        pool = self._pool(worker)
        complete = False
        try:
            while pending or suspects or inflight:
                if suspects:
                    if not inflight:
                        spec = suspects.popleft()
                        inflight[pool.submit(_pool_entry, spec.to_dict())] = (spec, True, time.perf_counter())
                else:
                    while pending and len(inflight) < self.workers:
                        spec = pending.popleft()
                        inflight[pool.submit(_pool_entry, spec.to_dict())] = (spec, False, time.perf_counter())
                done, _ = cf.wait(list(inflight), return_when=cf.FIRST_COMPLETED)
                broken = False
                for fut in done:
                    spec, isolated, t0 = inflight.pop(fut)
                    try:
                        yield spec, fut.result()
                    except BrokenProcessPool:
                        broken = True
                        if isolated:
                            yield spec, failed_record(
                                spec, "worker process died while running this trial", wall_s=time.perf_counter() - t0
                            )
                        else:
                            suspects.append(spec)
                    except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be unpickled
                        yield spec, failed_record(spec, f"{type(exc).__name__}: {exc}", wall_s=time.perf_counter() - t0)
                if broken:
                    for fut, (spec, _, _) in inflight.items():
                        fut.cancel()
                        suspects.append(spec)
                    inflight.clear()
                    # the broken pool's survivors are killed here, not left to its manager thread: once
                    # (Python 3.11.7) a worker outlived the pool's own SIGTERM, idle on the call queue,
                    # and shutdown(wait=True) waited on it forever
                    _terminate(pool)
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = self._pool(worker)
            complete = True
        finally:
            if not complete:  # stopped early (interrupt, circuit breaker): no trial goes on
                _terminate(pool)
            pool.shutdown(wait=False, cancel_futures=True)


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Kill the pool's worker processes (their trials in flight are lost and run again later)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(timeout=5)


# ----------------------------------------------------------------------------------------
# Threads
# ----------------------------------------------------------------------------------------
class ThreadExecutor:
    """Trials in ``workers`` daemon threads of this process (for trials that wait on a model).

    Stopping early (closing the generator) lets no new trial start and makes the model calls in
    flight fail at their next attempt (:func:`etc_fast.llm.stop_calls`); those trials are not
    yielded, so they are run again by the next run.

    Args:
        workers: Trials in flight at once.
    """

    name = "threads"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, int(workers))

    def run(self, specs: Sequence[TrialSpec], worker: TrialWorker) -> Generator[tuple[TrialSpec, dict[str, Any]], None, None]:
        """Yield ``(spec, record_dict)`` for every spec, in completion order."""
        todo: queue.SimpleQueue[TrialSpec] = queue.SimpleQueue()
        for spec in specs:
            todo.put(spec)
        done: queue.SimpleQueue[tuple[TrialSpec, dict[str, Any]]] = queue.SimpleQueue()
        stop = threading.Event()
        _llm_stop(False)

        def loop() -> None:
            while not stop.is_set():
                try:
                    spec = todo.get_nowait()
                except queue.Empty:
                    return
                t0 = time.perf_counter()
                try:
                    rec = worker(spec.to_dict())
                except BaseException as exc:  # noqa: BLE001 - a thread never dies silently
                    rec = failed_record(spec, f"{type(exc).__name__}: {exc}", wall_s=time.perf_counter() - t0)
                if not stop.is_set():
                    done.put((spec, rec))

        warm_up = getattr(worker, "warm_up", None)
        if callable(warm_up) and specs:
            warm_up(specs[0])
        threads = [threading.Thread(target=loop, name=f"trial-{i}", daemon=True) for i in range(min(self.workers, len(specs)))]
        for t in threads:
            t.start()
        left = len(specs)
        try:
            while left:
                try:
                    item = done.get(timeout=0.2)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and done.empty():
                        break
                    continue
                left -= 1
                yield item
        finally:
            if left:  # stopped early
                stop.set()
                _llm_stop(True)
                until = time.monotonic() + 2.0  # threads are daemons: whatever still runs dies with the process
                for t in threads:
                    t.join(timeout=max(0.0, until - time.monotonic()))


def _llm_stop(stop: bool) -> None:
    """Stop (or allow again) model calls in this process, if the LLM layer is loaded."""
    mod = sys.modules.get("etc_fast.llm._client")
    if mod is not None:
        mod.stop_calls(stop)


# ----------------------------------------------------------------------------------------
# Ray
# ----------------------------------------------------------------------------------------
def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RuntimeError(
            "executor 'ray' needs the ray package (pip install 'etc-fast[ray]' or pip install ray)"
        ) from None
    return ray


_RAY_THREADS_SET = False
#: Seconds the Ray driver waits for a trial before it looks at signals again.
_RAY_POLL_S = 0.5


def _in_windows(specs: Iterable[TrialSpec], inflight: dict[Any, TrialSpec], submit: Callable[[TrialSpec], Any],
               wait: Callable[[list[Any]], list[Any]], window: int) -> Generator[tuple[TrialSpec, Any], None, None]:
    """Yield ``(spec, ref)`` as submitted trials finish, with at most ``window`` submitted and not yet
    finished at any time (kept in ``inflight``, which the caller cancels if it stops early), submitted
    in ``specs`` order. ``wait`` returns the finished refs among those given (possibly none)."""
    todo = iter(specs)
    while True:
        while len(inflight) < window:
            spec = next(todo, None)
            if spec is None:
                break
            inflight[submit(spec)] = spec
        if not inflight:
            return
        for ref in wait(list(inflight)):
            yield inflight.pop(ref), ref


def _ray_entry(worker: TrialWorker, spec_dict: dict[str, Any]) -> dict[str, Any]:
    global _RAY_THREADS_SET
    if not _RAY_THREADS_SET:
        _limit_threads(os.cpu_count() or 1)
        _prestart_helpers(getattr(worker, "judge", ""))
        _RAY_THREADS_SET = True
    return worker(spec_dict)


class RayExecutor:
    """Ray tasks (one CPU each) on an existing cluster (``address``) or a local Ray instance.

    A local instance gets this checkout on its workers' ``PYTHONPATH``; on an existing cluster
    etc_fast must be importable on every node (installed, or shipped with a Ray runtime env).
    Ray retries a task once if its worker dies; a second death is recorded as a failed trial.

    Args:
        workers: CPUs of the local instance (ignored with ``address``).
        address: Existing cluster address; ``None`` starts (and afterwards stops) a local one.
    """

    name = "ray"

    def __init__(self, workers: int, *, address: str | None = None) -> None:
        self.workers = max(1, int(workers))
        self.address = address

    def run(self, specs: Sequence[TrialSpec], worker: TrialWorker) -> Generator[tuple[TrialSpec, dict[str, Any]], None, None]:
        """Yield ``(spec, record_dict)`` for every spec, in completion order."""
        ray = _import_ray()
        started = False
        if not ray.is_initialized():
            # ray.init puts its own SIGTERM handler (sys.exit) in place of the caller's, which would skip
            # the graceful stop (exit 130, the manifest written); the caller's is put back afterwards
            main = threading.current_thread() is threading.main_thread()
            previous = signal.getsignal(signal.SIGTERM) if main else None
            common = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            if self.address:
                ray.init(address=self.address, **common)
            else:
                root = str(Path(__file__).resolve().parents[2])
                path = os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
                # "local": a new instance even where `ray start` left a cluster on this machine (which a
                # bare init would join, refusing num_cpus)
                ray.init(address="local", num_cpus=self.workers, runtime_env={"env_vars": {"PYTHONPATH": path}}, **common)
            started = True
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        remote = ray.remote(num_cpus=1, max_retries=1)(_ray_entry)
        # a window of trials on the cluster, twice its CPUs: every worker has its next trial queued,
        # and the driver's waits scan a short list however long the grid
        window = max(4, 2 * int(ray.cluster_resources().get("CPU", self.workers)))
        inflight: dict[Any, TrialSpec] = {}
        try:
            worker_ref = ray.put(worker)

            def wait(refs: list[Any]) -> list[Any]:
                # a bounded wait: a blocking one holds off Ctrl-C and SIGTERM until some trial returns
                return ray.wait(refs, num_returns=1, timeout=_RAY_POLL_S)[0]

            for spec, ref in _in_windows(specs, inflight, lambda s: remote.remote(worker_ref, s.to_dict()), wait, window):
                try:
                    yield spec, ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a task error or a dead worker
                    yield spec, failed_record(spec, f"{type(exc).__name__}: {exc}")
        finally:
            for ref in inflight:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            if started:
                ray.shutdown()


def create_executor(
    name: str, workers: int, *, ray_address: str | None = None, llm_bound: bool = False
) -> LocalExecutor | ThreadExecutor | RayExecutor:
    """``local`` (threads when ``llm_bound``: every trial's policy is a language model, else
    processes), ``threads``, ``processes`` or ``ray`` executor."""
    if name == "threads" or (name == "local" and llm_bound):
        return ThreadExecutor(workers)
    if name in ("local", "processes"):
        return LocalExecutor(workers)
    if name == "ray":
        _import_ray()
        return RayExecutor(workers, address=ray_address)
    raise ValueError(f"executor must be 'local', 'threads', 'processes' or 'ray', got {name!r}")

