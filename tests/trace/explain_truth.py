#!/usr/bin/env python3
"""Independent attribution of one late wake-up from a raw window in ftrace text.

Written from the rules of docs/explain.md#attribution, not from rtpulse's C++: it first turns
the events into intervals (task runs, hard-IRQ frames, softirq frames), then cuts the window
[expected, actual) at every boundary and asks, for each elementary interval, which intervals
cover it. Prints the parts as JSON.

usage: explain_truth.py WINDOW.txt --cpu N --expected NS --actual NS [--tid N]
"""

import argparse
import bisect
import json
import re
import sys

SOFTIRQ_NAMES = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                 "HRTIMER", "RCU"]
KIND_ORDER = ["irq", "softirq", "thread", "wake", "idle", "unaccounted"]

# <comm>-<pid> [<cpu>] [flags] <sec>.<ns>: <event>: <fields>
LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]"
                  r"(?:\s+\S+)??\s+(?P<sec>\d+)\.(?P<frac>\d+):\s+(?P<event>[\w:]+):\s?(?P<rest>.*)$")
LOST = re.compile(r"CPU:?\s*(\d+)\s*\[LOST\s+(\d+)\s+EVENTS\]")
SWITCH = re.compile(r"prev_comm=(?P<pc>.*) prev_pid=(?P<pp>-?\d+) prev_prio=(?P<ppr>-?\d+)"
                    r" prev_state=\S+ ==> next_comm=(?P<nc>.*) next_pid=(?P<np>-?\d+)"
                    r" next_prio=(?P<npr>-?\d+)")
WAKING = re.compile(r"comm=(?P<c>.*) pid=(?P<p>-?\d+) prio=(?P<pr>-?\d+)")
FIELD = re.compile(r"(\w+)=(\S+)")


def ns_of(sec, frac):
    frac = (frac + "000000000")[:9]
    return int(sec) * 1_000_000_000 + int(frac)


def parse(path):
    events, lost_cpus = [], set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.lstrip().startswith("#") and "LOST EVENTS" in line:
                lost_cpus.add("all")  # rtpulse's saved windows: lost on some CPU, in the window.
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            lost = LOST.search(line)
            if lost:
                lost_cpus.add(int(lost.group(1)))
                continue
            m = LINE.match(line)
            if not m:
                continue  # Not an event line (a header, a note): skipped.
            e = {"i": len(events), "ts": ns_of(m["sec"], m["frac"]), "cpu": int(m["cpu"]),
                 "pid": int(m["pid"]), "event": m["event"].split(":")[-1], "rest": m["rest"]}
            e["f"] = dict(FIELD.findall(m["rest"]))
            if e["event"] == "sched_switch":
                s = SWITCH.search(m["rest"])
                if not s:
                    continue
                e.update(next_pid=int(s["np"]), next_comm=s["nc"], next_prio=int(s["npr"]),
                         prev_pid=int(s["pp"]), prev_comm=s["pc"], prev_prio=int(s["ppr"]))
            elif e["event"] == "sched_waking":
                w = WAKING.search(m["rest"])
                if not w:
                    continue
                e.update(woken=int(w["p"]), woken_comm=w["c"], woken_prio=int(w["pr"]))
            elif e["event"] == "task_rename":
                newcomm = re.search(r"newcomm=(.*?)(?: oom_score_adj=|$)", m["rest"])
                if not newcomm:
                    continue
                # Kernels whose event has no pid field rename the task it fires in.
                e.update(renamed=int(e["f"].get("pid", e["pid"])), newcomm=newcomm.group(1))
            events.append(e)
    return events, lost_cpus


def num(e, key):
    try:
        return int(e["f"][key], 0)
    except (KeyError, ValueError):
        return None


def hard_key(e):
    """('irq', n) / ('vector', n) for a hard-IRQ entry or exit, else None."""
    name = e["event"]
    if name in ("irq_handler_entry", "irq_handler_exit"):
        return ("irq", num(e, "irq"))
    if (name.endswith("_entry") or name.endswith("_exit")) and "vector" in e["f"]:
        return ("vector", num(e, "vector"))
    return None


