#!/bin/bash
#SBATCH --gres=gpu:9
echo never
