#!/bin/bash
#SBATCH -n2
srun -N1 -n1 -w $SLURMD_NODENAME bash -c 'echo on $SLURMD_NODENAME; env | sort > env.step'
echo rc=$?
