#!/bin/bash
#SBATCH -o o-%u-%N.txt -e e-%j.txt
echo to-stdout
echo to-stderr >&2
