"""The executable cache: a program's JAX transformations, compiled once its structure repeats (DESIGN invariant 5).

A speed layer over the plain path (lowering.replay_fn, and the eager sweep for a first-seen structure): a structure
seen once runs without compiling; a structure that repeats runs one cached XLA executable, which also returns the
values of the deferred ops still alive (deferred.py), so a training step's forward pass and gradient are one
dispatch. `Policy` decides when a compile pays back (DESIGN invariant 12): never for a program over its size bound,
and for a large one only after enough runs. A program with an op-by-op path compiles in the background
(background.py) and runs op by op for a fixed number of runs while it compiles. In checking mode (checking.py) every compiled run
is compared with the plain path.
"""

from __future__ import annotations

import collections
import concurrent.futures
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax._src import config as jax_config  # constant folding's switch: see _run

from . import background, caches, checking, deferred, errors
from .lowering import Program, replay_fn


class Policy:
    """When compiling a structure pays back: a size bound and a history bound, from a cost model (measured on the
    CI machine, 2 cores, for chains of 1 to 2,000 ops and their gradient; docs/design.md, "When to compile").

    XLA's compile of a gradient costs about `compile_s_per_step` per step of the program (it grows with the
    program: a 20,000-op chain took 65 s), while the compiled run saves about `saved_s_per_step` per step and run
    over the op-by-op path (the eager sweep). So:

    - size bound: a program of more than `max_steps` steps is never compiled eagerly: its compile alone would stall
      for many seconds (minutes at 20,000 steps) to save milliseconds per run. It runs op by op every time.
    - history bound: a structure is compiled on its `min_runs(n)`-th run. The first `free_compile_s` of a compile
      are granted to any structure that repeats (a small training step: its compile is a short stall once, and it
      runs for many steps); the rest must already have been paid by the op-by-op runs of this structure (ski
      rental: whatever the future holds, the total cost is at most twice the best choice made in hindsight).

    A program with no op-by-op path (hessian, hvp, jvp and forward-mode jacobians) compiles at once below the size
    bound (the un-jitted transformation compiles each primitive, and costs more), and runs un-jitted above it.
    The op-by-op path is not free either when its ops are new: each op's VJP is an executable of its own (sweep.py),
    about `op_compile_s` to compile. So a structure is compiled on its first run when its op-by-op run would
    compile at least `min_new_ops` new VJPs costing more than compiling the program: a new model's first training
    step (deep_q_network_breakout's: 24 VJPs) is one compile instead of many.
    The attributes are knobs for tests and benchmarks, not API.
    """

    compile_s_per_step = 3e-3
    saved_s_per_step = 5e-5
    free_compile_s = 0.5
    max_steps = 2000
    op_compile_s = 2.5e-2
    min_new_ops = 4
    # With background compilation (background.py), how many runs a structure makes op by op from the run that
    # queued its compile; the next run waits for the executable if it is not ready yet, and uses it. About a
    # compile's cost (compile_s_per_step) over an op-by-op run's (~1e-4 s per step), so the wait is rarely felt.
    # A count, not "whenever the compile is done": an executable may round differently from op-by-op dispatch in
    # the last bits, so a switch that followed the clock would make a program's values differ from run to run.
    runs_while_compiling = 30

    def min_runs(self, n_steps: int) -> int:
        """The run of a structure of `n_steps` steps on which it is compiled (2: as soon as it repeats)."""
        beyond = n_steps * self.compile_s_per_step - self.free_compile_s
        if beyond <= 0:
            return 2
        return 1 + math.ceil(beyond / (n_steps * self.saved_s_per_step))

    def decide(self, n_steps: int, runs: int, has_eager: bool, new_ops: Callable[[], int] = lambda: 0) -> str | None:
        """None to compile now, or why not: "size" (over the size bound) or "history" (not run often enough).

        `new_ops()` counts the VJPs that the op-by-op path would compile (asked on a structure's first run only).
        """
        if n_steps > self.max_steps:
            return "size"
        if has_eager and runs < self.min_runs(n_steps):
            if runs == 1 and self.compiles_less(n_steps, new_ops()):
                return None
            return "history"
        return None

    def compiles_less(self, n_steps: int, new_ops: int) -> bool:
        """Whether compiling a program of `n_steps` costs less than the `new_ops` VJPs of its op-by-op run."""
        return new_ops >= self.min_new_ops and n_steps * self.compile_s_per_step <= new_ops * self.op_compile_s


