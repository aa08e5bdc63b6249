"""keras-io example "Knowledge Distillation" (Kenneth Borup): a small student network trained by `fit` to match a
trained teacher's softened logits, through a `Distiller` model that overrides `compile`, `compute_loss` and `call`.

Source: keras-team/keras-io, examples/vision/knowledge_distillation.py, the Keras 3 version on keras.io
(https://keras.io/examples/vision/knowledge_distillation/: `import keras`, `keras.ops`, the `compute_loss`
override). The stored snapshot of that file (commit 501fb4cbe62e5b5c434393f512a452ef833640a1) is the older
tf.keras version, whose `train_step`/`test_step` call `self.compiled_metrics`; the Keras 3 version replaced them
by `compute_loss`. Rewritten after the example, not copied: the same `Distiller`, teacher and student networks,
`keras.models.clone_model`, compile arguments, `fit` and `evaluate` calls, in the example's order.

Changes:
- MNIST (`keras.datasets.mnist.load_data()`, a download) is replaced by seeded numpy uint8 "digits" of 28x28
  pixels (each class a fixed random pattern with 20% of its pixels flipped) with integer labels: 256 for training
  and 64 for testing (MNIST: 60,000 and 10,000), normalised as the example does.
- `fit` runs 2 epochs for the teacher and 1 for the distiller and the student (the example: 5, 3 and 3) and
  with `shuffle=False` (Keras's shuffle draws differ between engines).
- The teacher's convolutions have 32 and 64 filters (the example: 256 and 512), to run in seconds on a CPU.
- The weights of the teacher, the student and the student's clone are set from a seeded numpy generator after
  they are built (Glorot uniform kernels, zero biases), so that both engines start from the same weights.
- `evaluate`'s results are printed (a notebook shows the value of its last expression).
"""

import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
from keras import layers
from keras import ops
import numpy as np

rng = np.random.default_rng(0)


def set_numpy_weights(model):
    """Glorot-uniform kernels drawn by numpy; one-dimensional weights keep their constant initial values."""
    for weight in model.weights:
        shape = tuple(weight.shape)
        if len(shape) >= 2:
            receptive = int(np.prod(shape[:-2]))
            limit = np.sqrt(6.0 / (shape[-2] * receptive + shape[-1] * receptive))
            weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(
        self,
        optimizer,
        metrics,
        student_loss_fn,
        distillation_loss_fn,
        alpha=0.1,
        temperature=3,
    ):
        """Configure the distiller.

        Args:
            optimizer: Keras optimizer for the student weights
            metrics: Keras metrics for evaluation
            student_loss_fn: Loss function of difference between student
                predictions and ground-truth
            distillation_loss_fn: Loss function of difference between soft
                student predictions and soft teacher predictions
            alpha: weight to student_loss_fn and 1-alpha to distillation_loss_fn
            temperature: Temperature for softening probability distributions.
                Larger temperature gives softer distributions.
        """
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False
    ):
        teacher_pred = self.teacher(x, training=False)
        student_loss = self.student_loss_fn(y, y_pred)

        distillation_loss = self.distillation_loss_fn(
            ops.softmax(teacher_pred / self.temperature, axis=1),
            ops.softmax(y_pred / self.temperature, axis=1),
        ) * (self.temperature**2)

        loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        return loss

    def call(self, x):
        return self.student(x)


# Create the teacher
teacher = keras.Sequential(
    [
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        layers.Conv2D(64, (3, 3), strides=(2, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(10),
    ],
    name="teacher",
)

# Create the student
student = keras.Sequential(
    [
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(10),
    ],
    name="student",
)

# Clone student for later comparison
student_scratch = keras.models.clone_model(student)

for model in (teacher, student, student_scratch):
    set_numpy_weights(model)

# Prepare the train and test dataset.
batch_size = 64
patterns = rng.random((10, 28, 28)) < 0.3


def make_digits(count):
    labels = rng.integers(0, 10, size=count)
    pixels = patterns[labels] ^ (rng.random((count, 28, 28)) < 0.2)
    return (pixels * 255).astype(np.uint8), labels.astype(np.uint8)


(x_train, y_train), (x_test, y_test) = make_digits(256), make_digits(64)

# Normalize data
x_train = x_train.astype("float32") / 255.0
x_train = np.reshape(x_train, (-1, 28, 28, 1))

x_test = x_test.astype("float32") / 255.0
x_test = np.reshape(x_test, (-1, 28, 28, 1))

# Train teacher as usual
teacher.compile(
    optimizer=keras.optimizers.Adam(),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

# Train and evaluate teacher on data.
teacher.fit(x_train, y_train, epochs=2, shuffle=False)
print(teacher.evaluate(x_test, y_test))

# Initialize and compile distiller
distiller = Distiller(student=student, teacher=teacher)
distiller.compile(
    optimizer=keras.optimizers.Adam(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
    student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn=keras.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)

# Distill teacher to student
distiller.fit(x_train, y_train, epochs=1, shuffle=False)

# Evaluate student on test dataset
print(distiller.evaluate(x_test, y_test))

# Train student as doen usually
student_scratch.compile(
    optimizer=keras.optimizers.Adam(),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

# Train and evaluate student trained from scratch.
student_scratch.fit(x_train, y_train, epochs=1, shuffle=False)
print(student_scratch.evaluate(x_test, y_test))
