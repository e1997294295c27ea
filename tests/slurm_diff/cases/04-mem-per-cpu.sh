#!/bin/bash
#SBATCH --mem-per-cpu=1500M -c2
env | sort > env.batch
