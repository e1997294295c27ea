#!/bin/bash
#SBATCH -n4
srun -n1 bash -c 'env | sort > env.one'
