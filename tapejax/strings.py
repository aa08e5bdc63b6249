"""tf.strings: string ops on the host (tapejax/ops/strings.py says how, and what is left out)."""

from tapejax.ops.strings import format as format  # noqa: A004 (TF name)
from tapejax.ops.strings import as_string as as_string
from tapejax.ops.strings import join as join
from tapejax.ops.strings import length as length
from tapejax.ops.strings import lower as lower
from tapejax.ops.strings import upper as upper
from tapejax.ops.strings import strip as strip
from tapejax.ops.strings import regex_replace as regex_replace
from tapejax.ops.strings import regex_full_match as regex_full_match
from tapejax.ops.strings import substr as substr
from tapejax.ops.strings import to_number as to_number
from tapejax.ops.strings import reduce_join as reduce_join
from tapejax.ops.strings import split as split
from tapejax.ops.strings import bytes_split as bytes_split
from tapejax.ops.strings import unicode_split as unicode_split
from tapejax.ops.strings import unicode_decode as unicode_decode
from tapejax.ops.strings import unicode_encode as unicode_encode
from tapejax.ops.strings import to_hash_bucket_fast as to_hash_bucket_fast
from tapejax.ops.strings import to_hash_bucket_strong as to_hash_bucket_strong

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.strings")
