"""tf.dtypes."""

from tapejax._src.dtypes import DType as DType
from tapejax._src.dtypes import as_dtype as as_dtype
from tapejax._src.dtypes import float16 as float16
from tapejax._src.dtypes import half as half
from tapejax._src.dtypes import bfloat16 as bfloat16
from tapejax._src.dtypes import float32 as float32
from tapejax._src.dtypes import float64 as float64
from tapejax._src.dtypes import double as double
from tapejax._src.dtypes import complex64 as complex64
from tapejax._src.dtypes import complex128 as complex128
from tapejax._src.dtypes import int8 as int8
from tapejax._src.dtypes import int16 as int16
from tapejax._src.dtypes import int32 as int32
from tapejax._src.dtypes import int64 as int64
from tapejax._src.dtypes import uint8 as uint8
from tapejax._src.dtypes import uint16 as uint16
from tapejax._src.dtypes import uint32 as uint32
from tapejax._src.dtypes import uint64 as uint64
from tapejax._src.dtypes import bool_ as bool  # noqa: F401 (TF names it bool)
from tapejax._src.dtypes import string as string
from tapejax.ops.array import cast as cast
from tapejax.ops.graph import saturate_cast as saturate_cast
from tapejax.ops.math import complex as complex  # noqa: A004 (TF's name)

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.dtypes")
