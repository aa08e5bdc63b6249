"""RMSprop, Adagrad and AdamW in tapejax and in TensorFlow's Keras: the same gradient steps, the same trajectories."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

STEPS = 5


def _exponential_decay(tf):
    return tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)


CASES = [
    ("RMSprop", {}),
    ("RMSprop", {"learning_rate": 0.05, "epsilon": 1e-2}),
    ("RMSprop", {"learning_rate": 0.05, "rho": 0.8, "centered": True, "epsilon": 1e-2}),
    ("RMSprop", {"learning_rate": 0.05, "momentum": 0.9}),
    ("RMSprop", {"learning_rate": 0.05, "momentum": 0.5, "centered": True, "epsilon": 1e-3}),
    ("RMSprop", {"learning_rate": _exponential_decay, "momentum": 0.9, "centered": True}),
    ("Adagrad", {}),
    ("Adagrad", {"learning_rate": 0.1, "epsilon": 1e-2}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 0.0}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 2.0, "epsilon": 1e-3}),
    ("Adagrad", {"learning_rate": _exponential_decay}),
    ("AdamW", {}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.1, "epsilon": 1e-2}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.0}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.3, "beta_1": 0.5, "beta_2": 0.9}),
    ("AdamW", {"learning_rate": _exponential_decay, "weight_decay": 0.2}),
    # the base class's options, on every optimizer
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"learning_rate": 0.05, "weight_decay": 0.2}),
    ("Adam", {"learning_rate": 0.05, "clipnorm": 0.5}),
    ("RMSprop", {"learning_rate": 0.05, "clipvalue": 0.1}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "global_clipnorm": 0.3}),
]


def _trajectory(tf, name, kwargs, w0s, grads):
    kwargs = {k: v(tf) if callable(v) else v for k, v in kwargs.items()}
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    ws = [tf.Variable(w0) for w0 in w0s]
    out = [list(w0s)]
    for step in grads:
        optimizer.apply_gradients([(tf.constant(g), w) for g, w in zip(step, ws)])
        out.append([w.numpy().copy() for w in ws])
    return out, int(optimizer.iterations.numpy())


def _case_id(value):
    if isinstance(value, dict):
        return ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in value.items()) or "defaults"
    return str(value)


@pytest.mark.parametrize("name, kwargs", CASES, ids=_case_id)
def test_trajectories_agree_with_tensorflow(name, kwargs):
    rng = np.random.default_rng(7)
    w0s = [rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(2, 2)).astype(np.float32)]
    grads = [[rng.normal(size=w0.shape).astype(np.float32) for w0 in w0s] for _ in range(STEPS)]
    grads[0][0][1] = 0.0  # a zero gradient on a fresh slot (Adagrad from a zero accumulator: both give 0)
    expected, expected_iterations = _trajectory(tf_real, name, kwargs, w0s, grads)
    got, iterations = _trajectory(tapejax, name, kwargs, w0s, grads)
    assert iterations == expected_iterations == STEPS
    for i in range(len(w0s)):
        expected_path = np.stack([step[i] for step in expected])
        got_path = np.stack([step[i] for step in got])
        # Each step agrees to rtol 1e-5 of its own size: Keras's Adam rounds beta_2 to float32 in its bias
        # correction (`ops.cast` of a Python float), which moves each AdamW step by ~6e-6 of itself, so a
        # weight that the steps carry close to 0 is compared with the distance they moved it, not its value.
        distance = np.cumsum(np.abs(np.diff(expected_path, axis=0)), axis=0)
        tolerance = 1e-5 * (distance + np.abs(expected_path[1:])) + 1e-7
        error = np.abs(got_path[1:] - expected_path[1:])
        assert (error <= tolerance).all(), (f"variable {i}: max error {error.max()} at step "
                                            f"{np.unravel_index(np.argmax(error - tolerance), error.shape)[0] + 1}",
                                            got_path, expected_path)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "AdamW"])
def test_defaults_agree_with_tensorflow(name):
    def defaults(cls):
        parameters = inspect.signature(cls).parameters.values()
        return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}

    expected, got = defaults(getattr(tf_real.keras.optimizers, name)), defaults(getattr(tapejax.keras.optimizers, name))
    assert got.items() <= expected.items(), (got, expected)
    first = list(inspect.signature(getattr(tf_real.keras.optimizers, name)).parameters)
    ours = [p for p in inspect.signature(getattr(tapejax.keras.optimizers, name)).parameters if p != "kwargs"]
    assert first[:len(ours)] == ours  # positional order too: RMSprop(0.01, 0.95) means the same in both


def test_adamw_without_weight_decay_raises_like_tensorflow():
    with pytest.raises(ValueError, match="weight_decay"):
        tf_real.keras.optimizers.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="weight_decay"):
        tapejax.keras.optimizers.AdamW(weight_decay=None)


@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("AdamW", {}), ("SGD", {"momentum": 0.9}), ("RMSprop", {}),
                                          ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {})],
                         ids=_case_id)
def test_state_per_variable_is_kerass(name, kwargs):
    # Keras keeps only accumulators per variable (Adam: momentum and velocity), and bias-corrects every
    # variable with the optimizer's `iterations`: tapejax's state is the same, so a compiled step carries no
    # per-variable counters. (Keras also keeps the learning rate as a variable; tapejax computes it.)
    def per_variable(tf):
        variables = [tf.Variable([1.0, 2.0]), tf.Variable(3.0)]
        optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
        optimizer.build(variables)
        names = [v.name.split(":")[0].rsplit("/", 1)[-1] for v in optimizer.variables]
        return len([n for n in names if n not in ("iteration", "learning_rate")])

    assert per_variable(tapejax) == per_variable(tf_real)


def test_a_variable_skipped_for_a_step_is_bias_corrected_with_iterations_as_in_tensorflow():
    def trajectory(tf):
        a, b = tf.Variable([1.0, -2.0]), tf.Variable(0.5)
        optimizer = tf.keras.optimizers.Adam(0.1)
        for step in range(4):
            grads = [tf.constant([0.3, -0.1]), None if step < 2 else tf.constant(0.7)]
            optimizer.apply_gradients(zip(grads, [a, b]))
        return a.numpy(), b.numpy()

    for ours, theirs in zip(trajectory(tapejax), trajectory(tf_real)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


# -- bad input: TF's exception types, and nothing changed -----------------------------------------------------

OPTIMIZERS = [("SGD", {"learning_rate": 0.1}), ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
              ("Adam", {"learning_rate": 0.1}), ("RMSprop", {"learning_rate": 0.1}),
              ("Adagrad", {"learning_rate": 0.1}), ("AdamW", {"learning_rate": 0.1})]


def _variables(tf):
    return [tf.Variable([1.0, 2.0], name="a"), tf.Variable(3.0, name="b"), tf.Variable([[1.0, 2.0]], name="c")]


# Each case: the pairs given to apply_gradients, made from (tf, variables). Cases where Keras is silent give the
# same values in both; where Keras raises, tapejax raises the same type.
BAD_INPUTS = {
    "gradient (3,) for (2,) after a good pair": lambda tf, vs: [(tf.constant(1.0), vs[1]),
                                                              (tf.constant([1.0, 2.0, 3.0]), vs[0])],
    "gradient (2, 2) for (2,)": lambda tf, vs: [(tf.ones([2, 2]), vs[0])],
    "every gradient None": lambda tf, vs: [(None, v) for v in vs],
    "no pairs": lambda tf, vs: [],
    "a tensor for the variable": lambda tf, vs: [(tf.constant(1.0), tf.constant(3.0))],
    "a numpy array for the variable": lambda tf, vs: [(tf.constant([1.0, 2.0]), np.array([1.0, 2.0]))],
    "None for the variable": lambda tf, vs: [(tf.constant(1.0), vs[1]), (tf.constant(1.0), None)],
    "a flat list, not pairs": lambda tf, vs: [tf.constant(1.0), vs[1]],
    "a triple": lambda tf, vs: [(tf.constant(1.0), vs[1], 1.0)],
    "a one-element tuple": lambda tf, vs: [(tf.constant(1.0), vs[1]), (tf.constant(1.0),)],
    "a variable it was not built for": lambda tf, vs: [(tf.constant(1.0), tf.Variable(5.0))],
}

# Keras's Adam, RMSprop, Adagrad and AdamW broadcast a gradient of a broadcastable shape onto its variable
# silently (its SGD raises when assigning): tapejax raises InvalidArgumentError for all, before assigning
# (documented in Optimizer.apply_gradients).
BROADCASTING = {
    "gradient (1,) for (2,)": lambda tf, vs: [(tf.constant([1.0]), vs[0])],
    "scalar gradient for (2,)": lambda tf, vs: [(tf.constant(1.0), vs[1]), (tf.constant(2.0), vs[0])],
    "gradient (2,) for (1, 2), last": lambda tf, vs: [(tf.constant([1.0, 2.0]), vs[0]), (tf.constant([1.0, 2.0]), vs[2])],
}


def _attempt(tf, name, kwargs, case):
    variables = _variables(tf)
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    optimizer.build(variables)
    before = [v.numpy().copy() for v in [*variables, *optimizer.variables]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer.apply_gradients(case(tf, variables))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        error = e
    else:
        error = None
    after = [v.numpy() for v in [*variables, *optimizer.variables]]
    return error, before, after


def _same_type(got, expected):
    """tapejax raised what an `except` for TF's exception catches (tf.errors classes matched by name)."""
    if expected is None or got is None:
        return got is expected
    ours = getattr(tapejax.errors, type(expected).__name__, None) if type(expected).__module__.startswith(
        "tensorflow") else type(expected)
    return ours is not None and isinstance(got, ours)


