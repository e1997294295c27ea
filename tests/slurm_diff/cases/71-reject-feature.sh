#!/bin/bash
#SBATCH -C nosuchfeature
echo never
