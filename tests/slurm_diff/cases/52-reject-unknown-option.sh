#!/bin/bash
#SBATCH --bogus-option=1
echo never
