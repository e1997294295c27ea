#!/bin/bash
#SBATCH --mail-type=BEGIN
#SBATCH --mail-type=FAIL
# diff: args=--mail-type=END
echo ok
