#!/usr/bin/python3
"""Independent computation of rtpulse's preprocess and postprocess (tests/e2e/processing_test.cc).

The seed application's operations as Python does them, with Debian's python3-opencv and
python3-numpy: cv2.resize INTER_LINEAR on the crop, float32 normalisation, HWC -> NCHW;
np.linalg.lstsq for the scale and shift; np.percentile(method="inverted_cdf") (nearest rank)
over the ROI. None of rtpulse's code: the geometry (crop and ROI rounding, source pixels to
the output map) is written here from its definition in docs/e2e.md.

Usage: processing_truth.py JOB.json   (the job names its input files; answers JSON on stdout)
"""
import json
import math
import sys

import cv2
import numpy as np


def frac_to_pixel(f, size):
    return int(math.floor(f * size + 0.5))


def preprocess(job):
    w, h = job["src_w"], job["src_h"]
    frame = np.fromfile(job["frame"], dtype=np.uint8).reshape(h, w, 3)
    x0, y0, x1, y1 = job["crop"]
    cx0, cx1 = frac_to_pixel(x0, w), frac_to_pixel(x1, w)
    cy0, cy1 = frac_to_pixel(y0, h), frac_to_pixel(y1, h)
    resized = cv2.resize(frame[cy0:cy1, cx0:cx1], (job["in_w"], job["in_h"]),
                         interpolation=cv2.INTER_LINEAR)
    rgb = resized[:, :, ::-1].astype(np.float32) / np.float32(255.0)
    mean = np.array(job["mean"], dtype=np.float32)
    std = np.array(job["std"], dtype=np.float32)
    tensor = ((rgb - mean) / std).transpose(2, 0, 1)[np.newaxis]
    np.ascontiguousarray(tensor, dtype=np.float32).tofile(job["tensor_out"])
    np.ascontiguousarray(resized).tofile(job["resized_out"])
    return {"crop_px": [cx0, cy0, cx1 - cx0, cy1 - cy0], "shape": list(tensor.shape)}


def lstsq_fit(rel, met):
    a = np.stack([rel, np.ones_like(rel)], axis=1)
    (scale, shift), _, _, _ = np.linalg.lstsq(a, met, rcond=None)
    resid = met - (scale * rel + shift)
    ss_tot = float(np.sum((met - met.mean()) ** 2))
    r2 = max(0.0, 1.0 - float(np.sum(resid ** 2)) / ss_tot) if ss_tot > 0 else 0.0
    return {"scale": float(scale), "shift": float(shift),
            "rms": float(np.sqrt(np.mean(resid ** 2))), "r2": r2, "points": int(rel.size)}


def fit(job):
    rel = np.fromfile(job["relative"], dtype=np.float64)
    met = np.fromfile(job["metric"], dtype=np.float64)
    return lstsq_fit(rel, met)


def postprocess(job):
    ow, oh = job["out_w"], job["out_h"]
    rel_map = np.fromfile(job["relative_map"], dtype=np.float32).reshape(oh, ow)
    sw, sh = job["src_w"], job["src_h"]
    x0, y0, x1, y1 = job["crop"]
    cx0, cx1 = frac_to_pixel(x0, sw), frac_to_pixel(x1, sw)
    cy0, cy1 = frac_to_pixel(y0, sh), frac_to_pixel(y1, sh)
    rel, met, index = [], [], []
    for x, y, d in job["references"]:
        if not (cx0 <= x < cx1 and cy0 <= y < cy1):
            continue
        u = (x - cx0) * ow / (cx1 - cx0)
        v = (y - cy0) * oh / (cy1 - cy0)
        col = min(max(int(math.floor(u)), 0), ow - 1)
        row = min(max(int(math.floor(v)), 0), oh - 1)
        index.append(row * ow + col)
        if not math.isfinite(float(rel_map[row, col])):
            continue
        rel.append(float(rel_map[row, col]))
        met.append(d)
    out = lstsq_fit(np.array(rel), np.array(met))
    out["index"] = index
    rx0, rx1 = frac_to_pixel(job["roi"][0], ow), frac_to_pixel(job["roi"][2], ow)
    ry0, ry1 = frac_to_pixel(job["roi"][1], oh), frac_to_pixel(job["roi"][3], oh)
    roi = rel_map[ry0:ry1, rx0:rx1].astype(np.float64)
    roi = roi[np.isfinite(roi)]
    metric = out["scale"] * roi + out["shift"]
    out["roi_px"] = [rx0, ry0, rx1, ry1]
    out["roi_valid"] = int(metric.size)
    out["roi_depth"] = float(np.percentile(metric, job["percentile"], method="inverted_cdf"))
    return out


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    handlers = {"preprocess": preprocess, "fit": fit, "postprocess": postprocess}
    print(json.dumps(handlers[job["what"]](job)))


if __name__ == "__main__":
    main()
