"""The "Advanced automatic differentiation" guide (seeds/000_19f802d23b9e17d5.txt), run unchanged against ``tf``.

The guide is a notebook; its cells run here in order in one namespace (``Notebook``), and a cell ending in an
expression shows its value as Jupyter does. The setup cell (imports, ``mpl.rcParams``) and the cells that
only plot are left out. The helpers ``imshow_zero_center`` and ``plot_as_patches`` mix TF ops with plotting,
so they run verbatim against ``FakePyplot``, which records what would have been drawn.

Where a printed value comes from ``tf.random.normal`` weights, the tests check shapes and the identity that
the guide states, and compare the derivatives with a numpy reimplementation of the same small network.
The keras examples whose only keras need is ``Dense`` also run with ``hand_dense`` (a ``tf.Variable``
kernel and bias) substituted for ``tf.keras.layers.Dense``, so that their math is covered before keras lands.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ._snippets import FakePyplot, Notebook, captured_tf_warnings, hand_dense, run_snippet

FLOAT = r"-?\d+\.?\d*(?:e[+-]?\d+)?"

# --- numpy references for the guide's small networks (float64) ------------------------------------------


def _relu(z):
    return np.maximum(z, 0.0)


def _elu(z):
    return np.where(z > 0, z, np.expm1(np.minimum(z, 0.0)))


def _elu_derivative(z):
    return np.where(z > 0, 1.0, np.exp(np.minimum(z, 0.0)))


def _numpy_params(layer):
    return [np.asarray(v.numpy(), dtype=np.float64) for v in (layer.kernel, layer.bias)]


def _check_directional_derivative(f, params, grads, seed=0, step=1e-6, rtol=2e-3):
    """Checks sum(grad * direction) against a central difference of f along a random direction.

    f is float64 and piecewise smooth (relu); the small step keeps the difference off relu's kinks.
    """
    rng = np.random.default_rng(seed)
    directions = [rng.standard_normal(p.shape) for p in params]
    plus = f(*[p + step * d for p, d in zip(params, directions)])
    minus = f(*[p - step * d for p, d in zip(params, directions)])
    numeric = (plus - minus) / (2 * step)
    analytic = sum(np.sum(np.asarray(g, np.float64) * d) for g, d in zip(grads, directions))
    scale = np.sqrt(sum(np.sum(np.asarray(g, np.float64) ** 2) for g in grads)) * np.sqrt(
        sum(np.sum(d**2) for d in directions)
    )
    assert abs(analytic - numeric) <= rtol * scale, (analytic, numeric, scale)


def _dense_variant(snippet: str) -> str:
    return snippet.replace("tf.keras.layers.Dense", "Dense")


# --- Controlling gradient recording ---------------------------------------------------------------------

STOP_RECORDING = """\
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
  x_sq = x * x
  with t.stop_recording():
    y_sq = y * y
  z = x_sq + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""
RESET = """\
x = tf.Variable(2.0)
y = tf.Variable(3.0)
reset = True

with tf.GradientTape() as t:
  y_sq = y * y
  if reset:
    # Throw out all the tape recorded so far
    t.reset()
  z = x * x + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""
STOP_GRADIENT = """\
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
  y_sq = y**2
  z = x**2 + tf.stop_gradient(y_sq)

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""
DZ_DX_4_DZ_DY_NONE = "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)\ndz/dy: None\n"


def test_stop_recording(tf):
    assert run_snippet(STOP_RECORDING, tf) == DZ_DX_4_DZ_DY_NONE


def test_reset(tf):
    assert run_snippet(RESET, tf) == DZ_DX_4_DZ_DY_NONE


def test_stop_gradient(tf):
    assert run_snippet(STOP_GRADIENT, tf) == DZ_DX_4_DZ_DY_NONE


# --- Custom gradients -----------------------------------------------------------------------------------

CLIP_GRADIENTS = """\
# Establish an identity operation, but clip during the gradient pass
@tf.custom_gradient
def clip_gradients(y):
  def backward(dy):
    return tf.clip_by_norm(dy, 0.5)
  return y, backward

v = tf.Variable(2.0)
with tf.GradientTape() as t:
  output = clip_gradients(v * v)
print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
"""


