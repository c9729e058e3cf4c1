"""Model file writer shared by the training scripts; the format is documented in
crates/gate/src/learned/model.rs."""

import struct

import numpy as np

FORMAT_VERSION = 1


def quantize(weights):
    """i8 weights and the one f32 scale that maps them back."""
    scale = float(np.abs(weights).max()) / 127.0 or 1.0
    q = np.clip(np.round(weights / scale), -127, 127).astype(np.int8)
    return q, scale


def write_model(path, magic, feature_version, log2_rows, labels, q, scale, bias, calib_a, calib_b):
    """`feature_version`: features.NAME_FEATURE_VERSION or TOPIC_FEATURE_VERSION, whichever
    features the model was trained on."""
    assert q.shape == (1 << log2_rows, len(labels)) and q.dtype == np.int8
    with open(path, "wb") as f:
        f.write(magic)
        f.write(struct.pack("<IIII", FORMAT_VERSION, feature_version, log2_rows, len(labels)))
        for l in labels:
            b = l.encode()
            f.write(struct.pack("<B", len(b)) + b)
        f.write(struct.pack("<f", scale))
        for arr in (bias, calib_a, calib_b):
            f.write(np.asarray(arr, dtype="<f4").tobytes())
        f.write(q.tobytes())
