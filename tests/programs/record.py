"""Records TensorFlow's output of each program in the corpus: `python tests/programs/record.py [NAME ...]`.

Runs each program with plain `python` (so `import tensorflow` is TensorFlow 2.21) and writes its standard output
to expected/NAME.txt; a program that fails stops the recording with its error. test_programs.py compares
tapejax's output with these files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from corpus import EXPECTED, HERE, PROGRAMS


def main(names: list[str]) -> int:
    EXPECTED.mkdir(exist_ok=True)
    for program in PROGRAMS:
        if names and program.name not in names:
            continue
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(HERE / f"{program.name}.py")], capture_output=True, text=True,
                              cwd=HERE, env={**os.environ, **dict(program.tf_env)})
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            print(f"{program.name}: exit code {done.returncode}", file=sys.stderr)
            return 1
        (EXPECTED / f"{program.name}.txt").write_text(done.stdout)
        print(f"{program.name}: {len(done.stdout.splitlines())} lines in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
