#!/bin/bash
#SBATCH -N1 --ntasks-per-node=1 -c4 --gres=gpu:4
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1) MASTER_PORT=6000 RANK=0
srun --ntasks-per-node=1 bash -c 'env | sort > env.launcher.$SLURM_NODEID'
