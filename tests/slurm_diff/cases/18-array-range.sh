#!/bin/bash
#SBATCH -a 0-3 -o arr-%A_%a.out
env | grep ^SLURM_ARRAY | sort
