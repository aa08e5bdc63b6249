"""`Model.compile`, `fit`, `evaluate`, `predict` and the `*_on_batch` methods: Keras 3's training loop.

`Trainer` is a mixin of `tf.keras.Model`. `fit` runs `train_step(data)` once per batch inside one
`tf.function` (without AutoGraph, as Keras): forward pass, gradient, optimizer update and metric updates are one
compiled XLA executable, traced once per batch shape (so twice when the last batch is partial). Before the first
trace the model, the compiled metrics and the optimizer's slots are built (a forward pass on the first batch's
shapes, run abstractly as Keras's symbolic build runs it: eagerly only when the call needs values), so that the
step creates no variables and is not traced again.
`run_eagerly=True` runs the same step without compiling. Overriding `train_step`/`test_step` (with a
`GradientTape`, `self.compute_loss`, `self.metrics`, `self.optimizer`) works as in Keras's "customizing what
happens in fit" guide.

Under a `tf.distribute` strategy (the model made in `strategy.scope()`), each global batch is split over the
replicas and the step runs as `strategy.run` does: see distribution.py.

Differences from TensorFlow: `steps_per_execution` is accepted and ignored (each step is its own call). Timings
in the progress bar are tapejax's own.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax.keras import callbacks as callbacks_module
from tapejax.keras import distribution, host_inputs, optimizers, symbolic
from tapejax.keras.compile_utils import CompileLoss, CompileMetrics
from tapejax.keras.data_adapter import EpochIterator, class_weight_to_sample_weights, train_validation_split
from tapejax.keras.data_adapter import unpack_x_y_sample_weight
from tapejax.keras.metrics import Mean, Metric
from tapejax.keras.trainer_compat import Keras2Names


def _shapes(data: Any) -> list[tuple]:
    """The shapes of a batch's leaves (no values read)."""
    leaves = jax.tree_util.tree_leaves(data, is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable))
    return [tuple(v.shape) if hasattr(v, "shape") else np.shape(v) for v in leaves]


def _first_batch_size(x: Any) -> Any:
    leaf = next(v for v in jax.tree_util.tree_leaves(x, is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable))
                if v is not None)
    return tf.shape(leaf)[0]


def _concat(outputs: list[Any]) -> Any:
    return jax.tree_util.tree_map(lambda *parts: np.concatenate([np.asarray(p) for p in parts], axis=0), *outputs,
                                  is_leaf=lambda v: isinstance(v, tf.Tensor))


def _numpy(structure: Any) -> Any:
    return jax.tree_util.tree_map(lambda v: np.asarray(v), structure, is_leaf=lambda v: isinstance(v, tf.Tensor))


