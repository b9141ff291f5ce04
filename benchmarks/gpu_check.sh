#!/usr/bin/env bash
# The GPU check in one command, for a GPU machine that has JAX but not MuJoCo.
#
#     bash benchmarks/gpu_check.sh WHEELS_DIR [gpu_check.py options]
#     bash benchmarks/gpu_check.sh wheels --quick --json-out "$OUT/gpu_check.json"
#     bash benchmarks/gpu_check.sh none --dry-run      # no install: this environment as it is
#
# 1. Joins split wheels (NAME.whl.part-00, -01, ... next to NAME.whl.sha256, as
#    benchmarks/gpu_wheels.sh writes them) and checks them against the checksum.
# 2. Installs every wheel under WHEELS_DIR (searched 3 folders deep, so parts
#    carried in separate folders are found) into $GPU_CHECK_SITE with
#    pip --target --no-deps --no-index, and puts it, then this checkout's src/,
#    first on PYTHONPATH (an mskbench wheel is used only without a src/ tree).
# 3. Prints the GPU and the installed versions and runs benchmarks/gpu_check.py,
#    whose own budget (--budget-s, default 400 s) keeps the whole under 8 minutes;
#    `timeout` ends it 30 s after that budget (or at GPU_CHECK_TIMEOUT_S) in any case.
#    --train-s S adds a policy trained for S seconds (raise --budget-s by S + 90).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 WHEELS_DIR|none [gpu_check.py options]" >&2
  exit 2
fi
wheels=$1
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
site=${GPU_CHECK_SITE:-/tmp/mskbench-gpu-site}
work=${GPU_CHECK_WORK:-/tmp/mskbench-gpu-wheels}
t0=$(date +%s)

if [ "$wheels" != none ] && [ "$wheels" != - ]; then
  [ -d "$wheels" ] || { echo "no wheel folder $wheels" >&2; exit 2; }
  rm -rf "$work"
  mkdir -p "$work"
  # 1. split wheels: join the parts (in name order), check the sha256 the split recorded.
  while IFS= read -r sum; do
    name=$(basename "$sum" .sha256)
    whole=$(find "$wheels" -maxdepth 3 -name "$name" -type f | head -n 1)
    if [ -n "$whole" ]; then
      cp "$whole" "$work/$name"
    else
      mapfile -t parts < <(find "$wheels" -maxdepth 3 -name "$name.part-*" -type f | awk -F/ '{print $NF "\t" $0}' \
                           | sort | cut -f2)
      [ ${#parts[@]} -gt 0 ] || { echo "$name: no wheel and no parts next to $sum" >&2; exit 1; }
      echo "joining $name from ${#parts[@]} parts"
      cat "${parts[@]}" >"$work/$name"
    fi
    (cd "$work" && sha256sum -c --quiet - <"$sum") || { echo "$name: checksum mismatch (a part missing?)" >&2; exit 1; }
  done < <(find "$wheels" -maxdepth 3 -name '*.whl.sha256' -type f)
  # 2. whole wheels (one of each name), mskbench's own only when there is no source tree.
  while IFS= read -r whl; do
    name=$(basename "$whl")
    [ -e "$work/$name" ] && continue
    if [[ $name == mskbench-* ]] && [ -d "$repo/src/mskbench" ]; then
      echo "using $repo/src, not $name"
      continue
    fi
    cp "$whl" "$work/$name"
  done < <(find "$wheels" -maxdepth 3 -name '*.whl' -type f)
  shopt -s nullglob
  todo=("$work"/*.whl)
  [ ${#todo[@]} -gt 0 ] || { echo "no wheels found under $wheels" >&2; exit 1; }
  echo "installing ${#todo[@]} wheels into $site"
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "${todo[@]}"
  export PYTHONPATH="$site:$repo/src${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$repo/src${PYTHONPATH:+:$PYTHONPATH}"
fi
echo "install/setup took $(( $(date +%s) - t0 )) s"

# 3. the machine, then the check.
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
else
  echo "nvidia-smi: not found"
fi
"$py" - <<'EOF' || true
import importlib
for m in ("jax", "numpy", "mujoco", "warp", "mujoco_warp", "musclemimic_models", "gymnasium", "mskbench"):
    try:
        mod = importlib.import_module(m)
        print(f"{m:20s} {getattr(mod, '__version__', '?'):12s} {getattr(mod, '__file__', '')}")
    except Exception as exc:  # noqa: BLE001
        print(f"{m:20s} NOT IMPORTABLE: {type(exc).__name__}: {exc}")
EOF
export PYTHONUNBUFFERED=1
# MuJoCo Warp allocates its buffers outside JAX's memory pool: let JAX allocate on demand
# instead of taking 75% of the GPU up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
# The hard stop: 30 s past gpu_check.py's own budget (--budget-s, default 400 s).
budget=400
prev=
for arg in "$@"; do
  [ "$prev" = --budget-s ] && budget=$arg
  case $arg in --budget-s=*) budget=${arg#--budget-s=} ;; esac
  prev=$arg
done
budget=${budget%.*}
exec timeout -k 10 "${GPU_CHECK_TIMEOUT_S:-$(( ${budget:-400} + 30 ))}" "$py" "$repo/benchmarks/gpu_check.py" "$@"