@pytest.mark.parametrize("case", BAD_INPUTS, ids=str)
@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=_case_id)
def test_bad_input_raises_tensorflows_exception_and_changes_nothing(name, kwargs, case):
    expected, _, _ = _attempt(tf_real, name, kwargs, BAD_INPUTS[case])
    got, before, after = _attempt(tapejax, name, kwargs, BAD_INPUTS[case])
    assert expected is not None, "TensorFlow accepts this case: move it out of BAD_INPUTS"
    assert _same_type(got, expected), (got, expected)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", BROADCASTING, ids=str)
@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=_case_id)
def test_a_broadcastable_gradient_raises_for_every_optimizer(name, kwargs, case):
    expected, _, _ = _attempt(tf_real, name, kwargs, BROADCASTING[case])
    got, before, after = _attempt(tapejax, name, kwargs, BROADCASTING[case])
    assert isinstance(got, tapejax.errors.InvalidArgumentError), got
    assert expected is None or _same_type(got, expected), expected
    assert "shapes must be equal" in str(got)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)


# Inputs Keras accepts: the same values in both (gradients cast to the variable's dtype, None skipped with a
# warning, zip truncating mismatched lists, a variable listed twice updated twice).
ACCEPTED = {
    "float64 gradient": lambda tf, vs: [(tf.constant([0.5, -1.0], tf.float64), vs[0])],
    "int32 gradient": lambda tf, vs: [(tf.constant([1, -2]), vs[0]), (tf.constant(3), vs[1])],
    "python and numpy gradients": lambda tf, vs: [([0.5, -1.0], vs[0]), (np.float64(2.0), vs[1])],
    "some gradients None": lambda tf, vs: [(None, vs[0]), (tf.constant(1.0), vs[1]), (None, vs[2])],
    "zip of mismatched lists": lambda tf, vs: list(zip([tf.constant([1.0, 1.0])], vs)),
    "a variable listed twice": lambda tf, vs: [(tf.constant(1.0), vs[1]), (tf.constant([1.0, 1.0]), vs[0]),
                                               (tf.constant(-2.0), vs[1])],
}


