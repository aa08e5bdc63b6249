"""`tf.distribute.cluster_resolver`: where a multi-worker job's tasks are (read from `TF_CONFIG`)."""

from tapejax._src.cluster import SimpleClusterResolver as SimpleClusterResolver
from tapejax._src.cluster import TFConfigClusterResolver as TFConfigClusterResolver
from tapejax.distribute._src.tpu import TPUClusterResolver as TPUClusterResolver
