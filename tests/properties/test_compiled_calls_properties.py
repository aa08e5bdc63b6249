"""Compiled eager calls cannot change answers (keras/compiled_calls.py): a random Sequential model of built-in layers,
called eagerly on a random sequence of batch sizes (more than a model's compiled signatures), in inference and
sometimes under a tape or with `training=True`, gives at every call what the op-by-op call gives, to float
tolerance, and leaves the variables as op by op leaves them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from test_gradient_properties import NO_EXPLAIN

import tapejax as tf
from tapejax.keras import compiled_calls

keras = tf.keras
layers = keras.layers

_LAYERS = {
    "dense": lambda: layers.Dense(5, activation="tanh"),
    "relu": lambda: layers.ReLU(),
    "leaky": lambda: layers.LeakyReLU(0.1),
    "batch_norm": lambda: layers.BatchNormalization(),
    "layer_norm": lambda: layers.LayerNormalization(),
    "dropout": lambda: layers.Dropout(0.3),
    "softmax": lambda: layers.Softmax(),
}


def _model(names: list[str], seed: int) -> keras.Model:
    model = keras.Sequential([keras.Input((4,)), *[_LAYERS[name]() for name in names], layers.Dense(3)])
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.normal(size=weight.shape).astype(np.float32) * 0.5 + (1.0 if "variance" in weight.path
                                                                              else 0.0) ** 2)
    return model


def _answers(model: keras.Model, calls: list[tuple[int, str]], plain: bool) -> list[np.ndarray]:
    compiled_calls._LOCAL.bypass = plain
    tf.random.set_seed(7)  # both runs draw the same dropout masks (a batch norm after dropout keeps their mean)
    try:
        rng = np.random.default_rng(7)
        answers = []
        for n, how in calls:
            x = tf.constant(rng.normal(size=(n, 4)).astype(np.float32))
            if how == "tape":
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = model(x, training=False)
                    loss = tf.reduce_sum(y * y)
                answers += [y.numpy(), tape.gradient(loss, x).numpy()]
            elif how == "train":
                answers.append(model(x, training=True).numpy())
            else:
                answers.append(model(x, training=False if how == "false" else None).numpy())
        return answers + [w.numpy() for w in model.weights]
    finally:
        compiled_calls._LOCAL.bypass = False


@settings(phases=NO_EXPLAIN, max_examples=15, deadline=None)
@given(names=st.lists(st.sampled_from(sorted(_LAYERS)), max_size=4), seed=st.integers(0, 2**16),
       calls=st.lists(st.tuples(st.integers(1, 7), st.sampled_from(["none", "false", "tape", "train"])),
                      min_size=1, max_size=8))
def test_compiled_calls_give_the_op_by_op_answers(names, seed, calls):
    got = _answers(_model(names, seed), calls, plain=False)
    expected = _answers(_model(names, seed), calls, plain=True)
    assert len(got) == len(expected)
    for k, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"answer {k} of {calls} through {names}")
