"""tf.keras.layers recurrent layers: SimpleRNN, GRU, LSTM, their cells, and the RNN wrapper of a cell.

Keras 3's weight layouts: a cell has `kernel` (input, gates * units), `recurrent_kernel` (units, gates * units)
and `bias`, the gates in Keras's order (LSTM: input, forget, cell, output; GRU: update, reset, candidate, with
`reset_after=True` a bias of shape (2, 3 * units), input and recurrent). The time loop is one `lax.scan` (a fold
without `return_sequences`: no history is stacked), and the input projection of the built-in cells is one matmul
over every step before it; their loop saves only its matmuls for the gradient (`loops.recurrence`). A masked step
keeps the previous state and output, as Keras does.
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax._src import loops
from tapejax.keras import activations
from tapejax.keras.layers import Layer


class _Cell(Layer):
    """What the built-in cells share: their weights and dropout masks; `gates` blocks of `units` columns."""

    gates = 1
    _casts_integer_inputs = True  # Keras's matmul with the float kernel promotes integer inputs

    def __init__(self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None,
                 kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, got "
                             f"{units}.")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.recurrent_initializer = kernel_initializer, recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer, self.recurrent_regularizer = kernel_regularizer, recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint, self.recurrent_constraint = kernel_constraint, recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout, self.recurrent_dropout, self.seed = min(1.0, max(0.0, dropout)), min(
            1.0, max(0.0, recurrent_dropout)), seed
        self._masks: tuple[Any, Any] = (None, None)  # this sequence's dropout masks (input, recurrent)

    @property
    def state_size(self) -> Any:
        return self.units

    @property
    def output_size(self) -> int:
        return self.units

    def _bias_shape(self) -> list[int]:
        return [self.gates * self.units]

    def build(self, input_shape: tf.TensorShape) -> None:
        width = self.gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=[input_shape[-1], width],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=[self.units, width],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=self._bias_shape(), initializer=self._bias_init(),
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _bias_init(self) -> Any:
        return self.bias_initializer

    def _input_bias(self) -> Any:
        return self.bias if self.use_bias else None

    def project(self, inputs: Any) -> Any:
        """The input part of every gate, `inputs @ kernel (+ bias)`: any leading axes (all steps at once)."""
        if self._masks[0] is not None:
            inputs = inputs * self._masks[0]
        out = tf.einsum("...i,ij->...j", inputs, self.kernel)
        bias = self._input_bias()
        return out if bias is None else out + bias

    def _recurrent(self, h: Any) -> Any:
        if self._masks[1] is not None:
            h = h * self._masks[1]
        return tf.matmul(h, self.recurrent_kernel)

    def start(self, batch_inputs: Any, training: Any) -> None:
        """Draws this sequence's dropout masks (one per sequence, as Keras 3), or none."""
        masks = [None, None]
        if training:
            for i, (rate, size) in enumerate(((self.dropout, batch_inputs.shape[-1]),
                                              (self.recurrent_dropout, self.units))):
                if 0 < rate < 1:
                    shape = [batch_inputs.shape[0], size]
                    keep = tf.cast(tf.random.uniform(shape, seed=self.seed) >= rate, batch_inputs.dtype)
                    masks[i] = keep / (1.0 - rate)
        self._masks = tuple(masks)

    def stop(self) -> None:
        self._masks = (None, None)

    def call(self, inputs: Any, states: Any, training: Any = None) -> Any:
        """One step: `(output, new_states)` for the inputs of one step and the states before it."""
        states = list(states) if isinstance(states, list | tuple) else [states]
        output, new_states = self.step(self.project(inputs), states)
        return output, new_states if isinstance(self.state_size, list | tuple) else new_states[0]


class SimpleRNNCell(_Cell):
    """`h = activation(x @ kernel + bias + h @ recurrent_kernel)` (`tf.keras.layers.SimpleRNNCell`)."""

    def __init__(self, units: int, activation: Any = "tanh", **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)

    def step(self, projected: Any, states: list[Any]) -> tuple[Any, list[Any]]:
        h = self._activate(projected + self._recurrent(states[0]))
        return h, [h]


