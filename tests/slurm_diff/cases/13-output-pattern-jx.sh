#!/bin/bash
#SBATCH -o out-%j-%x.txt -J pat
echo to-stdout
echo to-stderr >&2
