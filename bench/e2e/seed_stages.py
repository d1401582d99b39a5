#!/usr/bin/python3
"""The seed application's stages outside inference, written idiomatically in Python.

What the first document's script does around its TFLite call, with Debian's python3-opencv and
python3-numpy (float32, vectorised, np.linalg.lstsq): crop + cv2.resize INTER_LINEAR to the
model's 256 x 256, BGR -> RGB, /255, ImageNet mean/std, HWC -> NCHW; then the relative depth
aligned to metric depth by a least-squares scale and shift at the reference points, the ROI's
5th percentile (nearest rank) and the near/clear hysteresis. Same inputs, references, ROI and
thresholds as bench/e2e/pipeline_overhead.cc, which writes the inputs.

Usage: seed_stages.py --inputs DIR [--frames N]    (prints one JSON line, times in us)
"""
import argparse
import json
import math
import time

import cv2
import numpy as np

SRC_W, SRC_H, MODEL, INPUTS = 1242, 375, 256, 8
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
ROI = (0.35, 0.5, 0.65, 1.0)
PERCENTILE, NEAR_M, CLEAR_M = 5.0, 1.0, 1.25


def preprocess(frame):
    img = cv2.resize(frame, (MODEL, MODEL), interpolation=cv2.INTER_LINEAR)
    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
    img = (img - MEAN) / STD
    return np.ascontiguousarray(img.transpose(2, 0, 1)[np.newaxis])


class Postprocess:
    def __init__(self, references):
        # References mapped to the output map once (the whole frame is the crop here).
        self.rows = np.array([min(int(y * MODEL / SRC_H), MODEL - 1) for x, y, _ in references])
        self.cols = np.array([min(int(x * MODEL / SRC_W), MODEL - 1) for x, y, _ in references])
        self.metric = np.array([d for _, _, d in references])
        r = lambda f, n: int(math.floor(f * n + 0.5))
        self.roi = (slice(r(ROI[1], MODEL), r(ROI[3], MODEL)), slice(r(ROI[0], MODEL), r(ROI[2], MODEL)))
        self.obstacle = False

    def __call__(self, relative):
        rel = relative[0, 0]
        x = rel[self.rows, self.cols].astype(np.float64)
        a = np.stack([x, np.ones_like(x)], axis=1)
        (scale, shift), *_ = np.linalg.lstsq(a, self.metric, rcond=None)
        metric = scale * rel[self.roi] + shift
        depth = float(np.percentile(metric, PERCENTILE, method="inverted_cdf"))
        if not self.obstacle and depth < NEAR_M:
            self.obstacle = True
        elif self.obstacle and depth > CLEAR_M:
            self.obstacle = False
        return depth, self.obstacle


def nearest_rank_us(ns, p):
    ns = sorted(ns)
    k = min(max(math.ceil(p / 100 * len(ns)), 1), len(ns))
    return ns[k - 1] / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--frames", type=int, default=2000)
    args = ap.parse_args()
    frames = [np.fromfile(f"{args.inputs}/frame_{k}.u8", dtype=np.uint8).reshape(SRC_H, SRC_W, 3)
              for k in range(INPUTS)]
    depths = [np.fromfile(f"{args.inputs}/depth_{k}.f32", dtype=np.float32).reshape(1, 1, MODEL, MODEL)
              for k in range(INPUTS)]
    refs = np.loadtxt(f"{args.inputs}/references.csv", delimiter=",", skiprows=1)
    post = Postprocess([tuple(r) for r in refs])
    pre_ns, post_ns, total_ns, first, obstacles = [], [], [], None, 0
    clock = time.perf_counter_ns
    for f in range(-50, args.frames):
        k = (f + 50) % INPUTS
        t0 = clock()
        preprocess(frames[k])
        t1 = clock()
        depth, obstacle = post(depths[k])
        t2 = clock()
        if first is None:
            first = depth
        if f < 0:
            continue
        obstacles += obstacle
        pre_ns.append(t1 - t0)
        post_ns.append(t2 - t1)
        total_ns.append(t2 - t0)
    out = {"impl": "seed Python", "frames": args.frames}
    for name, ns in (("preprocess", pre_ns), ("postprocess", post_ns), ("total", total_ns)):
        out[name] = {"median_us": round(nearest_rank_us(ns, 50), 2), "p99_us": round(nearest_rank_us(ns, 99), 2)}
    out["first_roi_depth_m"] = first
    out["obstacle_frames"] = obstacles
    print(json.dumps(out))


if __name__ == "__main__":
    main()
