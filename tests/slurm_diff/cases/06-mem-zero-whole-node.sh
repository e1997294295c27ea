#!/bin/bash
#SBATCH --mem=0
echo ok
