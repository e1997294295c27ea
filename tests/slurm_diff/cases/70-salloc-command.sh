#!/bin/bash
# diff: command=salloc -n1 bash -c 'env | sort > env.salloc; srun bash -c "env | sort > env.salloc-step"'; echo rc=$?
