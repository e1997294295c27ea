#!/bin/bash
#SBATCH --mem=1024
echo ok
