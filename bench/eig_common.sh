# Sourced by bench/eig_processes.sh and bench/eig_stages.sh with their arguments [N] [BUILD ...]
# (defaults 32768, ./build-gpu): n and builds from them, the environment both run the CLI's syevd
# under (no performance model unless one is given, NVLink multicast off, METHOD as
# TESSERA_EIG_METHOD, default two), and run_name BUILD ROUND: a run's name for its trace files.
set -euo pipefail
n=${1:-32768}
shift || true
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(./build-gpu)
export TESSERA_PERFMODEL=${TESSERA_PERFMODEL:-none} NCCL_NVLS_ENABLE=0
export TESSERA_EIG_METHOD=${METHOD:-two}
run_name() { echo "$(basename "$(dirname "$1/x")")-$2"; }
