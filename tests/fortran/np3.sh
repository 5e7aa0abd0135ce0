#!/bin/sh
# The Fortran test with 3 ranks (see run-fortran.sh).
exec "${srcdir:-.}/run-fortran.sh" 3
