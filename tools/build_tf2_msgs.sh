#!/usr/bin/env bash
# Copyright 2026 gjk_ros maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Build the tf2_msgs fallback (tools/tf2_msgs_fallback) into a virtual environment that holds
# the ROS 2 Jazzy wheels, but only if that environment cannot already import tf2_msgs: on a
# machine with ROS 2 sourced, the system's tf2_msgs must win.
#
# Usage: tools/build_tf2_msgs.sh VENV
# Needs cmake, a C/C++ compiler and the Python headers. The Python-side build dependencies
# (tools/requirements-tf2-build.txt) are installed into VENV only when a build is needed.
set -euo pipefail
trap 'echo "error: tf2_msgs fallback build failed at line ${LINENO} of $0" >&2' ERR

venv="$(cd "${1:?usage: $0 VENV}" && pwd)"
python="${venv}/bin/python"
tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="${tools_dir}/tf2_msgs_fallback"
build_dir="${venv}/build/tf2_msgs"

if "${python}" -c 'import tf2_msgs.msg' 2>/dev/null; then
  echo "tf2_msgs is already importable, not building the fallback."
  exit 0
fi

for tool in cmake cc c++; do
  command -v "${tool}" >/dev/null || {
    echo "error: '${tool}' is needed to build tf2_msgs (apt-get install cmake g++)." >&2
    exit 1
  }
done

"${python}" -m pip install --quiet -r "${tools_dir}/requirements-tf2-build.txt"

# The wheels were built with a Python under /opt/python/cp311-cp311 and some of their CMake
# export files still name its include folders. Point them at this environment's folders,
# otherwise CMake stops with "Imported target ... includes non-existent path".
read -r py_include np_include < <("${python}" -c \
  'import sysconfig, numpy; print(sysconfig.get_paths()["include"], numpy.get_include())')
if [[ ! -f "${py_include}/Python.h" ]]; then
  echo "error: Python.h not found in ${py_include} (install the Python development headers)." >&2
  exit 1
fi
wheel_python='/opt/python/cp311-cp311'
# (No match is fine: the files are already patched, or the wheels no longer need it.)
mapfile -t export_files < <(grep -rlF "${wheel_python}" "${venv}"/share/*/cmake || true)
for export_file in "${export_files[@]}"; do
  sed -i \
    -e "s#${wheel_python}/include/python3.11#${py_include}#g" \
    -e "s#${wheel_python}/lib/python3.11/site-packages/numpy/_core/include#${np_include}#g" \
    "${export_file}"
done

# Plain CMake build (no colcon), installed straight into the venv prefix so that
# `import tf2_msgs.msg` works with no setup script sourced.
mkdir -p "${build_dir}"
export CMAKE_PREFIX_PATH="${venv}" AMENT_PREFIX_PATH="${venv}"
cmake -S "${source_dir}" -B "${build_dir}" \
  -DCMAKE_INSTALL_PREFIX="${venv}" \
  -DPython3_EXECUTABLE="${python}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_TESTING=OFF >"${build_dir}.log" 2>&1 \
  || { cat "${build_dir}.log" >&2; exit 1; }
cmake --build "${build_dir}" --parallel 2 >>"${build_dir}.log" 2>&1 \
  || { tail -50 "${build_dir}.log" >&2; exit 1; }
cmake --install "${build_dir}" >>"${build_dir}.log" 2>&1 \
  || { tail -50 "${build_dir}.log" >&2; exit 1; }

"${python}" -c 'import tf2_msgs.msg' || {
  echo "error: tf2_msgs was built but cannot be imported; see ${build_dir}.log" >&2
  exit 1
}
echo "tf2_msgs fallback built into ${venv} (log: ${build_dir}.log)."
