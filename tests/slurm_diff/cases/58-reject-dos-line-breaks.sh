#!/bin/bash
echo dos
