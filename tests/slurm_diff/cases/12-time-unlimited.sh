#!/bin/bash
#SBATCH --time=UNLIMITED
echo ok