@pytest.mark.parametrize("case", ACCEPTED, ids=str)
@pytest.mark.parametrize("name, kwargs", [*OPTIMIZERS, ("AdamW", {"learning_rate": 0.1, "weight_decay": 0.3})],
                         ids=_case_id)
def test_inputs_keras_accepts_give_its_values(name, kwargs, case):
    def run(tf):
        variables = _variables(tf)
        optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                optimizer.apply_gradients(ACCEPTED[case](tf, variables))
        said = sorted({str(w.message) for w in caught if "Gradients do not exist" in str(w.message)})
        return [v.numpy() for v in variables], int(optimizer.iterations.numpy()), said

    (got, got_iterations, got_said), (expected, expected_iterations, expected_said) = run(tapejax), run(tf_real)
    assert got_iterations == expected_iterations and got_said == expected_said
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# -- constraints, callable learning rates and schedules, as Keras applies and calls them ------------------------

def test_a_constraint_applies_after_the_optimizers_update_not_on_assign():
    def run(tf):
        non_negative = lambda x: tf.maximum(x, 0.0)  # noqa: E731
        w = tf.Variable([1.0, -2.0], constraint=non_negative)
        skipped = tf.Variable([-1.0], constraint=non_negative)
        seen = [w.numpy().copy()]  # the initial value is not constrained either
        w.assign([-5.0, 3.0])
        seen.append(w.numpy().copy())
        w.assign_add([0.0, -4.0])
        seen.append(w.numpy().copy())
        optimizer = tf.keras.optimizers.SGD(0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w), (None, skipped)])
        return [*seen, w.numpy(), skipped.numpy()]

    for got, expected in zip(run(tapejax), run(tf_real)):
        np.testing.assert_allclose(got, expected)


