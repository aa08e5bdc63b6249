"""What `Model.compile` turns its `loss`, `loss_weights`, `metrics` and `weighted_metrics` into, as Keras 3 does.

`CompileLoss` sums the (weighted) loss of each output; `CompileMetrics` is one metric, named "compile_metrics",
whose result is a dict of the compiled metrics' results. Both resolve what depends on the data on their first
call (`build`): "accuracy" and "crossentropy" pick the binary, sparse or categorical variant from the shapes of
`y_true` and `y_pred`, as Keras picks them.
"""

from __future__ import annotations

from typing import Any

import jax

import tapejax as tf
from tapejax.keras import losses as losses_module
from tapejax.keras import metrics as metrics_module


def _flat(structure: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda x: x is None or isinstance(x, tf.Tensor | tf.Variable))


def _binary_or_sparse(y_true: Any, y_pred: Any) -> tuple[bool, bool]:
    t_rank, p_rank = len(y_true.shape), len(y_pred.shape)
    t_last = y_true.shape[-1] if t_rank else None
    p_last = y_pred.shape[-1] if p_rank else None
    return p_last == 1, t_rank < p_rank or (t_last == 1 and p_last is not None and p_last > 1)


def get_metric(identifier: Any, y_true: Any, y_pred: Any) -> metrics_module.Metric:
    """A Metric for a compile() entry: 'accuracy'/'acc' by the shapes, other names and functions wrapped in a
    MeanMetricWrapper; the metric is named as given (a function by its name)."""
    if identifier is None:
        raise ValueError("Expected metric, received `None`")
    if str(identifier).lower() in ("accuracy", "acc"):
        binary, sparse = _binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if binary else metrics_module.SparseCategoricalAccuracy if sparse
               else metrics_module.CategoricalAccuracy)
        metric = cls(name=str(identifier))
    else:
        metric = metrics_module.get(identifier)
    if isinstance(identifier, str):
        name = identifier
    elif isinstance(metric, metrics_module.Metric):
        name = metric.name
    else:
        name = getattr(metric, "__name__", type(metric).__name__)
    if not isinstance(metric, metrics_module.Metric):
        metric = metrics_module.MeanMetricWrapper(metric)
    metric.name = name
    return metric


def get_loss(identifier: Any, y_true: Any, y_pred: Any) -> Any:
    """A Loss for a compile() entry; 'crossentropy'/'ce' by the shapes; a function becomes a
    LossFunctionWrapper (reduction "sum_over_batch_size")."""
    if identifier is None:
        return None
    if str(identifier).lower() in ("crossentropy", "ce"):
        binary, sparse = _binary_or_sparse(y_true, y_pred)
        identifier = ("binary_crossentropy" if binary else "sparse_categorical_crossentropy" if sparse
                      else "categorical_crossentropy")
    loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        loss = losses_module.LossFunctionWrapper(loss, name=getattr(loss, "__name__", None))
    return loss


def _per_output(config: Any, outputs: list[Any], names: list[str] | None, what: str) -> list[Any]:
    """The config of each output: one shared by all (single output), a list in output order, or a dict by name."""
    if isinstance(config, dict) and names is not None and set(config) <= set(names):
        return [config.get(name) for name in names]
    if isinstance(config, list | tuple) and len(outputs) > 1:
        if len(config) != len(outputs):
            raise ValueError(f"For a model with {len(outputs)} outputs, `{what}` must have {len(outputs)} entries; "
                             f"received {what}={config}")
        return list(config)
    if len(outputs) > 1 and what == "loss":
        return [config] * len(outputs)
    return [config] + [None] * (len(outputs) - 1)


