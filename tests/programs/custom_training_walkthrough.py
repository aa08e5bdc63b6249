"""TensorFlow tutorial "Custom training: walkthrough": a penguin classifier trained by hand with GradientTape,
Keras metrics and SGD, then evaluated and used for predictions.

Source: tensorflow/docs, site/en/tutorials/customization/custom_training_walkthrough.ipynb (commit
7c3650212740204359d4ceae481abc79345541be), https://www.tensorflow.org/tutorials/customization/custom_training_walkthrough.
Rewritten after the tutorial, not copied: the same model, loss, gradient function, optimizer, metrics, loops and
printed lines, in the tutorial's order.

Changes:
- The penguins dataset (`tfds.load("penguins/processed")`, a download) is replaced by `tf.data` datasets of seeded
  numpy data of the same form (`Dataset.from_tensor_slices`): 4 features scaled to [0, 1], labels 0-2 as int64,
  160 training and 68 test examples (the tutorial: 272 and 68). Printing the tfds previews (`tfds.as_dataframe`, `info.features`) and the
  matplotlib plots are left out.
- `num_epochs` is 51 (the tutorial: 201), so the loop prints epochs 0 and 50.
- The model's weights are set from a seeded numpy generator (Glorot uniform kernels, zero biases), so both
  engines start from the same weights.
- The cells that only display a value (`predictions[:5]`, `tf.nn.softmax(predictions[:5])`,
  `tf.stack([y, prediction], axis=1)`) are printed.
"""

import os

import numpy as np
import tensorflow as tf

print("TensorFlow version: {}".format(tf.__version__))


def make_penguins(rng, n):
    centers = np.array([[0.3, 0.3, 0.6, 0.3], [0.35, 0.6, 0.6, 0.35], [0.7, 0.55, 0.3, 0.75]])
    labels = rng.integers(0, 3, size=n)
    features = np.clip(centers[labels] + rng.normal(0, 0.08, size=(n, 4)), 0, 1)
    return features.astype(np.float32), labels.astype(np.int64)


rng = np.random.default_rng(0)
class_names = ['Adélie', 'Chinstrap', 'Gentoo']
ds_test = tf.data.Dataset.from_tensor_slices(make_penguins(rng, 68))
ds_train = tf.data.Dataset.from_tensor_slices(make_penguins(rng, 160))
assert isinstance(ds_test, tf.data.Dataset)

ds_train_batch = ds_train.batch(32)
features, labels = next(iter(ds_train_batch))
print(features)
print(labels)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # the input shape is required
    tf.keras.layers.Dense(10, activation=tf.nn.relu),
    tf.keras.layers.Dense(3)
])
for weight in model.weights:
    shape = tuple(weight.shape)
    if len(shape) == 2:
        limit = np.sqrt(6.0 / (shape[0] + shape[1]))
        weight.assign(rng.uniform(-limit, limit, size=shape).astype(np.float32))
    else:
        weight.assign(np.zeros(shape, dtype=np.float32))

predictions = model(features)
print(predictions[:5])
print(tf.nn.softmax(predictions[:5]))
print("Prediction: {}".format(tf.math.argmax(predictions, axis=1)))
print("    Labels: {}".format(labels))

loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def loss(model, x, y, training):
    # `training` matters only for layers that behave differently in training (Dropout); kept as the tutorial.
    y_ = model(x, training=training)
    return loss_object(y_true=y, y_pred=y_)


l = loss(model, features, labels, training=False)
print("Loss test: {}".format(l))


def grad(model, inputs, targets):
    with tf.GradientTape() as tape:
        loss_value = loss(model, inputs, targets, training=True)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)

loss_value, grads = grad(model, features, labels)
print("Step: {}, Initial Loss: {}".format(optimizer.iterations.numpy(), loss_value.numpy()))
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("Step: {},         Loss: {}".format(optimizer.iterations.numpy(),
                                          loss(model, features, labels, training=True).numpy()))

train_loss_results = []
train_accuracy_results = []
num_epochs = 51

for epoch in range(num_epochs):
    epoch_loss_avg = tf.keras.metrics.Mean()
    epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    for x, y in ds_train_batch:
        loss_value, grads = grad(model, x, y)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        epoch_loss_avg.update_state(loss_value)  # the batch's loss
        epoch_accuracy.update_state(y, model(x, training=True))  # predicted against actual labels

    train_loss_results.append(epoch_loss_avg.result())
    train_accuracy_results.append(epoch_accuracy.result())
    if epoch % 50 == 0:
        print("Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(epoch, epoch_loss_avg.result(),
                                                                    epoch_accuracy.result()))

test_accuracy = tf.keras.metrics.Accuracy()
ds_test_batch = ds_test.batch(10)
for (x, y) in ds_test_batch:
    logits = model(x, training=False)
    prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
    test_accuracy(prediction, y)
print("Test set accuracy: {:.3%}".format(test_accuracy.result()))
print(tf.stack([y, prediction], axis=1))

predict_dataset = tf.convert_to_tensor([
    [0.3, 0.8, 0.4, 0.5, ],
    [0.4, 0.1, 0.8, 0.5, ],
    [0.7, 0.9, 0.8, 0.4]
])
predictions = model(predict_dataset, training=False)
for i, logits in enumerate(predictions):
    class_idx = tf.math.argmax(logits).numpy()
    p = tf.nn.softmax(logits)[class_idx]
    name = class_names[class_idx]
    print("Example {} prediction: {} ({:4.1f}%)".format(i, name, 100 * p))
