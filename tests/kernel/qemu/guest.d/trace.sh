#!/bin/busybox sh
# shellcheck shell=dash
# Tracing feature check of the QEMU proof guest (run by /init; tests/kernel/qemu_trace_test.cc
# reads it): the guest kernel has tracefs with the timerlat and osnoise tracers
# (qemu/x86_64-boot.config). `rtpulse check`'s Tracing section, `latency --wake timerlat` with
# osnoise/ read before and after (restored at the end, after SIGINT too, busy when another
# tracer holds it), `suite --wake abs,timerlat`, and `latency --explain` on the deferred timerfd
# path.
say() { echo "RTPULSE-GUEST: $*"; }

t=/sys/kernel/tracing
mkdir -p "$t"
mount -t tracefs nodev "$t" 2>/dev/null
say "trace-available-tracers: $(cat "$t/available_tracers" 2>&1)"

osnoise_state() {
  echo "period=$(cat "$t/osnoise/timerlat_period_us") cpus=$(cat "$t/osnoise/cpus")" \
    "stop_us=$(cat "$t/osnoise/stop_tracing_us") stop_total_us=$(cat "$t/osnoise/stop_tracing_total_us")" \
    "options=$(cat "$t/osnoise/options")" "tracer=$(cat "$t/current_tracer")" \
    "instances=$(ls "$t/instances" | tr '\n' ' ')"
}

say "begin trace-check.json"
rtpulse check --json /tmp/trace-check.json >/dev/null 2>&1
cat /tmp/trace-check.json 2>/dev/null
echo
say "end trace-check.json"

# A value left by an earlier user that rtpulse must put back (and not be stopped by).
echo 5000 >"$t/osnoise/stop_tracing_us"
say "trace-osnoise-before: $(osnoise_state)"
say "begin trace-timerlat"
rtpulse latency --wake timerlat -a 1 -t 1 -i 1000 -p 90 -D 3s --json /tmp/timerlat.json -q 2>&1
say "trace-timerlat-exit: $?"
say "end trace-timerlat"
say "trace-osnoise-after: $(osnoise_state)"
say "begin trace-timerlat.json"
cat /tmp/timerlat.json 2>/dev/null
echo
say "end trace-timerlat.json"

# -S with no other flag: a period per CPU on both CPUs (cyclictest's default thread distance
# does not apply to timerlat).
say "begin trace-timerlat-smp"
rtpulse latency --wake timerlat -S -D 2s --json /tmp/timerlat-smp.json -q 2>&1
say "trace-timerlat-smp-exit: $?"
say "end trace-timerlat-smp"
say "begin trace-timerlat-smp.json"
cat /tmp/timerlat-smp.json 2>/dev/null
echo
say "end trace-timerlat-smp.json"

# `suite --wake abs,timerlat`: in each scenario the probes' path, then the tracer's, for the
# scenario's time each.
say "begin trace-suite-timerlat"
rtpulse suite --scenarios idle -D 2s --settle 0 --wake abs,timerlat -o /tmp/suite-timerlat -q 2>&1
say "trace-suite-timerlat-exit: $?"
say "end trace-suite-timerlat"
say "begin trace-suite-timerlat.json"
cat /tmp/suite-timerlat/idle/cyclictest.json 2>/dev/null
echo
say "end trace-suite-timerlat.json"

# SIGINT in the middle: partial results, exit 0 (as cyclictest), osnoise/ restored.
rtpulse latency --wake timerlat -a 1 -t 1 -i 500 -D 30s --json /tmp/timerlat-int.json -q &
rp=$!
sleep 2
kill -INT "$rp"
wait "$rp"
say "trace-timerlat-int-exit: $?"
say "trace-osnoise-after-int: $(osnoise_state)"
say "begin trace-timerlat-int.json"
cat /tmp/timerlat-int.json 2>/dev/null
echo
say "end trace-timerlat-int.json"

# Busy: another user of the osnoise tracer.
echo osnoise >"$t/current_tracer"
say "begin trace-timerlat-busy"
rtpulse latency --wake timerlat -a 1 -t 1 -D 1s -q 2>&1
say "trace-timerlat-busy-exit: $?"
say "end trace-timerlat-busy"
echo nop >"$t/current_tracer"

# --explain on the deferred path (timerfd: expired by the ktimers/N softirq thread on
# PREEMPT_RT), with a threshold low enough that TCG's wake-ups exceed it.
if rtpulse latency --help 2>&1 | grep -q -- '--explain'; then
  say "trace-explain-supported: yes"
  say "begin trace-explain"
  # The probe's timer stays on its CPU: with timer migration on, the guest's isolated CPU 1
  # (nohz_full) hands its timers to the housekeeping CPU 0, and the chain becomes cross-CPU
  # from an untraced CPU. Restored after the run.
  migration=""
  if [ -w /proc/sys/kernel/timer_migration ]; then
    migration=$(cat /proc/sys/kernel/timer_migration)
    echo 0 >/proc/sys/kernel/timer_migration
  fi
  rtpulse latency --wake timerfd -a 1 -t 1 -i 1000 --explain 30 --explain-cost 0 -D 3s \
    --json /tmp/explain.json >/tmp/explain.out 2>&1
  say "trace-explain-exit: $?"
  if [ -n "$migration" ]; then echo "$migration" >/proc/sys/kernel/timer_migration; fi
  head -40 /tmp/explain.out
  say "end trace-explain"
  say "begin trace-explain.json"
  cat /tmp/explain.json 2>/dev/null
  echo
  say "end trace-explain.json"
  say "begin trace-timerlat-explain"
  rtpulse latency --wake timerlat -a 1 -t 1 -i 1000 --explain 30 --explain-cost 0 -D 3s \
    --json /tmp/timerlat-explain.json >/tmp/timerlat-explain.out 2>&1
  say "trace-timerlat-explain-exit: $?"
  head -40 /tmp/timerlat-explain.out
  say "end trace-timerlat-explain"
  say "begin trace-timerlat-explain.json"
  cat /tmp/timerlat-explain.json 2>/dev/null
  echo
  say "end trace-timerlat-explain.json"
else
  say "trace-explain-supported: no"
fi
