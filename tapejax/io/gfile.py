"""tf.io.gfile: file operations on local paths (tapejax/io/files.py)."""

from tapejax.io.files import GFile as GFile
from tapejax.io.files import copy as copy
from tapejax.io.files import exists as exists
from tapejax.io.files import glob as glob
from tapejax.io.files import isdir as isdir
from tapejax.io.files import listdir as listdir
from tapejax.io.files import makedirs as makedirs
from tapejax.io.files import mkdir as mkdir
from tapejax.io.files import remove as remove
from tapejax.io.files import rename as rename
from tapejax.io.files import rmtree as rmtree
from tapejax.io.files import stat as stat
from tapejax.io.files import walk as walk
from tapejax._src.errors import missing_symbols as _missing_symbols

__getattr__ = _missing_symbols("tf.io.gfile")