class LSTMCell(_Cell):
    """Keras's LSTM step (`tf.keras.layers.LSTMCell`): gates i, f, c, o; `unit_forget_bias` starts f's bias at 1."""

    gates = 4

    def __init__(self, units: int, unit_forget_bias: bool = True, **kwargs: Any):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    @property
    def state_size(self) -> Any:
        return [self.units, self.units]

    def _bias_init(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        from tapejax.keras import initializers
        base = initializers.get(self.bias_initializer)
        units = self.units
        return lambda shape, dtype=None: tf.concat([base([units], dtype), tf.ones([units], dtype or tf.float32),
                                                    base([2 * units], dtype)], 0)

    def step(self, projected: Any, states: list[Any]) -> tuple[Any, list[Any]]:
        h, c = states
        z = projected + self._recurrent(h)
        i, f, g, o = tf.split(z, 4, axis=-1)
        c = self.recurrent_activation(f) * c + self.recurrent_activation(i) * self._activate(g)
        h = self.recurrent_activation(o) * self._activate(c)
        return h, [h, c]


class GRUCell(_Cell):
    """Keras's GRU step (`tf.keras.layers.GRUCell`): gates z, r, h; with `reset_after` (Keras 3's default) the
    reset gate multiplies the recurrent candidate after its matmul, and the bias has an input and a recurrent
    row."""

    gates = 3

    def __init__(self, units: int, reset_after: bool = True, **kwargs: Any):
        super().__init__(units, **kwargs)
        self.reset_after = reset_after

    def _bias_shape(self) -> list[int]:
        return [2, 3 * self.units] if self.reset_after else [3 * self.units]

    def _input_bias(self) -> Any:
        if not self.use_bias:
            return None
        return self.bias[0] if self.reset_after else self.bias

    def step(self, projected: Any, states: list[Any]) -> tuple[Any, list[Any]]:
        h = states[0]
        x_z, x_r, x_h = tf.split(projected, 3, axis=-1)
        u = self.units
        if self.reset_after:
            recurrent = self._recurrent(h)
            if self.use_bias:
                recurrent = recurrent + self.bias[1]
            r_z, r_r, r_h = tf.split(recurrent, 3, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            candidate = self._activate(x_h + r * r_h)
        else:
            h_in = h if self._masks[1] is None else h * self._masks[1]
            r_zr = tf.matmul(h_in, self.recurrent_kernel[:, :2 * u])
            z = self.recurrent_activation(x_z + r_zr[:, :u])
            r = self.recurrent_activation(x_r + r_zr[:, u:])
            candidate = self._activate(x_h + tf.matmul(r * h_in, self.recurrent_kernel[:, 2 * u:]))
        h = z * h + (1.0 - z) * candidate
        return h, [h]


class StackedRNNCells(Layer):
    """Cells run one after another within each step, each one's output the next one's input
    (`tf.keras.layers.StackedRNNCells`, what `RNN([cell, ...])` makes). Its `state_size` is the cells' sizes in a
    list; the RNN carries their states flat and returns them as one list per cell.

    >>> import tapejax as tf
    >>> cells = [tf.keras.layers.LSTMCell(3), tf.keras.layers.GRUCell(2)]
    >>> output, lstm_states, gru_states = tf.keras.layers.RNN(cells, return_state=True)(tf.ones([4, 5, 6]))
    >>> output.shape, len(lstm_states), len(gru_states)
    (TensorShape([4, 2]), 2, 1)
    """

    def __init__(self, cells: list[Any], **kwargs: Any):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell) or "state_size" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method and a `state_size` attribute. Received "
                                 f"cell without a `call` method / `state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self) -> list[Any]:
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self) -> int:
        last = self.cells[-1]
        return last.output_size if hasattr(last, "output_size") else _sizes(last.state_size)[0]

    @property
    def builtin(self) -> bool:  # the built-in cells' fast path (all input projections up front) applies
        return all(isinstance(cell, _Cell) for cell in self.cells)

    def build(self, input_shape: tf.TensorShape) -> None:
        batch, width = input_shape[0], input_shape[-1]
        for cell in self.cells:
            if not cell.built:
                cell.build(tf.TensorShape([batch, width]))  # in the cell's own name scope, under this one
                cell.built = True
            width = cell.output_size if hasattr(cell, "output_size") else _sizes(cell.state_size)[0]

    def nest(self, states: list[Any]) -> list[list[Any]]:
        """The flat states, as one list per cell."""
        nested, start = [], 0
        for cell in self.cells:
            count = len(_sizes(cell.state_size))
            nested.append(list(states[start:start + count]))
            start += count
        return nested

    def start(self, batch_inputs: Any, training: Any) -> None:
        for cell in self.cells:
            cell.start(batch_inputs, training)
            batch_inputs = tf.zeros([batch_inputs.shape[0], cell.output_size], batch_inputs.dtype)

    def stop(self) -> None:
        for cell in self.cells:
            cell.stop()

    def project(self, inputs: Any) -> Any:  # the first cell's input projection, for every step at once
        return self.cells[0].project(inputs)

    def step(self, projected: Any, states: list[Any]) -> tuple[Any, list[Any]]:
        new_states: list[Any] = []
        for i, (cell, cell_states) in enumerate(zip(self.cells, self.nest(states))):
            projected, cell_new = cell.step(projected if i == 0 else cell.project(projected), cell_states)
            new_states += cell_new
        return projected, new_states

    def call(self, inputs: Any, states: Any, training: Any = None) -> Any:
        new_states: list[Any] = []
        for cell, cell_states in zip(self.cells, self.nest(tf.nest.flatten(states))):
            kwargs = {"training": training} if training is not None else {}
            inputs, cell_new = cell(inputs, cell_states, **kwargs)
            new_states += tf.nest.flatten(cell_new)
        return inputs, new_states


