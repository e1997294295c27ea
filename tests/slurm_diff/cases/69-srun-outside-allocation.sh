#!/bin/bash
# diff: command=srun -n2 bash -c 'env | sort > env.srun.$SLURM_PROCID'; echo rc=$?
