#!/bin/bash
#SBATCH -n1
srun -x $SLURMD_NODENAME hostname
echo rc=$?
