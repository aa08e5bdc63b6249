"""tf.image against TensorFlow beyond the op table's one case per row: every resize method up and down, with and
without antialias, 3-D and 4-D, uint8/float64 inputs and preserve_aspect_ratio, with tape gradients; the Python
wrappers (central_crop, resize_with_pad, resize_with_crop_or_pad, convert_image_dtype's dtype pairs); bad
arguments (TF's exception types); and the random augmentations' properties (TF's random streams cannot be
matched, so shapes, dtypes, ranges, per-image flips and seed determinism are compared instead).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402

METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _pixels(shape, seed=0, dtype=np.float32):
    x = np.random.default_rng(seed).uniform(0, 1, shape)
    return (x * 255).astype(dtype) if np.dtype(dtype).kind == "u" else x.astype(dtype)


def _value_and_gradient(m, fn, x):
    """fn(x) and the tape gradient of sum(fn(x) * w) with respect to x (the exception's type where it raises)."""
    source = m.constant(x)
    with m.GradientTape() as tape:
        tape.watch(source)
        y = fn(m, source)
        w = np.random.default_rng(1).normal(size=tuple(y.shape)).astype(np.float32)
        loss = m.reduce_sum(m.cast(y, m.float32) * w)
    try:
        return y, tape.gradient(loss, source)
    except LookupError:
        return y, "LookupError"


def _compare(fn, x, rtol=2e-5):
    got, got_gradient = _value_and_gradient(tapejax, fn, x)
    want, want_gradient = _value_and_gradient(tf_real, fn, x)
    assert_same(got, want, "value", rtol=rtol)
    if isinstance(want_gradient, str) or want_gradient is None:
        assert got_gradient == want_gradient
    else:
        assert_same(got_gradient, want_gradient, "gradient", rtol=rtol)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("shape, size", [((5, 7, 2), (3, 4)), ((2, 6, 5, 1), (13, 11)), ((9, 4, 3), (2, 9)),
                                         ((1, 3, 1), (1, 1))])
def test_resize_matches_tf(method, antialias, shape, size):
    _compare(lambda m, x: m.image.resize(x, size, method=method, antialias=antialias), _pixels(shape))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float64, np.int32])
def test_resize_dtypes_match_tf(method, dtype):
    x = _pixels((4, 6, 2), dtype=dtype)
    want = tf_real.image.resize(x, [7, 3], method=method)
    assert_same(tapejax.image.resize(x, [7, 3], method=method), want, rtol=1e-5)


@pytest.mark.parametrize("size", [(10, 10), (4, 20), (3, 2), (8, 8)])
def test_resize_preserve_aspect_ratio_matches_tf(size):
    x = _pixels((1, 5, 7, 1))
    assert_same(tapejax.image.resize(x, size, preserve_aspect_ratio=True),
                tf_real.image.resize(x, size, preserve_aspect_ratio=True))
    assert tapejax.image.ResizeMethod.LANCZOS5 == tf_real.image.ResizeMethod.LANCZOS5


@pytest.mark.parametrize("target", [(8, 8), (3, 9), (10, 4), (4, 5)])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_resize_with_pad_matches_tf(target, method):
    _compare(lambda m, x: m.image.resize_with_pad(x, *target, method=method), _pixels((4, 5, 3)))


@pytest.mark.parametrize("target", [(6, 3), (2, 2), (4, 5), (7, 9)])
def test_resize_with_crop_or_pad_matches_tf(target):
    _compare(lambda m, x: m.image.resize_with_crop_or_pad(x, *target), _pixels((2, 4, 5, 3)))


@pytest.mark.parametrize("fraction", [0.5, 0.3, 0.77, 1.0])
def test_central_crop_matches_tf(fraction):
    _compare(lambda m, x: m.image.central_crop(x, fraction), _pixels((5, 7, 3)))


CONVERSIONS = [("float32", "uint8"), ("float32", "int16"), ("float32", "int32"), ("float32", "uint32"),
               ("float32", "int64"), ("uint8", "float32"), ("int8", "float32"), ("uint8", "int32"),
               ("int32", "uint8"), ("uint16", "uint8"), ("int8", "uint8"), ("float32", "float64"),
               ("float64", "float16"), ("int64", "int32")]


