#!/bin/bash
#SBATCH -p nosuch
echo never
