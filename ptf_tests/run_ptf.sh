#!/usr/bin/env bash
# Run one program's shared vectors on tofino-model or hardware through the
# SDE's PTF runner. The same YAML files run on the reference model in pytest.
#
#   ptf_tests/run_ptf.sh PROGRAM [tofino|tofino2] [extra run_p4_tests.sh args]
#
# Needs $SDE (with run_p4_tests.sh) and, for tofino-model, the model and
# bf_switchd already running with PROGRAM loaded (see ptf_tests/README.md).
set -euo pipefail

program=${1:?usage: run_ptf.sh PROGRAM [tofino|tofino2]}
chip=${2:-tofino}
shift $(( $# >= 2 ? 2 : 1 ))

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

if [[ -z ${SDE:-} || ! -x ${SDE}/run_p4_tests.sh ]]; then
  echo "run_ptf.sh: \$SDE must point at an Intel SDE with run_p4_tests.sh" >&2
  exit 2
fi
if [[ ! -d $here/$program ]]; then
  echo "run_ptf.sh: no PTF module ptf_tests/$program" >&2
  exit 2
fi
case $chip in
  tofino) arch=tf1 ;;
  tofino2) arch=tf2 ;;
  *) echo "run_ptf.sh: chip must be tofino or tofino2, got '$chip'" >&2; exit 2 ;;
esac

# The PTF modules import models/ and the vector loader from this checkout.
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export PTF_RUN=1
exec "$SDE/run_p4_tests.sh" -p "$program" -t "$here/$program" -f "$here/ports.json" \
  --arch "$arch" --test-params "arch='$chip'" "$@"
