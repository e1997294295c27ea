#!/bin/bash
#SBATCH -n3
srun -l bash -c 'echo hello' | sort
