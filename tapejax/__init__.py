"""tapejax: TensorFlow 2's eager autodiff API on a JAX engine. Use it as `import tapejax as tf`.

This module is the `tf` namespace: explicit re-exports only, no logic.
"""

from tapejax import audio as audio
from tapejax import autodiff as autodiff
from tapejax import autograph as autograph
from tapejax import config as config
from tapejax import data as data
from tapejax import debugging as debugging
from tapejax import dtypes as dtypes
from tapejax import errors as errors
from tapejax import experimental as experimental
from tapejax import image as image
from tapejax import io as io
from tapejax import linalg as linalg
from tapejax import math as math
from tapejax import nn as nn
from tapejax import nest as nest
from tapejax import random as random
from tapejax import saved_model as saved_model
from tapejax import signal as signal
from tapejax import strings as strings
from tapejax import summary as summary
from tapejax import train as train
from tapejax import version as version
from tapejax.version import VERSION as __version__  # the TF version tapejax follows; its own: version.TAPEJAX_VERSION
from tapejax._src.dtypes import DType as DType
from tapejax._src.custom_gradient import custom_gradient as custom_gradient
from tapejax.from_jax import from_jax as from_jax
from tapejax._src.custom_gradient import recompute_grad as recompute_grad
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
from tapejax._src.dtypes import bool_ as bool  # noqa: A001, F401 (TF's name)
from tapejax._src.dtypes import string as string
from tapejax.ops.strings import as_string as as_string
from tapejax._src.control_flow import case as case
from tapejax._src.control_flow import cond as cond
from tapejax._src.control_flow import switch_case as switch_case
from tapejax._src.loops import foldl as foldl
from tapejax._src.loops import foldr as foldr
from tapejax._src.loops import map_fn as map_fn
from tapejax._src.loops import scan as scan
from tapejax._src.loops import vectorized_map as vectorized_map
from tapejax._src.loops import while_loop as while_loop
from tapejax._src.function import Function as Function
from tapejax._src.signature import TensorSpec as TensorSpec
from tapejax._src.function import function as function
from tapejax._src.concrete_function import init_scope as init_scope
from tapejax._src.gradient_tape import GradientTape as GradientTape
from tapejax._src.gradient_tape import UnconnectedGradients as UnconnectedGradients
from tapejax._src.gradient_tape import gradients as gradients
from tapejax._src.logs import get_logger as get_logger
from tapejax.runner import install_as_tensorflow as install_as_tensorflow
from tapejax._src.printing import print_ as print  # noqa: A001, F401 (TF's name)
from tapejax._src.host_callback import numpy_function as numpy_function
from tapejax._src.host_callback import py_function as py_function
from tapejax._src.tensor_array import TensorArray as TensorArray
from tapejax._src.tensor import Tensor as Tensor
from tapejax._src.tensor import TensorShape as TensorShape
from tapejax._src.variable import Variable as Variable
from tapejax._src.variable import name_scope as name_scope
from tapejax.ops.math import add as add
from tapejax.ops.math import subtract as subtract
from tapejax.ops.math import multiply as multiply
from tapejax.ops.math import truediv as truediv
from tapejax.ops.math import divide as divide
from tapejax.ops.math import pow as pow
from tapejax.ops.math import negative as negative
from tapejax.ops.math import abs as abs
from tapejax.ops.math import sign as sign
from tapejax.ops.math import square as square
from tapejax.ops.math import sqrt as sqrt
from tapejax.ops.math import exp as exp
from tapejax.ops.math import sin as sin
from tapejax.ops.math import cos as cos
from tapejax.ops.math import tan as tan
from tapejax.ops.math import asin as asin
from tapejax.ops.math import acos as acos
from tapejax.ops.math import atan as atan
from tapejax.ops.math import atan2 as atan2
from tapejax.ops.math import sinh as sinh
from tapejax.ops.math import cosh as cosh
from tapejax.ops.math import tanh as tanh
from tapejax.ops.math import asinh as asinh
from tapejax.ops.math import acosh as acosh
from tapejax.ops.math import atanh as atanh
from tapejax.ops.math import sigmoid as sigmoid
from tapejax.ops.math import maximum as maximum
from tapejax.ops.math import minimum as minimum
from tapejax.ops.math import clip_by_value as clip_by_value
from tapejax.ops.math import floor as floor
from tapejax.ops.math import round as round
from tapejax.ops.math import equal as equal
from tapejax.ops.math import not_equal as not_equal
from tapejax.ops.math import less as less
from tapejax.ops.math import less_equal as less_equal
from tapejax.ops.math import greater as greater
from tapejax.ops.math import greater_equal as greater_equal
from tapejax.ops.math import logical_and as logical_and
from tapejax.ops.math import logical_or as logical_or
from tapejax.ops.math import logical_not as logical_not
from tapejax.ops.math import reduce_sum as reduce_sum
from tapejax.ops.math import reduce_mean as reduce_mean
from tapejax.ops.math import reduce_max as reduce_max
from tapejax.ops.math import reduce_min as reduce_min
from tapejax.ops.math import reduce_prod as reduce_prod
from tapejax.ops.math import reduce_logsumexp as reduce_logsumexp
from tapejax.ops.math import reduce_any as reduce_any
from tapejax.ops.math import reduce_all as reduce_all
from tapejax.ops.math import argmax as argmax
from tapejax.ops.math import argmin as argmin
from tapejax.ops.math import add_n as add_n
from tapejax.ops.math import clip_by_norm as clip_by_norm
from tapejax.ops.math import cumsum as cumsum
from tapejax.ops.math import scalar_mul as scalar_mul
from tapejax.ops.math import truncatediv as truncatediv
from tapejax.ops.math import truncatemod as truncatemod
from tapejax.ops.math import complex as complex
from tapejax.ops.array import reshape as reshape
from tapejax.ops.array import transpose as transpose
from tapejax.ops.array import squeeze as squeeze
from tapejax.ops.array import expand_dims as expand_dims
from tapejax.ops.array import broadcast_to as broadcast_to
from tapejax.ops.array import tile as tile
from tapejax.ops.array import pad as pad
from tapejax.ops.array import stack as stack
from tapejax.ops.array import concat as concat
from tapejax.ops.array import unstack as unstack
from tapejax.ops.array import split as split
from tapejax.ops.array import einsum as einsum
from tapejax.ops.array import gather as gather
from tapejax.ops.array import where as where
from tapejax.ops.array import cast as cast
from tapejax.ops.array import identity as identity
from tapejax.ops.array import stop_gradient as stop_gradient
from tapejax.ops.array import shape as shape
from tapejax.ops.array import size as size
from tapejax.ops.array import rank as rank
from tapejax.ops.array import zeros as zeros
from tapejax.ops.array import ones as ones
from tapejax.ops.array import zeros_like as zeros_like
from tapejax.ops.array import ones_like as ones_like
from tapejax.ops.array import fill as fill
from tapejax.ops.array import eye as eye
from tapejax.ops.array import range as range
from tapejax.ops.array import linspace as linspace
from tapejax.ops.array import constant as constant
from tapejax.ops.array import convert_to_tensor as convert_to_tensor
from tapejax.ops.array import is_tensor as is_tensor
from tapejax.ops.array import newaxis as newaxis
from tapejax.ops.array import gather_nd as gather_nd
from tapejax.ops.array import scatter_nd as scatter_nd
from tapejax.ops.array import tensor_scatter_nd_update as tensor_scatter_nd_update
from tapejax.ops.array import tensor_scatter_nd_add as tensor_scatter_nd_add
from tapejax.ops.array import tensor_scatter_nd_sub as tensor_scatter_nd_sub
from tapejax.ops.array import tensor_scatter_nd_max as tensor_scatter_nd_max
from tapejax.ops.array import tensor_scatter_nd_min as tensor_scatter_nd_min
from tapejax.ops.array import boolean_mask as boolean_mask
from tapejax.ops.array import one_hot as one_hot
from tapejax.ops.array import sort as sort
from tapejax.ops.array import argsort as argsort
from tapejax.ops.array import unique as unique
from tapejax.ops.array import reverse as reverse
from tapejax.ops.array import roll as roll
from tapejax.ops.array import slice_ as slice  # noqa: A001, F401 (TF's name)
from tapejax.ops.array import strided_slice as strided_slice
from tapejax.ops.array import meshgrid as meshgrid
from tapejax.ops.array import repeat as repeat
from tapejax.ops.array import sequence_mask as sequence_mask
from tapejax.ops.array import searchsorted as searchsorted
from tapejax.ops.array import clip_by_global_norm as clip_by_global_norm
from tapejax.ops.array import histogram_fixed_width as histogram_fixed_width
from tapejax.ops.linalg import matmul as matmul
from tapejax.ops.linalg import norm as norm
from tapejax.ops.linalg import tensordot as tensordot
from tapejax._src.module import Module as Module
from tapejax._src.devices import device as device
from tapejax.init_ops import constant_initializer as constant_initializer
from tapejax.init_ops import ones_initializer as ones_initializer
from tapejax.init_ops import random_normal_initializer as random_normal_initializer
from tapejax.init_ops import random_uniform_initializer as random_uniform_initializer
from tapejax.init_ops import zeros_initializer as zeros_initializer
from tapejax.ops.graph import broadcast_dynamic_shape as broadcast_dynamic_shape
from tapejax.ops.graph import broadcast_static_shape as broadcast_static_shape
from tapejax.ops.graph import control_dependencies as control_dependencies
from tapejax.ops.graph import ensure_shape as ensure_shape
from tapejax.ops.graph import executing_eagerly as executing_eagerly
from tapejax.ops.graph import get_static_value as get_static_value
from tapejax.ops.graph import group as group
from tapejax.ops.graph import identity_n as identity_n
from tapejax.ops.graph import inside_function as inside_function
from tapejax.ops.graph import no_op as no_op
from tapejax.ops.graph import realdiv as realdiv
from tapejax.ops.graph import saturate_cast as saturate_cast
from tapejax.ops.graph import shape_n as shape_n
from tapejax.ops.graph import timestamp as timestamp
from tapejax import sparse as sparse  # noqa: E402 (built on the namespace above)
from tapejax.sparse import SparseTensor as SparseTensor  # noqa: E402
from tapejax._src.indexed_slices import IndexedSlices as IndexedSlices  # noqa: E402

# keras is built on the namespace above (dogfooding), so it comes last.
from tapejax import keras as keras  # noqa: E402
from tapejax import distribute as distribute  # noqa: E402
from tapejax.distribute._src.enums import VariableAggregation as VariableAggregation  # noqa: E402
from tapejax.distribute._src.enums import VariableSynchronization as VariableSynchronization  # noqa: E402
# TF 2's short names for Keras namespaces (`tf.optimizers` is `tf.keras.optimizers`).
from tapejax.keras import initializers as initializers  # noqa: E402
from tapejax.keras import losses as losses  # noqa: E402
from tapejax.keras import metrics as metrics  # noqa: E402
from tapejax.keras import optimizers as optimizers  # noqa: E402

from tapejax.to_jax import to_jax as to_jax  # noqa: E402 (JAX interop: tapejax's own, not TF's)
from tapejax.to_jax import variables_of as variables_of  # noqa: E402
from tapejax.to_jax import assign_state as assign_state  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf")