def test_custom_gradient_clip_by_norm(tf):
    # By hand: backward(1.0) clips 1.0 to norm 0.5, then d(v*v)/dv = 2 v = 4 scales it to 2.
    assert run_snippet(CLIP_GRADIENTS, tf) == "tf.Tensor(2.0, shape=(), dtype=float32)\n"


# --- Multiple tapes -------------------------------------------------------------------------------------

MULTIPLE_TAPES_CELLS = (
    """\
x0 = tf.constant(0.0)
x1 = tf.constant(0.0)

with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
  tape0.watch(x0)
  tape1.watch(x1)

  y0 = tf.math.sin(x0)
  y1 = tf.nn.sigmoid(x1)

  y = y0 + y1

  ys = tf.reduce_sum(y)
""",
    "tape0.gradient(ys, x0).numpy()   # cos(x) => 1.0\n",
    "tape1.gradient(ys, x1).numpy()   # sigmoid(x1)*(1-sigmoid(x1)) => 0.25\n",
)


def test_multiple_tapes(tf):
    notebook = Notebook(tf)
    assert [notebook.run(cell) for cell in MULTIPLE_TAPES_CELLS] == ["", "1.0\n", "0.25\n"]


# --- Higher-order gradients -----------------------------------------------------------------------------

HIGHER_ORDER = """\
x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

with tf.GradientTape() as t2:
  with tf.GradientTape() as t1:
    y = x * x * x

  # Compute the gradient inside the outer `t2` context manager
  # which means the gradient computation is differentiable as well.
  dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)

print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
"""


def test_higher_order_gradients(tf):
    assert run_snippet(HIGHER_ORDER, tf) == "dy_dx: 3.0\nd2y_dx2: 6.0\n"


INPUT_GRADIENT_REGULARIZATION = """\
x = tf.random.normal([7, 5])

layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
with tf.GradientTape() as t2:
  # The inner tape only takes the gradient with respect to the input,
  # not the variables.
  with tf.GradientTape(watch_accessed_variables=False) as t1:
    t1.watch(x)
    y = layer(x)
    out = tf.reduce_sum(layer(x)**2)
  # 1. Calculate the input gradient.
  g1 = t1.gradient(out, x)
  # 2. Calculate the magnitude of the input gradient.
  g1_mag = tf.norm(g1)

# 3. Calculate the gradient of the magnitude with respect to the model.
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
[var.shape for var in dg1_mag]
"""


def _check_input_gradient_regularization(tf, snippet, extra_globals=None):
    notebook = Notebook(tf, extra_globals)
    assert notebook.run(snippet) == "[TensorShape([5, 10]), TensorShape([10])]\n"

    ns = notebook.namespace
    x = np.asarray(ns["x"].numpy(), np.float64)

    # By hand: out = sum(relu(z)**2) with z = x W + b, so g1 = d out/dx = 2 relu(z) W^T (relu(z) relu'(z)
    # = relu(z)), and g1_mag = ||2 relu(x W + b) W^T||. dg1_mag is its gradient in (W, b).
    def g1_mag(w, b):
        return np.linalg.norm(2 * _relu(x @ w + b) @ w.T)

    kernel, bias = _numpy_params(ns["layer"])
    np.testing.assert_allclose(ns["g1_mag"].numpy(), g1_mag(kernel, bias), rtol=1e-5)
    _check_directional_derivative(g1_mag, [kernel, bias], [g.numpy() for g in ns["dg1_mag"]])


def test_input_gradient_regularization(tf):
    _check_input_gradient_regularization(tf, INPUT_GRADIENT_REGULARIZATION)


def test_input_gradient_regularization_hand_dense(tf):
    snippet = _dense_variant(INPUT_GRADIENT_REGULARIZATION)
    _check_input_gradient_regularization(tf, snippet, {"Dense": hand_dense(tf)})


# --- Jacobians: scalar source ---------------------------------------------------------------------------

JACOBIAN_SCALAR_SOURCE_CELLS = (
    """\
x = tf.linspace(-10.0, 10.0, 200+1)
delta = tf.Variable(0.0)

with tf.GradientTape() as tape:
  y = tf.nn.sigmoid(x+delta)

dy_dx = tape.jacobian(y, delta)
""",
    """\
print(y.shape)
print(dy_dx.shape)
""",
)


