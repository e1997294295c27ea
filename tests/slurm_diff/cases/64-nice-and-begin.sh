#!/bin/bash
#SBATCH --nice=10 --begin=now
echo ok
