#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
# Inside the image: with an SDE, build every program for both chips and run
# its vectors on tofino-model through PTF (JUnit XML in build/junit/); without
# one, the SDE-independent suite.
#
#   docker run --rm tofino-cc                           # suite (no SDE in the image)
#   docker run --rm --privileged tofino-cc-sde          # PTF for every program and chip
#   docker run --rm --privileged tofino-cc-sde ptf pmqecn tofino2
#   docker run --rm tofino-cc-sde suite                 # the suite, on demand
#
# The tofino-model part needs --privileged (or NET_ADMIN plus the sysctls in
# docker/README.md): veth_setup.sh creates veth pairs and disables IPv6 on
# them, run_switchd.sh sets vm.nr_hugepages.
set -euo pipefail
# TOFCC_SRC and PYTHON: where the checkout is and which Python runs it (the
# image's; tests/sde/test_docker_image.py points them at stand-ins).
src=${TOFCC_SRC:-/src/tofino-cc}
python=${PYTHON:-python}
cd "$src"
junit=$src/build/junit

# The compiler as the install has it: open-p4studio 1f97778f installs
# p4lang/p4c's driver as bin/p4c (bf-p4c is a link in its build tree, which
# the image deletes; open-p4studio issue #37); Intel's SDE installs bin/bf-p4c.
sde_compiler() {
  local name
  for name in bf-p4c p4c; do
    if [[ -x ${SDE_INSTALL:-/nonexistent}/bin/$name ]]; then
      echo "$SDE_INSTALL/bin/$name"
      return 0
    fi
  done
  return 1
}

have_sde() { [[ -x ${SDE:-/nonexistent}/run_tofino_model.sh ]] && sde_compiler >/dev/null; }

veths() {
  # 16 PTF ports (ptf_tests/ports.json) -> veth0..31, plus veth250/251
  # (run_p4_tests.sh's CPU veth); veth31, not veth0, says the set is complete.
  if ! ip link show veth31 >/dev/null 2>&1; then
    sudo "$SDE_INSTALL/bin/veth_setup.sh" 32 || {
      echo "entrypoint: veth_setup.sh failed: run the container with --privileged" >&2
      exit 1
    }
  fi
}

ptf() {
  local program=$1 chip=$2
  export P4C=${P4C:-$(sde_compiler)}
  # Leaves build/<chip>/<program>/<program>.conf, which run_ptf.sh passes with
  # -c. build_p4.py adds -Xp4c=--no-clot for tofino2 on the open-source p4c.
  "$python" scripts/build_p4.py "$program" --target "$chip"
  # run_p4_tests.sh --gen-xml-output: PTF writes xunit XML under the
  # ptf-utils source directory (run_ptf_tests.py: root_dir/xml_out); it is
  # collected into build/junit/ptf/<program>-<chip>/ whatever the result.
  local xml_out=$SDE/pkgsrc/ptf-modules/ptf-utils/xml_out
  rm -rf "$xml_out"
  local status=0
  # --start: tofino-model and bf_switchd in their own process groups, stopped
  # (the whole group) when the run ends, so the next program starts clean.
  ptf_tests/run_ptf.sh --start "$program" "$chip" --gen-xml-output || status=$?
  mkdir -p "$junit/ptf/$program-$chip"
  if [[ -d $xml_out ]]; then
    find "$xml_out" -name '*.xml' -exec cp {} "$junit/ptf/$program-$chip/" \;
  fi
  return "$status"
}

suite() {
  mkdir -p "$junit"
  "$python" -m pytest -q --junitxml "$junit/suite.xml" "$@"
}

case ${1:-all} in
  suite)
    shift
    suite "$@"
    ;;
  ptf)
    have_sde || { echo "entrypoint: this image has no SDE (build with WITH_SDE=1)" >&2; exit 2; }
    veths
    ptf "${2:?program}" "${3:-tofino}"
    ;;
  all)
    if have_sde; then
      # What only this image can do, first and alone: the suite runs in CI
      # and on demand (`suite`), not for half an hour before the first PTF.
      veths
      for program in $(ls ptf_tests/vectors); do
        for chip in tofino tofino2; do
          ptf "$program" "$chip"
        done
      done
    else
      echo "no SDE in this image: running the suite; the shared vectors run on the reference model only"
      suite
    fi
    ;;
  *)
    exec "$@"
    ;;
esac
