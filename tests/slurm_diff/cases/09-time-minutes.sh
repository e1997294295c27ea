#!/bin/bash
#SBATCH --time=90
echo ok
