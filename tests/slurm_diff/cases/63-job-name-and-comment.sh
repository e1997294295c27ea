#!/bin/bash
#SBATCH -J "my job" --comment="a comment"
echo "$SLURM_JOB_NAME"
