"""tf.keras: the subset that custom GradientTape training loops use (issue #5 brings the rest)."""

from tapejax.keras import activations as activations
from tapejax.keras import applications as applications
from tapejax.keras import backend as backend
from tapejax.keras import callbacks as callbacks
from tapejax.keras import constraints as constraints
from tapejax.keras import datasets as datasets
from tapejax.keras import initializers as initializers
from tapejax.keras import layers as layers
from tapejax.keras import losses as losses
from tapejax.keras import metrics as metrics
from tapejax.keras import models as models
from tapejax.keras import ops as ops
from tapejax.keras import optimizers as optimizers
from tapejax.keras import preprocessing as preprocessing
from tapejax.keras import regularizers as regularizers
from tapejax.keras import saving as saving
from tapejax.keras import utils as utils
from tapejax.keras.layers import Input as Input
from tapejax.keras.layers import InputLayer as InputLayer
from tapejax.keras.layers import Layer as Layer
from tapejax.keras.models import Model as Model
from tapejax.keras.models import Sequential as Sequential
from tapejax.keras.variables import Variable as Variable

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras")
