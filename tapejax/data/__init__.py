"""`tf.data`: input pipelines (`tf.data.Dataset`) with TF's semantics, run on numpy and JAX arrays.

See README, "tf.data", for what works and how tapejax's pipelines differ from TF's.
"""

from tapejax.data import experimental as experimental
from tapejax.data.api import Dataset as Dataset
from tapejax.data.api import DatasetSpec as DatasetSpec
from tapejax.data.api import Options as Options
from tapejax.data.files import TextLineDataset as TextLineDataset
from tapejax.data.files import TFRecordDataset as TFRecordDataset
from tapejax.data.iteration import NumpyIterator as NumpyIterator
from tapejax.data.iteration import OwnedIterator as Iterator
from tapejax.data.stage import AUTOTUNE as AUTOTUNE
from tapejax.data.stage import INFINITE as INFINITE_CARDINALITY
from tapejax.data.stage import UNKNOWN as UNKNOWN_CARDINALITY
