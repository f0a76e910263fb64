#!/bin/sh
# Prints the folder that holds the CUDA runtime (libcudart_static.a), as the
# given nvcc (default: the one on PATH) reports it in a dry run. Used by the
# Makefile and the GPU scripts, because nvcc's own path can be a wrapper.
#     sh tests/gpu/cuda_libdir.sh [NVCC]
NVCC=${1:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$NVCC" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 |
	sed -n 's/^#\$ LIBRARIES=//p' | tr ' ' '\n' | tr -d '"' |
	sed -n 's/^-L//p' | grep -v stubs | tail -n 1
