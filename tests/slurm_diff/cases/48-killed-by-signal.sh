#!/bin/bash
kill -9 $$
