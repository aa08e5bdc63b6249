"""Seed-guide tests run twice: on tapejax (the module under test) and on tensorflow (which checks the test).

The ``tf`` fixture is parametrised over both modules; each parameter is skipped cleanly when its module does
not import. ``-k tensorflow`` or ``-k tapejax`` selects one side.

Every seed test is listed in ``NEEDS_ISSUE`` with the tapejax issue(s) that make it pass. While an issue is
not in ``LANDED_ISSUES``, its tests' tapejax runs are marked ``xfail(strict=True)``; once the feature works,
the strict marker turns the unexpected pass into a failure, which is the signal to add the issue number to
``LANDED_ISSUES`` (lead engineer: that set is the one line to edit as issues land).

Issues: #2 core (Tensor, Variable, ops, GradientTape.gradient, persistent, stop_recording, reset,
stop_gradient, nested tapes, None gradients, unconnected_gradients, watched_variables, int32 warnings);
#3 jacobian / batch_jacobian / hessian / ForwardAccumulator; #4 tf.custom_gradient and LookupError for ops
without a gradient; #5 tf.keras.layers (Dense, BatchNormalization) and tf.Module.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's C++ start-up chatter out of the logs

ENGINES = ("tapejax", "tensorflow")

ISSUE_TITLES = {
    2: "core Tensor/Variable/ops/GradientTape.gradient",
    3: "jacobian, batch_jacobian, hessian",
    4: "tf.custom_gradient and LookupError for ops without a gradient",
    5: "tf.keras.layers and tf.Module",
}

# Issues whose features tapejax has. Add an issue's number here when it lands.
LANDED_ISSUES: set[int] = {2, 3, 4, 5}  # 5: the layers the guides use (Dense, BatchNormalization), not all of #5

# test function name -> the tapejax issues it needs (all of them must have landed for it to pass).
NEEDS_ISSUE: dict[str, tuple[int, ...]] = {
    # test_intro_guide.py (guides 003 and 004)
    "test_gradient_of_a_variable": (2,),
    "test_structured_sources": (2,),
    "test_structured_sources_python_list_input": (2,),
    "test_keras_layer_gradients": (5,),
    "test_keras_layer_gradients_hand_dense": (2,),
    "test_trainable_and_watched_variables": (2,),
    "test_watch_a_constant": (2,),
    "test_watch_accessed_variables_false": (2,),
    "test_intermediate_results": (2,),
    "test_persistent_tape": (2,),
    "test_persistent_tape_intro_english": (2,),
    "test_non_scalar_targets": (2,),
    "test_control_flow": (2,),
    "test_unconnected_gives_none": (2,),
    "test_variable_replaced_by_tensor": (2,),
    "test_calculation_outside_tf": (2,),
    "test_integer_gradients_warn": (2,),
    "test_stateful_object": (2,),
    "test_no_gradient_registered": (4,),
    "test_unconnected_gradients_zero": (2,),
    # test_advanced_guide.py (guide 000)
    "test_stop_recording": (2,),
    "test_reset": (2,),
    "test_stop_gradient": (2,),
    "test_custom_gradient_clip_by_norm": (4,),
    "test_multiple_tapes": (2,),
    "test_higher_order_gradients": (2,),
    "test_input_gradient_regularization": (5,),
    "test_input_gradient_regularization_hand_dense": (2,),
    "test_jacobian_scalar_source": (3,),
    "test_jacobian_tensor_source": (3, 5),
    "test_jacobian_tensor_source_hand_dense": (3,),
    "test_hessian_newton_step": (3, 5),
    "test_hessian_newton_step_hand_dense": (3,),
    "test_batch_jacobian": (3, 5),
    "test_batch_jacobian_hand_dense": (3,),
    "test_batch_jacobian_logs_no_retracing": (3,),
    "test_batch_jacobian_with_batch_normalization": (3, 5),
    # test_custom_gradient_guide.py (guide 002)
    "test_tf_gradients_is_graph_only": (4,),
    "test_log1pexp_naive_gradient_is_nan": (2,),
    "test_log1pexp_custom_gradient": (4,),
    "test_custom_gradient_two_inputs": (4,),
    "test_custom_gradient_two_inputs_unwatched": (4,),
    "test_custom_gradient_with_variables": (4,),
    "test_custom_gradient_stop_gradient_around_shuffle": (4,),
    "test_shuffle_has_no_gradient": (4,),
}


def needs_issue(*numbers: int) -> pytest.MarkDecorator:
    """The strict xfail marker of a tapejax run whose features are still open in ``numbers``."""
    reason = "; ".join(f"tapejax issue {n}: {ISSUE_TITLES[n]}" for n in numbers)
    return pytest.mark.xfail(strict=True, reason=reason)


@pytest.fixture(params=ENGINES)
def tf(request: pytest.FixtureRequest):
    """The module under test: tapejax, or tensorflow as the oracle that validates the test itself."""
    module = pytest.importorskip(request.param)
    set_seed = getattr(getattr(module, "random", None), "set_seed", None)
    if set_seed is not None:  # reproducible runs where the module supports it; no test relies on the values
        set_seed(1234)
    return module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seeds_dir = Path(__file__).parent
    for item in items:  # a conftest's collection hook sees every collected item, not only this directory's
        if not item.path.is_relative_to(seeds_dir):
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is None or callspec.params.get("tf") != "tapejax":
            continue
        name = item.originalname
        if name not in NEEDS_ISSUE:
            raise pytest.UsageError(f"seed test {name} has no entry in NEEDS_ISSUE ({__file__})")
        still_open = tuple(n for n in NEEDS_ISSUE[name] if n not in LANDED_ISSUES)
        if still_open:
            item.add_marker(needs_issue(*still_open))
