#!/bin/busybox sh
# shellcheck shell=dash
# Feature check run by the QEMU guest's /init: `rtpulse e2e` from vivid's capture device
# (the V4L2 test driver built into the guest kernel), with the tiny generated model.
# tests/kernel/qemu_v4l2_test.cc asserts on what it prints: "v4l2 KEY: value" lines and the
# sections "v4l2 run", "v4l2 frames.csv", "v4l2 e2e.json" and the error cases.
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
# A camera has no depths of its own: rtpulse e2e needs reference points (source pixels, metres)
# to scale the network's relative depth; these lie inside any vivid frame size.
refs=/tmp/v4l2-refs.csv
printf 'x,y,depth_m\n10,200,2.0\n150,150,4.0\n300,100,6.0\n' >"$refs"
say "begin v4l2 run"
rtpulse e2e --source v4l2:/dev/video0 --reference "$refs" --model /models/depth-tiny.onnx \
  --frames 20 --warmup 2 --out "$out" -q 2>&1
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

# Bad input and a busy device, through the same command: vivid's output node is no capture
# device (usage, 2), a missing node is usage (2), and a second capture while a first streams
# is busy (resource, 3). The first run holds /dev/video0 once its fd is open and streaming.
e2e_quick() {
  rtpulse e2e --source "$1" --reference "$refs" --model /models/depth-tiny.onnx --frames "$2" \
    --warmup 0 --out "/tmp/e2e-v4l2-$3" -q
}
say "begin v4l2 output-node"
e2e_quick v4l2:/dev/video1 2 output 2>&1
say "v4l2 output-node exit: $?"
say "end v4l2 output-node"
say "begin v4l2 missing"
e2e_quick v4l2:/dev/video99 2 missing 2>&1
say "v4l2 missing exit: $?"
say "end v4l2 missing"
# The holder opens the camera three times: its plan's check (one frame, then closed), the
# scenario's probe (one frame, closed) and the scenario's stream. Only the stream holds it long
# enough, so the second run starts once the holder's result.json says it measures and its fd is
# open; 150 frames keep it streaming for seconds after that.
rtpulse e2e --source v4l2:/dev/video0 --reference "$refs" --model /models/depth-tiny.onnx \
  --frames 150 --warmup 0 --out /tmp/e2e-v4l2-holder -q >/tmp/holder.log 2>&1 &
holder=$!
holds_camera() {
  grep -q '"measuring"' /tmp/e2e-v4l2-holder/result.json 2>/dev/null || return 1
  for fd in "/proc/$1/fd/"*; do
    [ "$(readlink "$fd" 2>/dev/null)" = /dev/video0 ] && return 0
  done
  return 1
}
tries=0
while [ $tries -lt 600 ] && ! holds_camera "$holder"; do
  sleep 0.1
  tries=$((tries + 1))
done
say "v4l2 holder streaming: $(holds_camera "$holder" && echo yes || echo no)"
sleep 0.3
say "begin v4l2 busy"
e2e_quick v4l2:/dev/video0 2 busy 2>&1
say "v4l2 busy exit: $?"
say "end v4l2 busy"
wait "$holder"
say "v4l2 holder exit: $?"
exit "$rc"
