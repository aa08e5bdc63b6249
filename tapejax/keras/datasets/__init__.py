"""tf.keras.datasets: Keras's small data sets, from the files Keras downloads, cached where Keras caches them.

Each `load_data()` returns `(x_train, y_train), (x_test, y_test)` as NumPy arrays of Keras's dtypes and shapes.
The files are looked for in `$KERAS_HOME/datasets` (else `~/.keras/datasets`), so a data set real Keras
downloaded is read without the network; a missing one is downloaded from Keras's URL by
`tf.keras.utils.get_file`, which checks its hash.
"""

from tapejax.keras.datasets import boston_housing as boston_housing
from tapejax.keras.datasets import california_housing as california_housing
from tapejax.keras.datasets import cifar10 as cifar10
from tapejax.keras.datasets import cifar100 as cifar100
from tapejax.keras.datasets import fashion_mnist as fashion_mnist
from tapejax.keras.datasets import imdb as imdb
from tapejax.keras.datasets import mnist as mnist
from tapejax.keras.datasets import reuters as reuters

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.datasets")
