#!/bin/bash
#SBATCH --ntasks-per-node=2 --gpus-per-node=2
env | sort > env.batch
srun --gpus-per-task=1 bash -c 'echo $SLURM_PROCID $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS' | sort