class Trainer(Keras2Names):
    """The training API of `tf.keras.Model` (see the module docstring)."""

    compiled = False
    optimizer: Any = None
    loss: Any = None
    _compile_loss: CompileLoss | None = None
    _compile_metrics: CompileMetrics | None = None
    _loss_tracker: Mean | None = None
    _run_eagerly = False
    _jit_compile = True
    stop_training = stop_evaluating = stop_predicting = False
    history: Any = None
    steps_per_execution = 1
    train_function = test_function = predict_function = None
    _distribute_strategy: Any = None

    @property
    def distribute_strategy(self) -> Any:
        """The strategy the model was made under (Keras: "Model must be created under scope of DistStrat it
        will be trained with"), else the one in effect now."""
        return self._distribute_strategy or tf.distribute.get_strategy()

    # -- compile -----------------------------------------------------------------------------------------

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, loss_weights: Any = None, metrics: Any = None,
                weighted_metrics: Any = None, run_eagerly: bool = False, steps_per_execution: int = 1,
                jit_compile: Any = "auto", auto_scale_loss: bool = True) -> None:
        """Configures training: an optimizer (an instance or a name such as 'adam'), a loss (an instance, a
        function or a name; a list or dict for several outputs), `loss_weights`, `metrics` and
        `weighted_metrics` (instances, functions or names; 'accuracy' picks its variant from the data)."""
        with self.distribute_strategy.scope():  # the optimizer and the loss tracker: mirrored variables
            self._compile(optimizer, loss, loss_weights, metrics, weighted_metrics, run_eagerly,
                          steps_per_execution, jit_compile)

    def _compile(self, optimizer: Any, loss: Any, loss_weights: Any, metrics: Any, weighted_metrics: Any,
                 run_eagerly: bool, steps_per_execution: int, jit_compile: Any) -> None:
        self.optimizer = optimizers.get(optimizer)
        # Keras's compile config, written to `.keras` files (saving_archive.py)
        self._compile_config = {"loss": loss, "loss_weights": loss_weights, "metrics": metrics,
                                "weighted_metrics": weighted_metrics, "run_eagerly": run_eagerly,
                                "steps_per_execution": steps_per_execution, "jit_compile": jit_compile}
        names = self._output_names()
        if loss is not None:
            self._compile_loss = CompileLoss(loss, loss_weights, output_names=names)
            self.loss = loss
        else:
            self._compile_loss = None
        self._compile_metrics = (CompileMetrics(metrics, weighted_metrics, output_names=names)
                                 if metrics is not None or weighted_metrics is not None else None)
        if jit_compile and run_eagerly and jit_compile != "auto":
            warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be True. Disabling "
                          "`jit_compile`.", stacklevel=2)
        self._jit_compile = not run_eagerly and jit_compile is not False
        self._run_eagerly = run_eagerly
        self.stop_training = False
        self.compiled = True
        self._loss_tracker = Mean(name="loss")
        self.steps_per_execution = steps_per_execution
        self.train_function = self.test_function = self.predict_function = None

    def _output_names(self) -> list[str] | None:
        outputs = getattr(self, "_output_tensors", None) if "_output_tensors" in vars(self) else None
        return [t._keras_history[0].name for t in outputs] if outputs else None

    @property
    def run_eagerly(self) -> bool:
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value: bool) -> None:
        self._run_eagerly = bool(value)
        self.train_function = self.test_function = self.predict_function = None

    @property
    def jit_compile(self) -> bool:
        return self._jit_compile

    @jit_compile.setter
    def jit_compile(self, value: bool) -> None:
        self._jit_compile = bool(value)

    # -- metrics -----------------------------------------------------------------------------------------

    def _tracked_metrics(self) -> list[Metric]:
        """The Metrics held by the model's own attributes (Keras tracks them as `_metrics`), in assignment order."""
        own = (self._loss_tracker, self._compile_metrics)
        found: list[Metric] = []
        for value in vars(self).values():
            for item in value if isinstance(value, list | tuple) else [value]:
                if isinstance(item, Metric) and not any(item is o for o in own) and \
                        not any(item is f for f in found):
                    found.append(item)
        return found

    @property
    def metrics(self) -> list[Metric]:
        """The loss tracker ('loss'), the compiled metrics ('compile_metrics'), then the model's own metrics."""
        found: list[Metric] = []
        if self.compiled:
            found.append(self._loss_tracker)
            if self._compile_metrics is not None:
                found.append(self._compile_metrics)
        return found + self._tracked_metrics()

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    @property
    def metrics_variables(self) -> list[tf.Variable]:
        return [v for m in self.metrics for v in m.variables]

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self) -> dict[str, Any]:
        """Each metric's result by name; a metric whose result is a dict (compile_metrics) adds its entries."""
        results: dict[str, Any] = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                results.update(result)
            else:
                results[metric.name] = result
        return results

    # -- the steps ---------------------------------------------------------------------------------------

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                     training: bool = True) -> Any:
        """The compiled loss of (y, y_pred) plus the losses the layers added (`self.losses`)."""
        losses = []
        if self._compile_loss is not None:
            loss = self._compile_loss(y, y_pred, sample_weight)
            if loss is not None:
                losses.append(loss)
        for loss in self.losses:
            loss = tf.convert_to_tensor(loss)
            loss = tf.reduce_sum(loss if loss.dtype.is_floating else tf.cast(loss, tf.float32))
            losses.append(distribution.scale_loss(loss))  # the replicas' gradients are summed
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return losses[0] if len(losses) == 1 else tf.add_n(losses)

    def _compute_loss(self, x: Any, y: Any, y_pred: Any, sample_weight: Any, training: bool) -> Any:
        if "training" in inspect.signature(self.compute_loss).parameters:
            return self.compute_loss(x, y, y_pred, sample_weight, training=training)
        return self.compute_loss(x, y, y_pred, sample_weight)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict[str, Any]:
        """Updates the compiled metrics and returns every metric's result (`get_metrics_result`)."""
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _forward(self, x: Any, training: bool) -> Any:
        from tapejax.keras.layers import _takes_training
        return self(x, training=training) if _takes_training(self) else self(x)

    def train_step(self, data: Any) -> dict[str, Any]:
        """One step of `fit`: the loss under a GradientTape, its gradients applied by `self.optimizer`, the
        loss tracker and metrics updated; returns the logs."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            y_pred = self._forward(x, training=True)
            loss = self._compute_loss(x, y, y_pred, sample_weight, training=True)
        self._loss_tracker.update_state(distribution.unscale_loss(loss), sample_weight=_first_batch_size(x))
        trainable = self.trainable_weights
        if trainable:
            self.optimizer.apply_gradients(zip(tape.gradient(loss, trainable), trainable))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data: Any) -> dict[str, Any]:
        """One step of `evaluate`: the loss and metrics of a forward pass in inference mode."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self._forward(x, training=False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(distribution.unscale_loss(loss), sample_weight=_first_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data: Any) -> Any:
        """One step of `predict`: the model's outputs in inference mode."""
        x, _, _ = unpack_x_y_sample_weight(data)
        return self._forward(x, training=False)

    def _compiled(self, step: Any, reduction: str = "mean") -> Any:
        strategy = self.distribute_strategy
        if strategy.num_replicas_in_sync > 1:
            return self._distributed(strategy, step, reduction)
        if self._run_eagerly:  # the step still sees tensors, as in Keras (numpy batches are converted)
            return lambda data: step(jax.tree_util.tree_map(
                lambda v: tf.convert_to_tensor(v) if isinstance(v, np.ndarray) else v, data,
                is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable)))
        # The model, optimizer and metrics go in as a static argument: tf.function finds the variables they
        # hold before its first trace (instead of tracing twice to discover them).
        holders = (self, self.optimizer, *self.metrics)
        # reduce_retracing, as Keras on TF: a step traced for one batch size and called with another is traced
        # again once, for an unknown size
        compiled = tf.function(lambda data, _: step(data), autograph=False, reduce_retracing=True)

        def given_step(data: Any, outputs: list[Any], statics: tuple[Any, ...]) -> Any:
            with host_inputs.given(statics[0], outputs):
                return step(data)

        # a text model's string-reading layers run before the step (host_inputs.py): one trace for every batch
        with_given = tf.function(given_step, autograph=False, reduce_retracing=True)

        def run(data: Any) -> Any:
            split = host_inputs.split(self, data)
            if split is None:
                return compiled(data, holders)
            data, layers, outputs = split
            return with_given(data, outputs, (layers, holders))

        def batch_unknown(unknown: bool) -> None:
            compiled._batch_relaxed = with_given._batch_relaxed = unknown

        def expect(data: Any) -> None:  # a batch to come: a new size's compile starts with the current one's
            if not host_inputs.has_strings(data):
                compiled.expect(data, holders)

        run.compiled, run.compiled_with_given, run.batch_unknown = compiled, with_given, batch_unknown
        run.expect = expect
        return run

    @staticmethod
    def _prepare(function: Any, iterator: EpochIterator | None = None) -> None:
        """Before the steps of a fit, evaluate or predict (`iterator`) or of a `*_on_batch` call (none): the step is
        traced as Keras on TF traces it, for the data's element_spec (the batch dimension unknown when the iterator
        says so: one trace serves the full batches and the partial last one, compiled per size)."""
        batch_unknown = getattr(function, "batch_unknown", None)
        if batch_unknown is not None:
            batch_unknown(iterator is not None and iterator.batch_unknown)

    def _distributed(self, strategy: Any, step: Any, reduction: str) -> Any:
        """`step` on every replica of `strategy` (eagerly, `strategy.run` compiles its one shard_map itself)."""
        replicated = distribution.distributed_step(strategy, step, reduction)
        compiled = None if self._run_eagerly else tf.function(lambda data, _: replicated(data), autograph=False)
        holders = (self, self.optimizer, *self.metrics)

        def run(data: Any) -> Any:
            data = distribution.split_batch(strategy, data)
            return replicated(data) if compiled is None else compiled(data, holders)

        return run

    def make_train_function(self, force: bool = False) -> Any:
        if self.train_function is None or force:
            self.train_function = self._compiled(self.train_step)
        return self.train_function

    def make_test_function(self, force: bool = False) -> Any:
        if self.test_function is None or force:
            self.test_function = self._compiled(self.test_step)
        return self.test_function

    def make_predict_function(self, force: bool = False) -> Any:
        if self.predict_function is None or force:
            self.predict_function = self._compiled(self.predict_step, "concat")
        return self.predict_function

    def _assert_compile_called(self, method: str) -> None:
        if not self.compiled:
            raise ValueError("You must call `compile()` before using the model.")

    def _build_for_data(self, data: Any, training: bool) -> None:
        """Builds what the compiled step must not create: the model (a forward pass on the first batch), the
        compiled loss and metrics (their names depend on the data), the optimizer's slots."""
        with self.distribute_strategy.scope():  # what is made here is mirrored, as Keras's symbolic build
            self._build_in_scope(data, training)

    def _build_in_scope(self, data: Any, training: bool) -> None:
        x, y, _ = unpack_x_y_sample_weight(data)
        needs = (not self.built or (self._compile_metrics is not None and not self._compile_metrics.built)
                 or (self._compile_loss is not None and self._compile_loss._losses is None))
        if needs:
            try:
                y_pred = self._output_spec(x)
            except Exception:  # a call that needs values: run it on the batch
                try:
                    y_pred = self._forward(x, training=False)
                except Exception:  # a model without a usable call (a GAN's train_step calls its parts): Keras too
                    y_pred = None
            if y_pred is not None and y is not None:
                if self._compile_loss is not None and self._compile_loss._losses is None:
                    self._compile_loss.build(y, y_pred)
                if self._compile_metrics is not None and not self._compile_metrics.built:
                    self._compile_metrics.build(y, y_pred)
        if training and self.optimizer is not None:
            if getattr(self.optimizer, "_known", None) is None and self.trainable_variables:
                self.optimizer.build(self.trainable_variables)
            if hasattr(self.optimizer, "_learning_rate_variable"):
                self.optimizer._learning_rate_variable()

    def _output_spec(self, x: Any) -> Any:
        """The model's outputs for the batch `x` as shapes and dtypes (jax.ShapeDtypeStruct leaves), found without
        computing them, as Keras builds a model symbolically: an eager forward pass would compile each of its ops
        for the batch's shapes, only for the build to read their shapes."""
        given: Any = contextlib.nullcontext()
        split = host_inputs.split(self, (x,))
        if split is not None:  # text models: their string-reading layers run first, as in the compiled step
            (x, *_), layers, outputs = split
            given = host_inputs.given(layers, outputs)

        def numeric(v: Any) -> bool:
            if isinstance(v, np.ndarray):
                return v.dtype.kind in "biufc"
            return isinstance(v, tf.Tensor | tf.Variable) and v.dtype != tf.string

        leaves = jax.tree_util.tree_leaves(x, is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable))
        arrays = [jax.ShapeDtypeStruct(tuple(v.shape), v.dtype if isinstance(v, np.ndarray) else v.dtype.as_numpy_dtype)
                  for v in leaves if numeric(v)]
        with given:
            treedef, flat = symbolic.abstract_run(lambda inputs: self._forward(inputs, training=False), x, arrays,
                                                  is_symbol=numeric, fold_constants=True)
        return jax.tree_util.tree_unflatten(treedef, flat)

    # -- fit, evaluate, predict --------------------------------------------------------------------------

    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0, validation_data: Any = None,
            shuffle: Any = True, class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: int | None = None, validation_steps: int | None = None,
            validation_batch_size: int | None = None, validation_freq: int = 1) -> callbacks_module.History:
        """Trains for `epochs` epochs and returns the History (`history.history["loss"]`, ...)."""
        self._assert_compile_called("fit")
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = train_validation_split((x, y, sample_weight), validation_split)
        if validation_data is not None:
            val_x, val_y, val_sample_weight = unpack_x_y_sample_weight(validation_data)
        iterator = EpochIterator(x, y, sample_weight, batch_size, steps_per_epoch, shuffle, class_weight)
        callbacks = self._callback_list(callbacks, verbose, epochs, iterator.num_batches, add_history=True)
        self.stop_training = False
        callbacks.on_train_begin()
        training_logs, logs = None, {}
        prepared = False
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for step, data, upcoming in iterator.ahead() if epoch == initial_epoch else iterator.without_ahead():
                if self.train_function is None:
                    self._build_for_data(data, training=True)
                    self.make_train_function()
                if not prepared:
                    self._prepare(self.train_function, iterator)
                    prepared = True
                expect = getattr(self.train_function, "expect", None)
                if upcoming is not None and expect is not None and _shapes(upcoming) != _shapes(data):
                    expect(upcoming)  # the partial last batch: its step compiles while this one's does
                callbacks.on_train_batch_begin(step)
                logs = self.train_function(data)
                callbacks.on_train_batch_end(step, logs)
                if self.stop_training:
                    break
            if iterator.ran_out:
                break
            epoch_logs = dict(self._metrics_or_logs(logs))
            if validation_data is not None and self._should_eval(epoch, validation_freq):
                val_logs = self.evaluate(val_x, val_y, sample_weight=val_sample_weight,
                                         batch_size=validation_batch_size or batch_size, steps=validation_steps,
                                         callbacks=callbacks, return_dict=True)
                epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        callbacks.on_train_end(logs=training_logs)
        return self.history

    @staticmethod
    def _should_eval(epoch: int, validation_freq: Any) -> bool:
        if isinstance(validation_freq, int):
            return (epoch + 1) % validation_freq == 0
        if isinstance(validation_freq, list):
            return epoch + 1 in validation_freq
        raise ValueError("Expected `validation_freq` to be a list or int. Received: "
                         f"validation_freq={validation_freq} of the type {type(validation_freq)}.")

    def _metrics_or_logs(self, logs: Any) -> Any:
        """The metrics' results, or the last step's logs when a custom step returns other keys (as Keras)."""
        results = self.get_metrics_result()
        return results if isinstance(logs, dict) and set(logs) == set(results) else logs

    def _callback_list(self, callbacks: Any, verbose: Any, epochs: int, steps: int | None,
                       add_history: bool = False) -> callbacks_module.CallbackList:
        if isinstance(callbacks, callbacks_module.CallbackList):
            return callbacks
        return callbacks_module.CallbackList(callbacks, add_history=add_history, add_progbar=verbose != 0,
                                             model=self, verbose=verbose, epochs=epochs, steps=steps)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None, verbose: Any = "auto",
                 sample_weight: Any = None, steps: int | None = None, callbacks: Any = None,
                 return_dict: bool = False, **kwargs: Any) -> Any:
        """The loss and metrics over the data: a scalar (loss alone), a list in `metrics_names` order, or a
        dict (`return_dict=True`)."""
        self._assert_compile_called("evaluate")
        if kwargs:
            raise ValueError(f"Arguments not recognized: {kwargs}")
        iterator = EpochIterator(x, y, sample_weight, batch_size, steps, shuffle=False)
        callbacks = self._callback_list(callbacks, verbose, 1, iterator.num_batches)
        self.stop_evaluating = False
        callbacks.on_test_begin()
        logs: Any = {}
        self.reset_metrics()
        for step, data in iterator:
            if self.test_function is None:
                self._build_for_data(data, training=False)
                self.make_test_function()
            if step == 0:
                self._prepare(self.test_function, iterator)
            callbacks.on_test_batch_begin(step)
            logs = self.test_function(data)
            callbacks.on_test_batch_end(step, logs)
            if self.stop_evaluating:
                break
        logs = callbacks_module.pythonify_logs(self._metrics_or_logs(logs))
        callbacks.on_test_end(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def _flatten_metrics_in_order(self, logs: dict[str, Any]) -> Any:
        names: list[str] = []
        for metric in self.metrics:
            if isinstance(metric, CompileMetrics):
                names += list(metric.result())
            else:
                names.append(metric.name)
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto", steps: int | None = None,
                callbacks: Any = None) -> Any:
        """The model's outputs for every batch of `x`, concatenated as NumPy arrays."""
        iterator = EpochIterator(x, None, None, batch_size, steps, shuffle=False)
        callbacks = self._callback_list(callbacks, verbose, 1, iterator.num_batches)
        self.stop_predicting = False
        callbacks.on_predict_begin()
        outputs: list[Any] = []
        for step, data in iterator:
            if self.predict_function is None:
                if not self.built:
                    with self.distribute_strategy.scope():
                        self._forward(unpack_x_y_sample_weight(data)[0], training=False)
                self.make_predict_function()
            if step == 0:
                self._prepare(self.predict_function, iterator)
            callbacks.on_predict_batch_begin(step)
            batch_outputs = self.predict_function(data)
            outputs.append(batch_outputs)
            callbacks.on_predict_batch_end(step, {"outputs": batch_outputs})
            if self.stop_predicting:
                break
        callbacks.on_predict_end()
        if not outputs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). Please use "
                             "`Model.compile(..., run_eagerly=True)`, or `tf.config.run_functions_eagerly(True)`"
                             " for more information of where went wrong, or file a issue/bug to `tf.keras`.")
        return _concat(outputs)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, class_weight: Any = None,
                       return_dict: bool = False) -> Any:
        """One training step on one batch; the logs of that batch alone (the metrics are reset first)."""
        self._assert_compile_called("train_on_batch")
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError("Arguments `sample_weight` and `class_weight` cannot be specified at the same "
                                 f"time. Received: sample_weight={sample_weight}, class_weight={class_weight}")
            sample_weight = class_weight_to_sample_weights(y, class_weight)
        data = (x, y, sample_weight)
        if self.train_function is None:
            self._build_for_data(data, training=True)
        self.reset_metrics()
        function = self.make_train_function()
        self._prepare(function)
        logs = callbacks_module.pythonify_logs(function(data))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, return_dict: bool = False) -> Any:
        """The loss and metrics of one batch."""
        self._assert_compile_called("test_on_batch")
        data = (x, y, sample_weight)
        if self.test_function is None:
            self._build_for_data(data, training=False)
        self.reset_metrics()
        function = self.make_test_function()
        self._prepare(function)
        logs = callbacks_module.pythonify_logs(function(data))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x: Any) -> Any:
        """The model's outputs for one batch, as NumPy arrays."""
        if self.predict_function is None and not self.built:
            with self.distribute_strategy.scope():
                self._forward(x, training=False)
        function = self.make_predict_function()
        self._prepare(function)
        return _numpy(function((x,)))