def test_jacobian_scalar_source(tf):
    notebook = Notebook(tf)
    assert notebook.run(JACOBIAN_SCALAR_SOURCE_CELLS[0]) == ""
    assert notebook.run(JACOBIAN_SCALAR_SOURCE_CELLS[1]) == "(201,)\n(201,)\n"
    # By hand: d sigmoid(x + delta)/d delta at delta = 0 is s (1 - s), elementwise, with s = sigmoid(x).
    s = 1 / (1 + np.exp(-np.linspace(-10.0, 10.0, 201)))
    np.testing.assert_allclose(notebook.namespace["dy_dx"].numpy(), s * (1 - s), atol=1e-6)


# --- Jacobians: tensor source ---------------------------------------------------------------------------

JACOBIAN_TENSOR_SOURCE_CELLS = (
    """\
x = tf.random.normal([7, 5])
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

with tf.GradientTape(persistent=True) as tape:
  y = layer(x)

y.shape
""",
    "layer.kernel.shape\n",
    """\
j = tape.jacobian(y, layer.kernel)
j.shape
""",
    """\
g = tape.gradient(y, layer.kernel)
print('g.shape:', g.shape)

j_sum = tf.reduce_sum(j, axis=[0, 1])
delta = tf.reduce_max(abs(g - j_sum)).numpy()
assert delta < 1e-3
print('delta:', delta)
""",
)


def _check_jacobian_tensor_source(tf, cells, extra_globals=None):
    notebook = Notebook(tf, extra_globals)
    assert notebook.run(cells[0]) == "TensorShape([7, 10])\n"
    assert notebook.run(cells[1]) == "TensorShape([5, 10])\n"
    assert notebook.run(cells[2]) == "TensorShape([7, 10, 5, 10])\n"
    out = notebook.run(cells[3])
    # The guide prints "delta: 4.7683716e-07"; the value depends on the random weights, and the cell
    # itself asserts the identity it shows: the jacobian summed over the target is the gradient.
    match = re.fullmatch(rf"g\.shape: \(5, 10\)\ndelta: ({FLOAT})\n", out)
    assert match, out
    assert 0.0 <= float(match[1]) < 1e-3

    # By hand: y[i, k] = relu(z[i, k]) with z = x W + b, so dy[i, k]/dW[a, c] = relu'(z[i, k]) x[i, a] [k == c].
    ns = notebook.namespace
    x = np.asarray(ns["x"].numpy(), np.float64)
    kernel, bias = _numpy_params(ns["layer"])
    active = (x @ kernel + bias > 0).astype(np.float64)
    expected = np.einsum("ik,ia,kc->ikac", active, x, np.eye(10))
    np.testing.assert_allclose(ns["j"].numpy(), expected, rtol=1e-6, atol=1e-6)


def test_jacobian_tensor_source(tf):
    _check_jacobian_tensor_source(tf, JACOBIAN_TENSOR_SOURCE_CELLS)


def test_jacobian_tensor_source_hand_dense(tf):
    cells = [_dense_variant(cell) for cell in JACOBIAN_TENSOR_SOURCE_CELLS]
    _check_jacobian_tensor_source(tf, cells, {"Dense": hand_dense(tf)})


# --- Example: Hessian -----------------------------------------------------------------------------------

# The guide's Hessian cell, split after its first three lines so that the test can keep the input x
# (the cell reassigns x). Running the two parts one after the other is running the cell.
HESSIAN_CELLS = (
    """\
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
""",
    """\

with tf.GradientTape() as t2:
  with tf.GradientTape() as t1:
    x = layer1(x)
    x = layer2(x)
    loss = tf.reduce_mean(x**2)

  g = t1.gradient(loss, layer1.kernel)

h = t2.jacobian(g, layer1.kernel)
print(f'layer.kernel.shape: {layer1.kernel.shape}')
print(f'h.shape: {h.shape}')
""",
    """\
n_params = tf.reduce_prod(layer1.kernel.shape)

g_vec = tf.reshape(g, [n_params, 1])
h_mat = tf.reshape(h, [n_params, n_params])
""",
    """\
def imshow_zero_center(image, **kwargs):
  lim = tf.reduce_max(abs(image))
  plt.imshow(image, vmin=-lim, vmax=lim, cmap='seismic', **kwargs)
  plt.colorbar()
""",
    "imshow_zero_center(h_mat)\n",
    """\
eps = 1e-3
eye_eps = tf.eye(h_mat.shape[0])*eps
""",
    """\
# X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
# h_mat = ∇²f(X(k))
# g_vec = ∇f(X(k))
update = tf.linalg.solve(h_mat + eye_eps, g_vec)

# Reshape the update and apply it to the variable.
_ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
""",
)


