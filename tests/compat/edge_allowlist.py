"""The rows whose values or gradients at NaN, +-Inf, 0, -0 or a denormal still differ from TF 2.21's, with why.

test_edge_values_vs_tf.py sweeps every differentiable row at those edges; a row listed here may differ there (and
must: a listed row that matches TF fails the test, so fixed rows leave the list). Keep it short: fix the row where
its TF behaviour is a rule tapejax can follow.
"""

from __future__ import annotations

_FTZ = "XLA:CPU flushes denormals to zero (log(1e-40) is -inf), TF's Eigen kernels do not"
_LAPACK = "a non-finite matrix: LAPACK (XLA) and Eigen (TF) fail differently, TF documents no result"
_SPECIAL = "a special function at its pole or at infinity: XLA's and Eigen's approximations give different limits"
_PROD = "TF's gradient of a product divides it by x (inf / inf, 0 / 0): JAX's multiplies the other factors"

ALLOWED: dict[str, str] = {
    "math.log": _FTZ,
    "math.lgamma": _FTZ,
    "math.lbeta": _FTZ,
    "math.xlogy": _FTZ,
    "linalg.det": _LAPACK,
    "linalg.slogdet": _LAPACK,
    "linalg.logdet": _LAPACK,
    "linalg.cholesky": _LAPACK,
    "linalg.qr": _LAPACK,
    "linalg.eigvalsh": _LAPACK + " (TF raises on NaN)",
    "linalg.expm": _LAPACK + " (TF's Pade scaling sends NaN to every entry)",
    "math.ndtri": _SPECIAL,
    "math.erfcinv": _SPECIAL,
    "math.digamma": _SPECIAL,
    "math.acosh": _SPECIAL,
    "math.bessel_i1e": _SPECIAL,
    "math.zeta": _SPECIAL,
    "math.igamma": _SPECIAL,
    "math.igammac": _SPECIAL,
    "math.cumprod": _PROD,
    "math.segment_prod": _PROD,
    "math.unsorted_segment_prod": _PROD,
    "math.cumulative_logsumexp": "TF's kernel and gradient treat NaN and infinite inputs by their own formulas",
    "nn.softmax": "TF's softmax subtracts a max that skips NaN and inf - inf; XLA's gives NaN for the whole row",
    "nn.softmax_cross_entropy_with_logits": "TF's fused kernel: inf - inf and 0 * inf in another order",
    "nn.log_poisson_loss": "TF computes exp(c) - c * z, NaN at c = inf; XLA folds it to -inf",
    "sort": "TF sorts through top_k, which places NaN first; XLA's sort places it last",
    "nn.conv1d": "a non-finite filter tap over SAME padding: XLA multiplies the padding's zeros (0 * inf), TF skips them",
    "nn.conv2d": "as nn.conv1d",
    "nn.depthwise_conv2d": "as nn.conv1d",
    "random.gamma": "a different sampler: at alpha <= 0, inf or NaN the samples differ",
    "image.resize": "one weight matrix per axis: a NaN or inf pixel reaches every output of its rows and columns "
    "(times a zero weight), where TF's kernels read only each output's taps; TF's bilinear a + (b - a) * t gives "
    "NaN at inf",
    "image.adjust_gamma": "a denormal gamma: TF's Pow flushes it to zero (x ** 0 = 1), XLA:CPU keeps it",
    "image.rgb_to_hsv": "TF's kernel and its hand-written gradient pick the channel of the maximum and treat NaN and "
    "zero spread by their own formulas; JAX differentiates the selects",
    "image.psnr": _FTZ + " (the mean squared error of a denormal difference)",
    "image.ssim_multiscale": "where a scale's relu cuts, TF's Pow gradient is inf at 0 and times ReluGrad's zero "
    "mask gives NaN; JAX's gives 0",
}
