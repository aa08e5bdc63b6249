"""The bad-input corpus: calls TensorFlow 2.21 rejects, each with the exception type TF raises.

Each case is data: `run(tf)` makes the bad call through the public API of the module `tf` (tapejax or real
TensorFlow), and `expected` names TF's exception class (`tf.errors.X` for op errors, else a builtin). A case with
`setup` first builds state with `setup(tf)` (a Variable, or a tuple of them) and calls `run(tf, state)`: the
state must be unchanged after the failure. tests/badinput/test_badinput.py runs every case on tapejax and
tests/compat/test_badinput_vs_tf.py on TensorFlow, so the listed type is TF's own and cannot drift.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Case(NamedTuple):
    name: str
    expected: str  # "InvalidArgumentError" (tf.errors) or a builtin ("ValueError", "TypeError", ...)
    run: Callable[..., Any]
    setup: Callable[[Any], Any] | None = None


IA, VE, TE = "InvalidArgumentError", "ValueError", "TypeError"

# Cases where TensorFlow returns a value and tapejax raises (README, "Errors"): case name -> why. The compat test
# checks that TF really is silent on each, so the list cannot go stale.
TF_SILENT: dict[str, str] = {
    "constant_int8_overflow": "TF wraps 300 to 44 in int8; tapejax raises the TypeError TF raises for a Python "
    "value that does not fit the dtype otherwise (1.5 as int32)",
    "constant_uint8_negative": "TF wraps -1 to 255 in uint8; tapejax raises TypeError, as above",
}


def _fn(tf, body, *args, **kwargs):
    """`body` run inside a tf.function (values traced)."""
    return tf.function(body)(*args, **kwargs)


CASES: list[Case] = [
    # -- gather-like: indices out of range (TF's CPU kernels check them) ------------------------------------------
    Case("gather_index_too_large", IA, lambda tf: tf.gather([1., 2., 3.], [0, 7])),
    Case("gather_negative_index", IA, lambda tf: tf.gather([1., 2., 3.], [-1])),
    Case("gather_2d_axis1", IA, lambda tf: tf.gather(tf.ones([2, 3]), [3], axis=1)),
    Case("gather_axis_out_of_range", IA, lambda tf: tf.gather([1., 2.], [0], axis=2)),
    Case("gather_batch_dims_too_large", IA, lambda tf: tf.gather(tf.ones([2, 3]), [[0]], batch_dims=3)),
    Case("gather_float_indices", IA, lambda tf: tf.gather([1., 2.], [0.5])),
    Case("gather_nd_out_of_range", IA, lambda tf: tf.gather_nd(tf.ones([2, 2]), [[0, 5]])),
    Case("gather_nd_index_depth", IA, lambda tf: tf.gather_nd(tf.ones([2, 2]), [[0, 0, 0]])),
    Case("scatter_nd_out_of_range", IA, lambda tf: tf.scatter_nd([[4]], [1.], [3])),
    Case("scatter_nd_updates_shape", IA, lambda tf: tf.scatter_nd([[0], [1]], [1., 2., 3.], [3])),
    Case("tensor_scatter_update_out_of_range", IA,
         lambda tf: tf.tensor_scatter_nd_update(tf.zeros([3]), [[3]], [1.])),
    Case("tensor_scatter_add_updates_shape", IA,
         lambda tf: tf.tensor_scatter_nd_add(tf.zeros([3]), [[0]], [1., 2.])),
    Case("unsorted_segment_sum_id_too_large", IA,
         lambda tf: tf.math.unsorted_segment_sum([1., 2.], [0, 5], num_segments=2)),
    Case("segment_sum_unsorted_ids", IA, lambda tf: tf.math.segment_sum([1., 2., 3.], [1, 0, 1])),
    Case("embedding_lookup_id_too_large", IA, lambda tf: tf.nn.embedding_lookup(tf.ones([3, 2]), [3])),
    Case("sparse_xent_label_too_large", IA, lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[3], logits=[[1., 2., 3.]])),
    Case("one_hot_negative_depth", IA, lambda tf: tf.one_hot([0, 1], -1)),
    Case("one_hot_float_indices", IA, lambda tf: tf.one_hot([0.5, 1.], 3)),
    Case("bincount_negative", IA, lambda tf: tf.math.bincount([-1, 2])),
    Case("invert_permutation_not_perm", IA, lambda tf: tf.math.invert_permutation([0, 0])),
    # -- split, unstack -----------------------------------------------------------------------------------------
    Case("split_sizes_short", IA, lambda tf: tf.split(tf.ones([5]), [2, 2])),
    Case("split_sizes_long", IA, lambda tf: tf.split(tf.ones([5]), [3, 3])),
    Case("split_num_not_divisor", IA, lambda tf: tf.split(tf.ones([5]), 2)),
    Case("split_two_unknown", IA, lambda tf: tf.split(tf.ones([5]), [-1, -1, 1])),
    Case("split_axis_out_of_range", IA, lambda tf: tf.split(tf.ones([4]), 2, axis=1)),
    Case("split_negative_size", IA, lambda tf: tf.split(tf.ones([4]), [5, -1])),
    Case("split_zero", IA, lambda tf: tf.split(tf.ones([4]), 0)),
    Case("unstack_axis_out_of_range", VE, lambda tf: tf.unstack(tf.ones([2, 3]), axis=2)),
    Case("unstack_wrong_num", IA, lambda tf: tf.unstack(tf.ones([2, 3]), num=3)),
    Case("unstack_scalar", VE, lambda tf: tf.unstack(tf.constant(1.))),
    # -- tile, pad, broadcast_to --------------------------------------------------------------------------------
    Case("tile_multiples_too_short", IA, lambda tf: tf.tile(tf.ones([2, 3]), [2])),
    Case("tile_multiples_too_long", IA, lambda tf: tf.tile(tf.ones([2]), [2, 2])),
    Case("tile_negative_multiple", IA, lambda tf: tf.tile(tf.ones([2]), [-1])),
    Case("pad_paddings_rank_mismatch", IA, lambda tf: tf.pad(tf.ones([2, 2]), [[1, 1]])),
    Case("pad_paddings_not_pairs", IA, lambda tf: tf.pad(tf.ones([2]), [[1, 1, 1]])),
    Case("pad_negative", IA, lambda tf: tf.pad(tf.ones([2]), [[-1, 0]])),
    Case("pad_reflect_too_large", IA, lambda tf: tf.pad(tf.ones([2]), [[2, 0]], mode="REFLECT")),
    Case("pad_symmetric_too_large", IA, lambda tf: tf.pad(tf.ones([2]), [[3, 0]], mode="SYMMETRIC")),
    Case("pad_bad_mode", VE, lambda tf: tf.pad(tf.ones([2]), [[1, 0]], mode="WRAP")),
    Case("broadcast_to_incompatible", IA, lambda tf: tf.broadcast_to(tf.ones([3]), [2, 2])),
    Case("broadcast_to_fewer_dims", IA, lambda tf: tf.broadcast_to(tf.ones([2, 3]), [3])),
    # -- scans ------------------------------------------------------------------------------------------------
    Case("cumsum_axis_out_of_range", IA, lambda tf: tf.math.cumsum(tf.ones([3]), axis=1)),
    Case("cumsum_negative_axis_out_of_range", IA, lambda tf: tf.math.cumsum(tf.ones([3]), axis=-2)),
    Case("cumprod_axis_out_of_range", IA, lambda tf: tf.math.cumprod(tf.ones([2, 2]), axis=2)),
    Case("cumulative_logsumexp_axis", IA, lambda tf: tf.math.cumulative_logsumexp(tf.ones([2]), axis=3)),
    # -- integer division by zero -----------------------------------------------------------------------------
    Case("int_floordiv_by_zero", IA, lambda tf: tf.constant(1) // tf.constant(0)),
    Case("int_floordiv_by_zero_vector", IA, lambda tf: tf.constant([4, 5]) // tf.constant([1, 0])),
    Case("int_mod_by_zero", IA, lambda tf: tf.constant([4, 5]) % 0),
    Case("int64_floordiv_by_zero", IA, lambda tf: tf.math.floordiv(tf.constant(3, tf.int64), tf.constant(0, tf.int64))),
    Case("int_floormod_by_zero", IA, lambda tf: tf.math.floormod(tf.constant(3), 0)),
    Case("int_truncatediv_by_zero", "InternalError", lambda tf: tf.truncatediv(tf.constant(3), tf.constant(0))),
    Case("int_truncatemod_by_zero", "InternalError", lambda tf: tf.truncatemod(tf.constant(3), tf.constant(0))),
    # -- dtype classes: float-only ops on integers ------------------------------------------------------------
    Case("log_int32", IA, lambda tf: tf.math.log(tf.constant([1, 2]))),
    Case("sqrt_int32", IA, lambda tf: tf.sqrt(tf.constant([4]))),
    Case("exp_int32", IA, lambda tf: tf.exp(tf.constant(1))),
    Case("sin_int32", IA, lambda tf: tf.sin(tf.constant(1))),
    Case("tanh_int32", IA, lambda tf: tf.tanh(tf.constant([1]))),
    Case("sigmoid_int32", IA, lambda tf: tf.sigmoid(tf.constant([1]))),
    Case("rsqrt_int32", IA, lambda tf: tf.math.rsqrt(tf.constant([1]))),
    Case("log1p_int32", IA, lambda tf: tf.math.log1p(tf.constant([1]))),
    Case("erf_int32", IA, lambda tf: tf.math.erf(tf.constant([1]))),
    Case("lgamma_int32", IA, lambda tf: tf.math.lgamma(tf.constant([1]))),
    Case("softmax_int32", IA, lambda tf: tf.nn.softmax(tf.constant([1, 2]))),
    Case("log_softmax_int32", IA, lambda tf: tf.nn.log_softmax(tf.constant([1, 2]))),
    Case("softplus_int32", IA, lambda tf: tf.nn.softplus(tf.constant([1, 2]))),
    Case("reduce_logsumexp_int32", IA, lambda tf: tf.math.reduce_logsumexp(tf.constant([1, 2]))),
    Case("log_bool", IA, lambda tf: tf.math.log(tf.constant([True]))),
    Case("negative_bool", IA, lambda tf: tf.negative(tf.constant([True]))),
    Case("abs_bool", IA, lambda tf: tf.abs(tf.constant([True]))),
    Case("logical_and_float", IA, lambda tf: tf.logical_and(tf.constant([1.]), tf.constant([0.]))),
    Case("logical_not_int", IA, lambda tf: tf.logical_not(tf.constant([1]))),
    Case("floor_int32", IA, lambda tf: tf.floor(tf.constant([1]))),
    Case("reduce_all_float", IA, lambda tf: tf.reduce_all(tf.constant([1.]))),
    Case("l2_loss_int32", IA, lambda tf: tf.nn.l2_loss(tf.constant([1, 2]))),
    Case("relu_bool", IA, lambda tf: tf.nn.relu(tf.constant([True]))),
    Case("reduce_std_int32", TE, lambda tf: tf.math.reduce_std(tf.constant([1, 2]))),
    # -- tf.where ---------------------------------------------------------------------------------------------
    Case("where_float_condition", VE, lambda tf: tf.where(tf.constant([1., 0.]), [1., 2.], [3., 4.])),
    Case("where_int_condition", VE, lambda tf: tf.where(tf.constant([1, 0]), [1., 2.], [3., 4.])),
    Case("where_shape_mismatch", IA, lambda tf: tf.where([True, False], tf.ones([3]), tf.ones([3]))),
    Case("where_xy_dtype_mismatch", IA, lambda tf: tf.where([True], tf.constant([1.]), tf.constant([1]))),
    Case("where_only_x", VE, lambda tf: tf.where([True], [1.])),
    Case("where_xy_shape_mismatch", IA, lambda tf: tf.where([True, False], tf.ones([2]), tf.ones([3]))),
    # -- linear algebra ---------------------------------------------------------------------------------------
    Case("inv_singular", IA, lambda tf: tf.linalg.inv(tf.zeros([2, 2]))),
    Case("inv_singular_rank1", IA, lambda tf: tf.linalg.inv(tf.constant([[1., 2.], [2., 4.]]))),
    Case("inv_not_square", IA, lambda tf: tf.linalg.inv(tf.ones([2, 3]))),
    Case("inv_int32", IA, lambda tf: tf.linalg.inv(tf.constant([[1, 0], [0, 1]]))),
    Case("solve_singular", IA, lambda tf: tf.linalg.solve(tf.zeros([2, 2]), tf.ones([2, 1]))),
    Case("solve_rhs_rows", IA, lambda tf: tf.linalg.solve(tf.eye(2), tf.ones([3, 1]))),
    Case("cholesky_not_square", IA, lambda tf: tf.linalg.cholesky(tf.ones([2, 3]))),
    Case("det_not_square", IA, lambda tf: tf.linalg.det(tf.ones([2, 3]))),
    Case("det_int32", IA, lambda tf: tf.linalg.det(tf.constant([[1, 0], [0, 1]]))),
    Case("matmul_inner_mismatch", IA, lambda tf: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))),
    Case("matmul_rank1", IA, lambda tf: tf.matmul(tf.ones([3]), tf.ones([3]))),
    Case("matmul_dtype_mismatch", IA, lambda tf: tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))),
    Case("matmul_batch_mismatch", IA, lambda tf: tf.matmul(tf.ones([2, 2, 2]), tf.ones([3, 2, 2]))),
    Case("matmul_operator_mismatch", IA, lambda tf: tf.ones([2, 3]) @ tf.ones([2, 3])),
    Case("matvec_mismatch", IA, lambda tf: tf.linalg.matvec(tf.ones([2, 3]), tf.ones([2]))),
    Case("matrix_transpose_rank1", VE, lambda tf: tf.linalg.matrix_transpose(tf.ones([3]))),
    Case("tensordot_mismatch", IA, lambda tf: tf.tensordot(tf.ones([2, 3]), tf.ones([2, 3]), axes=1)),
    Case("einsum_shape_mismatch", IA, lambda tf: tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([2, 3]))),
    Case("einsum_bad_equation", VE, lambda tf: tf.einsum("ij,jk->il", tf.ones([2, 3]), tf.ones([3, 2]))),
    Case("cross_not_3", "FailedPreconditionError", lambda tf: tf.linalg.cross(tf.ones([2]), tf.ones([2]))),
    Case("trace_rank1", IA, lambda tf: tf.linalg.trace(tf.ones([3]))),
    # -- reductions and axes ----------------------------------------------------------------------------------
    Case("reduce_sum_axis_out_of_range", IA, lambda tf: tf.reduce_sum(tf.ones([3]), axis=1)),
    Case("reduce_sum_negative_axis", IA, lambda tf: tf.reduce_sum(tf.ones([2, 2]), axis=-3)),
    Case("reduce_mean_axis_out_of_range", IA, lambda tf: tf.reduce_mean(tf.ones([2, 2]), axis=[0, 2])),
    Case("reduce_max_axis_out_of_range", IA, lambda tf: tf.reduce_max(tf.ones([2]), axis=1)),
    Case("reduce_min_axis_out_of_range", IA, lambda tf: tf.reduce_min(tf.ones([2]), axis=-2)),
    Case("reduce_prod_axis_out_of_range", IA, lambda tf: tf.reduce_prod(tf.ones([2]), axis=5)),
    Case("reduce_any_axis_out_of_range", IA, lambda tf: tf.reduce_any(tf.constant([True]), axis=1)),
    Case("reduce_all_axis_out_of_range", IA, lambda tf: tf.reduce_all(tf.constant([True]), axis=1)),
    Case("reduce_logsumexp_axis_out_of_range", IA, lambda tf: tf.reduce_logsumexp(tf.ones([2]), axis=1)),
    Case("reduce_sum_scalar_axis", IA, lambda tf: tf.reduce_sum(tf.constant(1.), axis=0)),
    Case("reduce_variance_axis", IA, lambda tf: tf.math.reduce_variance(tf.ones([2]), axis=1)),
    Case("count_nonzero_axis", IA, lambda tf: tf.math.count_nonzero(tf.ones([2]), axis=1)),
    Case("argmax_axis_out_of_range", IA, lambda tf: tf.argmax(tf.ones([3]), axis=1)),
    Case("argmin_axis_out_of_range", IA, lambda tf: tf.argmin(tf.ones([3]), axis=-2)),
    Case("argmax_empty", IA, lambda tf: tf.argmax(tf.zeros([0]))),
    Case("top_k_k_too_large", IA, lambda tf: tf.math.top_k(tf.ones([3]), k=4)),
    Case("top_k_negative_k", IA, lambda tf: tf.math.top_k(tf.ones([3]), k=-1)),
    Case("top_k_scalar", IA, lambda tf: tf.math.top_k(tf.constant(1.), k=1)),
    Case("sort_axis_out_of_range", IA, lambda tf: tf.sort(tf.ones([3]), axis=1)),
    Case("argsort_axis_out_of_range", IA, lambda tf: tf.argsort(tf.ones([3]), axis=2)),
    Case("reverse_axis_out_of_range", IA, lambda tf: tf.reverse(tf.ones([3]), [1])),
    Case("roll_axis_out_of_range", IA, lambda tf: tf.roll(tf.ones([3]), 1, axis=1)),
    Case("softmax_axis_out_of_range", IA, lambda tf: tf.nn.softmax(tf.ones([3]), axis=1)),
    Case("l2_normalize_axis_out_of_range", IA, lambda tf: tf.nn.l2_normalize(tf.ones([3]), axis=1)),
    Case("moments_axis_out_of_range", IA, lambda tf: tf.nn.moments(tf.ones([3]), axes=[1])),
    # -- shapes -----------------------------------------------------------------------------------------------
    Case("reshape_wrong_size", IA, lambda tf: tf.reshape(tf.ones([5]), [2, 3])),
    Case("reshape_two_unknown", IA, lambda tf: tf.reshape(tf.ones([4]), [-1, -1])),
    Case("reshape_unknown_not_divisible", IA, lambda tf: tf.reshape(tf.ones([5]), [-1, 2])),
    Case("reshape_negative_dim", IA, lambda tf: tf.reshape(tf.ones([4]), [-2, -2])),
    Case("squeeze_not_one", IA, lambda tf: tf.squeeze(tf.ones([2, 1]), axis=0)),
    Case("squeeze_axis_out_of_range", IA, lambda tf: tf.squeeze(tf.ones([2, 1]), axis=2)),
    Case("expand_dims_axis_out_of_range", IA, lambda tf: tf.expand_dims(tf.ones([2]), axis=3)),
    Case("expand_dims_negative_axis", IA, lambda tf: tf.expand_dims(tf.ones([2]), axis=-3)),
    Case("transpose_perm_short", IA, lambda tf: tf.transpose(tf.ones([2, 3]), [0])),
    Case("transpose_perm_repeated", IA, lambda tf: tf.transpose(tf.ones([2, 3]), [0, 0])),
    Case("transpose_perm_out_of_range", IA, lambda tf: tf.transpose(tf.ones([2, 3]), [0, 2])),
    # -- concat, stack, add_n ---------------------------------------------------------------------------------
    Case("concat_shape_mismatch", IA, lambda tf: tf.concat([tf.ones([2, 2]), tf.ones([2, 3])], axis=0)),
    Case("concat_rank_mismatch", IA, lambda tf: tf.concat([tf.ones([2]), tf.ones([2, 2])], axis=0)),
    Case("concat_axis_out_of_range", IA, lambda tf: tf.concat([tf.ones([2]), tf.ones([2])], axis=1)),
    Case("concat_dtype_mismatch", IA, lambda tf: tf.concat([tf.ones([2]), tf.ones([2], tf.int32)], axis=0)),
    Case("concat_scalars", IA, lambda tf: tf.concat([tf.constant(1.), tf.constant(2.)], axis=0)),
    Case("stack_shape_mismatch", IA, lambda tf: tf.stack([tf.ones([2]), tf.ones([3])])),
    Case("stack_axis_out_of_range", VE, lambda tf: tf.stack([tf.ones([2]), tf.ones([2])], axis=3)),
    Case("stack_dtype_mismatch", IA, lambda tf: tf.stack([tf.ones([2]), tf.ones([2], tf.int32)])),
    Case("add_n_shape_mismatch", IA, lambda tf: tf.add_n([tf.ones([2]), tf.ones([3])])),
    Case("add_n_empty", VE, lambda tf: tf.add_n([])),
    # -- broadcasting and dtypes of binary ops ----------------------------------------------------------------
    Case("add_broadcast_mismatch", IA, lambda tf: tf.ones([2]) + tf.ones([3])),
    Case("multiply_broadcast_mismatch", IA, lambda tf: tf.multiply(tf.ones([2, 3]), tf.ones([4]))),
    Case("subtract_broadcast_mismatch", IA, lambda tf: tf.subtract(tf.ones([2, 2]), tf.ones([3, 2]))),
    Case("divide_broadcast_mismatch", IA, lambda tf: tf.ones([2]) / tf.ones([3])),
    Case("maximum_broadcast_mismatch", IA, lambda tf: tf.maximum(tf.ones([2]), tf.ones([3]))),
    Case("equal_broadcast_mismatch", IA, lambda tf: tf.math.equal(tf.ones([2]), tf.ones([3]))),
    Case("less_broadcast_mismatch", IA, lambda tf: tf.ones([2]) < tf.ones([3])),
    Case("pow_broadcast_mismatch", IA, lambda tf: tf.pow(tf.ones([2]), tf.ones([3]))),
    Case("squared_difference_mismatch", IA, lambda tf: tf.math.squared_difference(tf.ones([2]), tf.ones([3]))),
    Case("add_dtype_mismatch", IA, lambda tf: tf.constant([1., 2.]) + tf.constant([1, 2])),
    Case("multiply_dtype_mismatch", IA, lambda tf: tf.constant(1.) * tf.constant(1., tf.float64)),
    Case("divide_dtype_mismatch", TE, lambda tf: tf.constant(1.) / tf.constant(1)),
    Case("int_negative_power", IA, lambda tf: tf.constant(2) ** tf.constant(-1)),
    Case("atan2_dtype_mismatch", IA, lambda tf: tf.math.atan2(tf.constant(1.), tf.constant(1., tf.float64))),
    Case("add_string_and_float", IA, lambda tf: tf.constant(1.) + "a"),
    # -- creation ---------------------------------------------------------------------------------------------
    Case("zeros_negative_dim", IA, lambda tf: tf.zeros([-1])),
    Case("ones_negative_dim", IA, lambda tf: tf.ones([2, -3])),
    Case("fill_negative_dim", IA, lambda tf: tf.fill([-1], 1.)),
    Case("fill_value_not_scalar", IA, lambda tf: tf.fill([2], [1., 2.])),
    Case("range_zero_delta", IA, lambda tf: tf.range(0, 10, 0)),
    Case("range_wrong_direction", IA, lambda tf: tf.range(10, 0, 1)),
    Case("range_wrong_direction_negative", IA, lambda tf: tf.range(0, 10, -1)),
    Case("eye_negative", IA, lambda tf: tf.eye(-1)),
    Case("linspace_negative_num", IA, lambda tf: tf.linspace(0., 1., -1)),
    Case("random_uniform_negative_shape", IA, lambda tf: tf.random.uniform([-1])),
    Case("random_uniform_int_no_maxval", VE, lambda tf: tf.random.uniform([2], dtype=tf.int32)),
    Case("random_normal_int_dtype", TE, lambda tf: tf.random.normal([2], dtype=tf.int32)),
    Case("sequence_mask_negative_maxlen", IA, lambda tf: tf.sequence_mask([1, 2], maxlen=-1)),
    # -- slicing ----------------------------------------------------------------------------------------------
    Case("index_too_large", IA, lambda tf: tf.constant([1., 2., 3.])[5]),
    Case("index_too_negative", IA, lambda tf: tf.constant([1., 2., 3.])[-4]),
    Case("index_too_many", IA, lambda tf: tf.constant([1., 2., 3.])[0, 0]),
    Case("index_float", TE, lambda tf: tf.constant([1., 2.])[1.5]),
    Case("index_string", TE, lambda tf: tf.constant([1., 2.])["a"]),
    Case("index_zero_step", IA, lambda tf: tf.constant([1., 2.])[::0]),
    Case("slice_begin_out_of_range", IA, lambda tf: tf.slice(tf.ones([3]), [4], [1])),
    Case("slice_size_too_large", IA, lambda tf: tf.slice(tf.ones([3]), [1], [3])),
    Case("slice_begin_rank_mismatch", IA, lambda tf: tf.slice(tf.ones([3, 3]), [0], [1])),
    Case("strided_slice_zero_stride", IA, lambda tf: tf.strided_slice(tf.ones([3]), [0], [2], [0])),
    # -- cast and constant ------------------------------------------------------------------------------------
    Case("cast_bad_dtype_name", TE, lambda tf: tf.cast(tf.ones([2]), "notadtype")),
    Case("constant_float_to_int", TE, lambda tf: tf.constant(1.5, dtype=tf.int32)),
    Case("constant_ragged", VE, lambda tf: tf.constant([[1, 2], [3]])),
    Case("constant_too_many_values", TE, lambda tf: tf.constant([1, 2, 3], shape=[2])),
    Case("constant_int8_overflow", TE, lambda tf: tf.constant(300, dtype=tf.int8)),
    Case("constant_uint8_negative", TE, lambda tf: tf.constant(-1, dtype=tf.uint8)),
    Case("constant_string_to_float", TE, lambda tf: tf.constant("a", dtype=tf.float32)),
    Case("constant_object", VE, lambda tf: tf.constant(object())),
    Case("constant_bad_dtype", TE, lambda tf: tf.constant(1., dtype="float99")),
    Case("convert_to_tensor_dtype_mismatch", VE,
         lambda tf: tf.convert_to_tensor(tf.constant(1.), dtype=tf.int32)),
    Case("constant_none", VE, lambda tf: tf.constant(None)),
    # -- nn -------------------------------------------------------------------------------------------------
    Case("conv2d_channel_mismatch", IA, lambda tf: tf.nn.conv2d(tf.ones([1, 4, 4, 3]), tf.ones([2, 2, 2, 1]), 1,
                                                                "VALID")),
    Case("conv2d_bad_padding", IA, lambda tf: tf.nn.conv2d(tf.ones([1, 4, 4, 3]), tf.ones([2, 2, 3, 1]), 1,
                                                           "FULL")),
    Case("max_pool_bad_ksize", IA, lambda tf: tf.nn.max_pool2d(tf.ones([1, 4, 4, 1]), 0, 1, "VALID")),
    Case("bias_add_mismatch", IA, lambda tf: tf.nn.bias_add(tf.ones([2, 3]), tf.ones([2]))),
    Case("softmax_xent_shape_mismatch", IA, lambda tf: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.ones([2, 3]), logits=tf.ones([2, 4]))),
    Case("sparse_xent_rank_mismatch", VE, lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[[0]], logits=[[1., 2.]])),
    Case("sigmoid_xent_shape_mismatch", VE, lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.ones([2]), logits=tf.ones([3]))),
    Case("avg_pool_int", IA, lambda tf: tf.nn.avg_pool2d(tf.ones([1, 2, 2, 1], tf.int32), 1, 1, "VALID")),
    # -- debugging and checks -------------------------------------------------------------------------------
    # -- inside tf.function (traced values) -------------------------------------------------------------------
    Case("function_reshape_wrong_size", VE, lambda tf: _fn(tf, lambda x: tf.reshape(x, [7]), tf.ones([5]))),
    Case("function_add_mismatch", VE, lambda tf: _fn(tf, lambda x, y: x + y, tf.ones([2]), tf.ones([3]))),
    Case("function_matmul_mismatch", VE, lambda tf: _fn(tf, tf.matmul, tf.ones([2, 3]), tf.ones([2, 3]))),
    Case("function_log_int32", TE, lambda tf: _fn(tf, tf.math.log, tf.constant([1]))),
    Case("function_split_sizes", VE, lambda tf: _fn(tf, lambda x: tf.split(x, [2, 2]), tf.ones([5]))),
    Case("function_reduce_axis", VE, lambda tf: _fn(tf, lambda x: tf.reduce_sum(x, 1), tf.ones([3]))),
    # -- variables: the failed call leaves them as they were ----------------------------------------------------
    Case("assign_wrong_shape", VE, lambda tf, v: v.assign([1., 2., 3.]), lambda tf: tf.Variable([1., 2.])),
    Case("assign_add_wrong_shape", IA, lambda tf, v: v.assign_add([1., 2., 3.]),
         lambda tf: tf.Variable([1., 2.])),
    Case("assign_sub_wrong_shape", IA, lambda tf, v: v.assign_sub(tf.ones([2, 2])),
         lambda tf: tf.Variable([1., 2.])),
    Case("assign_wrong_dtype", VE, lambda tf, v: v.assign(tf.constant([1, 2])), lambda tf: tf.Variable([1., 2.])),
    Case("assign_string", TE, lambda tf, v: v.assign("a"), lambda tf: tf.Variable([1., 2.])),
    Case("variable_in_bad_op", IA, lambda tf, v: v.assign_add(tf.gather(v, [9])),
         lambda tf: tf.Variable([1., 2.])),
    Case("variable_int_floordiv_zero", IA, lambda tf, v: v.assign(v // 0), lambda tf: tf.Variable([4, 6])),
    Case("function_assign_then_bad_gather", IA, lambda tf, v: tf.function(
        lambda i: (v.assign([5., 5.]), tf.gather(v, i)))(tf.constant([9])), lambda tf: tf.Variable([1., 2.])),
    Case("function_assign_then_divide_by_zero", IA, lambda tf, v: tf.function(
        lambda d: (v.assign_add([1, 1]), v // d))(tf.constant(0)), lambda tf: tf.Variable([4, 6])),
    Case("function_gather_out_of_range", IA, lambda tf: _fn(tf, tf.gather, tf.ones([3]), tf.constant([3]))),
    Case("variable_bad_initial_shape", VE, lambda tf: tf.Variable([1., 2.], shape=[3])),
]
