"""tf.version: the TensorFlow version whose behaviour tapejax follows, and tapejax's own version.

Code gated on TF's version (`if tf.__version__ < "2.16"`, `packaging.version.parse(tf.__version__)`) sees the
TensorFlow release that tapejax takes as its spec, TF 2.21.0: `tf.__version__` and `tf.version.VERSION` name it.
tapejax's own release is `tapejax.version.TAPEJAX_VERSION` (the package metadata's version, which pyproject.toml
reads from here; `importlib.metadata.version("tapejax")` gives it too).

>>> import tapejax as tf
>>> tf.__version__ == tf.version.VERSION == "2.21.0"
True
"""

from tapejax._src.errors import missing_symbols as _missing_symbols

TAPEJAX_VERSION = "0.1.0"
VERSION = "2.21.0"  # the TF release tapejax follows (its values, dtypes and exception types are checked against it)
GIT_VERSION = f"v{VERSION}"
COMPILER_VERSION = f"tapejax {TAPEJAX_VERSION} (JAX)"

__getattr__ = _missing_symbols("tf.version")