@pytest.mark.parametrize("src, dst", CONVERSIONS)
@pytest.mark.parametrize("saturate", [False, True])
def test_convert_image_dtype_matches_tf(src, dst, saturate):
    if np.dtype(src).kind == "f" and dst == "uint32" and not saturate:
        values = np.array([0.0, 0.25, 0.5, 0.999, 0.3], src)  # TF's overflow to uint32 follows no rule we found
    elif np.dtype(src).kind == "f":
        values = np.array([0.0, 0.25, 0.5, 0.999, 1.0, -0.5, 1.5, 2e10, np.nan], src)
    else:
        info = np.iinfo(src)
        values = np.array([0, 1, 5, info.max, info.max // 2, info.min, info.min // 3], src)
    want = tf_real.image.convert_image_dtype(tf_real.constant(values), dst, saturate=saturate)
    assert_same(tapejax.image.convert_image_dtype(tapejax.constant(values), dst, saturate=saturate), want)


ADJUSTMENTS = {
    "brightness": lambda m, x: m.image.adjust_brightness(x, 0.2),
    "contrast": lambda m, x: m.image.adjust_contrast(x, 1.7),
    "saturation": lambda m, x: m.image.adjust_saturation(x, 1.6),
    "hue": lambda m, x: m.image.adjust_hue(x, -0.3),
    "gamma": lambda m, x: m.image.adjust_gamma(x, 0.7, 1.2),
    "grayscale": lambda m, x: m.image.rgb_to_grayscale(x),
    "standardization": lambda m, x: m.image.per_image_standardization(x),
    "hsv": lambda m, x: m.image.rgb_to_hsv(m.cast(x, m.float32)),
}


@pytest.mark.parametrize("name", sorted(ADJUSTMENTS))
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64])
def test_colour_ops_match_tf_in_every_dtype(name, dtype):
    x = _pixels((2, 3, 4, 3), dtype=dtype)
    fn = ADJUSTMENTS[name]
    want, got = fn(tf_real, tf_real.constant(x)), fn(tapejax, tapejax.constant(x))
    if dtype == np.uint8 and name != "standardization":  # one unit of rounding where TF's float32 sum differs
        assert got.dtype.name == want.dtype.name and tuple(got.shape) == tuple(want.shape)
        assert np.abs(got.numpy().astype(int) - want.numpy().astype(int)).max() <= 1
    else:
        assert_same(got, want, rtol=1e-5)
    if dtype == np.float32:
        _compare(fn, x)


def test_metrics_match_tf_on_uint8_and_batches():
    a, b = _pixels((2, 16, 16, 3), 0, np.uint8), _pixels((2, 16, 16, 3), 1, np.uint8)
    for fn in (lambda m: m.image.psnr(a, b, 255), lambda m: m.image.ssim(a, b, 255)):
        assert_same(fn(tapejax), fn(tf_real), rtol=1e-4)
    index_map = [m.image.ssim(a[0], b[0], 255, return_index_map=True) for m in (tapejax, tf_real)]
    np.testing.assert_allclose(index_map[0].numpy(), index_map[1].numpy(), atol=1e-5)  # near-zero entries
    x = _pixels((1, 180, 180, 3), 2)
    y = np.clip(x + np.random.default_rng(3).normal(0, 0.05, x.shape), 0, 1).astype(np.float32)
    assert_same(tapejax.image.ssim_multiscale(x, y, 1.0), tf_real.image.ssim_multiscale(x, y, 1.0), rtol=1e-4)
    _compare(lambda m, v: m.image.ssim_multiscale(v, y, 1.0), x, rtol=1e-3)
    _compare(lambda m, v: m.image.sobel_edges(v), _pixels((2, 5, 6, 2)))
    _compare(lambda m, v: m.image.total_variation(v), _pixels((5, 6, 2)), rtol=1e-4)
    _compare(lambda m, v: m.image.image_gradients(v)[1], _pixels((2, 5, 6, 2)))


# -- bad arguments ------------------------------------------------------------------------------------------

