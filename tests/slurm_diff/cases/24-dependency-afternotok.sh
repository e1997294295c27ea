#!/bin/bash
sbatch -d afternotok:$SLURM_JOB_ID -o cleanup.out --wrap 'echo cleanup' > submitted.txt
false