def _numpy_loss_gradient(x, kernel1, bias1, kernel2, bias2):
    """d loss/d kernel1 for loss = mean(relu(relu(x W1 + b1) W2 + b2)**2), by the chain rule by hand."""
    z1 = x @ kernel1 + bias1
    z2 = _relu(z1) @ kernel2 + bias2
    a2 = _relu(z2)
    d_z2 = 2 * a2 / a2.size * (z2 > 0)
    d_z1 = d_z2 @ kernel2.T * (z1 > 0)
    return x.T @ d_z1


def _check_hessian_newton_step(tf, cells, extra_globals=None):
    plt = FakePyplot()
    notebook = Notebook(tf, {"plt": plt, **(extra_globals or {})})
    ns = notebook.namespace
    assert notebook.run(cells[0]) == ""
    x = np.asarray(ns["x"].numpy(), np.float64)
    assert notebook.run(cells[1]) == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"
    assert notebook.run(cells[2]) == ""
    assert int(ns["n_params"]) == 40
    assert tuple(ns["g_vec"].shape) == (40, 1)
    assert tuple(ns["h_mat"].shape) == (40, 40)

    # The gradient, and the Hessian as the derivative of the gradient, against the numpy network.
    kernel1, bias1 = _numpy_params(ns["layer1"])
    kernel2, bias2 = _numpy_params(ns["layer2"])

    def loss_gradient(w):
        return _numpy_loss_gradient(x, w, bias1, kernel2, bias2)

    g = ns["g"].numpy()
    np.testing.assert_allclose(g, loss_gradient(kernel1), rtol=1e-4, atol=1e-6)
    h_mat = ns["h_mat"].numpy().astype(np.float64)
    direction = np.random.default_rng(0).standard_normal(kernel1.shape)
    step = 1e-7  # the gradient is piecewise linear in kernel1: any step inside one piece is exact
    hvp = (loss_gradient(kernel1 + step * direction) - loss_gradient(kernel1 - step * direction)) / (2 * step)
    np.testing.assert_allclose(h_mat @ direction.reshape(-1), hvp.reshape(-1), rtol=1e-3, atol=1e-5)

    # "The Hessian matrix should be symmetric": check the image the guide draws to show it.
    assert notebook.run(cells[3]) == ""
    assert notebook.run(cells[4]) == ""
    [(image,), kwargs] = plt.named("imshow")[0]
    lim = np.abs(h_mat).max()
    np.testing.assert_allclose(image, image.T, atol=1e-5 * lim)
    assert float(np.asarray(kwargs["vmin"])) == pytest.approx(-lim, rel=1e-6)
    assert float(np.asarray(kwargs["vmax"])) == pytest.approx(lim, rel=1e-6)
    assert kwargs["cmap"] == "seismic"

    # The Newton step: update solves (H + eps I) update = g, and the kernel moves by -update.
    assert notebook.run(cells[5]) == ""
    assert tuple(ns["eye_eps"].shape) == (40, 40)
    assert notebook.run(cells[6]) == ""
    update = ns["update"].numpy().astype(np.float64)
    a = h_mat + 1e-3 * np.eye(40)
    residual = np.abs(a @ update - g.reshape(40, 1)).max()
    assert residual <= 1e-3 * (np.abs(a).max() * np.abs(update).max() + np.abs(g).max())
    np.testing.assert_allclose(
        ns["layer1"].kernel.numpy(), kernel1 - update.reshape(5, 8), rtol=1e-5, atol=1e-5
    )


def test_hessian_newton_step(tf):
    _check_hessian_newton_step(tf, HESSIAN_CELLS)


def test_hessian_newton_step_hand_dense(tf):
    cells = [_dense_variant(cell) for cell in HESSIAN_CELLS]
    _check_hessian_newton_step(tf, cells, {"Dense": hand_dense(tf)})


