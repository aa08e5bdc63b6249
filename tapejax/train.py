"""tf.train: the tf.train.Example protocol buffers (tapejax/io/example.py)."""

from tapejax.io.example import BytesList as BytesList
from tapejax.io.example import Example as Example
from tapejax.io.example import Feature as Feature
from tapejax.io.example import FeatureList as FeatureList
from tapejax.io.example import FeatureLists as FeatureLists
from tapejax.io.example import Features as Features
from tapejax.io.example import FloatList as FloatList
from tapejax.io.example import Int64List as Int64List
from tapejax.io.example import SequenceExample as SequenceExample
from tapejax._src.errors import missing_symbols as _missing_symbols

__getattr__ = _missing_symbols("tf.train")
