"""tf.autograph.experimental."""

from tapejax._src.autograph import do_not_convert as do_not_convert
