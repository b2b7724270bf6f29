#!/usr/bin/env bash
# Inside the image: run the SDE-independent suite; with an SDE, also build the
# programs and run every program's vectors on tofino-model.
set -euo pipefail
cd /src/tofino-cc
python -m pytest -q
if [[ -x ${SDE:-/nonexistent}/run_tofino_model.sh ]]; then
  sudo "$SDE/install/bin/veth_setup.sh" 16
  python scripts/build_p4.py
  for program in $(ls ptf_tests/vectors); do
    for chip in tofino tofino2; do
      arch=$([[ $chip == tofino ]] && echo tf1 || echo tf2)
      "$SDE/run_tofino_model.sh" -p "$program" --arch "$arch" -f ptf_tests/ports.json -q &
      model=$!
      "$SDE/run_switchd.sh" -p "$program" --arch "$arch" &
      switchd=$!
      ptf_tests/run_ptf.sh "$program" "$chip"
      kill "$switchd" "$model"; wait || true
    done
  done
else
  echo "no SDE in this image: the shared vectors ran on the reference model only"
fi
