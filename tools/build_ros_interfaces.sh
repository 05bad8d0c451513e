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

# Build message packages (rosidl interfaces) from source into a virtual environment that holds
# the ROS 2 Jazzy wheels, for the interfaces that are not published as wheels. Each package is
# built only if that environment cannot already import it: on a machine with ROS 2 sourced, the
# system's packages win. Packages are built in the order given (dependencies first).
#
# Usage: tools/build_ros_interfaces.sh VENV PACKAGE_DIR...
# Needs cmake, a C/C++ compiler and the Python headers. The Python-side build dependencies
# (tools/requirements-tf2-build.txt) are installed into VENV only when a build is needed.
set -euo pipefail
trap 'echo "error: interface build failed at line ${LINENO} of $0" >&2' ERR

venv="$(cd "${1:?usage: $0 VENV PACKAGE_DIR...}" && pwd)"
shift
python="${venv}/bin/python"
tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The package name, from the package.xml of a source folder.
package_name() {
  sed -n 's:.*<name>\(.*\)</name>.*:\1:p' "$1/package.xml" | head -1
}

missing=()
for source_dir in "$@"; do
  package="$(package_name "${source_dir}")"
  if "${python}" -c "import ${package}.msg" 2>/dev/null; then
    echo "${package} is already importable, not building its fallback."
  else
    missing+=("$(cd "${source_dir}" && pwd)")
  fi
done
[[ ${#missing[@]} -gt 0 ]] || exit 0

for tool in cmake cc c++; do
  command -v "${tool}" >/dev/null || {
    echo "error: '${tool}' is needed to build ROS interfaces (apt-get install cmake g++)." >&2
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

# Plain CMake builds (no colcon), installed straight into the venv prefix so that
# `import <package>.msg` works with no setup script sourced; a later package finds the earlier
# ones there.
export CMAKE_PREFIX_PATH="${venv}" AMENT_PREFIX_PATH="${venv}"
for source_dir in "${missing[@]}"; do
  package="$(package_name "${source_dir}")"
  build_dir="${venv}/build/${package}"
  log="${build_dir}.log"
  started=${SECONDS}
  mkdir -p "${build_dir}"
  cmake -S "${source_dir}" -B "${build_dir}" \
    -DCMAKE_INSTALL_PREFIX="${venv}" \
    -DPython3_EXECUTABLE="${python}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_TESTING=OFF >"${log}" 2>&1 \
    || { cat "${log}" >&2; exit 1; }
  cmake --build "${build_dir}" --parallel 2 >>"${log}" 2>&1 \
    || { tail -50 "${log}" >&2; exit 1; }
  cmake --install "${build_dir}" >>"${log}" 2>&1 \
    || { tail -50 "${log}" >&2; exit 1; }
  "${python}" -c "import ${package}.msg" || {
    echo "error: ${package} was built but cannot be imported; see ${log}" >&2
    exit 1
  }
  echo "${package} fallback built into ${venv} in $((SECONDS - started)) s (log: ${log})."
done