X = _pixels((4, 5, 3))
BAD = {
    "resize negative size": lambda m: m.image.resize(X, [-1, 3]),
    "resize zero size, lanczos": lambda m: m.image.resize(X, [0, 3], method="lanczos3"),
    "resize one size": lambda m: m.image.resize(X, [3]),
    "resize float size": lambda m: m.image.resize(X, [2.5, 3]),
    "resize 2-D image": lambda m: m.image.resize(X[0], [2, 2]),
    "resize 5-D image": lambda m: m.image.resize(X[None, None], [2, 2]),
    "resize method": lambda m: m.image.resize(X, [2, 2], method="cubic"),
    "crop outside": lambda m: m.image.crop_to_bounding_box(X, 3, 1, 2, 3),
    "crop negative offset": lambda m: m.image.crop_to_bounding_box(X, -1, 1, 2, 3),
    "crop empty": lambda m: m.image.crop_to_bounding_box(X, 0, 0, 0, 3),
    "crop 2-D": lambda m: m.image.crop_to_bounding_box(X[0], 0, 0, 1, 1),
    "pad too small": lambda m: m.image.pad_to_bounding_box(X, 1, 1, 4, 7),
    "pad negative offset": lambda m: m.image.pad_to_bounding_box(X, -1, 1, 6, 7),
    "central_crop 0": lambda m: m.image.central_crop(X, 0.0),
    "central_crop 1.5": lambda m: m.image.central_crop(X, 1.5),
    "central_crop 2-D": lambda m: m.image.central_crop(X[0], 0.5),
    "flip 2-D": lambda m: m.image.flip_left_right(X[0]),
    "flip 5-D": lambda m: m.image.flip_up_down(X[None, None]),
    "rot90 float k": lambda m: m.image.rot90(X, 1.5),
    "resize_with_crop_or_pad 0": lambda m: m.image.resize_with_crop_or_pad(X, 0, 3),
    "resize_with_pad 0": lambda m: m.image.resize_with_pad(X, 0, 8),
    "convert to bool": lambda m: m.image.convert_image_dtype(X, m.bool),
    "saturation 2 channels": lambda m: m.image.adjust_saturation(X[..., :2], 0.5),
    "hue 2 channels": lambda m: m.image.adjust_hue(X[..., :2], 0.5),
    "hue delta 1.2": lambda m: m.image.adjust_hue(X, 1.2),
    "gamma negative": lambda m: m.image.adjust_gamma(X, -2.0),
    "grayscale 2 channels": lambda m: m.image.rgb_to_grayscale(m.constant(X[..., :2])),
    "grayscale_to_rgb 3 channels": lambda m: m.image.grayscale_to_rgb(m.constant(X)),
    "contrast 2-D": lambda m: m.image.adjust_contrast(X[0], 2.0),
    "standardization 2-D": lambda m: m.image.per_image_standardization(X[0]),
    "total_variation 2-D": lambda m: m.image.total_variation(m.constant(X[0])),
    "image_gradients 3-D": lambda m: m.image.image_gradients(m.constant(X)),
    "extract_patches 3-D": lambda m: m.image.extract_patches(m.constant(X), [1, 2, 2, 1], [1, 1, 1, 1],
                                                             [1, 1, 1, 1], "VALID"),
    "ssim shapes": lambda m: m.image.ssim(X, X[:3], 1.0),
    "ssim too small": lambda m: m.image.ssim(X, X, 1.0),
    "random_crop too big": lambda m: m.image.random_crop(X, [6, 2, 3], seed=1),
    "random_crop rank": lambda m: m.image.random_crop(X, [2, 2], seed=1),
    "random_brightness negative": lambda m: m.image.random_brightness(X, -0.1),
    "random_contrast upper <= lower": lambda m: m.image.random_contrast(X, 0.5, 0.4),
    "random_contrast negative": lambda m: m.image.random_contrast(X, -0.5, 0.4),
    "random_hue 0.6": lambda m: m.image.random_hue(X, 0.6),
    "random_saturation upper <= lower": lambda m: m.image.random_saturation(X, 0.6, 0.5),
}


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    return None


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_arguments_raise_tf_types(case):
    want = _error(lambda: BAD[case](tf_real))
    assert want is not None, f"TF accepts {case}"
    assert _error(lambda: BAD[case](tapejax)) == want


