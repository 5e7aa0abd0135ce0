#!/bin/sh
# The Fortran test with 2 ranks (see run-fortran.sh).
exec "${srcdir:-.}/run-fortran.sh" 2
