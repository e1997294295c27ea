#!/bin/bash
next=$(sbatch --parsable -d afterok:$SLURM_JOB_ID -o next.out --wrap 'echo second; env | sort > env.second')
scontrol show job $next | grep -o 'Dependency=[^ ]*' > dep.txt
squeue -h -j $next -o '%E|%r' > dep.squeue