def _sizes(state_size: Any) -> list[int]:
    return [int(size) for size in tf.nest.flatten(state_size)]


class RNN(Layer):
    """Runs a cell over the time axis (`tf.keras.layers.RNN`): `return_sequences`, `return_state`,
    `go_backwards` (the outputs stay in the reversed order, as in Keras), masks, `initial_state`, and
    `stateful` (the final states kept in variables for the next call; `reset_states()` zeroes them)."""

    supports_masking = True
    _casts_integer_inputs = True

    def __init__(self, cell: Any, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.cell = StackedRNNCells(cell) if isinstance(cell, list | tuple) else cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll = go_backwards, stateful, unroll
        self.zero_output_for_mask = zero_output_for_mask
        self.states: list[Any] | None = None

    def build(self, input_shape: tf.TensorShape) -> None:
        shape = input_shape[0] if isinstance(input_shape, list | tuple) and not isinstance(input_shape[0], int | None) \
            else input_shape
        self.cell.build(tf.TensorShape([shape[0], shape[-1]]))  # in the cell's own name scope
        self.cell.built = True
        if self.stateful:
            if shape[0] is None:
                raise ValueError("A stateful RNN needs a known batch size: give the Input a `batch_size`.")
            with tf.init_scope():
                self.states = [tf.Variable(tf.zeros([shape[0], size]), trainable=False, name=f"state_{i}")
                               for i, size in enumerate(self._state_sizes())]

    def _state_sizes(self) -> list[int]:
        return _sizes(self.cell.state_size)

    def _nest(self, states: list[Any]) -> list[Any]:
        return self.cell.nest(states) if isinstance(self.cell, StackedRNNCells) else states

    def reset_states(self, states: Any = None) -> None:
        for i, variable in enumerate(self.states or []):
            variable.assign(tf.zeros_like(variable) if states is None else states[i])

    reset_state = reset_states

    def get_initial_state(self, batch_size: int) -> list[Any]:
        return self._nest([tf.zeros([batch_size, size]) for size in self._state_sizes()])

    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None, training: Any = None) -> Any:
        batch = sequences.shape[0]
        if initial_state is not None:
            states = tf.nest.flatten(initial_state)
        elif self.stateful:
            states = [tf.identity(s) for s in self.states]
        else:
            states = [tf.zeros([batch, size], sequences.dtype) for size in self._state_sizes()]
        steps = tf.transpose(sequences, [1, 0, *range(2, sequences.shape.rank)])  # time first
        time_mask = None if mask is None else tf.transpose(tf.cast(mask, tf.bool), [1, 0])
        if self.go_backwards:
            steps = tf.reverse(steps, [0])
            time_mask = None if time_mask is None else tf.reverse(time_mask, [0])
        cell = self.cell
        builtin = isinstance(cell, _Cell) or isinstance(cell, StackedRNNCells) and cell.builtin
        if builtin:
            cell.start(sequences[:, 0], training)
            steps = cell.project(steps)  # the input projection of every step in one matmul

        def advance(carry: Any, step: Any) -> Any:
            previous_output, previous_states = carry[0], list(carry[1:])
            inputs, keep = step if time_mask is not None else (step, None)
            if builtin:
                output, new_states = cell.step(inputs, previous_states)
            else:
                # Keras 3 gives a cell its states as a list, even one state (a cell reads `states[0]`)
                output, new_states = cell(inputs, previous_states, training=training)
                new_states = list(new_states) if isinstance(new_states, list | tuple) else [new_states]
            if keep is not None:
                k = tf.expand_dims(keep, -1)
                output = tf.where(k, output, tf.zeros_like(output) if self.zero_output_for_mask else previous_output)
                new_states = [tf.where(k, n, p) for n, p in zip(new_states, previous_states)]
            return (output, *new_states)

        output_size = cell.output_size if hasattr(cell, "output_size") else self._state_sizes()[0]
        initial = (tf.zeros([batch, output_size], sequences.dtype), *states)
        elems = steps if time_mask is None else (steps, time_mask)
        keep = "all" if self.return_sequences else "last"  # a fold: no history of the steps is stacked
        carried = loops.recurrence(advance, elems, initial, keep, recompute=builtin)
        if self.return_sequences:
            output, final_states = tf.transpose(carried[0], [1, 0, 2]), [c[-1] for c in carried[1:]]
        else:
            output, final_states = carried[0], list(carried[1:])
        if builtin:
            cell.stop()
        if self.stateful:
            for variable, value in zip(self.states, final_states):
                variable.assign(value)
        if self.return_state:
            return (output, *self._nest(final_states))
        return output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if mask is not None and self.go_backwards:
            mask = tf.reverse(mask, [1])
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self._nest(self._state_sizes()))
        return output_mask


