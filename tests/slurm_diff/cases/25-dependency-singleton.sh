#!/bin/bash
#SBATCH -J single
sbatch -J single -d singleton -o s2.out --wrap 'echo second single' > submitted.txt
