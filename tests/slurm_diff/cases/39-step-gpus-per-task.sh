#!/bin/bash
#SBATCH -n2 --gpus-per-task=1
srun bash -c 'echo $SLURM_PROCID $CUDA_VISIBLE_DEVICES' | sort
