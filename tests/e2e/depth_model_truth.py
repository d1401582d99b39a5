#!/usr/bin/python3
"""Independent ground truth for the e2e inference tests (tests/e2e/inference_backends_test.cc).

Reads an ONNX model's graph and weights (onnx + numpy only, none of tools/gen-depth-model's
code), runs its own float64 forward pass of the operators the default model uses on the raw
float32 input the test wrote, compares with the output the backend produced, and counts the
FLOPs from the graph by the convention of docs/e2e.md (a convolution output element:
2 * K * K * Cin; an Add: 1 per element; Relu, Sigmoid, Resize: 0).

Usage: depth_model_truth.py MODEL.onnx INPUT.f32 OUTPUT.f32
Prints one JSON object: max_abs, max_rel, flops_graph, flops_stated, label, shape.
"""
import json
import sys

import numpy as np
import onnx
from numpy.lib.stride_tricks import sliding_window_view
from onnx import numpy_helper


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def conv(x, w, b, strides, pads):
    # x: (C, H, W); w: (O, C, K, K); pads: [top, left, bottom, right]
    xp = np.pad(x, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    k = w.shape[2]
    win = sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::strides[0], ::strides[1]]
    out = np.tensordot(win, w, axes=([0, 3, 4], [1, 2, 3]))  # (Ho, Wo, O)
    return out.transpose(2, 0, 1) + b[:, None, None]


def resize_nearest(x, scales, node):
    mode = attr(node, "mode", b"nearest")
    ctm = attr(node, "coordinate_transformation_mode", b"half_pixel")
    nearest = attr(node, "nearest_mode", b"round_prefer_floor")
    if (mode, ctm, nearest) != (b"nearest", b"asymmetric", b"floor"):
        raise SystemExit(f"unsupported Resize {mode} {ctm} {nearest}")
    sh, sw = scales[2], scales[3]
    h, w = x.shape[1], x.shape[2]
    oh, ow = int(np.floor(h * sh)), int(np.floor(w * sw))
    rows = np.minimum(np.floor(np.arange(oh) / sh).astype(int), h - 1)
    cols = np.minimum(np.floor(np.arange(ow) / sw).astype(int), w - 1)
    return x[:, rows][:, :, cols]


def main():
    model_path, input_path, output_path = sys.argv[1:4]
    model = onnx.load(model_path)
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    dims = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    x = np.fromfile(input_path, dtype="<f4").astype(np.float64).reshape(dims)[0]
    values = {g.input[0].name: x}
    flops = 0
    for node in g.node:
        ins = [values[n] if n in values else inits.get(n) for n in node.input]
        if node.op_type == "Conv":
            w, b = ins[1], ins[2]
            out = conv(ins[0], w, b, attr(node, "strides", [1, 1]), attr(node, "pads", [0] * 4))
            flops += 2 * w.shape[1] * w.shape[2] * w.shape[3] * out.size
        elif node.op_type == "Relu":
            out = np.maximum(ins[0], 0)
        elif node.op_type == "Sigmoid":
            out = 1 / (1 + np.exp(-ins[0]))
        elif node.op_type == "Add":
            out = ins[0] + ins[1]
            flops += out.size
        elif node.op_type == "Resize":
            out = resize_nearest(ins[0], ins[2], node)
        else:
            raise SystemExit(f"operator {node.op_type} not in this reference")
        values[node.output[0]] = out
    ref = values[g.output[0].name]
    got = np.fromfile(output_path, dtype="<f4").astype(np.float64)
    if got.size != ref.size:
        raise SystemExit(f"output has {got.size} values, the reference {ref.size}")
    diff = np.abs(got - ref.reshape(-1))
    props = {p.key: p.value for p in model.metadata_props}
    print(json.dumps({
        "max_abs": float(diff.max()),
        "max_rel": float((diff / np.maximum(np.abs(ref.reshape(-1)), 1e-12)).max()),
        "flops_graph": int(flops),
        "flops_stated": int(props.get("flops", -1)),
        "label": props.get("label", ""),
        "shape": [1] + list(ref.shape),
        "ref_min": float(ref.min()),
        "ref_max": float(ref.max()),
    }))


if __name__ == "__main__":
    main()
