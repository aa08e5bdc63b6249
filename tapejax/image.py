"""tf.image: resizing, crops and pads, flips, colour, quality measures and random augmentations.

The rows are in tapejax/ops/image.py (geometry, convert_image_dtype), image_resize.py, image_color.py,
image_metrics.py, and the augmentations in image_random.py. The JPEG/PNG codecs are tf.io's (tapejax/io/images.py);
bounding-box and non-max-suppression ops are not provided.
"""

from tapejax.ops.image import convert_image_dtype as convert_image_dtype
from tapejax.ops.image import flip_left_right as flip_left_right
from tapejax.ops.image import flip_up_down as flip_up_down
from tapejax.ops.image import transpose as transpose
from tapejax.ops.image import rot90 as rot90
from tapejax.ops.image import crop_to_bounding_box as crop_to_bounding_box
from tapejax.ops.image import pad_to_bounding_box as pad_to_bounding_box
from tapejax.ops.image import central_crop as central_crop
from tapejax.ops.image import resize_with_crop_or_pad as resize_with_crop_or_pad
from tapejax.ops.image import extract_patches as extract_patches
from tapejax.ops.image_resize import ResizeMethod as ResizeMethod
from tapejax.ops.image_resize import resize as resize
from tapejax.ops.image_resize import resize_with_pad as resize_with_pad
from tapejax.ops.image_color import adjust_brightness as adjust_brightness
from tapejax.ops.image_color import adjust_contrast as adjust_contrast
from tapejax.ops.image_color import adjust_saturation as adjust_saturation
from tapejax.ops.image_color import adjust_hue as adjust_hue
from tapejax.ops.image_color import adjust_gamma as adjust_gamma
from tapejax.ops.image_color import rgb_to_grayscale as rgb_to_grayscale
from tapejax.ops.image_color import grayscale_to_rgb as grayscale_to_rgb
from tapejax.ops.image_color import rgb_to_hsv as rgb_to_hsv
from tapejax.ops.image_color import hsv_to_rgb as hsv_to_rgb
from tapejax.ops.image_color import rgb_to_yuv as rgb_to_yuv
from tapejax.ops.image_color import yuv_to_rgb as yuv_to_rgb
from tapejax.ops.image_color import per_image_standardization as per_image_standardization
from tapejax.ops.image_metrics import total_variation as total_variation
from tapejax.ops.image_metrics import sobel_edges as sobel_edges
from tapejax.ops.image_metrics import image_gradients as image_gradients
from tapejax.ops.image_metrics import psnr as psnr
from tapejax.ops.image_metrics import ssim as ssim
from tapejax.ops.image_metrics import ssim_multiscale as ssim_multiscale
from tapejax.ops.image_random import random_flip_left_right as random_flip_left_right
from tapejax.ops.image_random import random_flip_up_down as random_flip_up_down
from tapejax.ops.image_random import random_brightness as random_brightness
from tapejax.ops.image_random import random_contrast as random_contrast
from tapejax.ops.image_random import random_saturation as random_saturation
from tapejax.ops.image_random import random_hue as random_hue
from tapejax.ops.image_random import random_crop as random_crop
from tapejax.ops.image_random import stateless_random_flip_left_right as stateless_random_flip_left_right
from tapejax.ops.image_random import stateless_random_flip_up_down as stateless_random_flip_up_down
from tapejax.ops.image_random import stateless_random_brightness as stateless_random_brightness
from tapejax.ops.image_random import stateless_random_contrast as stateless_random_contrast
from tapejax.ops.image_random import stateless_random_saturation as stateless_random_saturation
from tapejax.ops.image_random import stateless_random_hue as stateless_random_hue
from tapejax.ops.image_random import stateless_random_crop as stateless_random_crop

from tapejax.io.images import decode_bmp as decode_bmp  # noqa: E402
from tapejax.io.images import decode_gif as decode_gif  # noqa: E402
from tapejax.io.images import decode_image as decode_image  # noqa: E402
from tapejax.io.images import decode_jpeg as decode_jpeg  # noqa: E402
from tapejax.io.images import decode_png as decode_png  # noqa: E402
from tapejax.io.images import encode_jpeg as encode_jpeg  # noqa: E402
from tapejax.io.images import encode_png as encode_png  # noqa: E402
from tapejax.io.images import is_jpeg as is_jpeg  # noqa: E402
from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.image")
