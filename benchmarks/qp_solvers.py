"""Which QP solver for the expert's whole-body QP: the QPs of an expert Stand rollout, solved by each.

The expert (``mskbench.control``) solves one sparse QP per control step (~700 variables, ~190 equality
rows, box bounds; a diagonal Hessian). This script records ``--steps`` of those QPs from an expert Stand
episode and solves each with every solver installed: PIQP (what the expert uses), Clarabel, OSQP and
ProxQP (sparse), the last three warm-started from the previous step's solution where they can be and
their dimensions allow. It prints, per solver, the median time per QP and the largest deviation of the
muscle activations from PIQP's at tight tolerances. Solvers that are not installed are skipped
(``pip install clarabel osqp proxsuite``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import mskbench.control.qp as qpmod
from mskbench.control import make_controller
from mskbench.envs import MSKEnv


def record(steps: int, seed: int) -> list[tuple]:
    problems: list[tuple] = []
    solve = qpmod._solve

    def spy(P, q, A, b, lb, ub):
        problems.append((P, q, A, b, lb, ub))
        return solve(P, q, A, b, lb, ub)

    qpmod._solve = spy
    try:
        env = MSKEnv("Stand")
        policy = make_controller("expert", env)
        obs, _ = env.reset(seed=seed)
        policy.reset(seed)
        for _ in range(steps):
            obs, *_ = env.step(policy.act(obs))
    finally:
        qpmod._solve = solve
    return problems


def piqp_solver(problems, tight: bool = False):
    import piqp

    out = []
    for P, q, A, b, lb, ub in problems:
        s = piqp.SparseSolver()
        s.settings.verbose = False
        s.settings.reg_lower_limit = 1e-8
        if tight:
            s.settings.eps_abs, s.settings.eps_rel = 1e-10, 1e-11
        t = time.perf_counter()
        s.setup(P, q, A, b, None, None, None, lb, ub)
        s.solve()
        out.append((time.perf_counter() - t, np.asarray(s.result.x)))
    return out


def clarabel_solver(problems):
    import clarabel

    out = []
    for P, q, A, b, lb, ub in problems:
        t = time.perf_counter()
        n = len(q)
        eye = sp.eye(n, format="csr")
        fu, fl = np.isfinite(ub), np.isfinite(lb)
        M = sp.vstack([A, eye[fu], -eye[fl]], format="csc")
        rhs = np.concatenate([b, ub[fu], -lb[fl]])
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        cones = [clarabel.ZeroConeT(A.shape[0]), clarabel.NonnegativeConeT(int(fu.sum() + fl.sum()))]
        res = clarabel.DefaultSolver(sp.triu(P, format="csc"), q, M, rhs, cones, settings).solve()
        out.append((time.perf_counter() - t, np.asarray(res.x)))
    return out


def osqp_solver(problems):
    import osqp

    out, prev = [], None
    for P, q, A, b, lb, ub in problems:
        t = time.perf_counter()
        n = len(q)
        M = sp.vstack([A, sp.eye(n, format="csc")], format="csc")
        solver = osqp.OSQP()
        solver.setup(P, q, M, np.concatenate([b, lb]), np.concatenate([b, ub]), verbose=False, eps_abs=1e-5,
                     eps_rel=1e-5, max_iter=20000, polishing=False)
        if prev is not None and prev[0].size == n and prev[1].size == M.shape[0]:
            solver.warm_start(x=prev[0], y=prev[1])
        res = solver.solve()
        prev = (res.x, res.y)
        out.append((time.perf_counter() - t, np.asarray(res.x)))
    return out


def proxqp_solver(problems):
    import proxsuite

    out, prev = [], None
    for P, q, A, b, lb, ub in problems:
        t = time.perf_counter()
        n, neq = len(q), A.shape[0]
        qp = proxsuite.proxqp.sparse.QP(n, neq, n)
        qp.settings.eps_abs = 1e-5
        qp.settings.verbose = False
        warm = prev is not None and prev[0].size == n and prev[1].size == neq
        if warm:
            qp.settings.initial_guess = proxsuite.proxqp.InitialGuess.WARM_START
        qp.init(P, q, A, b, sp.eye(n, format="csc"), np.where(np.isfinite(lb), lb, -1e20),
                np.where(np.isfinite(ub), ub, 1e20))
        if warm:
            qp.solve(prev[0], prev[1], prev[2])
        else:
            qp.solve()
        r = qp.results
        prev = (r.x.copy(), r.y.copy(), r.z.copy())
        out.append((time.perf_counter() - t, np.asarray(r.x)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    problems = record(args.steps, args.seed)
    env = MSKEnv("Stand")
    qp = make_controller("expert", env).qp
    acts = slice(qp.na, qp.na + qp.nq_m)
    reference = [x for _, x in piqp_solver(problems, tight=True)]
    print(f"{len(problems)} QPs of an expert Stand episode (seed {args.seed}): "
          f"{len(problems[0][1])} variables, {problems[0][2].shape[0]} equality rows")
    print(f"{'solver':10s} {'median ms':>10s} {'max ms':>8s} {'max |Δ activation|':>19s}")
    for name, fn in (("piqp", piqp_solver), ("clarabel", clarabel_solver), ("osqp", osqp_solver),
                     ("proxqp", proxqp_solver)):
        try:
            runs = fn(problems)
        except ImportError:
            print(f"{name:10s} (not installed)")
            continue
        times = np.array([t for t, _ in runs]) * 1e3
        dev = max(float(np.abs(x[acts] - r[acts]).max()) if np.all(np.isfinite(x)) else np.inf
                  for (_, x), r in zip(runs, reference))
        print(f"{name:10s} {np.median(times):10.2f} {times.max():8.2f} {dev:19.2e}")


if __name__ == "__main__":
    main()
