#!/bin/bash
#SBATCH --no-requeue --signal=TERM@30
echo ok
