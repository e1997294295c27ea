#!/bin/bash
#SBATCH --mem=1G --mem-per-cpu=1G
echo never
