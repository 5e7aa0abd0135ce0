#!/bin/sh
# The Fortran test with 4 ranks (see run-fortran.sh).
exec "${srcdir:-.}/run-fortran.sh" 4
