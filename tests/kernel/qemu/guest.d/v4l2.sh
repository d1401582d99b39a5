#!/bin/busybox sh
# shellcheck shell=dash
# Feature check run by the QEMU guest's /init: `rtpulse e2e` from vivid's capture device
# (the V4L2 test driver built into the guest kernel), with the tiny generated model.
# tests/kernel/qemu_v4l2_test.cc asserts on what it prints: "v4l2 KEY: value" lines and the
# sections "v4l2 run", "v4l2 frames.csv" and "v4l2 e2e.json".
say() { echo "RTPULSE-GUEST: $*"; }

devices=""
for node in /dev/video*; do
  [ -e "$node" ] && devices="$devices $node"
done
say "v4l2 devices:$devices"
sysfs=/sys/class/video4linux/video0
if [ -e "$sysfs" ]; then
  say "v4l2 name: $(cat "$sysfs/name" 2>/dev/null)"
  say "v4l2 driver: $(basename "$(readlink "$sysfs/device/driver" 2>/dev/null)" 2>/dev/null)"
else
  say "v4l2 driver: none"
fi

out=/tmp/e2e-v4l2
say "begin v4l2 run"
rtpulse e2e --source v4l2:/dev/video0 --model /models/depth-tiny.onnx --frames 20 --warmup 2 \
  --out "$out" -q 2>&1
rc=$?
say "end v4l2 run"
say "v4l2 exit: $rc"

frames="$(find "$out" -name frames.csv 2>/dev/null | head -n 1)"
json="$(find "$out" -name e2e.json 2>/dev/null | head -n 1)"
say "begin v4l2 frames.csv"
[ -n "$frames" ] && head -n 40 "$frames"
say "end v4l2 frames.csv"
say "begin v4l2 e2e.json"
[ -n "$json" ] && head -n 400 "$json"
echo
say "end v4l2 e2e.json"
exit "$rc"