def describe(events, pid, t):
    """(comm, prio) of `pid` from the events that name it: the first at or after t, else the
    latest before; ("pid N", None) when no event does."""
    seen = []
    for e in events:
        if e["event"] == "sched_waking" and e.get("woken") == pid:
            seen.append((e["ts"], e["woken_comm"], e["woken_prio"]))
        elif e["event"] == "sched_switch" and e["next_pid"] == pid:
            seen.append((e["ts"], e["next_comm"], e["next_prio"]))
        elif e["event"] == "sched_switch" and e["prev_pid"] == pid:
            seen.append((e["ts"], e["prev_comm"], e["prev_prio"]))
    later = [x for x in seen if x[0] >= t]
    if later:
        return later[0][1:]
    if seen:
        return seen[-1][1:]
    return "pid %d" % pid, None


def timeline(events, cpu, actual, tid):
    """Who runs on `cpu` (docs/explain.md, unrecorded switches): the recorded sched_switches,
    and where an event's common_pid (a switch's prev_pid) names another task than the one
    running, a switch the kernel did not record, placed at the previous event on the CPU. The
    probe's clock read at `actual` counts as such an event: of the probe if its tid is given,
    else of the task the first event after `actual` names (unless that is the idle task).
    Returns the runs in order (an inferred one's id is ("run", "inferred N")) and the run each
    event fired in (by "i")."""
    runs = [{"id": ("run", -1), "start": -(1 << 62), "known": False}]
    run_of = {}
    inferred = 0
    prev_ts = None

    def start(ts, pid, comm, prio, rid, group=None):
        runs.append({"id": rid, "start": ts, "known": True, "pid": pid, "comm": comm,
                     "prio": prio, "group": rid if group is None else group})

    def end(sw):
        """A recorded switch away from the running task: the name and policy at its end, the
        policy for every piece of the run (a policy change leaves no event)."""
        running = runs[-1]
        if not running["known"] or running["pid"] != sw["prev_pid"]:
            return
        running["comm"] = sw["prev_comm"]
        for r in runs:
            if r.get("group") == running["group"]:
                r["prio"] = sw["prev_prio"]

    after = None  # Who the first event on the CPU after `actual` says is current.
    ended_after = None  # The CPU's first sched_switch after `actual`.
    for e in events:
        if e["cpu"] != cpu:
            continue
        who = e["prev_pid"] if e["event"] == "sched_switch" else e["pid"]
        if e["ts"] > actual:
            if after is None:
                after = who
            if e["event"] == "sched_switch" and not ended_after:
                ended_after = e
            continue
        running = runs[-1]
        if running["known"] and who != running["pid"] and prev_ts is not None:
            comm, prio = describe(events, who, prev_ts)
            start(prev_ts, who, comm, prio, ("run", "inferred %d" % inferred))
            inferred += 1
        run_of[e["i"]] = runs[-1]
        if e["event"] == "sched_switch":
            end(e)
            start(e["ts"], e["next_pid"], e["next_comm"], e["next_prio"], ("run", e["i"]))
        elif (e["event"] == "task_rename" and runs[-1]["known"]
              and e["renamed"] == runs[-1]["pid"]):
            # An exec or prctl renamed the running task: a piece of the same run.
            r = runs[-1]
            start(e["ts"], r["pid"], e["newcomm"], r["prio"], ("run", e["i"]), r["group"])
        prev_ts = e["ts"]
    # The probe read its clock at `actual`: the probe (tid given) or whoever the next event
    # names was current then, and not the idle task.
    who = tid if tid > 0 else after
    if runs[-1]["known"] and prev_ts is not None and who and who != runs[-1]["pid"]:
        comm, prio = describe(events, who, prev_ts)
        start(prev_ts, who, comm, prio, ("run", "inferred %d" % inferred))
        inferred += 1
    # The run open at `actual` ends at the CPU's first switch after it.
    if ended_after:
        end(ended_after)
    return runs, run_of