# --- Batch jacobian -------------------------------------------------------------------------------------

BATCH_JACOBIAN_CELLS = (
    """\
x = tf.random.normal([7, 5])

layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
  tape.watch(x)
  y = layer1(x)
  y = layer2(y)

y.shape
""",
    """\
j = tape.jacobian(y, x)
j.shape
""",
    HESSIAN_CELLS[3],  # the guide defined imshow_zero_center in the Hessian section
    """\
imshow_zero_center(j[:, 0, :, 0])
_ = plt.title('A (batch, batch) slice')
""",
    """\
def plot_as_patches(j):
  # Reorder axes so the diagonals will each form a contiguous patch.
  j = tf.transpose(j, [1, 0, 3, 2])
  # Pad in between each patch.
  lim = tf.reduce_max(abs(j))
  j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]],
             constant_values=-lim)
  # Reshape to form a single image.
  s = j.shape
  j = tf.reshape(j, [s[0]*s[1], s[2]*s[3]])
  imshow_zero_center(j, extent=[-0.5, s[2]-0.5, s[0]-0.5, -0.5])

plot_as_patches(j)
_ = plt.title('All (batch, batch) slices are diagonal')
""",
    """\
j_sum = tf.reduce_sum(j, axis=2)
print(j_sum.shape)
j_select = tf.einsum('bxby->bxy', j)
print(j_select.shape)
""",
    """\
jb = tape.batch_jacobian(y, x)
jb.shape
""",
    """\
error = tf.reduce_max(abs(jb - j_sum))
assert error < 1e-3
print(error.numpy())
""",
)


def _check_patches(plt, j):
    """plot_as_patches(j) draws j[b, y, c, x] as a grid of (c, x) patches, each framed by -max|j|."""
    (image,), kwargs = plt.named("imshow")[-1]
    batch, outs, _, ins = j.shape
    lim = np.abs(j).max()
    assert image.shape == (outs * (batch + 2), ins * (batch + 2))
    assert kwargs["extent"] == [-0.5, ins - 0.5, outs - 0.5, -0.5]
    patches = image.reshape(outs, batch + 2, ins, batch + 2)
    np.testing.assert_allclose(patches[:, 1:-1, :, 1:-1], np.transpose(j, [1, 0, 3, 2]), rtol=1e-6)
    for frame in (patches[:, 0], patches[:, -1], patches[:, :, :, 0], patches[:, :, :, -1]):
        np.testing.assert_allclose(frame, -lim, rtol=1e-6)


def _check_batch_jacobian(tf, cells, extra_globals=None):
    plt = FakePyplot()
    notebook = Notebook(tf, {"plt": plt, **(extra_globals or {})})
    ns = notebook.namespace
    assert notebook.run(cells[0]) == "TensorShape([7, 6])\n"
    assert notebook.run(cells[1]) == "TensorShape([7, 6, 7, 5])\n"
    j = ns["j"].numpy()

    # By hand: y[b] = elu(elu(x[b] W1 + b1) W2 + b2) depends on x[b] only, with
    # dy[b]/dx[b] = diag(elu'(z2[b])) W2^T diag(elu'(z1[b])) W1^T.
    x = np.asarray(ns["x"].numpy(), np.float64)
    kernel1, bias1 = _numpy_params(ns["layer1"])
    kernel2, bias2 = _numpy_params(ns["layer2"])
    z1 = x @ kernel1 + bias1
    z2 = _elu(z1) @ kernel2 + bias2
    per_example = np.einsum("by,iy,bi,xi->byx", _elu_derivative(z2), kernel2, _elu_derivative(z1), kernel1)
    expected = np.einsum("byx,bc->bycx", per_example, np.eye(7))
    np.testing.assert_allclose(j, expected, rtol=1e-4, atol=1e-6)

    # "A (batch, batch) slice" is diagonal, and so are all of them.
    assert notebook.run(cells[2]) == ""
    assert notebook.run(cells[3]) == ""
    (image,), _ = plt.named("imshow")[-1]
    np.testing.assert_array_equal(image, np.diag(np.diag(image)))
    assert plt.named("title")[-1][0] == ("A (batch, batch) slice",)
    assert notebook.run(cells[4]) == ""
    _check_patches(plt, j)

    assert notebook.run(cells[5]) == "(7, 6, 5)\n(7, 6, 5)\n"
    np.testing.assert_allclose(ns["j_select"].numpy(), per_example, rtol=1e-4, atol=1e-6)
    assert notebook.run(cells[6]) == "TensorShape([7, 6, 5])\n"
    np.testing.assert_allclose(ns["jb"].numpy(), ns["j_select"].numpy(), rtol=1e-5, atol=1e-6)
    out = notebook.run(cells[7])
    assert re.fullmatch(rf"{FLOAT}\n", out), out  # the guide prints 0.0
    assert 0.0 <= float(out) < 1e-3


