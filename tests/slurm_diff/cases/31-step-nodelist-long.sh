#!/bin/bash
#SBATCH -n2
srun --nodelist=$SLURMD_NODENAME -n2 bash -c 'echo $SLURM_PROCID $SLURM_STEP_NODELIST' | sort
