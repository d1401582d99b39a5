#!/bin/busybox sh
# shellcheck shell=dash
# GPIO feature check of the QEMU proof guest (run by /init; tests/kernel/qemu_gpio_test.cc reads
# it): a gpio-sim chip made through configfs, whose lines rtpulse drives and whose edges (made
# through the simulator's pull attribute) rtpulse waits on, kernel edge timestamps included.
# Lines: 0 "alert" (e2e's --alert), 1 "wake" (latency --wake gpio), 2 "loop" (e2e's
# --loopback), 3 "drive" (latency --wake-drive). A shell loop copying one line's value to
# another's pull is the wire between two pins.
say() { echo "RTPULSE-GUEST: $*"; }

cfg=/sys/kernel/config
mkdir -p "$cfg"
mount -t configfs configfs "$cfg" 2>/dev/null
dev="$cfg/gpio-sim/rtpulse"
if ! mkdir "$dev" 2>/dev/null || ! mkdir "$dev/bank0"; then
  say "gpio-setup: no gpio-sim in configfs ($cfg/gpio-sim)"
  exit 1
fi
echo 4 >"$dev/bank0/num_lines"
echo rtpulse-sim >"$dev/bank0/label"
i=0
for name in alert wake loop drive; do
  mkdir "$dev/bank0/line$i"
  echo "$name" >"$dev/bank0/line$i/name"
  i=$((i + 1))
done
if ! echo 1 >"$dev/live"; then
  say "gpio-setup: gpio-sim refused live=1"
  exit 1
fi
chip=$(cat "$dev/bank0/chip_name")
sim="/sys/devices/platform/$(cat "$dev/dev_name")/$chip"
say "gpio-setup: ok"
say "gpio-chip: $chip"
say "gpio-label: rtpulse-sim"
say "gpio-kernel-clock: $(uname -r)"

# The wire: copies line $1's value to line $2's pull while process $4 (the rtpulse driving line
# $1) lives, and logs every level it saw change as "<uptime> <level>" to $3: what rtpulse set,
# read back through the simulator. gpio-sim puts a released line back to its pull (low here),
# so the log may end with that one extra change after rtpulse let the line go.
alive() {
  st=""
  [ -r "/proc/$1/stat" ] && read -r _ _ st _ <"/proc/$1/stat"
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
wire() {
  last=x
  : >"$3"
  while alive "$4"; do
    v=$(cat "$sim/sim_gpio$1/value")
    if [ "$v" != "$last" ]; then
      if [ "$v" = 1 ]; then echo pull-up >"$sim/sim_gpio$2/pull"; else echo pull-down >"$sim/sim_gpio$2/pull"; fi
      echo "$(cut -d' ' -f1 /proc/uptime) $v" >>"$3"
      last=$v
    fi
  done
}

# (b) latency --wake gpio: edges made from outside by toggling line 1's pull.
say "begin gpio-wake"
(
  n=0
  while [ $n -lt 100 ] && [ ! -e /tmp/toggle-stop ]; do
    echo pull-up >"$sim/sim_gpio1/pull"
    sleep 0.02
    echo pull-down >"$sim/sim_gpio1/pull"
    sleep 0.02
    n=$((n + 1))
  done
) &
toggler=$!
rtpulse latency --wake "gpio:rtpulse-sim:wake" -i 40000 -D 3s --samples /tmp/gpio-wake.bin \
  --json /tmp/gpio-wake.json -q
say "gpio-wake-exit: $?"
touch /tmp/toggle-stop
wait "$toggler"
say "end gpio-wake"
say "begin gpio-wake.json"
cat /tmp/gpio-wake.json 2>/dev/null
echo
say "end gpio-wake.json"
say "begin gpio-wake.csv"
rtpulse samples /tmp/gpio-wake.bin --csv 2>&1
say "end gpio-wake.csv"

# (b2) latency --wake gpio with --wake-drive: rtpulse toggles line 3 at the interval, the
# wire copies it to line 2's pull, rtpulse wakes on line 2's edges.
say "begin gpio-drive"
rtpulse latency --wake "gpio:$chip:2" --wake-drive "gpio:$chip:drive" -i 100000 -D 3s \
  --json /tmp/gpio-drive.json -q &
rp=$!
wire 3 2 /tmp/drive-levels.txt "$rp" &
wirer=$!
wait "$rp"
say "gpio-drive-exit: $?"
wait "$wirer"
say "end gpio-drive"
say "begin gpio-drive.json"
cat /tmp/gpio-drive.json 2>/dev/null
echo
say "end gpio-drive.json"
say "begin gpio-drive-levels"
cat /tmp/drive-levels.txt
say "end gpio-drive-levels"

# Errors a user meets: a line that does not exist, a line in use.
say "begin gpio-errors"
rtpulse latency --wake "gpio:rtpulse-sim:9" -D 1s -q
say "gpio-error-noline-exit: $?"
rtpulse latency --wake "gpio:rtpulse-sim:nosuch" -D 1s -q
say "gpio-error-noname-exit: $?"
rtpulse latency --wake "gpio:rtpulse-sim:wake" -D 3s -q >/dev/null 2>&1 &
holder=$!
sleep 1.5
rtpulse latency --wake "gpio:rtpulse-sim:wake" -D 1s -q
say "gpio-error-busy-exit: $?"
wait "$holder"
say "end gpio-errors"

# (a) and (c) e2e's alert and loopback (the e2e command exists once the pipeline is merged).
if ! rtpulse e2e --help >/dev/null 2>&1 || [ ! -f /models/depth-tiny.onnx ]; then
  say "gpio-e2e: unavailable"
  exit 0
fi
say "gpio-e2e: available"
echo pull-down >"$sim/sim_gpio2/pull"
say "begin gpio-e2e"
# The model is untrained (latency-representative): its ROI depth on the synthetic scene, fitted
# to the ground plane, runs about 15.4 m to 52 m over the obstacle's 100-frame approach, rising
# as it nears (measured through rtpulse e2e on depth-tiny). With --near 17 --clear 18 the
# decision turns to obstacle at the first frame, clear near frame 25, obstacle again near 56;
# --warmup 0 so that every change the wire sees is a recorded frame's.
rtpulse e2e --source synthetic --model /models/depth-tiny.onnx --frames 100 --warmup 0 \
  --near 17 --clear 18 \
  --alert "gpio:$chip:0" --loopback "gpio:$chip:loop" --out /tmp/e2e-gpio -q &
rp=$!
wire 0 2 /tmp/alert-levels.txt "$rp" &
wirer=$!
wait "$rp"
say "gpio-e2e-exit: $?"
wait "$wirer"
say "end gpio-e2e"
say "begin gpio-e2e-levels"
cat /tmp/alert-levels.txt
say "end gpio-e2e-levels"
say "begin gpio-e2e-frames.csv"
cat /tmp/e2e-gpio/*/frames.csv 2>/dev/null
say "end gpio-e2e-frames.csv"
exit 0