class _Recurrent(RNN):
    _cell_class: Any = None
    _cell_name = ""

    def __init__(self, units: int, *, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False,
                 activity_regularizer: Any = None, name: str | None = None, trainable: bool = True,
                 dtype: Any = None, use_cudnn: Any = "auto", input_shape: Any = None, **cell_kwargs: Any):
        cell = self._cell_class(units, name=self._cell_name, dtype=dtype, **cell_kwargs)
        extra = {} if input_shape is None else {"input_shape": input_shape}
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=zero_output_for_mask, name=name, trainable=trainable, dtype=dtype,
                         activity_regularizer=activity_regularizer, **extra)

    def __getattr__(self, name: str) -> Any:  # Keras forwards the cell's arguments (`lstm.units`)
        cell = self.__dict__.get("cell")
        if cell is not None and not name.startswith("_") and name in cell.__dict__:
            return cell.__dict__[name]
        return super().__getattr__(name)


class SimpleRNN(_Recurrent):
    """A fully connected RNN (`tf.keras.layers.SimpleRNN`), weights under `simple_rnn/simple_rnn_cell/`."""

    _cell_class, _cell_name = SimpleRNNCell, "simple_rnn_cell"


class GRU(_Recurrent):
    """A GRU layer (`tf.keras.layers.GRU`), `reset_after=True` as Keras 3's default.

    >>> import tapejax as tf
    >>> tf.keras.layers.GRU(4, return_sequences=True)(tf.ones([2, 5, 3])).shape
    TensorShape([2, 5, 4])
    """

    _cell_class, _cell_name = GRUCell, "gru_cell"


class LSTM(_Recurrent):
    """An LSTM layer (`tf.keras.layers.LSTM`), with Keras's gate layout.

    >>> import tapejax as tf
    >>> output, h, c = tf.keras.layers.LSTM(4, return_state=True)(tf.ones([2, 5, 3]))
    >>> output.shape, c.shape
    (TensorShape([2, 4]), TensorShape([2, 4]))
    """

    _cell_class, _cell_name = LSTMCell, "lstm_cell"