POLICY = Policy()
# (program, kind) -> how many per-op VJPs its op-by-op run would compile that no run has yet; sweep.py (which comes
# after this module) sets it.
NEW_OPS: Callable[[Program, Any], int] = lambda program, kind: 0
_CLAIMED = (None, None)  # a background compile being lowered by another thread (Lowered._background)


class Lowered:
    """A program's replay function and its JAX transformations, compiled once the structure repeats."""

    __slots__ = ("program", "replay", "forward_replay", "_transforms", "_compiled", "_memo", "_always_eager",
                 "_runs", "_stats", "_pending")

    def __init__(self, program: Program, stats: collections.Counter | None = None):
        self.program = program
        self.replay = replay_fn(program)
        self.forward_replay = replay_fn(program, forward=True) if not program.forward_ok else self.replay
        self._transforms: dict[Any, Callable[..., Any]] = {}
        # kind -> {steps whose values it returns: jitted fn}; None once run eagerly
        self._compiled: dict[Any, dict[tuple[int, ...], Callable[..., Any]] | None] = {}
        self._memo: dict[Any, Any] = {}
        # TF runs a custom gradient's grad_fn eagerly, on concrete values (it may print, branch on values, call
        # numpy, return None): such a program is never compiled when it runs eagerly, only traced inline.
        self._always_eager = program.eager_backward
        self._runs: dict[Any, int] = {}  # kind -> eager runs so far (the history bound's count)
        self._stats = stats if stats is not None else collections.Counter()
        # (kind, wanted) -> [future of its background compile, (jitted fn, spans), runs since]; failed: op by op
        self._pending: dict[Any, tuple[Any, list]] = {}

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """A value derived from this structure (e.g. the OpDef a call is recorded under), made once."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = make()
        return value

    def transform(self, kind: Any, build: Callable[[Callable], Callable[..., Any]]) -> Callable[..., Any]:
        """The uncompiled transformation `build(replay)`, memoized under `kind` ("jvp" kinds use the forward
        replay)."""
        fn = self._transforms.get(kind)
        if fn is None:
            fn = self._transforms[kind] = build(self.forward_replay if kind[0] == "jvp" else self.replay)
        return fn

    def run(self, kind: Any, build: Callable[[Callable], Callable[..., Any]], args: tuple,
            eager: Callable[[], Any] | None = None, apps: Sequence[deferred.Application | None] = ()) -> Any:
        """Runs a transformation: through one cached `jax.jit` executable once the structure repeats.

        Until `POLICY` says that compiling pays back, `eager()` computes the answer without a structure-specific
        executable (sweep.py: op by op, each op's VJP an executable shared by every structure that uses the op),
        and then too until the executable, compiled on the background worker, is ready (background.py; with it
        turned off, the run that decides compiles at once).
        Without `eager`, the transformation compiles at once: evaluating a vmapped or nested transformation op by
        op would compile more small executables than the one jit does (measured in docs/design.md); over the
        size bound it runs un-jitted. A program with a step that has an eager rule (OpDef.backward: a custom
        gradient) takes `eager()` every time.

        `apps` are the steps' deferred applications (deferred.py). A compiled run also returns the values of
        those whose tensors are alive and fills them in: forward pass and derivative in one dispatch. Any other
        run computes them op by op first.

        JAX's and XLA's own errors (out of memory) are raised as TF's (errors.from_jax); user code's (a custom
        gradient's grad_fn) as they are.
        """
        try:
            return self._run(kind, build, args, eager, apps)
        except Exception as e:
            if not errors.is_jax(e):
                raise
            raise errors.from_jax(str(kind[0]), e) from None

    def _run(self, kind: Any, build: Callable[[Callable], Callable[..., Any]], args: tuple,
             eager: Callable[[], Any] | None, apps: Sequence[deferred.Application | None]) -> Any:
        leaves, consts, extras = args
        flat = (*leaves, *consts, *extras)
        if any(isinstance(x, jax.core.Tracer) for x in flat):
            # inside an outer jax trace (tf.function): inline, the outer jit compiles it. Staged whole: under the
            # trace's constant folding, JAX's transpose rules would run each op on a constant cotangent (the
            # ones seed) eagerly, one XLA compile per op and shape.
            deferred.compute_all(apps)
            with jax_config.eager_constant_folding(False):
                return self.transform(kind, build)(leaves, consts, extras)
        executables = self._compiled.get(kind)
        at_once = False
        if not executables:  # not compiled yet: does compiling pay back now?
            if eager is not None and self._always_eager:
                why: str | None = "custom gradient"
            else:
                runs = self._runs[kind] = self._runs.get(kind, 0) + 1
                why = POLICY.decide(len(self.program.steps), runs, eager is not None,
                                    lambda: NEW_OPS(self.program, kind))
                at_once = runs == 1  # decided on its first run: compiling costs less than the op-by-op run
            if why is not None:
                self._stats[f"eager: {why}"] += 1
                self._compiled[kind] = None
                deferred.compute_all(apps)
                return eager() if eager is not None else self.transform(kind, build)(leaves, consts, extras)
        wanted = deferred.wanted(apps)
        if executables is None:
            executables = self._compiled[kind] = {}
        compiled = executables.get(wanted)
        if compiled is None:
            if eager is not None and background.FLAG.on and not at_once:
                compiled = self._background(kind, build, flat, len(leaves), len(consts), wanted)
                if compiled is None:  # compiling on the worker: this run op by op, as before the compile
                    deferred.compute_all(apps)
                    return eager()
            else:
                self._stats["compiled"] += 1
                compiled = self._jit(kind, build, len(leaves), len(consts), wanted)
            executables[wanted] = compiled
        fn, spans = compiled
        try:
            outs = fn(*flat)
        except Exception as e:  # XLA's runtime errors (out of memory) as TF's; user code's errors as they are
            if not errors.is_jax(e):
                raise
            raise errors.from_jax(str(kind[0]), e) from None
        if checking.FLAG.on:
            return self._check(kind, build, args, eager, apps, outs, spans)
        if not wanted:
            return outs
        for k, start, stop in spans:
            apps[k].set(outs[start:stop])
        return outs[:spans[0][1]]  # the transformation's own outputs: those before the first step value

    def _background(self, kind: Any, build: Callable, flat: tuple, n_leaves: int, n_consts: int,
                    wanted: tuple[int, ...]) -> tuple[Callable, list] | None:
        """The executable for (kind, wanted) once the structure has run `POLICY.runs_while_compiling` times op by
        op since its background compile was queued (waiting for the compile then, if need be); else None,
        after queueing the compile on its first call (background.py). A compile that failed leaves None for good.
        """
        key = (kind, wanted)
        job = self._pending.get(key)
        if job is None:
            with background.CLAIM:  # one thread lowers and submits a structure; the others run op by op
                job = self._pending.get(key)
                claimed = job is None
                if claimed:
                    job = self._pending[key] = _CLAIMED
            if claimed:
                job = self._submit(key, flat, build, n_leaves, n_consts)
        if job is _CLAIMED:  # another thread is lowering it
            self._stats["eager: compiling"] += 1
            return None
        job[2] += 1
        if job[2] <= POLICY.runs_while_compiling:
            self._stats["eager: compiling"] += 1
            return None
        future, compiled = job[0], job[1]
        concurrent.futures.wait([future])
        if future.cancelled() or future.exception() is not None:
            self._stats["eager: compile error"] += 1
            return None
        self._pending.pop(key, None)
        return compiled

    def _submit(self, key: Any, flat: tuple, build: Callable, n_leaves: int, n_consts: int) -> list:
        """Lowers (kind, wanted) here, on the caller's thread, and queues its XLA compile on the worker: JAX's
        thread-local settings (the default device) apply as for a call, and `fn` later finds the executable in
        JAX's own caches. With the queue full (or the process exiting) nothing is queued: the executable compiles
        on its first call, on the run `_background` would have switched on anyway.
        Returns the job: [the compile's future, (jitted fn, spans), runs so far]."""
        kind, wanted = key
        try:
            fn, spans = self._jit(kind, build, n_leaves, n_consts, wanted)
            lowered = fn.lower(*[deferred._struct(x.aval) if type(x) is deferred.Pending else x for x in flat])
            future = background.submit(lowered.compile)
        except BaseException:
            self._pending.pop(key, None)
            raise
        if future is None:
            future = concurrent.futures.Future()
            future.set_result(None)
        self._stats["compiled"] += 1
        job = self._pending[key] = [future, (fn, spans), 0]
        return job

    def _check(self, kind: Any, build: Callable, args: tuple, eager: Callable[[], Any] | None,
               apps: Sequence[deferred.Application | None], outs: Sequence[Any], spans: Sequence[tuple]) -> Any:
        """Checking mode: the compiled run's answers against the plain path's; then as `run` without the check."""
        what = f"{kind[0]} of a {len(self.program.steps)}-step program"
        for k, start, stop in spans:  # deferred values, against op by op
            checking.compare("compiled gradient's deferred values (deferred.py)", outs[start:stop],
                             deferred.compute_detached(apps[k]), what)
        for k, start, stop in spans:  # checked: the plain derivative below may read them
            apps[k].set(outs[start:stop])
        own = outs[:spans[0][1]] if spans else outs
        plain = eager() if eager is not None else self.transform(kind, build)(*args)
        checking.compare("executable cache (executables.py)", own, plain, what)
        return own

    def _jit(self, kind: Any, build: Callable, n_leaves: int, n_consts: int,
             wanted: tuple[int, ...]) -> tuple[Callable, list[tuple[int, int, int | None]]]:
        """`build(replay)` jitted over flat arrays, returning also the values of the steps in `wanted`, last; with,
        per wanted step, the span of its values (counted from the end)."""
        fn = self.transform(kind, build)
        values = None
        spans: list[tuple[int, int, int | None]] = []
        if wanted:
            first = [self.program.first_output]
            for s in self.program.steps:
                first.append(first[-1] + s.n_out)
            slots = [first[k] + i for k in wanted for i in range(self.program.steps[k].n_out)]
            values = replay_fn(self.program, outputs=slots)
            start = -len(slots)  # the step values come last: spans count from the end
            for k in wanted:
                stop = start + self.program.steps[k].n_out
                spans.append((k, start, stop or None))
                start = stop

        # Flat positional arrays: the cheapest call through JAX's C++ dispatch path.
        def flat_fn(*xs: Any) -> tuple[Any, ...]:
            leaves, consts = xs[:n_leaves], xs[n_leaves:n_leaves + n_consts]
            outs = fn(leaves, consts, xs[n_leaves + n_consts:])
            # The forward pass again, for the step values: XLA's CSE merges it with the one inside `fn`.
            return (*outs, *values(leaves, consts)) if values is not None else outs

        return jax.jit(flat_fn), spans

    def is_compiled(self, kind: Any) -> bool:
        return bool(self._compiled.get(kind))

    def executable(self, kind: Any, wanted: tuple[int, ...]) -> tuple[Callable, list] | None:
        """The compiled (jitted fn, spans) `run` calls for `kind` returning the step values `wanted`, if made."""
        return (self._compiled.get(kind) or {}).get(wanted)

    def summary(self) -> dict[str, Any]:
        """This structure's size, its op-by-op runs and its executables (tf.debugging.compile_stats)."""
        return {"steps": len(self.program.steps), "eager_runs": sum(self._runs.values()),
                "executables": sum(len(e) for e in self._compiled.values() if e),
                "kinds": sorted(str(kind[0]) for kind in self._compiled)}


class Cache:
    """A bounded LRU map from trace structure (program + input avals) to its Lowered function.

    Threads share it: the LRU order is changed under a lock (an OrderedDict's `move_to_end` and `popitem` racing
    with each other raise KeyError). Two threads meeting a new structure at once keep the first one's Lowered.
    """

    def __init__(self, maxsize: int = 512, name: str = "lowered programs"):
        self.name = name
        self.maxsize = maxsize
        self._items: collections.OrderedDict[Any, Lowered] = collections.OrderedDict()
        # What the compile policy decided, run by run: "compiled" (an executable made), "eager: size", "eager:
        # history", "eager: custom gradient" (runs without one). Cleared with the cache.
        self.stats: collections.Counter = collections.Counter()
        self._lock = threading.Lock()
        self._last: Any = None  # the key moved to the end last (the newest, unless a new key came after it)

    def get(self, program: Program, avals: Any) -> Lowered:
        key = (program, avals)
        lowered = self._items.get(key)
        if lowered is not None:
            if key != self._last:  # a loop asks for the same structure every step: it is the newest already
                with self._lock:
                    if key in self._items:
                        self._items.move_to_end(key)
                        self._last = key
            return lowered
        new = Lowered(program, self.stats)  # outside the lock: building the replay functions takes a while
        with self._lock:
            lowered = self._items.setdefault(key, new)
            self._items.move_to_end(key)  # another thread's, if it came first
            self._last = key
            if len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return lowered

    def clear(self) -> None:
        with self._lock:
            self._last = None
            self._items.clear()
            self.stats.clear()
            background.STATS.clear()

    def summaries(self) -> list[dict[str, Any]]:
        with self._lock:
            items = list(self._items.values())
        return [lowered.summary() for lowered in items]

    def __len__(self) -> int:
        return len(self._items)


CACHE = caches.register(Cache(name="lowered programs and their executables (executables.py)"))


def avals(values: Sequence[Any]) -> tuple[Any, ...]:
    """The abstract values (shapes, dtypes) of a program's inputs: part of its structure key."""
    return tuple(map(deferred.aval, values))
