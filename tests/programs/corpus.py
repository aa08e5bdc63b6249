"""The corpus of real programs (tests/programs/*.py) and how each one's output is compared with TensorFlow's.

Each program prints what its source prints; expected/NAME.txt is TensorFlow 2.21's output, written by record.py.
`same_output` compares an output with it: the text between numbers exactly (whitespace aside, since numpy pads
columns by the width of their numbers), and the numbers to a relative tolerance, because the two engines' float32
kernels round differently in the last bits and a training run carries that along. Keras's progress bars are
compared as they end (`_final_progress`), their wall times masked.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"


@dataclass(frozen=True)
class Program:
    name: str
    rtol: float = 1e-4
    atol: float = 1e-6  # values that should be 0 (a gradient, an accuracy difference) round to tiny numbers
    mask: str | None = None  # a regex whose numbers are not compared (wall times)
    blocked_by: str | None = None  # a missing tapejax feature: the test is an expected failure until it lands
    # Environment variables record.py runs TensorFlow with: TF_ENABLE_ONEDNN_OPTS=0 records TF's reference
    # (Eigen) kernels for a program whose run is so sensitive that oneDNN's rounding alone changes its output
    # beyond any useful tolerance.
    tf_env: tuple[tuple[str, str], ...] = ()


PROGRAMS = (
    Program("basic_training_loops"),
    Program("custom_training_walkthrough"),
    Program("actor_critic_cartpole"),
    # 100 Adam steps of reinforcement learning: the engines' last-bit differences in float32 grow to ~1e-4.
    Program("ddpg_pendulum", rtol=1e-3),
    Program("writing_a_training_loop_from_scratch", mask=r"Time taken: [0-9.]+s"),
    Program("deepdream"),
    Program("data_guide"),
    # The engines differ from the first steps in the last bits (TF's oneDNN kernels: without them TF's figures
    # match tapejax's to 3e-5), and the two tapes' adversarial updates carry it to ~5e-4 in 10 steps.
    Program("dcgan", rtol=1e-3, mask=r"Time for epoch \d+ is [0-9.e-]+ sec"),
    Program("vae", rtol=1e-3),
    Program("deep_q_network_breakout"),
    # A U-Net trained for an epoch: its smallest printed figure, the mean probability of the rare class (0.0085),
    # is 0.00849 against TF's 0.00848 since the packages of 2026-11-28 (jax/jaxlib 0.10.2): the same tapejax
    # commit printed TF's figure to 1e-4 on the packages of 2026-11-25, so XLA's convolution rounding moved it.
    Program("oxford_pets_image_segmentation", rtol=2e-3, tf_env=(("TF_ENABLE_ONEDNN_OPTS", "0"),)),
    Program("knowledge_distillation"),
    Program("timeseries_classification_from_scratch"),
    # The gradient of an Embedding is an IndexedSlices with a row per occurrence of a token, and Keras 3's Adam
    # squares each row before summing them (v for a token used twice adds g1^2 + g2^2, not (g1 + g2)^2).
    Program("text_classification_with_transformer"),
    Program("data_guide_windows"),
    # It prints only wall times (its standard output: `benchmark`'s lines; tf.print writes to standard error).
    Program("data_performance", mask=r"Execution time: [0-9.e-]+"),
    Program("text_classification_rnn"),
    # Keras's progress bar rounds the losses to 4 digits: one of them lands on either side of a rounding boundary
    # (val_loss 0.1229 in TF, 0.1230 here: the unrounded histories printed below agree to 1.2e-4).
    Program("simple_audio", rtol=1e-3),
)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STEP_TIME = re.compile(r"\b\d+(?:\.\d+)?(?:ms|us|s)(?:/step)?\b")


def _final_progress(text: str) -> str:
    """Keras's progress bars as a terminal shows them at the end. A bar redraws itself after a carriage return (and
    backspaces) as often as time allows, so the number of states printed differs between runs, and a subprocess
    read as text turns each carriage return into a new line: a bar line replaces the bar line just before it (a
    finished bar ends with a new line, and the next one starts with a carriage return, so a blank line separates
    them). Colours are dropped and wall times ("0s", "9ms/step") masked."""
    kept: list[str] = []
    for line in re.split(r"\r\n|\r|\n", text):
        line = _ANSI.sub("", line).replace("\x08", "")
        if "\u2501" in line:  # the bar's character
            if kept and "\u2501" in kept[-1]:
                kept.pop()
            line = _STEP_TIME.sub("#", line)
        kept.append(line)
    return "\n".join(kept)


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def _tokens(text: str, mask: str | None) -> tuple[list[str], list[float]]:
    text = _final_progress(text)
    if mask:
        text = re.sub(mask, lambda m: _NUMBER.sub("#", m.group(0)), text)
    words = [re.sub(r"\s+", "", part) for part in _NUMBER.split(text)]
    return words, [float(x) for x in _NUMBER.findall(text)]


def same_output(program: Program, actual: str, expected: str) -> str | None:
    """None if `actual` matches `expected`, else a sentence saying where it first differs."""
    actual_words, actual_numbers = _tokens(actual, program.mask)
    expected_words, expected_numbers = _tokens(expected, program.mask)
    if actual_words != expected_words:
        first = next((i for i, (a, e) in enumerate(zip(actual_words, expected_words)) if a != e),
                     min(len(actual_words), len(expected_words)))
        got = actual_words[first] if first < len(actual_words) else "<end>"
        want = expected_words[first] if first < len(expected_words) else "<end>"
        return f"the text differs at segment {first}: got {got!r}, TensorFlow printed {want!r}"
    for index, (a, e) in enumerate(zip(actual_numbers, expected_numbers)):
        if not (math.isclose(a, e, rel_tol=program.rtol, abs_tol=program.atol) or (math.isnan(a) and math.isnan(e))):
            return f"number {index} differs: got {a!r}, TensorFlow printed {e!r} (rtol {program.rtol})"
    return None
