#!/bin/bash
#SBATCH -n1
srun -r 1 -N1 hostname
echo rc=$?
