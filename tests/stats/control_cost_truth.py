#!/usr/bin/python3
"""Ground truth for rtpulse's control-cost replay (docs/control.md, "Control cost").

Nothing of rtpulse: the model is rebuilt from the parameters on the command line, the state
is propagated with scipy.linalg.expm and the cost integral is Gauss-Legendre quadrature of
x'Qx + u'Ru along the exact trajectory inside every interval (not Van Loan), so the C++
replay is checked against a different integration method.

usage: control_cost_truth.py JOBS_CSV|design --period-ns N --inertia J --torque K --tau T --kp P
       --kd D --q-angle QA --q-rate QR --r-command R --initial-angle A --dist NM --dist-at S
       --dist-on S --dist-repeat S --horizon-ns N --peak-step-ns N
JOBS_CSV: one line per release, "sample_offset_ns,actuation_offset_ns,executed(0/1)".
"design" instead of a file prints the loop's per-period eigenvalue moduli (no delay, a full period of delay).
Otherwise prints JSON: cost, ideal_cost, peak_rad, ideal_peak_rad, worst_stall_ns for both timings.
"""
import argparse
import json

import numpy as np
import scipy.linalg


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("jobs")
    for name in ["period-ns", "horizon-ns", "peak-step-ns"]:
        p.add_argument("--" + name, type=int, required=True)
    for name in ["inertia", "torque", "tau", "kp", "kd", "q-angle", "q-rate", "r-command",
                 "initial-angle", "dist", "dist-at", "dist-on", "dist-repeat"]:
        p.add_argument("--" + name, type=float, required=True)
    return p.parse_args()


def read_jobs(path):
    jobs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                s, a, e = line.strip().split(",")
                jobs.append((int(s), int(a), e.strip() == "1"))
    return jobs


class Model:
    def __init__(self, a):
        self.a = a
        # x = [angle, rate, torque]; input u (held), disturbance d (piecewise constant).
        self.A = np.array([[0.0, 1.0, 0.0],
                           [0.0, 0.0, 1.0 / a.inertia],
                           [0.0, 0.0, -1.0 / a.tau]])
        self.Bu = np.array([0.0, 0.0, a.torque / a.tau])
        self.Bd = np.array([0.0, 1.0 / a.inertia, 0.0])
        # The input enters through an augmented 5x5 generator [x; u; d] for expm.
        self.M = np.zeros((5, 5))
        self.M[:3, :3] = self.A
        self.M[:3, 3] = self.Bu
        self.M[:3, 4] = self.Bd
        self.nodes, self.weights = np.polynomial.legendre.leggauss(10)
        self.cache = {}

    def disturbance(self, t_ns):
        a = self.a
        at = round(a.dist_at * 1e9)
        on = round(a.dist_on * 1e9)
        rep = round(a.dist_repeat * 1e9)
        if t_ns < at:
            return 0.0
        phase = (t_ns - at) % rep if rep > 0 else t_ns - at
        return a.dist if (on == 0 or phase < on) else 0.0

    def flow(self, h_ns):
        """expm over h and at the quadrature nodes in (0, h)."""
        if h_ns not in self.cache:
            h = h_ns * 1e-9
            phi = scipy.linalg.expm(self.M * h)
            at_nodes = [scipy.linalg.expm(self.M * (0.5 * h * (x + 1.0))) for x in self.nodes]
            self.cache[h_ns] = (phi, at_nodes)
        return self.cache[h_ns]

    def interval(self, z, h_ns):
        """Exact end state and cost of x'Qx + u'Ru over h from z = [x, u, d]."""
        a = self.a
        phi, at_nodes = self.flow(h_ns)
        h = h_ns * 1e-9
        cost = 0.0
        for w, e in zip(self.weights, at_nodes):
            y = e @ z
            cost += w * (a.q_angle * y[0] ** 2 + a.q_rate * y[1] ** 2 + a.r_command * y[3] ** 2)
        return phi @ z, 0.5 * h * cost


def replay(model, jobs, a):
    horizon = a.horizon_ns
    samples = {}
    actuations = {}
    for k, (s, act, executed) in enumerate(jobs):
        if not executed:
            continue
        r = k * a.period_ns
        if r + s <= horizon:
            samples.setdefault(r + s, []).append(k)
        if r + act <= horizon:
            actuations.setdefault(r + act, []).append(k)
    points = set(samples) | set(actuations) | {horizon}
    points |= set(range(a.peak_step_ns, horizon, a.peak_step_ns))
    at = round(a.dist_at * 1e9)
    on = round(a.dist_on * 1e9)
    rep = round(a.dist_repeat * 1e9)
    t = at
    while t < horizon:
        points.add(t)
        if on > 0 and t + on < horizon:
            points.add(t + on)
        if rep == 0:
            break
        t += rep
    z = np.array([a.initial_angle, 0.0, 0.0, 0.0, model.disturbance(0)])
    peak = abs(z[0])
    cost = 0.0
    pending = {}
    last_act = 0
    stall = 0
    now = 0
    for t in sorted(points):
        if t > now:
            z, c = model.interval(z, t - now)
            cost += c
            peak = max(peak, abs(z[0]))
            now = t
        # In release order; a job samples before it actuates (both may be at t).
        for k in sorted(set(samples.get(t, [])) | set(actuations.get(t, []))):
            if k in samples.get(t, []):
                pending[k] = -(a.kp * z[0] + a.kd * z[1])
            if k in actuations.get(t, []):
                z[3] = pending[k]
                stall = max(stall, t - last_act)
                last_act = t
        z[4] = model.disturbance(t)
    stall = max(stall, horizon - last_act)
    return cost, peak, stall


def design(a):
    """Per-period closed-loop eigenvalue moduli under ideal timing and a full period of delay."""
    model = Model(a)
    h = a.period_ns * 1e-9
    out = {}
    for name, delay in [("no_delay", 0.0), ("period_delay", h)]:
        # z = [x, u held, u pending]: sample (pending = -K x), hold `delay`, actuate, hold rest.
        sample = np.eye(5)
        sample[4, :] = [-a.kp, -a.kd, 0.0, 0.0, 0.0]
        hold = [np.eye(5), np.eye(5)]
        for i, t in enumerate([delay, h - delay]):
            hold[i][:4, :4] = scipy.linalg.expm(model.M[:4, :4] * t)
        actuate = np.eye(5)
        actuate[3, :] = [0.0, 0.0, 0.0, 0.0, 1.0]
        step = hold[1] @ actuate @ hold[0] @ sample
        out[name] = float(max(abs(np.linalg.eigvals(step))))
    return out


def main():
    a = parse()
    if a.jobs == "design":
        print(json.dumps(design(a)))
        return
    jobs = read_jobs(a.jobs)
    model = Model(a)
    cost, peak, stall = replay(model, jobs, a)
    icost, ipeak, istall = replay(model, [(0, 0, True)] * len(jobs), a)
    print(json.dumps({"cost": cost, "ideal_cost": icost, "peak_rad": peak,
                      "ideal_peak_rad": ipeak, "worst_stall_ns": stall,
                      "ideal_worst_stall_ns": istall}))


if __name__ == "__main__":
    main()
