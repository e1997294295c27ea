#!/bin/bash
#SBATCH --mem-per-gpu=4G --gpus=2
env | sort > env.batch
