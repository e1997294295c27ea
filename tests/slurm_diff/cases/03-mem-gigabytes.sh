#!/bin/bash
#SBATCH --mem=2G
env | sort > env.batch
