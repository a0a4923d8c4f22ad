#!/usr/bin/env bash
# Gradescope's setup.sh for a course of these steps (docs/course.md, "Gradescope and Autolab"). Gradescope
# runs it once, as root, when it builds the autograder's image (Ubuntu 22.04 or 24.04), with the zip
# unpacked in /autograder/source: setup.sh, run_autograder, gemm/ (this repository), seed (the private
# grading seed) and course.conf (the assignment: STEPS=..., see run_autograder).
#
# It installs what tools/grade needs without a GPU: CMake 3.25 or newer, a C++20 compiler, Python 3, nm
# (binutils) and the CUDA Toolkit (nvcc for the PTX the implementation part reads, and the headers the
# emulated build uses; no driver). Then it builds the handout of the assigned steps once, so that each
# submission recompiles only its own files.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
AUTOGRADER=${AUTOGRADER:-/autograder}  # Gradescope's; another folder to try it elsewhere
SOURCE=$AUTOGRADER/source
REPO=$SOURCE/gemm
STEPS=""
# shellcheck disable=SC1091
[ -f "$SOURCE/course.conf" ] && . "$SOURCE/course.conf"
if [ -z "$STEPS" ]; then
  echo "setup.sh: course.conf must set STEPS (the assigned steps, e.g. STEPS=7 or STEPS=4-6,8)" >&2
  exit 1
fi

apt-get update
apt-get install -y --no-install-recommends build-essential python3 python3-pip binutils ca-certificates wget \
  gnupg tar

# CMake 3.25 or newer: the distribution's when it is new enough (24.04), else pip's.
if ! cmake --version 2>/dev/null | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 25)) }'
then
  apt-get install -y --no-install-recommends cmake || true
  if ! cmake --version 2>/dev/null | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 25)) }'
  then
    python3 -m pip install --break-system-packages 'cmake>=3.25' 2>/dev/null || python3 -m pip install 'cmake>=3.25'
  fi
fi

# The CUDA Toolkit from NVIDIA's apt repository for this Ubuntu release (13.0 is what the project uses).
. /etc/os-release
repo="ubuntu${VERSION_ID//./}"
wget -q "https://developer.download.nvidia.com/compute/cuda/repos/$repo/x86_64/cuda-keyring_1.1-1_all.deb" \
  -O /tmp/cuda-keyring.deb
dpkg -i /tmp/cuda-keyring.deb
apt-get update
apt-get install -y --no-install-recommends cuda-toolkit-13-0
echo 'export PATH=/usr/local/cuda/bin:$PATH' > /etc/profile.d/cuda.sh
export PATH=/usr/local/cuda/bin:$PATH

# The grading build of the assigned steps (emulator only: Gradescope's runners have no GPU).
python3 "$REPO/tools/grade" --prepare --steps "$STEPS" --workdir "$AUTOGRADER/grading" --device emu