class CompileLoss:
    """The compiled loss: the sum over outputs of `loss_weight * loss(y_true, y_pred, sample_weight)`."""

    def __init__(self, loss: Any, loss_weights: Any = None, output_names: list[str] | None = None):
        self._config, self._weights_config, self.output_names = loss, loss_weights, output_names
        self._losses: list[Any] | None = None
        self._weights: list[float] = []
        self.metrics: list[metrics_module.Metric] = []

    def build(self, y_true: Any, y_pred: Any) -> None:
        outputs, labels = _flat(y_pred), _flat(y_true)
        configs = _per_output(self._config, outputs, self.output_names, "loss")
        self._losses = [get_loss(c, t, p) for c, t, p in zip(configs, labels, outputs)]
        weights = self._weights_config
        if weights is None:
            self._weights = [1.0] * len(outputs)
        elif isinstance(weights, dict):
            self._weights = [weights.get(name, 1.0) for name in self.output_names or []]
        else:
            self._weights = [float(w) for w in (weights if isinstance(weights, list | tuple) else [weights])]

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if self._losses is None:
            self.build(y_true, y_pred)
        labels, outputs = _flat(y_true), _flat(y_pred)
        weights = _flat(sample_weight) if sample_weight is not None else [None]
        if len(weights) == 1:
            weights = weights * len(outputs)
        total = None
        for loss, weight, t, p, w in zip(self._losses, self._weights, labels, outputs, weights):
            if loss is None or t is None:
                continue
            value = loss(t, p, w)
            value = value * tf.cast(weight, value.dtype) if weight != 1.0 else value
            total = value if total is None else total + value
        return total


class CompileMetrics(metrics_module.Metric):
    """The compiled metrics ("compile_metrics"): `result()` is a dict, one entry per metric (prefixed with the
    output's name when the model has several outputs), metrics before weighted metrics."""

    def __init__(self, metrics: Any, weighted_metrics: Any = None, output_names: list[str] | None = None):
        super().__init__(name="compile_metrics")
        self._config, self._weighted_config, self.output_names = metrics, weighted_metrics, output_names
        self.built = False
        self._flat_metrics: list[list[metrics_module.Metric]] = []
        self._flat_weighted: list[list[metrics_module.Metric]] = []
        self._prefixes: list[str] = []

    def build(self, y_true: Any, y_pred: Any) -> None:
        outputs, labels = _flat(y_pred), _flat(y_true)
        several = len(outputs) > 1
        names = self.output_names or [f"output_{i}" for i in range(len(outputs))]
        self._prefixes = [f"{names[i]}_" if several else "" for i in range(len(outputs))]

        def resolve(config: Any, what: str) -> list[list[metrics_module.Metric]]:
            if config is None:
                return [[] for _ in outputs]
            per_output = _per_output(config, outputs, names, what) if several else [config]
            return [[get_metric(m, t, p) for m in (c if isinstance(c, list | tuple) else [c]) if m is not None]
                    if c is not None else [] for c, t, p in zip(per_output, labels, outputs)]

        self._flat_metrics = resolve(self._config, "metrics")
        self._flat_weighted = resolve(self._weighted_config, "weighted_metrics")
        self.built = True

    @property
    def metrics(self) -> list[metrics_module.Metric]:
        return [m for group in self._flat_metrics + self._flat_weighted for m in group]

    @property
    def variables(self) -> list[tf.Variable]:
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if not self.built:
            self.build(y_true, y_pred)
        labels, outputs = _flat(y_true), _flat(y_pred)
        weights = _flat(sample_weight) if sample_weight is not None else [None]
        if len(weights) == 1:
            weights = weights * len(outputs)
        for group, weighted, t, p, w in zip(self._flat_metrics, self._flat_weighted, labels, outputs, weights):
            for m in group:
                m.update_state(t, p)
            for m in weighted:
                m.update_state(t, p, sample_weight=w)

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def result(self) -> dict[str, Any]:
        if not self.built:
            return {}
        results: dict[str, Any] = {}
        counts: dict[str, int] = {}
        for groups in (self._flat_metrics, self._flat_weighted):
            for prefix, group in zip(self._prefixes, groups):
                for m in group:
                    name = prefix + m.name
                    if name in counts:  # a second metric of one name gets a suffix, as in Keras
                        counts[name] += 1
                        name = f"{name}_{counts[name] - 1}"
                    else:
                        counts[name] = 1
                    results[name] = m.result()
        return results
