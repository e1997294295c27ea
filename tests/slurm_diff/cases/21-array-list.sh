#!/bin/bash
#SBATCH -a 1,3,5 -o l-%A-%a.out
env | sort > env.task$SLURM_ARRAY_TASK_ID
