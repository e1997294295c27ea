#!/bin/bash
#SBATCH --requeue --signal=B:USR1@90
echo ok
