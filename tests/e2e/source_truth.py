#!/usr/bin/python3
"""Independent computations for tests/e2e/frame_source_test.cc and opencv_sources_test.cc.

scene W H SEQ...        the synthetic scene's documented formulas (docs/e2e.md, "Synthetic
                        frames"), from the defaults there: per SEQ a line
                        "seq distance left right top bottom x0 x1 y0", then per row y below
                        the horizon "row y depth"
decode VIDEO OUT        every frame of VIDEO through Python's cv2 (FFMPEG backend), BGR bytes
                        concatenated into OUT; prints "frames N W H"
write-images DIR N W H  N PNG files (frame_000.png ...) of the pattern pattern_bgr(i, x, y)
"""
import math
import sys

FAR_M, NEAR_M, PERIOD = 8.0, 0.5, 100
CAMERA_M, OBSTACLE_W_M, OBSTACLE_H_M = 1.5, 0.4, 1.8


def scene(width, height, seqs):
    focal = float(width)
    horizon = height / 2.0
    for seq in seqs:
        phase = (seq % PERIOD) / PERIOD
        tri = 2 * phase if phase < 0.5 else 2 - 2 * phase
        d = FAR_M - (FAR_M - NEAR_M) * tri
        left = width / 2.0 - focal * OBSTACLE_W_M / 2 / d
        right = width / 2.0 + focal * OBSTACLE_W_M / 2 / d
        top = horizon - focal * (OBSTACLE_H_M - CAMERA_M) / d
        bottom = horizon + focal * CAMERA_M / d
        x0 = max(0, math.ceil(left))
        x1 = min(width - 1, math.floor(right))
        y0 = max(0, math.ceil(top))
        print(f"seq {seq} {d!r} {left!r} {right!r} {top!r} {bottom!r} {x0} {x1} {y0}")
    for y in range(height):
        if y > horizon:
            print(f"row {y} {focal * CAMERA_M / (y - horizon)!r}")


def decode(path, out):
    import cv2

    cap = cv2.VideoCapture(path, cv2.CAP_FFMPEG)
    frames, w, h = 0, 0, 0
    with open(out, "wb") as f:
        while True:
            ok, img = cap.read()
            if not ok:
                break
            h, w = img.shape[:2]
            f.write(img.tobytes())
            frames += 1
    print(f"frames {frames} {w} {h}")


def write_images(folder, n, width, height):
    import cv2
    import numpy as np

    y, x = np.mgrid[0:height, 0:width]
    for i in range(n):
        img = np.stack([(x * 3 + y * 5 + i * 7) % 256, (x * y + i * 11) % 256,
                        (x + 2 * y + i * 13) % 256], axis=-1).astype(np.uint8)
        assert cv2.imwrite(f"{folder}/frame_{i:03d}.png", img)


def main():
    cmd = sys.argv[1]
    if cmd == "scene":
        scene(int(sys.argv[2]), int(sys.argv[3]), [int(s) for s in sys.argv[4:]])
    elif cmd == "decode":
        decode(sys.argv[2], sys.argv[3])
    elif cmd == "write-images":
        write_images(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
