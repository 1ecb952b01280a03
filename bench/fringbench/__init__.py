# SPDX-License-Identifier: MIT
"""fring's benchmark code, one job per module; bench/run, bench/bufpool,
bench/zerocopy and bench/bindings are its command lines.

    util      logging, subprocesses, sizes, file reads
    procs     mounts (mountinfo, unmount, fusectl abort) and processes
              (CPU seconds, threads, rings, stopping by PID)
    targets   what the jobs run against: the raw directory, fring, any
              other FUSE server
    jobs      the fio jobs J1-J5, J7 and the metadata job J6
    latency, scaling, tree, workload, ceiling
              J8, J9, J10, J11 (tarball: its tarball) and J12
    machine   the machine and fring build a run measured
    stats     medians and ratios over rounds
    report    bench/run's markdown report
    plots     bench/run's bar chart
    results   where a run's files go (bench/results/MACHINE-DATE/)
    rounds    bench/run's interleaved rounds
    cli       bench/run's command line
    vm        what bench/bufpool and bench/zerocopy share (the Linux 7.3
              guest round trip, their report header)
    summary   bench/RESULTS.md, generated from bench/results/

Stdlib only (plots needs matplotlib). See bench/README.md.
"""

import os

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
