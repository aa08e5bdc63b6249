"""tf.audio: 16-bit PCM WAV decoding and encoding (tapejax/io/wav.py)."""

from tapejax.io.wav import decode_wav as decode_wav
from tapejax.io.wav import encode_wav as encode_wav

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.audio")
