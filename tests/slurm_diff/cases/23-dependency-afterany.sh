#!/bin/bash
sbatch -d afterany:$SLURM_JOB_ID -o after.out --wrap 'echo after' > submitted.txt
exit 3
