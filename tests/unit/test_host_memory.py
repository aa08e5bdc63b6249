"""Freed host memory is reused (tapejax/_src/host_memory.py): a repeated step's buffers are not fresh pages.

Counted in page faults (the kernel's count of pages first touched), not timed: each check runs in its own process,
since glibc's settings must be made before JAX starts its threads.
"""

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
REPEATED_STEP = """
import resource
import tapejax as tf
from tapejax._src import host_memory
x = tf.random.normal([64, 30, 30, 32], seed=1)
w = tf.Variable(tf.random.normal([3, 3, 32, 64], seed=2))

@tf.function
def step():
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.nn.relu(tf.nn.conv2d(x, w, 1, "VALID")))
    return tape.gradient(loss, [x, w])

step()
faults = []
for _ in range(16):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    [g.numpy() for g in step()]
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(host_memory.KEPT, min(faults))
"""


def _run(keep: str) -> tuple[str, int]:
    env = {**os.environ, "TAPEJAX_KEEP_FREED_MEMORY": keep,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", REPEATED_STEP], capture_output=True, text=True, env=env,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    kept, faults = done.stdout.split()[-2:]
    return kept, int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"),
                    reason="glibc's malloc only")
def test_a_repeated_step_reuses_the_memory_its_last_run_freed():
    kept, faults = _run("1")
    released, faults_released = _run("0")
    assert (kept, released) == ("True", "False")
    # each run of the step writes its buffers on fresh pages unless they are kept (about 37,600 faults a run on
    # the 2-core CI machine; kept: about 3,100 once every thread's heap has grown to what the step needs, which
    # took 3 to 6 runs, more under load)
    assert faults_released > 5000
    assert faults < faults_released / 3