def build(events, cpu, actual, tid):
    """Intervals on `cpu`: runs [(start, end, run)], frames [(start, end, frame)]."""
    local = [e for e in events if e["cpu"] == cpu and e["ts"] <= actual]
    runs, run_of = timeline(events, cpu, actual, tid)
    for a, b in zip(runs, runs[1:]):
        a["end"] = b["start"]
    runs[-1]["end"] = actual

    starts = [r["start"] for r in runs]

    def run_at(t):
        return runs[bisect.bisect_right(starts, t) - 1]

    def owner(r):
        return r["pid"] if r["known"] else "unknown"

    frames = []
    open_hard, open_soft = [], {}
    for e in local:
        key = hard_key(e)
        if key and e["event"].endswith("_entry"):
            if key[0] == "irq":
                name = "irq %d" % key[1] + (" " + e["f"]["name"] if "name" in e["f"] else "")
            else:
                name = e["event"][:-len("_entry")]
            fr = {"id": ("frame", e["i"]), "hard": True, "key": key, "name": name,
                  "start": e["ts"], "end": actual, "hrtimer": False}
            frames.append(fr)
            open_hard.append(fr)
        elif key and e["event"].endswith("_exit"):
            for k in range(len(open_hard) - 1, -1, -1):
                if open_hard[k]["key"] == key:
                    for fr in open_hard[k:]:
                        fr["end"] = e["ts"]
                    del open_hard[k:]
                    break
        elif e["event"] in ("softirq_entry", "softirq_exit"):
            vec = num(e, "vec")
            r = run_of[e["i"]]  # The run it fired in (a switch may start at its very ts).
            stack = open_soft.setdefault(owner(r), [])
            if e["event"] == "softirq_entry":
                action = re.search(r"\[action=(\w+)\]", e["rest"])
                vname = action.group(1) if action else (
                    SOFTIRQ_NAMES[vec] if vec is not None and 0 <= vec < len(SOFTIRQ_NAMES)
                    else "vec %s" % vec)
                task = r["comm"] if r["known"] else "pid %d" % e["pid"]
                fr = {"id": ("frame", e["i"]), "hard": False, "vec": vec, "vname": vname,
                      "task": task, "owner": owner(r), "start": e["ts"], "end": actual}
                frames.append(fr)
                stack.append(fr)
            else:
                for k in range(len(stack) - 1, -1, -1):
                    if stack[k]["vec"] == vec:
                        for fr in stack[k:]:
                            fr["end"] = e["ts"]
                        del stack[k:]
                        break
    return runs, frames, run_at, owner, run_of


def context_at(t, runs, frames, run_at, owner, r=None):
    """(innermost hard frame, innermost softirq frame of the running task, run) at t; `r` the
    run when asked for an event (the run it fired in)."""
    r = r or run_at(t)
    hard = [f for f in frames if f["hard"] and f["start"] <= t < f["end"]]
    soft = [f for f in frames if not f["hard"] and f["start"] <= t < f["end"]
            and f["owner"] == owner(r)]
    inner = lambda fs: max(fs, key=lambda f: (f["start"], f["id"])) if fs else None
    return inner(hard), inner(soft), r


def name_of(r):
    """A task run's part name: comm, pid, policy (from the kernel prio)."""
    prio = r["prio"]
    policy = ("policy unknown" if prio is None else "deadline" if prio == -1 else
              "rt %d" % (99 - prio) if 0 <= prio < 100 else "other")
    return "%s %d %s" % (r["comm"], r["pid"], policy)


def report(parts, lost_cpus, cpu, expected, actual, tid, chain, thread, inferred, unknown):
    out = [{"kind": k, "name": n, "ns": p["ns"], "count": len(p["stretches"])}
           for (k, n), p in parts.items()]
    out.sort(key=lambda p: (-p["ns"], KIND_ORDER.index(p["kind"]), p["name"]))
    total = sum(p["ns"] for p in out)
    if total != actual - expected:
        print("explain_truth: parts sum to %d, lateness is %d" % (total, actual - expected),
              file=sys.stderr)
        return 1
    print(json.dumps({"lateness_ns": actual - expected, "probe_tid": tid, "chain": chain,
                      "chain_thread": thread, "inferred_switches": inferred,
                      "complete": not unknown and not lost_cpus & {cpu, "all"}, "parts": out}, indent=1))
    return 0


