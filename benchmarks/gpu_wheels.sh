#!/usr/bin/env bash
# Download the wheels benchmarks/gpu_check.sh installs on a GPU machine that has
# JAX (and numpy, scipy, click, rich, h5py, absl-py, etils, cloudpickle,
# typing-extensions) but no MuJoCo: CPython 3.12, manylinux x86_64, no
# dependency resolution (the list below is what is missing there). warp-lang
# is split into 55 MB parts with a .sha256 file, so no single file is large and
# the parts can travel separately; gpu_check.sh joins and checks them.
#
#     bash benchmarks/gpu_wheels.sh [OUT_DIR] [--render]     # default: wheels/
#
# Headless by default: mujoco's rendering and viewer dependencies
# (mujoco-studio, glfw, pyopengl, websockets; 16 MB) are left out, as nothing
# in the check renders and `import mujoco`, MJX and mskbench work without them;
# --render adds them. impl="warp" uses mujoco-warp 4.0 (pure Python) on
# warp-lang; MJX (for impl="jax") is carried too. mskbench itself is built as a
# wheel from this checkout (gpu_check.sh prefers the source tree when it is there).
#
# Sizes (measured): warp-lang 1.19 149 MB (parts of 55, 55 and 39 MB), the
# rest 26 MB headless. With a 64 MiB limit on what one device call carries, the
# parts go in three calls, e.g. part-00 in the first, part-01 in the second,
# part-02 and every other wheel in the third (each in its own ignored folder,
# e.g. .whl/1 .whl/2 .whl/3; gpu_check.sh searches WHEELS_DIR 3 levels deep).
set -euo pipefail

out=wheels
render=0
for arg in "$@"; do
  case $arg in
    --render) render=1 ;;
    -*) echo "unknown option $arg" >&2; exit 2 ;;
    *) out=$arg ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
mkdir -p "$out"

pkgs=(
  mujoco==4.0.0 mujoco-core==4.0.0
  mujoco-mjx==3.17.0 trimesh==5.2.0
  mujoco-warp==4.0.0 warp-lang==1.19.0
  musclemimic-models==1.0.6
  gymnasium==1.4.0 farama-notifications==0.0.4
)
if [ "$render" = 1 ]; then
  pkgs+=(mujoco-studio==4.0.0 glfw==2.11.0 pyopengl==3.1.10 websockets==17.4)
fi
plat=()
for p in manylinux_2_39_x86_64 manylinux_2_35_x86_64 manylinux_2_34_x86_64 manylinux_2_31_x86_64 \
         manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64 any; do
  plat+=(--platform "$p")
done
# Pure-Python wheels are "any"; --no-deps because the GPU image already holds the rest.
"$py" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
  --abi abi3 --abi none "${plat[@]}" -d "$out" "${pkgs[@]}"

# mskbench itself (pure Python).
"$py" -m pip wheel --no-deps -q -w "$out" "$here"

# Split warp-lang (the one large wheel) into 55 MB parts and record its checksum.
shopt -s nullglob
for whl in "$out"/warp_lang-*.whl; do
  name=$(basename "$whl")
  (cd "$out" && sha256sum "$name" >"$name.sha256" && split -b 55000000 -d -a 2 "$name" "$name.part-" && rm "$name")
done
ls -l "$out"
du -sh "$out"
