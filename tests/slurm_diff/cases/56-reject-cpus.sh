#!/bin/bash
#SBATCH --cpus-per-task=65
echo never
