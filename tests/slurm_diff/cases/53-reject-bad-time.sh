#!/bin/bash
#SBATCH --time=abc
echo never