def test_a_constraint_applies_inside_tf_function_too():
    def run(tf):
        w = tf.Variable([1.0, -2.0], constraint=lambda x: tf.clip_by_value(x, -1.0, 1.0))
        optimizer = tf.keras.optimizers.Adam(0.5)
        step = tf.function(lambda g: optimizer.apply_gradients([(g, w)]))
        return [(step(tf.constant([-3.0, 3.0])), w.numpy())[1] for _ in range(3)]

    for got, expected in zip(run(tapejax), run(tf_real)):
        np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("name, kwargs", [("SGD", {}), ("Adam", {}), ("AdamW", {"weight_decay": 0.1}),
                                          ("SGD", {"weight_decay": 0.2, "momentum": 0.5})], ids=_case_id)
def test_a_callable_learning_rate_is_called_as_keras_calls_it(name, kwargs):
    def run(tf):
        calls = []

        def learning_rate():  # stateful: each call a smaller rate
            calls.append(len(calls))
            return 0.1 / (1 + len(calls))

        optimizer = getattr(tf.keras.optimizers, name)(learning_rate, **kwargs)
        counts = [len(calls)]
        variables = [tf.Variable([1.0, -1.0]), tf.Variable(2.0)]
        for step in range(3):
            optimizer.apply_gradients([(tf.constant([0.5, 0.5]), variables[0]), (tf.constant(1.0), variables[1])])
            counts.append(len(calls))
        return counts, [v.numpy() for v in variables]

    (got_counts, got), (expected_counts, expected) = run(tapejax), run(tf_real)
    assert got_counts == expected_counts
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5)


def test_a_schedule_sees_each_step_once_per_update():
    def run(tf):
        class Recorded(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __init__(self):
                self.steps = []

            def __call__(self, step):
                self.steps.append(int(step))
                return 0.1 / (1.0 + tf.cast(step, tf.float32))

        schedule = Recorded()
        optimizer = tf.keras.optimizers.SGD(schedule, momentum=0.5)
        constructed = list(schedule.steps)
        w = tf.Variable([1.0, 2.0])
        for _ in range(3):
            optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w)])
        return constructed, schedule.steps, w.numpy()

    (got_constructed, got_steps, got), (expected_constructed, expected_steps, expected) = run(tapejax), run(tf_real)
    assert got_constructed == expected_constructed == []
    assert got_steps == expected_steps
    np.testing.assert_allclose(got, expected, rtol=1e-5)
