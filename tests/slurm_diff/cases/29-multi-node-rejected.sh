#!/bin/bash
#SBATCH -N2 --ntasks-per-node=1
srun hostname
