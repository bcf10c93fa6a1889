#!/usr/bin/env bash
# Distributed potrf on the GPUs of one machine: bench/dist_factor.sh with ROUTINE=potrf.
#
#   bench/dist_potrf.sh [N] [TILE] [BUILD]      defaults: 65536, 2048, ./build
exec env ROUTINE=potrf "$(dirname "$0")/dist_factor.sh" "$@"
