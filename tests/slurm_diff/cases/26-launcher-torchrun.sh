#!/bin/bash
#SBATCH -N1 --ntasks-per-node=2 --gpus-per-node=2 -c2
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=29500
export WORLD_SIZE=$(($SLURM_NNODES * 2))
srun bash -c 'env | sort > env.task.$SLURM_PROCID'