# -- random augmentations -----------------------------------------------------------------------------------

RANDOM = {
    "random_flip_left_right": lambda m, x, s: m.image.random_flip_left_right(x, seed=s),
    "random_flip_up_down": lambda m, x, s: m.image.random_flip_up_down(x, seed=s),
    "random_brightness": lambda m, x, s: m.image.random_brightness(x, 0.3, seed=s),
    "random_contrast": lambda m, x, s: m.image.random_contrast(x, 0.2, 1.8, seed=s),
    "random_saturation": lambda m, x, s: m.image.random_saturation(x, 0.2, 1.8, seed=s),
    "random_hue": lambda m, x, s: m.image.random_hue(x, 0.4, seed=s),
    "random_crop": lambda m, x, s: m.image.random_crop(x, [2, 3, 3], seed=s),
}
STATELESS = {name: (lambda name: lambda m, x, s: getattr(m.image, "stateless_" + name)(
    x, *{"random_brightness": (0.3,), "random_contrast": (0.2, 1.8), "random_saturation": (0.2, 1.8),
         "random_hue": (0.4,), "random_crop": ([2, 3, 3],)}.get(name, ()), seed=s))(name) for name in RANDOM}


@pytest.mark.parametrize("name", sorted(RANDOM))
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_random_ops_give_tf_shapes_and_dtypes(name, dtype):
    for table, seed in ((RANDOM, 3), (STATELESS, (1, 2))):
        x = _pixels((4, 5, 3), dtype=dtype)
        got, want = table[name](tapejax, x, seed), table[name](tf_real, x, seed)
        assert got.dtype.name == want.dtype.name and tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("name", sorted(STATELESS))
def test_stateless_ops_are_deterministic_in_the_seed(name):
    x = _pixels((2, 4, 5, 3)) if "crop" not in name else _pixels((4, 5, 3))
    first = STATELESS[name](tapejax, x, (5, 6)).numpy()
    np.testing.assert_array_equal(STATELESS[name](tapejax, x, (5, 6)).numpy(), first)
    others = [STATELESS[name](tapejax, x, (5, seed)).numpy() for seed in range(7, 15)]
    assert any(not np.array_equal(o, first) for o in others), "the seed does not matter"


def test_random_draws_follow_tf_distributions():
    x = _pixels((64, 2, 3, 1))
    flipped = tapejax.image.random_flip_left_right(x, seed=1).numpy()
    per_image = [np.array_equal(f, i[:, ::-1]) for f, i in zip(flipped, x)]
    assert all(np.array_equal(f, i) or p for f, i, p in zip(flipped, x, per_image))  # each image flipped or not
    assert 16 <= sum(per_image) <= 48  # one draw per image, probability 1/2 (TF's rule for batches)
    deltas = [float(tapejax.image.random_brightness(np.zeros((1, 1, 1), np.float32), 0.3)[0, 0, 0])
              for _ in range(40)]
    assert all(-0.3 <= d < 0.3 for d in deltas) and np.std(deltas) > 0.05
    crops = {tuple(tapejax.image.random_crop(np.arange(20.0).reshape(4, 5, 1), [2, 2, 1]).numpy()[0, 0])
             for _ in range(60)}
    assert len(crops) > 6  # the offsets range over the 12 positions that fit
    x = tapejax.constant(_pixels((4, 5, 3)))
    with tapejax.GradientTape() as tape:
        tape.watch(x)
        y = tapejax.image.random_crop(tapejax.image.random_flip_up_down(x, seed=2), [2, 2, 3], seed=2)
    assert float(tapejax.reduce_sum(tape.gradient(y, x))) == 12.0  # the crop's pixels, each once


@pytest.mark.parametrize("method, antialias", list(itertools.product(["bilinear", "bicubic", "lanczos3"],
                                                                     [False, True])))
def test_resize_inside_tf_function_matches_eager(method, antialias):
    x = _pixels((1, 6, 5, 2))
    step = tapejax.function(lambda v: tapejax.image.resize(v, [4, 9], method=method, antialias=antialias))
    assert_same(step(x), tf_real.image.resize(x, [4, 9], method=method, antialias=antialias))
