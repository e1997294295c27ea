#!/bin/bash
#SBATCH --time=2:00:00
echo ok
