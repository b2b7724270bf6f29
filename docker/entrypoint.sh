#!/usr/bin/env bash
# Inside the image: the SDE-independent suite; with an SDE, also build every
# program for both chips and run its vectors on tofino-model through PTF.
#
#   docker run --rm tofino-cc                           # suite only
#   docker run --rm --privileged tofino-cc-sde          # suite + tofino-model
#   docker run --rm --privileged tofino-cc-sde ptf pmqecn tofino2
#
# The tofino-model part needs --privileged (or NET_ADMIN plus the sysctls in
# docker/README.md): veth_setup.sh creates veth pairs and disables IPv6 on
# them, run_switchd.sh sets vm.nr_hugepages.
set -euo pipefail
cd /src/tofino-cc

have_sde() { [[ -x ${SDE:-/nonexistent}/run_tofino_model.sh && -x $SDE_INSTALL/bin/bf-p4c ]]; }

veths() {
  # 8 PTF ports -> veth0..15, plus veth250/251 (run_p4_tests.sh's CPU veth).
  if ! ip link show veth0 >/dev/null 2>&1; then
    sudo "$SDE_INSTALL/bin/veth_setup.sh" 16 || {
      echo "entrypoint: veth_setup.sh failed: run the container with --privileged" >&2
      exit 1
    }
  fi
}

ptf() {
  local program=$1 chip=$2
  export P4C=${P4C:-$SDE_INSTALL/bin/bf-p4c}
  # Leaves build/<chip>/<program>/<program>.conf, which run_ptf.sh passes with -c.
  python scripts/build_p4.py "$program" --target "$chip"
  # --start: tofino-model and bf_switchd in their own process groups, stopped
  # (the whole group) when the run ends, so the next program starts clean.
  ptf_tests/run_ptf.sh --start "$program" "$chip"
}

case ${1:-all} in
  suite)
    python -m pytest -q
    ;;
  ptf)
    have_sde || { echo "entrypoint: this image has no SDE (build with WITH_SDE=1)" >&2; exit 2; }
    veths
    ptf "${2:?program}" "${3:-tofino}"
    ;;
  all)
    python -m pytest -q
    if have_sde; then
      veths
      for program in $(ls ptf_tests/vectors); do
        for chip in tofino tofino2; do
          ptf "$program" "$chip"
        done
      done
    else
      echo "no SDE in this image: the shared vectors ran on the reference model only"
    fi
    ;;
  *)
    exec "$@"
    ;;
esac
