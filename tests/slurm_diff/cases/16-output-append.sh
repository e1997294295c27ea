#!/bin/bash
#SBATCH -o fixed.txt --open-mode=append
echo line
