#!/bin/bash
#SBATCH --exclusive
echo "$SLURM_CPUS_ON_NODE $SLURM_JOB_CPUS_PER_NODE"
