"""`tf.distribute.experimental`: the communication options of MultiWorkerMirroredStrategy, and its old name."""

from tapejax.distribute._src.multi_worker import CommunicationImplementation as CommunicationImplementation
from tapejax.distribute._src.multi_worker import CommunicationOptions as CommunicationOptions
from tapejax.distribute._src.multi_worker import (
    ExperimentalMultiWorkerMirroredStrategy as MultiWorkerMirroredStrategy,
)
from tapejax.distribute._src.tpu import TPUStrategy as TPUStrategy
