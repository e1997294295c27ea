#!/bin/bash
#SBATCH --mem=100G
echo never
