#!/usr/bin/env bash
# The pictures of docs/img/worlds/: one still of every world, made with `simfid render`.
#   bash tools/render_gallery.sh [output folder]      (default docs/img/worlds)
# Truck worlds run the fidelity manager (config/truck.yaml, preset adfi-1) for 1 s of sim time
# and show its levels; the others show the world after 0.5 s.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/docs/img/worlds}"
SIMFID="${SIMFID:-$ROOT/.venv/bin/simfid}"
W="$ROOT/sim_fidelity/worlds"
mkdir -p "$OUT"
render() {  # render <world> [simfid render options...]
  local world="$1"; shift
  "$SIMFID" render "$W/$world.sdf" -o "$OUT/$world.png" --width 480 --height 320 "$@"
}
for s in A B C; do
  render "truck_$s" --fidelity-config "$ROOT/sim_fidelity/config/truck.yaml" --preset adfi-1 \
    --duration 1 --camera 4,0,1,10,160,-40
done
render one_d_track --duration 0.5 --camera 0,0,0,1.2,135,-25
render ackermann_design --duration 0.5 --camera 0,5,0,13,75,-22
render ackermann_deploy --duration 0.5 --camera 0,5,0,13,75,-22
render joint_tree_7x4 --duration 0.5 --camera 0,0.3,1.1,9,120,-15
for w in revolute_joint_test pr2 dual_pr2 joint_tree_1x4 drop_test conductor_arm stack_test box_wall; do
  render "$w" --duration 0.5
done
