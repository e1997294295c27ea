#!/bin/bash
#SBATCH --array=0-5%2 -o t-%a.out
echo $SLURM_ARRAY_TASK_ID