def sweep(expected, actual, runs, frames, extra, ctx, label_of):
    """Every boundary inside the window (runs, frames, `extra` points), each elementary
    interval labelled by label_of(start, hard, soft, run) -> (kind, name, stretch id): the
    parts {(kind, name): {"ns", "stretches"}} and whether a task was unknown."""
    points = {expected, actual}
    points.update(extra)
    for r in runs:
        points.update((r["start"], r["end"]))
    for fr in frames:
        points.update((fr["start"], fr["end"]))
    points = sorted(p for p in points if expected <= p <= actual)
    parts, unknown = {}, False
    for a, b in zip(points, points[1:]):
        if b <= a:
            continue
        hard, soft, r = ctx(a)
        unknown = unknown or not r["known"]
        label = label_of(a, hard, soft, r)
        part = parts.setdefault(label[:2], {"ns": 0, "stretches": set()})
        part["ns"] += b - a
        part["stretches"].add(label[2])
    return parts, unknown


def print_running(events, lost_cpus, cpu, expected, actual, tid, switches, runs, frames, ctx,
                  inferred):
    """A gap in a thread that was running (--running): whatever held the CPU, the thread's own
    run at the gap's start unaccounted, its run after being switched back in the switch-in."""
    if tid <= 0:
        before = [s for s in switches if s[0] <= expected]
        tid = before[-1][1] if before else 0
    opening = ctx(expected)[2]

    def label_of(a, hard, soft, r):
        if hard:
            return ("irq", hard["name"], hard["id"])
        if soft:
            return ("softirq", "%s in %s" % (soft["vname"], soft["task"]), soft["id"])
        if not r["known"]:
            return ("unaccounted", "unaccounted", r["id"])
        if tid > 0 and r["pid"] == tid:
            own = opening["known"] and r["group"] == opening["group"]
            return ("unaccounted", "unaccounted", r["id"]) if own else ("wake", "switch-in", r["id"])
        if r["pid"] == 0:
            return ("idle", "idle", r["id"])
        return ("thread", name_of(r), r["id"])

    parts, unknown = sweep(expected, actual, runs, frames, [], ctx, label_of)
    return report(parts, lost_cpus, cpu, expected, actual, tid, "running", "", inferred, unknown)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("window")
    ap.add_argument("--cpu", type=int, required=True)
    ap.add_argument("--expected", type=int, required=True)
    ap.add_argument("--actual", type=int, required=True)
    ap.add_argument("--tid", type=int, default=0)
    ap.add_argument("--running", action="store_true",
                    help="a gap in a running thread (rtpulse noise): no wake chain")
    args = ap.parse_args()
    events, lost_cpus = parse(args.window)
    cpu, expected = args.cpu, args.expected
    actual = max(args.actual, expected)
    tid = args.tid
    runs, frames, run_at, owner, run_of = build(events, cpu, actual, tid)
    # Inferred switches that matter: those whose run overlaps the window.
    inferred = sum(1 for r in runs if isinstance(r["id"][1], str)
                   and max(r["start"], expected) < min(r["end"], actual))
    ctx = lambda t, r=None: context_at(t, runs, frames, run_at, owner, r)
    for e in events:
        if e["event"] == "hrtimer_expire_entry" and e["cpu"] == cpu and e["ts"] <= actual:
            inner = ctx(e["ts"])[0]
            if inner:
                inner["hrtimer"] = True

    # The chain.
    # Switch-ins as the timeline has them, recorded or inferred: (ts, pid, run id).
    switches = [(r["start"], r["pid"], r["id"]) for r in runs
                if r["known"] and r["group"] == r["id"]]  # Not a rename's piece.
    if args.running:
        return print_running(events, lost_cpus, cpu, expected, actual, tid, switches, runs,
                             frames, ctx, inferred)
    if tid <= 0:
        tid = switches[-1][1] if switches else 0
    chain = {"kind": "unknown", "thread": "", "hard": None, "soft": None, "deferring": None,
             "probe_run": None, "start": float("inf")}
    if tid > 0:
        ins = [s for s in switches if s[1] == tid and expected <= s[0] <= actual]
        if ins:
            chain["probe_run"] = ins[-1][2]
        until = ins[-1][0] if ins else actual

        def last_waking(pid, lo, hi):
            ws = [e for e in events if e["event"] == "sched_waking" and e.get("woken") == pid
                  and lo <= e["ts"] <= hi]
            return ws[-1] if ws else None

        w = last_waking(tid, expected, until)
        if w and w["cpu"] != cpu:
            chain.update(kind="cross-cpu", start=w["ts"])
        elif w:
            hard, soft, r = ctx(w["ts"], run_of[w["i"]])
            if hard:
                chain.update(kind="direct", hard=hard["id"], start=hard["start"])
            elif not soft:
                chain.update(kind="direct", start=w["ts"])
            else:
                chain["soft"] = soft["id"]
                parent = ctx(soft["start"])[0]
                if not r["known"] or r["pid"] == 0 or parent:
                    chain.update(kind="direct", hard=parent["id"] if parent else None,
                                 start=parent["start"] if parent else soft["start"])
                else:
                    chain.update(kind="deferred", thread=r["comm"], deferring=r["pid"],
                                 start=soft["start"])
                    tw = last_waking(r["pid"], expected, w["ts"])
                    if tw:
                        chain["start"] = tw["ts"]
                        if tw["cpu"] == cpu:
                            th = ctx(tw["ts"])[0]
                            if th:
                                chain.update(hard=th["id"], start=th["start"])
                    else:
                        # Already running: the IRQ that raised this softirq's vector.
                        raises = [e for e in events if e["event"] == "softirq_raise"
                                  and e["cpu"] == cpu and num(e, "vec") == soft["vec"]
                                  and expected <= e["ts"] <= soft["start"]]
                        th = ctx(raises[-1]["ts"])[0] if raises else None
                        if th:
                            chain.update(hard=th["id"], start=th["start"])

    # The probe's own syscalls on its CPU (raw_syscalls, when the window has them): the first
    # sys_enter after the deadline (it went to wait only then) and the last sys_exit up to the
    # clock read (back from the wait).
    mine = [e for e in events if e["cpu"] == cpu and tid > 0 and e["pid"] == tid
            and expected <= e["ts"] <= actual]
    late_enter = min((e["ts"] for e in mine if e["event"] == "sys_enter" and e["ts"] > expected),
                     default=float("inf"))
    sys_exit = max((e["ts"] for e in mine if e["event"] == "sys_exit"), default=float("inf"))

    # The sweep: every boundary inside the window, each elementary interval labelled.
    extra = [p for p in (late_enter, sys_exit, chain["start"]) if p != float("inf")]

    def label_of(a, hard, soft, r):
        if hard:
            if hard["id"] == chain["hard"]:
                timer = hard["hrtimer"] or "timer" in hard["name"]
                return ("wake", "timer irq" if timer else hard["name"], hard["id"])
            return ("irq", hard["name"], hard["id"])
        if soft:
            if soft["id"] == chain["soft"]:
                return ("wake", "%s softirq in %s" % (soft["vname"], soft["task"]), soft["id"])
            return ("softirq", "%s in %s" % (soft["vname"], soft["task"]), soft["id"])
        if not r["known"]:
            return ("unaccounted", "unaccounted", r["id"])
        if r["pid"] == 0:
            return ("idle", "idle", r["id"])
        if r["pid"] == tid and a >= sys_exit:
            return ("wake", "return to user", r["id"])
        if a < late_enter != float("inf"):
            return ("thread", "probe late to sleep" if r["pid"] == tid else name_of(r), r["id"])
        if late_enter <= a and r["pid"] == tid:
            return ("wake", "syscall", r["id"])
        if r["group"] == chain["probe_run"]:
            return ("wake", "switch-in", r["id"])
        if a >= chain["start"] and r["pid"] == chain["deferring"]:
            return ("wake", "switch-in", r["id"])
        if a >= chain["start"]:
            return ("thread", name_of(r), r["id"])
        return ("unaccounted", "unaccounted", r["id"])

    parts, unknown = sweep(expected, actual, runs, frames, extra, ctx, label_of)
    return report(parts, lost_cpus, cpu, expected, actual, tid, chain["kind"], chain["thread"],
                  inferred, unknown)


if __name__ == "__main__":
    sys.exit(main())
