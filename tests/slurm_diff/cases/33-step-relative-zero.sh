#!/bin/bash
#SBATCH -n1
srun -r 0 -N1 bash -c 'echo rel $SLURM_NODEID'
echo rc=$?
