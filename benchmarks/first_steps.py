"""The first 20 iterations of a 50-op eager training step, with the compile in the background and without.

    python -m benchmarks.first_steps [--runs N]

Each run is a fresh process (so the step's structure is new and its compile real), modes interleaved so that a
noisy minute hits both alike. Iteration 1 (each op's kernel compiles, the same in both modes) is left out; the
figure is iterations 2-20 and the longest of them. With `TAPEJAX_BACKGROUND_COMPILE=0` the second iteration
compiles the step at once and stalls for it; with it on, the step runs op by op until its executable is ready.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _child(mode: str) -> None:
    import numpy as np  # noqa: PLC0415

    import tapejax as tf  # noqa: PLC0415

    tf.config.experimental_background_compile(mode == "on")
    rng = np.random.default_rng(0)
    ws = [tf.Variable(rng.normal(size=(64, 64)).astype(np.float32) * 0.2) for _ in range(8)]
    x = tf.constant(rng.normal(size=(32, 64)).astype(np.float32))

    def step() -> float:
        with tf.GradientTape() as tape:
            h = x
            for w in ws:  # 6 recorded ops per layer, 8 layers, and the loss: about 50 ops
                h = tf.matmul(h, w)
                h = tf.tanh(h) + 0.1 * h
                h = h * 0.9
            loss = tf.reduce_mean(h * h)
        grads = tape.gradient(loss, ws)
        for w, g in zip(ws, grads):
            w.assign_sub(0.01 * g)
        return float(loss.numpy())

    step()
    times = []
    for _ in range(19):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    tape = tf.debugging.compile_stats()["tape"]
    compiling = tape["eager_runs"].get("compiling", 0)
    first = f"iteration {compiling + 2}" if tape["background"]["compiles"] or mode == "off" else "none by 20"
    print(f"{mode}: iterations 2-20 {sum(times):.3f} s, longest {max(times) * 1000:.0f} ms, first compiled run: "
          f"{first}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", choices=("on", "off"))
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    for _ in range(args.runs):
        for mode in ("off", "on"):
            with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as f:
                load = f.read().split(" ")[0] or "?"
            out = subprocess.run([sys.executable, "-m", "benchmarks.first_steps", "--child", mode], env=env,
                                 cwd=REPO, capture_output=True, text=True, timeout=900)
            print(f"load {load} {out.stdout.strip() or out.stderr[-500:]}", flush=True)


if __name__ == "__main__":
    main()
