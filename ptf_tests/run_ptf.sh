#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
# Run one program's shared vectors on tofino-model (or hardware) through the
# SDE's PTF runner. The same YAML files run on the reference model in pytest.
#
#   ptf_tests/run_ptf.sh [--start] PROGRAM [tofino|tofino2] [extra run_p4_tests.sh args]
#
# Needs $SDE and $SDE_INSTALL (open-p4studio: run_p4_tests.sh, run_switchd.sh,
# run_tofino_model.sh) and the program built by scripts/build_p4.py into
# build/<chip>/<program>/, where the compiler leaves <program>.conf.
#
# Without --start, tofino-model and bf_switchd must already run with PROGRAM
# loaded (ptf_tests/README.md shows the commands). With --start this script
# starts both with the program's conf file (-c) and the chip's port file (-f),
# each in its own process group (setsid), and stops both groups when it exits,
# so the next program never meets a stale switch.
#
# One writer per program: PTF binds the program on the BF-Runtime server, so
# stop any `tofcc` controller (optimize --interval) first; `tofcc status`
# may keep running.
set -euo pipefail

start=false
if [[ ${1:-} == --start ]]; then
  start=true
  shift
fi
program=${1:?usage: run_ptf.sh [--start] PROGRAM [tofino|tofino2]}
chip=${2:-tofino}
shift $(( $# >= 2 ? 2 : 1 ))

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

if [[ -z ${SDE:-} || ! -x ${SDE}/run_p4_tests.sh ]]; then
  echo "run_ptf.sh: \$SDE must point at an SDE with run_p4_tests.sh" >&2
  exit 2
fi
export SDE_INSTALL=${SDE_INSTALL:-$SDE/install}
if [[ ! -d $here/$program ]]; then
  echo "run_ptf.sh: no PTF module ptf_tests/$program" >&2
  exit 2
fi
# run_p4_tests.sh CPUPORT and run_tofino_model.sh: tf1 / tf2. Tofino2's front
# panel starts at device port 8, hence its own port file (hw_profiles).
case $chip in
  tofino) arch=tf1; ports=$here/ports.json ;;
  tofino2) arch=tf2; ports=$here/ports_tof2.json ;;
  *) echo "run_ptf.sh: chip must be tofino or tofino2, got '$chip'" >&2; exit 2 ;;
esac
conf=$repo/build/$chip/$program/$program.conf
if [[ ! -r $conf ]]; then
  echo "run_ptf.sh: no $conf; build first: python scripts/build_p4.py $program --target $chip" >&2
  exit 2
fi

logs=$repo/build/$chip/$program/logs
groups=()
stop_switch() {
  # Each group holds a run_*.sh script, its sudo and the daemon under it.
  local pgid
  for pgid in "${groups[@]}"; do
    kill -TERM -- "-$pgid" 2>/dev/null || true
  done
  for pgid in "${groups[@]}"; do
    for _ in $(seq 50); do
      kill -0 -- "-$pgid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$pgid" 2>/dev/null || true
  done
  groups=()
}

if $start; then
  mkdir -p "$logs"
  trap stop_switch EXIT
  trap 'exit 130' INT TERM
  # setsid: a new session and process group whose id is the child's pid.
  setsid "$SDE/run_tofino_model.sh" -p "$program" --arch "$arch" -c "$conf" -f "$ports" -q \
    >"$logs/model.log" 2>&1 </dev/null &
  groups+=("$!")
  setsid "$SDE/run_switchd.sh" -p "$program" --arch "$arch" -c "$conf" -- --background \
    >"$logs/switchd.log" 2>&1 </dev/null &
  groups+=("$!")
  # bf_switchd serves BF-Runtime on 50052 once the program is loaded.
  grpc_port=${BFRT_GRPC_PORT:-50052}
  for i in $(seq 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$grpc_port") 2>/dev/null; then break; fi
    # The group exists only once the child has run setsid(); until then its
    # pid stands for it (a loaded machine showed the gap as a false "exited").
    if ! kill -0 -- "-${groups[1]}" 2>/dev/null && ! kill -0 "${groups[1]}" 2>/dev/null; then
      echo "run_ptf.sh: bf_switchd exited; see $logs/switchd.log" >&2
      tail -20 "$logs/switchd.log" >&2
      exit 1
    fi
    if (( i == 300 )); then
      echo "run_ptf.sh: bf_switchd not serving on $grpc_port after 300 s; see $logs" >&2
      exit 1
    fi
    sleep 1
  done
fi

# The PTF modules import models/ and the vector loader from this checkout.
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export PTF_RUN=1
status=0
"$SDE/run_p4_tests.sh" -p "$program" -t "$here/$program" -f "$ports" \
  --arch "$arch" --test-params "arch='$chip'" "$@" || status=$?
exit $status
