"""tf.io: files (read_file, write_file, gfile), image codecs, TFRecord files and tf.train.Example parsing.

See tapejax/io/files.py, images.py, tfrecord.py and example.py for what each supports.
"""

from tapejax.io import gfile as gfile
from tapejax.io.files import matching_files as matching_files
from tapejax.io.files import read_file as read_file
from tapejax.io.files import write_file as write_file
from tapejax.io.images import decode_bmp as decode_bmp
from tapejax.io.images import decode_gif as decode_gif
from tapejax.io.images import decode_image as decode_image
from tapejax.io.images import decode_jpeg as decode_jpeg
from tapejax.io.images import decode_png as decode_png
from tapejax.io.images import encode_jpeg as encode_jpeg
from tapejax.io.images import encode_png as encode_png
from tapejax.io.images import is_jpeg as is_jpeg
from tapejax.io.tfrecord import TFRecordOptions as TFRecordOptions
from tapejax.io.tfrecord import TFRecordWriter as TFRecordWriter
from tapejax.io.example import FixedLenFeature as FixedLenFeature
from tapejax.io.example import VarLenFeature as VarLenFeature
from tapejax.io.example import parse_example as parse_example
from tapejax.io.example import parse_single_example as parse_single_example
from tapejax._src.errors import missing_symbols as _missing_symbols

__getattr__ = _missing_symbols("tf.io")