def test_batch_jacobian(tf):
    _check_batch_jacobian(tf, BATCH_JACOBIAN_CELLS)


def test_batch_jacobian_hand_dense(tf):
    cells = [_dense_variant(cell) for cell in BATCH_JACOBIAN_CELLS]
    _check_batch_jacobian(tf, cells, {"Dense": hand_dense(tf)})


def test_batch_jacobian_logs_no_retracing(tf):
    if tf.__name__ == "tensorflow":
        pytest.skip("TensorFlow's pfor logs 'triggered tf.function retracing' here (the guide shows it)")
    notebook = Notebook(tf, {"Dense": hand_dense(tf), "plt": FakePyplot()})
    with captured_tf_warnings() as warnings:
        for _ in range(3):  # TF warns from the 5th retrace on: 3 runs make 6 jacobian calls
            for cell in (BATCH_JACOBIAN_CELLS[0], BATCH_JACOBIAN_CELLS[1], BATCH_JACOBIAN_CELLS[6]):
                notebook.run(_dense_variant(cell))
    assert not [line for line in warnings if "retracing" in line], warnings


BATCH_NORMALIZATION_CELLS = (
    """\
x = tf.random.normal([7, 5])

layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
bn = tf.keras.layers.BatchNormalization()
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
  tape.watch(x)
  y = layer1(x)
  y = bn(y, training=True)
  y = layer2(y)

j = tape.jacobian(y, x)
print(f'j.shape: {j.shape}')
""",
    HESSIAN_CELLS[3],
    # plot_as_patches was defined in the batch-jacobian section: its definition, without that cell's call.
    BATCH_JACOBIAN_CELLS[4].split("\nplot_as_patches(j)\n")[0] + "\n",
    """\
plot_as_patches(j)

_ = plt.title('These slices are not diagonal')
_ = plt.xlabel("Don't use `batch_jacobian`")
""",
    """\
jb = tape.batch_jacobian(y, x)
print(f'jb.shape: {jb.shape}')
""",
)


def test_batch_jacobian_with_batch_normalization(tf):
    plt = FakePyplot()
    notebook = Notebook(tf, {"plt": plt})
    assert notebook.run(BATCH_NORMALIZATION_CELLS[0]) == "j.shape: (7, 6, 7, 5)\n"
    j = notebook.namespace["j"].numpy()
    # "These slices are not diagonal": batch normalisation couples the examples of the batch.
    off_diagonal = j * (1 - np.eye(7))[:, None, :, None]
    assert np.abs(off_diagonal).max() > 1e-3 * np.abs(j).max()

    assert notebook.run(BATCH_NORMALIZATION_CELLS[1]) == ""
    assert notebook.run(BATCH_NORMALIZATION_CELLS[2]) == ""
    assert notebook.run(BATCH_NORMALIZATION_CELLS[3]) == ""
    _check_patches(plt, j)
    assert plt.named("xlabel")[-1][0] == ("Don't use `batch_jacobian`",)

    assert notebook.run(BATCH_NORMALIZATION_CELLS[4]) == "jb.shape: (7, 6, 5)\n"
    # What batch_jacobian still computes (TensorFlow's answer, which tapejax must give too): for each output
    # unit, the gradient of that unit summed over the batch, i.e. the full jacobian summed over the
    # target's batch axis -- equal to the diagonal blocks only when the examples are independent.
    summed = np.transpose(j.sum(axis=0), (1, 0, 2))
    np.testing.assert_allclose(notebook.namespace["jb"].numpy(), summed, rtol=1e-4, atol=1e-5)
