#!/bin/bash
# diff: args=-n4 -c2
env | sort > env.batch
srun bash -c 'env | sort > env.task.$SLURM_STEP_ID.$SLURM_PROCID'
