#!/bin/bash
#SBATCH -o none
echo lost
touch ran
