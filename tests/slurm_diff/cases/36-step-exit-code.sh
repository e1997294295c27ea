#!/bin/bash
#SBATCH -n1
srun bash -c 'exit 7'
echo step-rc=$?
